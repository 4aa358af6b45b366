import { AsyncLocalStorage } from 'node:async_hooks';
import { LockSelfDeadlockError } from '../../errors';
import type { LockHandle } from '../lock-handle';
import type { LockTarget } from '../../store';
import { kindOf } from '../kinds';
import { GroupHandle } from './group-handle';
import { LockEntry } from './lock-entry';
import type { OwnerContext } from './owner-context';

/** The handles taken with acquire() in the current scope (a request), shared by every engine. */
const storage = new AsyncLocalStorage<Set<LockEntry>>();

/**
 * The handles a call chain took with `acquire()`/`tryAcquire()` within a scope: a request, as
 * RedisLockModule's interceptor opens one per handled call (see `inScope`). Such a handle does
 * not make the chain its owner (an async function cannot change its caller's context), but the
 * scope's set records it, so a later call of the same scope that would wait for the handle's
 * lock (it would wait for itself) is found by `blocking()` and can fail at once. Outside a
 * scope nothing is recorded and such a call waits as any other.
 */
export class ChainHandles {
  constructor(private readonly context: OwnerContext) {}

  /** Runs `fn` (and all it starts) in a scope of its own, with no handles yet. */
  static inScope<T>(fn: () => T): T {
    return storage.run(new Set(), fn);
  }

  /** The current scope's set of handles; undefined outside a scope. */
  scope(): Set<LockEntry> | undefined {
    return storage.getStore();
  }

  /** Records a handle in its scope's set (if any), and forgets the released ones. */
  static add(handles: Set<LockEntry> | undefined, handle: LockHandle): void {
    if (handles === undefined) return;
    for (const entry of handles) if (!entry.active) handles.delete(entry);
    const entries = handle instanceof GroupHandle ? handle.members : [handle];
    for (const entry of entries) if (entry instanceof LockEntry) handles.add(entry);
  }

  /**
   * Undefined when `target` would not wait for a handle of the current scope (the hot path: no
   * await). Else a promise that rejects with LockSelfDeadlockError unless the handle is released
   * within a turn of the event loop (as `return lockedCall()` inside `await using` does), and
   * resolves then.
   */
  refuse(target: LockTarget): Promise<void> | undefined {
    if (!this.blocking(target)) return undefined;
    return new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
      const held = this.blocking(target);
      if (held) throw new LockSelfDeadlockError(target.key, held.key);
    });
  }

  /**
   * A handle the current scope took with acquire(), still held, that `target` would wait for
   * (unless the chain runs as its owner, with runAs or inside run(), where it re-enters).
   */
  private blocking(target: LockTarget): LockEntry | undefined {
    const handles = storage.getStore();
    if (handles === undefined || handles.size === 0) return undefined;
    const { waitsFor } = kindOf(target.kind);
    if (waitsFor.length === 0) return undefined;
    const names = target.names ?? [target.name];
    for (const entry of handles) {
      if (
        entry.active &&
        names.includes(entry.name) &&
        waitsFor.includes(entry.family) &&
        !this.context.find(entry.family, entry.name)
      ) {
        return entry;
      }
    }
    return undefined;
  }
}
