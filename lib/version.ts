import { createRequire } from 'node:module';

/** This library's version, from its package.json ('unknown' where it cannot be read). */
export const LIBRARY_VERSION = readVersion();

function readVersion(): string {
  try {
    return (createRequire(__filename)('nestjs-redis-lock/package.json') as { version: string })
      .version;
  } catch {
    return 'unknown';
  }
}
