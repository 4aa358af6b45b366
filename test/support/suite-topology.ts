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

/** A started topology of a suite, and what must close before it stops. */
export interface SuiteTopology<T> {
  /** The resource (read inside hooks and tests). */
  readonly current: () => T;
  /**
   * Closes `close` after the suite's tests and before the topology stops (the last registered
   * first): an app closed on a stopped topology retries, and its client's timers outlive the
   * suite. A plain `afterAll` declared after the topology's would run after its stop.
   */
  closing(close: () => Promise<unknown>): void;
}

/** `start()` before the suite's tests (`timeout` ms allowed), `stop()` after them. */
function suiteResource<T extends { stop(): Promise<void> }>(
  start: () => Promise<T>,
  timeout: number,
): SuiteTopology<T> {
  let resource: T | undefined;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    resource = await start();
  }, timeout);
  afterAll(async () => {
    try {
      for (const close of closers.splice(0).reverse()) await close();
    } finally {
      await resource?.stop();
    }
  });
  return { current: () => resource!, closing: (close) => void closers.push(close) };
}

/** A cluster (startCluster: 3 masters + 3 replicas unless `spec` says), 60 s allowed to start. */
export function suiteCluster(spec?: ClusterSpec): {
  readonly cluster: TestCluster;
  closing: SuiteTopology<TestCluster>['closing'];
} {
  const { current, closing } = suiteResource(() => startCluster(spec), 60_000);
  return {
    get cluster() {
      return current();
    },
    closing,
  };
}

/** A Sentinel set (startSentinel), allowed its ready timeout plus 15 s to start. */
export function suiteSentinel(): { readonly sentinel: TestSentinel } {
  const { current } = suiteResource(startSentinel, SENTINELS_READY_TIMEOUT + 15_000);
  return {
    get sentinel() {
      return current();
    },
  };
}
