import { AsyncLocalStorage } from 'node:async_hooks';
import type { HoldFamily } from '../kinds';
import type { LockEntry } from './lock-entry';

/**
 * The owner of a lock is the async call chain that took it, tracked with AsyncLocalStorage:
 * code run inside `run(entry, fn)` (and everything it awaits or starts) sees `entry` and the
 * entries it was nested in. Two requests in one process have separate chains.
 */
export class OwnerContext {
  private readonly storage = new AsyncLocalStorage<LockEntry>();

  /** The innermost entry of the current call chain, of any key. */
  innermost(): LockEntry | undefined {
    const entry = this.storage.getStore();
    return entry === undefined || entry.active ? entry : this.next(entry);
  }

  /** The innermost entry of the current call chain that holds `name` in `family`. */
  find(family: HoldFamily, name: string): LockEntry | undefined {
    for (let entry = this.storage.getStore(); entry; entry = entry.outer) {
      if (entry.name === name && entry.family === family && entry.active) return entry;
    }
    return undefined;
  }

  /** Runs `fn` as a call chain that holds `entry` (and everything the current chain holds). */
  run<T>(entry: LockEntry, fn: () => T): T {
    return this.storage.run(entry, fn);
  }

  /** Runs `fn` outside every call chain: it holds no lock, and what it starts holds none. */
  exit<T>(fn: () => T): T {
    return this.storage.exit(fn);
  }

  private next(entry: LockEntry): LockEntry | undefined {
    for (let outer = entry.outer; outer; outer = outer.outer) {
      if (outer.active) return outer;
    }
    return undefined;
  }
}
