import { createRequire } from 'node:module';

/**
 * The major version of the node-redis the user's client comes from (`@redis/client`, which the
 * `redis` package re-exports, and whose major it shares), read from its package.json; 0 when it
 * cannot be read from here.
 */
export function nodeRedisMajor(): number {
  const load = createRequire(__filename);
  for (const name of ['@redis/client/package.json', 'redis/package.json']) {
    try {
      return Number((load(name) as { version: string }).version.split('.')[0]);
    } catch {
      // not installed where this library can see it: the next name
    }
  }
  return 0;
}
