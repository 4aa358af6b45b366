import { LockService } from '../../lib';
import { lockAppEach } from '../support/lock-app';
import { STORE_KINDS, suiteStore } from '../support/suite-store';
import { sleep } from '../../tools/time';

/** A promise and the function that settles it. */
function gate(): { opened: Promise<void>; open: () => void } {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { opened, open };
}

// A group that re-enters members its chain holds, beside siblings of that chain.
describe.each(STORE_KINDS)('multi-lock re-entry among siblings (%s store)', (kind) => {
  const store = suiteStore(kind);
  let locks: LockService;

  lockAppEach(store, { leaseTime: 600, waitTime: 5_000 }, (made) => ({ locks } = made));

  it('a group refused by a busy member leaves the members it had re-entered', async () => {
    await locks.run('a', () =>
      locks.run('b', async () => {
        const sibling = gate();
        const inside = gate();
        // A sibling of this chain is inside b: the group can re-enter a, not b.
        const holder = locks.run('b', () => {
          inside.open();
          return sibling.opened;
        });
        await inside.opened;
        expect(await locks.tryAcquire(['a', 'b'])).toBeNull();
        sibling.open();
        await holder;
        // a's nested slot is free again: another sibling re-enters it at once.
        expect(await locks.run('a', (lock) => lock.depth, { waitTime: 0 })).toBe(2);
      }),
    );
    expect(await locks.isLocked('a')).toBe(false);
    expect(locks.heldCount).toBe(0);
  });

  it('siblings re-entering [a, b] and [b, a] of their chain both finish (one order)', async () => {
    const order: string[] = [];
    await locks.run(['a', 'b'], async () => {
      const group = (keys: string[]) =>
        locks.run(
          keys,
          async () => {
            order.push(keys.join(''));
            await sleep(5);
          },
          { waitTime: 2_000 },
        );
      await Promise.all([group(['a', 'b']), group(['b', 'a'])]);
    });
    expect(order.sort()).toEqual(['ab', 'ba']);
    expect(await locks.isLocked('a')).toBe(false);
    expect(await locks.isLocked('b')).toBe(false);
  });
});
