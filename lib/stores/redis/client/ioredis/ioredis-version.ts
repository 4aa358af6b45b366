import { createRequire } from 'node:module';

/** The version of the ioredis the library runs with (the user's install: a peer dependency). */
export const IOREDIS_VERSION = (
  createRequire(__filename)('ioredis/package.json') as { version: string }
).version;

/** Its major version. */
export const IOREDIS_MAJOR = Number(IOREDIS_VERSION.split('.')[0]);
