/**
 * Jest hooks for suites on a whole local topology (tools/redis): one started before the suite's
 * tests and stopped after them. Read the field inside hooks and tests.
 */
import { startCluster, type ClusterSpec, type TestCluster } from '../../tools/redis/cluster';
import {
  SENTINELS_READY_TIMEOUT,
  startSentinel,
  type TestSentinel,
} from '../../tools/redis/sentinel';

/** `start()` before the suite's tests (`timeout` ms allowed), `stop()` after them. */
function suiteResource<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
  timeout: number,
): () => T {
  let resource: T | undefined;
  beforeAll(async () => {
    resource = await start();
  }, timeout);
  afterAll(async () => {
    await resource?.stop();
  });
  return () => resource!;
}

/** A cluster (startCluster: 3 masters + 3 replicas unless `spec` says), 60 s allowed to start. */
export function suiteCluster(spec?: ClusterSpec): { readonly cluster: TestCluster } {
  const current = suiteResource(() => startCluster(spec), 60_000);
  return {
    get cluster() {
      return current();
    },
  };
}

/** A Sentinel set (startSentinel), allowed its ready timeout plus 15 s to start. */
export function suiteSentinel(): { readonly sentinel: TestSentinel } {
  const current = suiteResource(startSentinel, SENTINELS_READY_TIMEOUT + 15_000);
  return {
    get sentinel() {
      return current();
    },
  };
}
