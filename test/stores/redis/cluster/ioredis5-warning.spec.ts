import 'reflect-metadata';
import { Module, type LoggerService } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { LockService, RedisLockModule } from '../../../../lib';
import {
  canShardWith,
  openConnections,
  type IoredisSubscriber,
} from '../../../../lib/stores/redis/client/ioredis';
import { channelName } from '../../../../lib/stores/redis/redis-names';
import * as storeSeam from '../../../../lib/nest/open-store';
import { suiteCluster } from '../../../support/suite-topology';
import { nodesOf } from './cluster-kit';
import { until } from '../../../../tools/time';

const WARNING = /^ioredis 5 does not resubscribe sharded pub\/sub channels .*classic pub\/sub/;

/**
 * ioredis 5 on a Cluster: the library warns once at startup that sharded pub/sub needs
 * ioredis 6 and uses classic pub/sub. ioredis 6 is what is installed, so the major is injected
 * at the seam that decides (openStore → openConnections); ioredis 6's own path is the control.
 */
describe('a Cluster with ioredis 5 (no sharded subscriber that survives a failover)', () => {
  const suite = suiteCluster({ masters: 3, replicasPerMaster: 0 });
  const realOpenStore = storeSeam.openStore;
  const closers: (() => Promise<unknown>)[] = [];
  afterEach(async () => {
    jest.restoreAllMocks();
    await Promise.all(closers.splice(0).map((close) => close()));
  });

  it('decides sharded pub/sub by the ioredis major, and only for a Cluster', () => {
    expect([canShardWith(true, 5), canShardWith(true, 6), canShardWith(true, 7)]).toEqual([
      false,
      true,
      true,
    ]);
    expect(canShardWith(false, 6)).toBe(false);
    const nodes = nodesOf(suite.cluster);
    for (const [major, sharded] of [
      [5, false],
      [6, true],
    ] as const) {
      const connections = openConnections({ cluster: { nodes } }, major);
      closers.push(() => connections.close());
      expect(connections.canShard).toBe(sharded);
      const subscriber = (connections.subscriber as IoredisSubscriber).redis as unknown as {
        options: { shardedSubscribers?: boolean };
      };
      expect(subscriber.options.shardedSubscribers).toBe(sharded);
    }
  });

  /** A lock service on the cluster as ioredis `major` would give it, and its warnings. */
  async function appWith(major: number, prefix: string) {
    jest
      .spyOn(storeSeam, 'openStore')
      .mockImplementation((source, warn) => realOpenStore(source, warn, major));
    const warnings: string[] = [];
    const logger: LoggerService = {
      log: () => undefined,
      error: () => undefined,
      warn: (message: unknown) => warnings.push(String(message)),
    };
    @Module({
      imports: [
        RedisLockModule.forRoot({ cluster: { nodes: nodesOf(suite.cluster) }, keyPrefix: prefix }),
      ],
    })
    class WarningModule {}
    const app = await NestFactory.createApplicationContext(WarningModule, { logger });
    closers.push(() => app.close());
    return { locks: app.get(LockService), warnings };
  }

  /** Subscribers of `channel` on every node: classic (PUBSUB NUMSUB) and sharded (SHARDNUMSUB). */
  async function subscribers(channel: string) {
    const count = { classic: 0, sharded: 0 };
    for (const port of suite.cluster.ports) {
      const node = suite.cluster.nodeClient(port);
      const [, classic] = (await node.call('PUBSUB', 'NUMSUB', channel)) as [string, number];
      const [, sharded] = (await node.call('PUBSUB', 'SHARDNUMSUB', channel)) as [string, number];
      count.classic += Number(classic);
      count.sharded += Number(sharded);
    }
    return count;
  }

  for (const [major, kind] of [
    [5, 'classic'],
    [6, 'sharded'],
  ] as const) {
    it(`ioredis ${major}: ${major === 5 ? 'warns once, then' : 'no warning;'} a waiter is woken over ${kind} pub/sub`, async () => {
      const prefix = `w${major}:`;
      const holder = await appWith(major, prefix);
      const waiter = await appWith(major, prefix);
      const lock = await holder.locks.acquire('notice', { leaseTime: 30_000 });
      const acquired = waiter.locks.acquire('notice', { waitTime: 25_000 });
      const channel = channelName(`${prefix}notice`);
      await until(async () => {
        const count = await subscribers(channel);
        return count.classic + count.sharded > 0;
      }, 20_000);
      expect(await subscribers(channel)).toEqual(
        kind === 'classic' ? { classic: 1, sharded: 0 } : { classic: 0, sharded: 1 },
      );
      const master = await suite.cluster.masterForKey(channel);
      await suite.cluster.resetStats();
      await lock.release();
      await (await acquired).release();
      const stats = await suite.cluster.commandstats(master);
      const [used, unused] = kind === 'classic' ? ['publish', 'spublish'] : ['spublish', 'publish'];
      expect(stats[used] ?? 0).toBeGreaterThan(0);
      expect(stats[unused] ?? 0).toBe(0);
      // One warning per service, at startup: none per lock call.
      for (const { warnings } of [holder, waiter]) {
        expect(warnings.filter((message) => WARNING.test(message))).toHaveLength(
          major === 5 ? 1 : 0,
        );
        expect(warnings.filter((message) => /sharded/.test(message))).toHaveLength(
          major === 5 ? 1 : 0,
        );
      }
    }, 60_000);
  }
});
