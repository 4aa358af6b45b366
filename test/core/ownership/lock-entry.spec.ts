import { LockHold } from '../../../lib/core/lock-hold';
import { LockEntry } from '../../../lib/core/ownership/lock-entry';
import { LockLostError, LockNotHeldError } from '../../../lib/errors';

/** An outermost entry on a fresh hold, with a recorded releaseHold. */
function outermost() {
  const hold = new LockHold(
    { kind: 'lock', key: 'orders', name: 'p:orders' },
    'client:1',
    30_000,
    true,
    7,
    0,
  );
  const releaseHold = jest.fn((_hold: LockHold) => Promise.resolve());
  const root = new LockEntry(hold, undefined, undefined, releaseHold);
  return { hold, releaseHold, root };
}

/** Enters `entry` at once (its nested slot is free). */
function enterNow(entry: LockEntry): LockEntry {
  const nested = entry.enter(entry, 0, undefined);
  if (!(nested instanceof LockEntry)) throw new Error('expected an immediate entry');
  return nested;
}

/** Resolves once every promise callback queued so far has run. */
const settled = () => new Promise((resolve) => setImmediate(resolve));

describe('LockEntry', () => {
  afterEach(() => jest.useRealTimers());

  it('nests entries with growing depth, all on the one hold', () => {
    const { hold, root } = outermost();
    expect(root.depth).toBe(1);
    expect([root.key, root.fencingToken, root.signal]).toEqual(['orders', 7, hold.signal]);
    const child = enterNow(root);
    const grandchild = enterNow(child);
    expect([child.depth, grandchild.depth]).toEqual([2, 3]);
    expect(child.hold).toBe(hold);
    expect(grandchild.outer).toBe(child);
    expect(grandchild.signal).toBe(hold.signal);
  });

  it('runs siblings one at a time: the next enters when the current one leaves', async () => {
    const { root } = outermost();
    const first = enterNow(root);
    expect(root.enter(root, 0, undefined)).toBeNull();
    const second = root.enter(root, Infinity, undefined) as Promise<LockEntry | null>;
    const third = root.enter(root, Infinity, undefined) as Promise<LockEntry | null>;
    let secondEntry: LockEntry | null = null;
    void second.then((entry) => (secondEntry = entry));
    await settled();
    expect(secondEntry).toBeNull();
    await first.release();
    const entered = await second;
    expect(entered?.depth).toBe(2);
    expect(entered?.outer).toBe(root);
    let thirdIn = false;
    void third.then(() => (thirdIn = true));
    await settled();
    expect(thirdIn).toBe(false);
    await entered!.release();
    await expect(third).resolves.toBeInstanceOf(LockEntry);
  });

  it('gives up a sibling wait after waitTime (null) or on abort (the reason)', async () => {
    jest.useFakeTimers();
    const { root } = outermost();
    enterNow(root);
    const timedOut = root.enter(root, 100, undefined) as Promise<LockEntry | null>;
    jest.advanceTimersByTime(100);
    await expect(timedOut).resolves.toBeNull();
    const controller = new AbortController();
    const aborted = root.enter(root, Infinity, controller.signal) as Promise<LockEntry | null>;
    const reason = new Error('caller left');
    controller.abort(reason);
    await expect(aborted).rejects.toBe(reason);
  });

  it('an outer release waits for the nested entries, then frees the hold once', async () => {
    const { hold, root, releaseHold } = outermost();
    const child = enterNow(root);
    const grandchild = enterNow(child);
    let rootDone = false;
    const rootRelease = root.release().then(() => (rootDone = true));
    expect(root.active).toBe(false);
    const childRelease = child.release();
    await settled();
    expect(releaseHold).not.toHaveBeenCalled();
    expect(rootDone).toBe(false);
    await grandchild.release();
    await childRelease;
    await rootRelease;
    expect(releaseHold).toHaveBeenCalledTimes(1);
    expect(releaseHold).toHaveBeenCalledWith(hold);
  });

  it('an outer release also waits for siblings still queued for the nested slot', async () => {
    const { root, releaseHold } = outermost();
    const first = enterNow(root);
    const queued = root.enter(root, Infinity, undefined) as Promise<LockEntry | null>;
    const rootRelease = root.release();
    await first.release();
    const second = (await queued)!;
    await settled();
    expect(releaseHold).not.toHaveBeenCalled();
    await second.release();
    await rootRelease;
    expect(releaseHold).toHaveBeenCalledTimes(1);
  });

  it('once the lock is lost: siblings waiting are rejected with the LockLostError', async () => {
    const { hold, root } = outermost();
    const child = enterNow(root);
    const sibling = root.enter(root, Infinity, undefined) as Promise<LockEntry | null>;
    hold.lose('it expired');
    const lost = hold.lostError!;
    expect(lost).toBeInstanceOf(LockLostError);
    await expect(child.release()).rejects.toBe(lost);
    await expect(sibling).rejects.toBe(lost);
    expect(() => root.enter(root, Infinity, undefined)).toThrow(lost);
  });

  it('a second release of one handle rejects with LockNotHeldError', async () => {
    const { root, releaseHold } = outermost();
    const child = enterNow(root);
    await child.release();
    await expect(child.release()).rejects.toBeInstanceOf(LockNotHeldError);
    await root.release();
    await expect(root.release()).rejects.toThrow(/already released/);
    expect(releaseHold).toHaveBeenCalledTimes(1);
  });

  it('async disposal releases once, and not after an explicit release', async () => {
    const { root, releaseHold } = outermost();
    const child = enterNow(root);
    await child[Symbol.asyncDispose]();
    expect(child.active).toBe(false);
    await child[Symbol.asyncDispose]();
    await root.release();
    await root[Symbol.asyncDispose]();
    expect(releaseHold).toHaveBeenCalledTimes(1);
  });
});
