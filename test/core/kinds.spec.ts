import { kindOf, lockKind } from '../../lib/core/kinds';
import { LockEngine } from '../../lib/core/lock-engine';
import { LockError } from '../../lib/errors';
import {
  hasPort,
  requirePort,
  type HoldKind,
  type LockStore,
  type LockTarget,
} from '../../lib/store';
import { MemoryLockStore } from '../../lib/stores/memory';
import { testEngine } from './engine-kit';
import { FakeStore } from './fake-store';

const KINDS: HoldKind[] = ['lock', 'fair', 'read', 'write', 'multi', 'permit'];

/** `store` with LockStore's required methods only: no capability port. */
function portless(store: LockStore): LockStore {
  return {
    acquire: (request) => store.acquire(request),
    release: (hold) => store.release(hold),
    renew: (holds, leaseTime) => store.renew(holds, leaseTime),
    forceUnlock: (target) => store.forceUnlock(target),
    remainingTtl: (target) => store.remainingTtl(target),
    channel: (target, owner) => store.channel(target, owner),
    subscribe: (channel) => store.subscribe(channel),
    unsubscribe: (channel) => store.unsubscribe(channel),
    listen: (listener) => store.listen(listener),
  };
}

function engineOn(store: LockStore): LockEngine {
  return testEngine(store, { waitTime: 0 });
}

describe('kinds of hold: one descriptor each', () => {
  it('has a descriptor for every id, under its own id', () => {
    for (const id of KINDS) expect(kindOf(id).id).toBe(id);
  });

  it('says what the engine acts on: re-entry family, queue, object, shared, mode, fair, group', () => {
    const facts = Object.fromEntries(
      KINDS.map((id) => {
        const { family, queue, object, shared, mode, fair, group } = kindOf(id);
        return [id, [family, queue, object, shared, mode, fair, group]];
      }),
    );
    expect(facts).toEqual({
      lock: ['lock', 'lock', 'lock', false, undefined, false, false],
      fair: ['lock', 'lock', 'lock', false, undefined, true, false],
      read: ['read', 'rw', 'lock', true, 'read', false, false],
      write: ['write', 'rw', 'lock', false, 'write', false, false],
      multi: ['lock', 'lock', 'lock', false, undefined, false, true],
      permit: ['permit', 'permit', 'semaphore', true, undefined, false, false],
    });
  });

  it('keeps the re-entry rules: a read inside a write downgrades, a write inside a read is refused', () => {
    expect(kindOf('read').ownerFrom).toBe('write');
    expect(kindOf('write').refusedInside).toBe('read');
    expect(kindOf('read').waitsFor).toEqual(['lock', 'write']);
    expect(kindOf('permit').waitsFor).toEqual([]);
    // Only a fair release (it tells the queue's head alone) holds nothing back.
    expect(KINDS.filter((id) => !kindOf(id).holdBack)).toEqual(['fair']);
  });

  it('picks a lock call’s kind from its mode and fairness', () => {
    expect(lockKind(undefined, false).id).toBe('lock');
    expect(lockKind(undefined, true).id).toBe('fair');
    expect(lockKind('read', false).id).toBe('read');
    expect(lockKind('write', true).id).toBe('write');
  });
});

describe('capability ports', () => {
  it('are found on the stores that have them', () => {
    const memory = new MemoryLockStore().connect();
    expect([hasPort(memory, 'fairQueue'), hasPort(memory, 'permitCount')]).toEqual([true, true]);
    expect(hasPort(memory, 'fastPath')).toBe(false);
    expect(hasPort(portless(memory), 'fairQueue')).toBe(false);
    expect(() => requirePort(portless(memory), 'permitCount')).toThrow(LockError);
  });

  it('leave LockStore’s required methods enough for plain locks; a primitive without its port refuses', async () => {
    const engine = engineOn(portless(new FakeStore()));
    await expect(engine.run('k', () => 'done')).resolves.toBe('done');
    await expect(engine.run('k', () => 'done', { fair: true })).rejects.toThrow(
      /does not support fair locks/,
    );
    await expect(engine.semaphore('s', { permits: 1 }).available()).rejects.toThrow(
      /does not support a semaphore's available\(\)/,
    );
    await engine.close();
  });

  it('refuse a port’s operation on a target of a kind without it (memory store)', () => {
    const store = new MemoryLockStore();
    const lock: LockTarget = { kind: 'lock', key: 'k', name: 'k' };
    expect(() => store.available(lock)).toThrow(/available\(\) is not an operation of a lock hold/);
  });
});
