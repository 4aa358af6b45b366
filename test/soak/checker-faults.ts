/**
 * The family checker's fault injector. On workers: SIGSTOP one past the lease, then SIGCONT;
 * SIGKILL one and start a replacement. On one Redis server: CLIENT PAUSE ALL past the lease,
 * and a restart (SIGKILL, then the same port; the server runs with an fsync'd append-only file,
 * so no acknowledged write is lost). On a Cluster: CLIENT PAUSE ALL of a master, a coordinated
 * failover (CLUSTER FAILOVER on its replica: no write lost), and a killed master (its replica
 * is promoted, the old master revived as a replica: asynchronous replication may lose writes).
 */
import type { TestCluster } from '../../tools/redis/cluster';
import type { TestRedis } from '../support/redis-server';
import { micros } from './soak-records';
import type { CheckerFault, CheckerFaultKind } from './checker-records';
import { sleep } from '../../tools/time';

const between = (min: number, max: number) => min + Math.floor(Math.random() * (max - min));

/** What the injector can do to the workers (the parent's pool). */
export interface WorkerPool {
  /** The live workers: pid and number in the run. */
  live(): { pid: number; number: number }[];
  /** SIGKILLs one and starts a replacement; resolves when the replacement is ready. */
  replace(pid: number): Promise<void>;
}

/** The Redis side: one server or a Cluster. */
export type FaultTarget = { redis: TestRedis } | { cluster: TestCluster };

/** Injects one fault and resolves with its record once it is over. */
async function inject(
  kind: CheckerFaultKind,
  target: FaultTarget,
  pool: WorkerPool,
  lease: number,
): Promise<CheckerFault> {
  const start = micros();
  let losesWrites = false;
  let victim: number | undefined;
  const pastLease = () => between(lease * 1.2, lease * 2.5);
  switch (kind) {
    case 'stop-worker':
    case 'kill-worker': {
      const workers = pool.live();
      const worker = workers[Math.floor(Math.random() * workers.length)];
      if (!worker) break;
      victim = worker.number;
      if (kind === 'kill-worker') {
        await pool.replace(worker.pid);
        break;
      }
      process.kill(worker.pid, 'SIGSTOP');
      await sleep(pastLease());
      // Its end is taken before SIGCONT: the worker may act before kill() returns here.
      const end = micros();
      process.kill(worker.pid, 'SIGCONT');
      return { kind, start, end, losesWrites, process: victim };
    }
    case 'client-pause': {
      // The command returns at once; the pause lasts its time from then.
      const duration = pastLease();
      if ('redis' in target) {
        const admin = target.redis.client();
        await admin.call('CLIENT', 'PAUSE', String(duration), 'ALL');
        admin.disconnect();
      } else {
        const masters = await target.cluster.masters();
        const port = masters[Math.floor(Math.random() * masters.length)];
        await target.cluster.admin.get(port).call('CLIENT', 'PAUSE', String(duration), 'ALL');
      }
      await sleep(duration);
      break;
    }
    case 'restart':
      if ('redis' in target) {
        await target.redis.kill();
        await sleep(between(0, 300));
        await target.redis.restart();
      }
      break;
    case 'failover':
    case 'kill-master': {
      if (!('cluster' in target)) break;
      const masters = await target.cluster.masters();
      const master = masters[Math.floor(Math.random() * masters.length)];
      const replica = await target.cluster.replicaOf(master);
      if (kind === 'failover') {
        await target.cluster.failover(replica);
      } else {
        losesWrites = true;
        await target.cluster.kill(master);
        await target.cluster.waitForPromotion(replica);
        await target.cluster.revive(master);
      }
      break;
    }
  }
  return { kind, start, end: micros(), losesWrites, process: victim };
}

/**
 * The kinds injected on one server and on a Cluster, in turn. The Cluster's failover and killed
 * master come first, so that a brief phase (CI's 20 s) has them.
 */
const SINGLE: CheckerFaultKind[] = ['stop-worker', 'client-pause', 'kill-worker', 'restart'];
const CLUSTER: CheckerFaultKind[] = [
  'failover',
  'kill-master',
  'stop-worker',
  'client-pause',
  'kill-worker',
];

/**
 * Injects faults in turn until `stopAt` (Date.now() ms) or `stopped()`, with `healthy` ms
 * ([min, max)) between two; resolves with every fault injected. A fault's own wait must end
 * before `stopAt`, so the last stretch of a run is healthy.
 */
export async function injectCheckerFaults(
  target: FaultTarget,
  pool: WorkerPool,
  lease: number,
  healthy: [number, number],
  stopAt: number,
  stopped: () => boolean,
): Promise<CheckerFault[]> {
  const kinds = 'redis' in target ? SINGLE : CLUSTER;
  const faults: CheckerFault[] = [];
  for (let i = 0; ; i++) {
    await sleep(between(...healthy));
    if (stopped() || Date.now() + lease * 6 > stopAt) return faults;
    faults.push(await inject(kinds[i % kinds.length], target, pool, lease));
  }
}
