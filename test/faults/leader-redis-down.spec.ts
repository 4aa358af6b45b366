import { LOCK_STORE, LockLostError, type Leadership } from '../../lib';
import { LEASE, LOSS_BOUND, logged, twoLockNodes } from './fault-kit';
import { sleep, until } from '../../tools/time';

/** How long Redis stays down: several leases. */
const DOWN = LEASE * 4;

describe('fault: Redis down under a leader election (its own redis-server)', () => {
  const nodes = twoLockNodes();

  it('the leader is told within a lease; campaigns wait without errors or a busy loop; one is elected once Redis is back', async () => {
    const { redis, a, b } = nodes;
    const all: Leadership[] = [a.locks.leader('down'), b.locks.leader('down')];
    await until(() => all.some((leadership) => leadership.isLeader));
    const leader = all.find((leadership) => leadership.isLeader)!;
    const { signal, term } = leader;
    const warnings = logged.length;
    // Acquire attempts made while Redis is down (the store's fast path, which falls back on
    // its plain acquire while down).
    const spies = [a, b].map((node) =>
      jest.spyOn(node.app.get<{ acquireInto(): void }>(LOCK_STORE), 'acquireInto'),
    );
    await redis.kill();
    const killedAt = Date.now();
    await until(() => signal.aborted, LOSS_BOUND * 2, { what: 'the leader told' });
    expect(Date.now() - killedAt).toBeLessThan(LOSS_BOUND);
    expect(signal.reason).toBeInstanceOf(LockLostError);
    await sleep(DOWN - (Date.now() - killedAt));
    expect(all.filter((leadership) => leadership.isLeader)).toHaveLength(0);
    // Told once (the loss), plus the store's connection warnings: not one per retry.
    const during = logged.slice(warnings).filter(({ message }) => /leadership/.test(message));
    expect(during.length).toBeLessThanOrEqual(2);
    // Retried at most every 100 ms per waiting campaign (the queue's connection retry): no spin.
    const attempts = spies.reduce((sum, spy) => sum + spy.mock.calls.length, 0);
    expect(attempts).toBeLessThan((2 * DOWN) / 100 + 10);
    spies.forEach((spy) => spy.mockRestore());
    await redis.restart();
    const backAt = Date.now();
    await until(() => all.filter((leadership) => leadership.isLeader).length === 1, LEASE * 4, {
      what: 'a leader again',
    });
    expect(Date.now() - backAt).toBeLessThan(LEASE * 3);
    const next = all.find((leadership) => leadership.isLeader)!;
    expect(next.term).toBeGreaterThan(term!);
  });
});
