import { createHash } from 'node:crypto';
import type { ScriptRunner } from './client';

/** A connection scripts run on: one server (or Sentinel primary), a Cluster master, a Cluster. */
export type ScriptClient = ScriptRunner;

/** A Lua script called by SHA and loaded into Redis only when missing. */
export class LuaScript {
  /** SHA1 of the source, as EVALSHA wants it. */
  readonly sha: string;
  private readonly loading = new WeakMap<ScriptClient, Promise<unknown>>();

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /**
   * Runs the script with EVALSHA (batched with the calls around it: see the client's
   * batchWrites), arguments
   * as EVALSHA takes them: the number of keys, then the keys, then the other arguments (on a
   * Cluster it goes to the master of the first key's slot). When Redis does not know the script
   * (first use, SCRIPT FLUSH, restart, a promoted replica) it is loaded and the call repeated
   * once: see again().
   */
  run(
    client: ScriptClient,
    numKeys: number,
    ...keysAndArgs: (string | number)[]
  ): Promise<unknown> {
    client.batchWrites();
    return client.evalsha(this.sha, numKeys, keysAndArgs).catch((error: unknown) => {
      if (!isNoScript(error)) throw error;
      return this.again(client, numKeys, keysAndArgs);
    });
  }

  /**
   * As run(), with the reply mapped by `onReply` and any failure by `onError` (which throws, or
   * hands the failure on) in the same step: one promise less per call than
   * `run(...).then(onReply, onError)`, on the lock's hot path.
   */
  call<T>(
    client: ScriptClient,
    onReply: (reply: unknown) => T,
    onError: (error: unknown) => T,
    numKeys: number,
    ...keysAndArgs: (string | number)[]
  ): Promise<T> {
    client.batchWrites();
    return client.evalsha(this.sha, numKeys, keysAndArgs).then(onReply, (error: unknown) => {
      if (!isNoScript(error)) return onError(error);
      return this.again(client, numKeys, keysAndArgs).then(onReply, onError);
    });
  }

  /**
   * The call again after NOSCRIPT: on one server, SCRIPT LOAD (once however many calls met it)
   * then EVALSHA, and EVAL if the script was flushed once more in between (EVAL carries the
   * source, so it cannot miss); on a Cluster, EVAL at once, which goes where the EVALSHA went (a
   * SCRIPT LOAD would go to any node).
   */
  private again(
    client: ScriptClient,
    numKeys: number,
    keysAndArgs: (string | number)[],
  ): Promise<unknown> {
    const evalSource = () => client.eval(this.source, numKeys, keysAndArgs);
    if (client.isCluster) return evalSource();
    return this.load(client)
      .then(() => client.evalsha(this.sha, numKeys, keysAndArgs))
      .catch((error: unknown) => {
        if (!isNoScript(error)) throw error;
        return evalSource();
      });
  }

  /** One SCRIPT LOAD per client however many calls found the script missing at once. */
  private load(client: ScriptClient): Promise<unknown> {
    let loading = this.loading.get(client);
    if (!loading) {
      loading = client.scriptLoad(this.source).finally(() => this.loading.delete(client));
      this.loading.set(client, loading);
    }
    return loading;
  }
}

/** Whether Redis answered that it does not know the script (NOSCRIPT). */
function isNoScript(error: unknown): boolean {
  return error instanceof Error && error.message.startsWith('NOSCRIPT');
}
