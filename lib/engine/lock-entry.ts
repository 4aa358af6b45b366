import { LockNotHeldError } from '../lock.errors';
import type { LockHandle } from './lock-handle';
import type { LockHold } from './lock-hold';

/** A call waiting to re-enter beneath an entry whose nested slot is taken by a sibling. */
interface NestedRequest {
  outer: LockEntry | undefined;
  resolve: (entry: LockEntry | null) => void;
  reject: (reason: unknown) => void;
  timer: NodeJS.Timeout | undefined;
  cancel: (() => void) | undefined;
}

/**
 * One level of a (re)entrant hold: the outermost entry owns the Redis hold, each nested entry
 * is a call beneath it that took the same lock again. An entry admits one nested entry at a
 * time, so concurrent siblings inside one locked call run one after the other. Nested enter
 * and exit never touch Redis.
 */
export class LockEntry implements LockHandle {
  readonly depth: number;
  private nested: LockEntry | null = null;
  private readonly queue: NestedRequest[] = [];
  private whenIdle: (() => void) | undefined;
  private released = false;

  constructor(
    /** The Redis hold shared by every level. */
    readonly hold: LockHold,
    /** The innermost entry (of any key) of the call chain this entry was taken in. */
    readonly outer: LockEntry | undefined,
    /** The entry of the same lock this one is nested in; undefined for the outermost. */
    private readonly parent: LockEntry | undefined,
    /** Frees the Redis hold; called by the outermost entry's release. Tells whose entry this is. */
    readonly releaseHold: (hold: LockHold) => Promise<void>,
  ) {
    this.depth = parent ? parent.depth + 1 : 1;
  }

  get key(): string {
    return this.hold.key;
  }

  get signal(): AbortSignal {
    return this.hold.signal;
  }

  get fencingToken(): number | undefined {
    return this.hold.fencingToken;
  }

  /** False once release() was called. */
  get active(): boolean {
    return !this.released;
  }

  /**
   * A call beneath this entry takes the lock again. Immediate when no sibling is nested here,
   * else waits up to `waitTime` (null on timeout) or until `signal` aborts (rejects).
   */
  enter(
    outer: LockEntry | undefined,
    waitTime: number,
    signal: AbortSignal | undefined,
  ): LockEntry | null | Promise<LockEntry | null> {
    const lost = this.hold.lostError;
    if (lost) throw lost;
    if (this.nested === null) {
      this.nested = new LockEntry(this.hold, outer, this, this.releaseHold);
      return this.nested;
    }
    if (waitTime <= 0) return null;
    return new Promise<LockEntry | null>((resolve, reject) => {
      const request: NestedRequest = {
        outer,
        resolve,
        reject,
        timer: undefined,
        cancel: undefined,
      };
      const settle = (reason: unknown, timedOut: boolean) => {
        const index = this.queue.indexOf(request);
        if (index < 0) return;
        this.queue.splice(index, 1);
        this.forget(request);
        if (timedOut) resolve(null);
        else reject(reason);
      };
      if (Number.isFinite(waitTime)) {
        request.timer = setTimeout(() => settle(undefined, true), waitTime);
      }
      if (signal) {
        const onAbort = () => settle(signal.reason, false);
        signal.addEventListener('abort', onAbort, { once: true });
        request.cancel = () => signal.removeEventListener('abort', onAbort);
      }
      this.queue.push(request);
    });
  }

  /**
   * Leaves this level. Waits for calls nested beneath it to leave first, so an outer release
   * never frees the lock under a running inner call.
   */
  release(): Promise<void> {
    if (this.released) {
      return Promise.reject(new LockNotHeldError(this.key, 'this handle was already released.'));
    }
    this.released = true;
    if (this.nested !== null || this.queue.length > 0) {
      return new Promise<void>((resolve) => (this.whenIdle = resolve)).then(() =>
        this.leaveLevel(),
      );
    }
    return this.leaveLevel();
  }

  /** Frees the Redis hold (outermost entry) or hands the level back to the parent. */
  private leaveLevel(): Promise<void> {
    if (this.parent === undefined) return this.releaseHold(this.hold);
    this.parent.leave(this);
    const lost = this.hold.lostError;
    return lost ? Promise.reject(lost) : Promise.resolve();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    if (!this.released) await this.release();
  }

  private leave(child: LockEntry): void {
    if (this.nested !== child) return;
    this.nested = null;
    const next = this.queue.shift();
    if (next) {
      this.forget(next);
      this.nested = new LockEntry(this.hold, next.outer, this, this.releaseHold);
      next.resolve(this.nested);
    } else if (this.whenIdle) {
      const resolve = this.whenIdle;
      this.whenIdle = undefined;
      resolve();
    }
  }

  private forget(request: NestedRequest): void {
    clearTimeout(request.timer);
    request.cancel?.();
  }
}
