import { Injectable, type INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { Observable, Subject } from 'rxjs';
import { LockLostError, LockService, Locked } from '../../lib';
import { lockApp } from '../support/lock-app';
import type { TestRedis } from '../support/redis-server';
import {
  LEASE,
  LOSS_BOUND,
  fastRedis,
  lockNode,
  proxiedRedis,
  type LockNode,
  type TcpProxy,
} from './fault-kit';
import { abortedAt, monotonic, renewals, stallEventLoop } from './timing-kit';
import { sleep, until } from '../../tools/time';

@Injectable()
class Feed {
  readonly source = new Subject<number>();

  @Locked('feed')
  stream(): Observable<number> {
    return this.source.asObservable();
  }
}

describe('loss reports that are late, false or missing (its own redis-server)', () => {
  let redis: TestRedis;
  let raw: Redis;
  let proxy: TcpProxy;
  let direct: LockNode;

  proxiedRedis({}, (made) => ({ redis, raw, proxy, direct } = made));
  afterEach(() => jest.restoreAllMocks());

  /** A lock node on `port` sharing `direct`'s key prefix. */
  const node = (port: number, leaseTime = LEASE) =>
    lockNode(fastRedis(port), { keyPrefix: direct.prefix, leaseTime });

  it('one lock name turned into a string (WRONGTYPE) in a renewal batch of 50: only that lock is lost, the other 49 stay held and renewed', async () => {
    // issue 8, defect 6
    const keys = Array.from({ length: 50 }, (_, i) => `batch:${i}`);
    const held = await Promise.all(keys.map((key) => direct.locks.acquire(key)));
    try {
      const victim = `${direct.prefix}batch:0`;
      await raw.multi().del(victim).set(victim, 'another library').exec();
      await until(() => held[0].signal.aborted, LOSS_BOUND * 2).catch(() => undefined);
      const renewed = await renewals(raw, `${direct.prefix}batch:1`, 2, LEASE * 2);
      const pttls = await Promise.all(keys.slice(1).map((key) => raw.pttl(direct.prefix + key)));
      expect({
        lost: direct.lost.filter((e) => e.key.startsWith('batch:')).map((e) => e.key),
        othersStillHeld: held.slice(1).filter((lock) => !lock.signal.aborted).length,
        othersAliveInRedis: pttls.filter((pttl) => pttl > 0).length,
        renewed,
      }).toEqual({ lost: ['batch:0'], othersStillHeld: 49, othersAliveInRedis: 49, renewed: true });
    } finally {
      await Promise.all(held.map((lock) => lock.release().catch(() => undefined)));
    }
  });

  it('a silent connection (stall) with a 3 s lease: the holder is told no later than another owner gets the lock (+100 ms)', async () => {
    // issue 8, defect 12
    const lease = 3_000;
    const slow = await node(proxy.port, lease);
    const pacer = await slow.locks.acquire('late:pacer'); // runs the watchdog's timer
    try {
      // A fifth of a period after a watchdog tick: checked on ticks only, a lock taken now is
      // found expired ~0.8 s after its lease ended.
      expect(await renewals(raw, `${direct.prefix}late:pacer`, 1, lease)).toBe(true);
      await sleep(200);
      const held = await slow.locks.acquire('late');
      proxy.stall();
      const lostAt = abortedAt(held.signal);
      const next = await direct.locks.acquire('late', { waitTime: lease * 2 });
      const gotAt = monotonic();
      await next.release();
      await until(() => lostAt() >= 0, lease).catch(() => undefined);
      expect(lostAt()).toBeGreaterThanOrEqual(0); // told at all
      expect(lostAt() - gotAt).toBeLessThanOrEqual(100); // ms after the other owner got it
    } finally {
      proxy.unstall();
      await pacer.release().catch(() => undefined);
      await slow.close();
    }
  });

  it('a +60 s wall-clock step (Date.now) does not report a healthy lock lost; renewal goes on', async () => {
    // issue 8, defect 13
    const held = await direct.locks.acquire('clock:ahead');
    try {
      const realNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() + 60_000);
      const renewed = await renewals(raw, `${direct.prefix}clock:ahead`, 2, LEASE * 2);
      expect({ aborted: held.signal.aborted, renewed }).toEqual({ aborted: false, renewed: true });
    } finally {
      jest.restoreAllMocks();
      await held.release().catch(() => undefined);
    }
  });

  it('a -60 s wall-clock step (Date.now) with a silent connection: the holder is still told within a lease', async () => {
    // issue 8, defect 13
    const slow = await node(proxy.port);
    const held = await slow.locks.acquire('clock:behind');
    try {
      const realNow = Date.now.bind(Date);
      jest.spyOn(Date, 'now').mockImplementation(() => realNow() - 60_000);
      proxy.stall();
      const stalledAt = monotonic();
      const lostAt = abortedAt(held.signal);
      await until(() => lostAt() >= 0, LOSS_BOUND * 2).catch(() => undefined);
      const told = lostAt() >= 0;
      expect({ told, withinALease: told && lostAt() - stalledAt < LOSS_BOUND }).toEqual({
        told: true,
        withinALease: true,
      });
    } finally {
      jest.restoreAllMocks();
      proxy.unstall();
      await held.release().catch(() => undefined);
      await slow.close();
    }
  });

  it('an event-loop stall of 0.7x the lease while a renewal reply is on its way: not reported lost, renewal goes on', async () => {
    // issue 8, defect 14
    // Assumes the documented renewal every third of the lease: the renewal sent at the next
    // third is in flight during the stall; without it the lock would truly have expired.
    const lease = 1_500;
    const period = lease / 3;
    const local = await node(redis.port, lease);
    const held = await local.locks.acquire('stall');
    const name = `${direct.prefix}stall`;
    try {
      expect(await renewals(raw, name, 1, lease)).toBe(true); // a tick just renewed it
      await sleep(period - 100);
      // Redis busy for 400 ms around the next tick: that tick's renewal waits in Redis.
      const busy = raw.eval(
        `local t0 = redis.call('time')
         repeat local t = redis.call('time')
         until (t[1] - t0[1]) * 1000000 + (t[2] - t0[2]) > 400000`,
        0,
      );
      await sleep(250); // the tick has sent its renewal; Redis answers it ~150 ms from now
      await stallEventLoop(lease * 0.7); // meanwhile the answer arrives and waits to be read
      await busy;
      const renewed = await renewals(raw, name, 2, lease);
      expect({ aborted: held.signal.aborted, renewed }).toEqual({ aborted: false, renewed: true });
    } finally {
      await held.release().catch(() => undefined);
      await local.close();
    }
  });

  it('@Locked methods returning an Observable apply the module-wide onLockLost', async () => {
    // issue 8, defect 15
    const policyCalls: LockLostError[] = [];
    let app: INestApplication | undefined;
    try {
      const created = await lockApp(
        redis,
        { onLockLost: (error) => void policyCalls.push(error) },
        { providers: [Feed] },
      );
      app = created.app;
      const feed = app.get(Feed);
      const values: number[] = [];
      const ended = new Promise<unknown>((resolve) =>
        feed.stream().subscribe({
          next: (value) => values.push(value),
          error: (error: unknown) => resolve(error),
          complete: () => resolve('completed'),
        }),
      );
      await until(() => feed.source.observed, 1_000); // the lock is held, the source subscribed
      feed.source.next(1);
      await app.get(LockService).forceUnlock('feed'); // lost while the stream runs
      feed.source.complete();
      expect({
        ended: await ended,
        values,
        policyCalls: policyCalls.map((e) => e.key),
      }).toEqual({ ended: 'completed', values: [1], policyCalls: ['feed'] });
    } finally {
      await app?.close();
    }
  });
});
