import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/** A Lua script called by SHA and loaded into Redis only when missing. */
export class LuaScript {
  /** SHA1 of the source, as EVALSHA wants it. */
  readonly sha: string;
  private readonly loading = new WeakMap<Redis, Promise<unknown>>();

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Runs the script with EVALSHA, arguments as EVALSHA takes them: the number of keys, then the
   * keys, then the other arguments. When Redis does not know the script (first use, SCRIPT
   * FLUSH, restart) it is loaded with SCRIPT LOAD and the call is repeated once.
   */
  run(client: Redis, numKeys: number, ...keysAndArgs: (string | number)[]): Promise<unknown> {
    return client.evalsha(this.sha, numKeys, ...keysAndArgs).catch((error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
      return this.load(client).then(() => client.evalsha(this.sha, numKeys, ...keysAndArgs));
    });
  }

  /**
   * As run(), with the reply mapped by `onReply` and any failure by `onError` in the same step
   * (one promise less per call than `run(...).then(onReply, onError)`: the lock's hot path).
   */
  call<T>(
    client: Redis,
    onReply: (reply: unknown) => T,
    onError: (error: unknown) => never,
    numKeys: number,
    ...keysAndArgs: (string | number)[]
  ): Promise<T> {
    return client.evalsha(this.sha, numKeys, ...keysAndArgs).then(onReply, (error: unknown) => {
      if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) return onError(error);
      return this.load(client)
        .then(() => client.evalsha(this.sha, numKeys, ...keysAndArgs))
        .then(onReply, onError);
    });
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
