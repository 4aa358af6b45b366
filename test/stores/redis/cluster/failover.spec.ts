import { randomUUID } from 'node:crypto';
import { LockLostError, LockRedisError, type LockHandle } from '../../../../lib';
import { clusterApp, failoverSuite } from './cluster-kit';
import { sleep } from '../../../../tools/time';

/** Resolves with the time (ms) from now until `lock`'s signal aborts; rejects after `timeout`. */
function aborted(lock: LockHandle, timeout: number): Promise<number> {
  const started = Date.now();
  return new Promise((resolve, reject) => {
    if (lock.signal.aborted) return resolve(0);
    const timer = setTimeout(() => reject(new Error(`not aborted within ${timeout} ms`)), timeout);
    lock.signal.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve(Date.now() - started);
    });
  });
}

/**
 * Failover safety on a 3-master cluster with replicas and on a Sentinel set, both started in
 * parallel: a lock lost in a failover is reported, `syncReplicas` keeps a grant through one,
 * and a grant the replica did not acknowledge never succeeds silently.
 */
describe('locks through failovers', () => {
  const { suite, closers, sentinelApp } = failoverSuite();
  async function app(options = {}) {
    const started = await clusterApp(suite.cluster, options);
    closers.push(() => started.app.close());
    return started;
  }
  /** `count` keys (under `prefix`) whose slots live on the master on `port`. */
  async function keysOn(port: number, prefix: string, count: number): Promise<string[]> {
    const keys: string[] = [];
    for (let i = 0; keys.length < count; i++) {
      if ((await suite.cluster.masterForKey(`${prefix}k${i}`)) === port) keys.push(`k${i}`);
    }
    return keys;
  }
  const keyOn = async (port: number, prefix: string) => (await keysOn(port, prefix, 1))[0];

  it('with syncReplicas: 1 and the replica not applying writes, an acquire is refused, not silently granted', async () => {
    const { locks, prefix } = await app({ syncTimeout: 200 });
    const master = (await suite.cluster.masters())[0];
    const key = await keyOn(master, prefix);
    const replica = await suite.cluster.replicaOf(master);
    await suite.cluster.pauseWrites(replica, 20_000);
    try {
      const error = await locks
        .tryAcquire(key, { syncReplicas: 1, waitTime: 700 })
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(LockRedisError);
      expect((error as Error).message).toMatch(/0 of the 1 replicas required .*acknowledged/);
      // Every unacknowledged grant is released: a retry still in flight when the wait ended is
      // undone by its own WAIT, within syncTimeout.
      const deadline = Date.now() + 200 + 300;
      while ((await locks.isLocked(key)) && Date.now() < deadline) await sleep(20);
      expect(await locks.isLocked(key)).toBe(false);
    } finally {
      await suite.cluster.unpause(replica);
    }
    const lock = await locks.acquire(key, { syncReplicas: 1 });
    await lock.release();
  });

  it('with syncReplicas: 1 a lock survives a SIGKILL of its master on the promoted replica', async () => {
    const { locks, prefix } = await app({ syncReplicas: 1, leaseTime: 10_000 });
    const master = (await suite.cluster.masters())[0];
    const key = await keyOn(master, prefix);
    const replica = await suite.cluster.replicaOf(master);
    const lock = await locks.acquire(key);
    await suite.cluster.kill(master);
    await suite.cluster.waitForPromotion(replica);
    expect(await suite.cluster.nodeClient(replica).exists(`${prefix}${key}`)).toBe(1);
    expect(await locks.isLocked(key)).toBe(true);
    expect(lock.signal.aborted).toBe(false);
    await lock.release();
    expect(await locks.isLocked(key)).toBe(false);
  }, 30_000);

  it('a lock lost with its master (SIGKILL, replica behind) aborts its holder within one lease, once, with the onLockLost policy', async () => {
    const lease = 1_500;
    const { locks, prefix } = await app({ leaseTime: lease });
    const master = (await suite.cluster.masters())[1];
    const [key, inRun] = await keysOn(master, prefix, 2);
    const replica = await suite.cluster.replicaOf(master);
    await suite.cluster.pauseWrites(replica, 20_000);
    const lock = await locks.acquire(key);
    const told: LockLostError[] = [];
    let [inside, ranOn] = [false, false];
    const ran = locks.run(
      inRun,
      async (held) => {
        inside = true;
        await aborted(held, 30_000);
        ranOn = true;
        return 'done';
      },
      { onLockLost: (error) => told.push(error) },
    );
    const report = aborted(lock, 20_000);
    while (!inside) await sleep(10);
    await suite.cluster.kill(master);
    await suite.cluster.waitForPromotion(replica);
    await suite.cluster.unpause(replica);
    const promoted = Date.now();
    await report;
    expect(Date.now() - promoted).toBeLessThan(lease); // reported at the latest one lease on
    expect(lock.signal.reason).toBeInstanceOf(LockLostError);
    expect(await suite.cluster.nodeClient(replica).exists(`${prefix}${key}`)).toBe(0);
    await expect(lock.release()).rejects.toThrow(/lost|expired/);
    await expect(ran).resolves.toBe('done'); // the callback policy: told, not thrown
    expect(ranOn).toBe(true);
    expect(told.map((error) => error.key)).toEqual([inRun]);
  }, 30_000);

  it('SIGKILL of the master holding a lock: the lock survives on the promoted replica, or its holder is told within one lease', async () => {
    const lease = 3_000;
    const { locks, prefix } = await app({ leaseTime: lease });
    const master = (await suite.cluster.masters())[2];
    const key = await keyOn(master, prefix);
    const replica = await suite.cluster.replicaOf(master);
    const lock = await locks.acquire(key);
    await suite.cluster.kill(master);
    await suite.cluster.waitForPromotion(replica);
    await sleep(lease);
    const survived = (await suite.cluster.nodeClient(replica).exists(`${prefix}${key}`)) === 1;
    expect(survived || lock.signal.aborted).toBe(true);
    if (survived && !lock.signal.aborted) await lock.release();
  }, 30_000);

  it('Sentinel: a parked waiter resumes after a failover, and new acquires work within 3 s', async () => {
    const keyPrefix = `s:${randomUUID().slice(0, 8)}:`;
    const start = () => sentinelApp({ keyPrefix, leaseTime: 15_000 });
    const [holder, waiter] = await Promise.all([start(), start()]);
    const lock = await holder.acquire('job');
    // Replication is asynchronous: the replica must have the lock before the primary dies. WAIT
    // counts this client's writes: one written after the lock comes after it in the stream.
    const marker = suite.sentinel.client();
    await marker.set('failover:after-lock', '1');
    expect(await marker.wait(1, 5_000)).toBe(1);
    let waited = false;
    const parked = waiter.acquire('job', { waitTime: 60_000 }).then((handle) => {
      waited = true;
      return handle;
    });
    await sleep(100);
    const old = await suite.sentinel.killPrimary();
    await suite.sentinel.waitForNewPrimary(old);
    const promoted = Date.now();
    const other = await holder.acquire('other', { waitTime: 3_000 });
    expect(Date.now() - promoted).toBeLessThan(3_000);
    await other.release();
    expect(waited).toBe(false);
    await lock.release().catch(() => undefined); // lost or released: the waiter may go on
    const released = Date.now();
    const handle = await parked;
    expect(Date.now() - released).toBeLessThan(5_000); // the holder's lease was 15 s
    await handle.release();
  }, 30_000);
});
