import type { LuaScript, ScriptClient } from './lua-script';

/**
 * Runs `script`; with `replicas` > 0, followed by `WAIT replicas timeout` in one pipeline, so
 * both go to the same connection (on a Cluster: the master of the first key's slot), as
 * Redisson's syncedEval. Resolves the script's reply and how many replicas acknowledged (0 when
 * none were asked).
 */
export async function runSynced(
  client: ScriptClient,
  script: LuaScript,
  replicas: number,
  timeout: number,
  numKeys: number,
  keysAndArgs: (string | number)[],
): Promise<[unknown, number]> {
  if (replicas === 0) return [await script.run(client, numKeys, ...keysAndArgs), 0];
  const send = (source: boolean) => {
    const pipeline = client.pipeline();
    if (source) pipeline.eval(script.source, numKeys, ...keysAndArgs);
    else pipeline.evalsha(script.sha, numKeys, ...keysAndArgs);
    return pipeline.wait(replicas, timeout).exec();
  };
  let results = await send(false);
  if (String((results?.[0]?.[0] as Error | null)?.message).startsWith('NOSCRIPT')) {
    results = await send(true);
  }
  if (!results) throw new Error('the pipeline was discarded');
  const [[scriptError, reply], [waitError, acknowledged]] = results;
  if (scriptError) throw scriptError;
  return [reply, waitError ? 0 : Number(acknowledged)];
}
