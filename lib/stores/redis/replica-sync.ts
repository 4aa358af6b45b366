import type { PipelineCommand, RedisClient } from './client';
import type { LuaScript } from './lua-script';

/**
 * Runs `script`; with `replicas` > 0, followed by `WAIT replicas timeout` in one pipeline, so
 * both go to the same connection (on a Cluster: the master of the first key's slot), as
 * Redisson's syncedEval. Resolves the script's reply and how many replicas acknowledged (0 when
 * none were asked).
 */
export async function runSynced(
  client: RedisClient,
  script: LuaScript,
  replicas: number,
  timeout: number,
  numKeys: number,
  keysAndArgs: (string | number)[],
): Promise<[unknown, number]> {
  if (replicas === 0) return [await script.run(client, numKeys, ...keysAndArgs), 0];
  const send = (source: boolean) => {
    const call: PipelineCommand = source
      ? ['eval', script.source, numKeys, ...keysAndArgs]
      : ['evalsha', script.sha, numKeys, ...keysAndArgs];
    return client.pipeline([call, ['wait', replicas, timeout]]);
  };
  let results = await send(false);
  if (String(results[0]?.[0]?.message).startsWith('NOSCRIPT')) {
    results = await send(true);
  }
  const [[scriptError, reply], [waitError, acknowledged]] = results;
  if (scriptError) throw scriptError;
  return [reply, waitError ? 0 : Number(acknowledged)];
}
