import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Redis } from 'ioredis';

/** A Lua script read from `scripts/`, called by SHA and loaded into Redis only when missing. */
export class LuaScript {
  /** SHA1 of the source, as EVALSHA wants it. */
  readonly sha: string;
  private readonly loading = new WeakMap<Redis, Promise<unknown>>();

  constructor(
    readonly name: string,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Runs the script with EVALSHA. When Redis does not know it (first use, SCRIPT FLUSH,
   * restart) it is loaded with SCRIPT LOAD and the call is repeated once.
   */
  async run(client: Redis, keys: readonly string[], args: readonly (string | number)[]) {
    try {
      return await client.evalsha(this.sha, keys.length, ...keys, ...args);
    } catch (error) {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      await this.load(client);
      return client.evalsha(this.sha, keys.length, ...keys, ...args);
    }
  }

  /** One SCRIPT LOAD per client however many calls found the script missing at once. */
  private load(client: Redis): Promise<unknown> {
    let loading = this.loading.get(client);
    if (!loading) {
      loading = client.script('LOAD', this.source).finally(() => this.loading.delete(client));
      this.loading.set(client, loading);
    }
    return loading;
  }
}

function load(file: string): LuaScript {
  return new LuaScript(file, readFileSync(join(__dirname, 'scripts', file), 'utf8'));
}

/** The lock's scripts; see the comment at the top of each file. */
export const LockScripts = {
  acquire: load('acquire.lua'),
  release: load('release.lua'),
  renew: load('renew.lua'),
  forceUnlock: load('force-unlock.lua'),
} as const;
