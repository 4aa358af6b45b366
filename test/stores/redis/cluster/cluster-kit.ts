import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { LockService, RedisLockModule, type RedisLockModuleOptions } from '../../../../lib';
import {
  STEADY_NODE_TIMEOUT,
  startCluster,
  type TestCluster,
} from '../../../../tools/redis/cluster';
import { startSentinel, type TestSentinel } from '../../../../tools/redis/sentinel';
import { ChildLines } from '../../../support/child-processes';
import { suiteCluster } from '../../../support/suite-topology';
import { transpileWorker, type WorkerBuild } from '../../../../tools/transpile-worker';

/** A Nest application with RedisLockModule on `cluster` (module-owned unless `options` say). */
export async function clusterApp(
  cluster: TestCluster,
  options: Partial<RedisLockModuleOptions> = {},
  metadata: ModuleMetadata = {},
): Promise<{ app: INestApplication; locks: LockService; prefix: string }> {
  const prefix = options.keyPrefix ?? `c:${randomUUID().slice(0, 8)}:`;
  const source = options.client ? {} : { cluster: { nodes: nodesOf(cluster) } };
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [
      RedisLockModule.forRoot({ ...source, ...options, keyPrefix: prefix }),
      ...(metadata.imports ?? []),
    ],
    providers: metadata.providers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, locks: app.get(LockService), prefix };
}

/**
 * A file's 3-master Redis Cluster (suiteCluster) and the apps its tests open, closed after them
 * all (`closers` takes more). `apps()` opens two LockServices (as two processes) on one key
 * prefix, with a long lease: no wake-up by expiry.
 */
export function clusterAppSuite(): {
  suite: { readonly cluster: TestCluster };
  closers: (() => Promise<unknown>)[];
  apps: () => Promise<[LockService, LockService, string]>;
} {
  const suite = suiteCluster({
    masters: 3,
    replicasPerMaster: 0,
    nodeTimeout: STEADY_NODE_TIMEOUT,
  });
  const closers: (() => Promise<unknown>)[] = [];
  suite.closing(() => Promise.all(closers.map((close) => close())));
  const apps = async (): Promise<[LockService, LockService, string]> => {
    const first = await clusterApp(suite.cluster, { leaseTime: 30_000, waitTime: 5_000 });
    const second = await clusterApp(suite.cluster, {
      keyPrefix: first.prefix,
      leaseTime: 30_000,
      waitTime: 5_000,
    });
    closers.push(
      () => first.app.close(),
      () => second.app.close(),
    );
    return [first.locks, second.locks, first.prefix];
  };
  return { suite, closers, apps };
}

/**
 * A file's 3-master cluster with replicas and Sentinel set, started in parallel before its tests,
 * and what they open (`closers`), closed after them all. `sentinelApp(options)` opens a
 * LockService on the Sentinel set that retries every 50 ms through a failover.
 */
export function failoverSuite(): {
  suite: { readonly cluster: TestCluster; readonly sentinel: TestSentinel };
  closers: (() => Promise<unknown>)[];
  sentinelApp: (options: Partial<RedisLockModuleOptions>) => Promise<LockService>;
} {
  let cluster: TestCluster;
  let sentinel: TestSentinel;
  const closers: (() => Promise<unknown>)[] = [];
  beforeAll(async () => {
    const [c, s] = await Promise.allSettled([startCluster(), startSentinel()]);
    if (c.status === 'fulfilled') cluster = c.value;
    if (s.status === 'fulfilled') sentinel = s.value;
    if (c.status === 'rejected') throw c.reason;
    if (s.status === 'rejected') throw s.reason;
  }, 60_000);
  afterAll(async () => {
    await Promise.all(closers.map((close) => close().catch(() => undefined)));
    await Promise.all([cluster?.stop(), sentinel?.stop()]);
  });
  const sentinelApp = async (options: Partial<RedisLockModuleOptions>) => {
    const moduleRef = await Test.createTestingModule({
      imports: [
        RedisLockModule.forRoot({
          redis: {
            sentinels: sentinel.sentinels,
            name: sentinel.name,
            retryStrategy: () => 50,
            sentinelRetryStrategy: () => 50,
            maxRetriesPerRequest: null,
          },
          ...options,
        }),
      ],
    }).compile();
    const nest = moduleRef.createNestApplication({ logger: false });
    await nest.init();
    closers.push(() => nest.close());
    return nest.get(LockService);
  };
  const suite = {
    get cluster() {
      return cluster;
    },
    get sentinel() {
      return sentinel;
    },
  };
  return { suite, closers, sentinelApp };
}

/** The cluster's nodes as `cluster.nodes` takes them. */
export function nodesOf(cluster: TestCluster): { host: string; port: number }[] {
  return cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
}

let build: WorkerBuild | undefined;

/** Removes the workers' build (call in afterAll). */
export function removeWorkerBuild(): void {
  build?.remove();
  build = undefined;
}

/**
 * A cluster-worker.ts process on `cluster`, given `args`: from a build transpiled once per test
 * process (transpileWorker), so each of 4 workers on 2 shared cores starts without ts-node.
 */
export function clusterWorker(cluster: TestCluster, prefix: string, args: string[]): ChildLines {
  build ??= transpileWorker(join(__dirname, 'cluster-worker.ts'));
  return new ChildLines([build.entry, cluster.ports.join(','), prefix, ...args], {
    env: build.env,
  });
}
