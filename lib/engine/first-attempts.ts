import { LockRedisError } from '../lock.errors';
import type { LockHold } from './lock-hold';

/** How often the in-flight first attempts are checked against their deadlines, ms. */
const CHECK_INTERVAL = 50;

/**
 * A first acquire attempt in flight, awaited by its caller instead of the attempt itself: `then`
 * hands the caller's own resolvers to the attempt and keeps `reject`, so the deadline can end
 * the wait. It is its own list node. No timer or closure per call.
 */
class FirstAttempt implements PromiseLike<LockHold | number> {
  prev: FirstAttempt | undefined;
  next: FirstAttempt | undefined;
  private reject: ((reason: unknown) => unknown) | undefined;

  constructor(
    readonly key: string,
    readonly attempt: Promise<LockHold | number>,
    readonly timeout: number,
    readonly deadline: number,
  ) {}

  then<A = LockHold | number, B = never>(
    onfulfilled?: ((value: LockHold | number) => A | PromiseLike<A>) | null,
    onrejected?: ((reason: unknown) => B | PromiseLike<B>) | null,
  ): PromiseLike<A | B> {
    this.reject = onrejected ?? undefined;
    return this.attempt.then(onfulfilled, onrejected);
  }

  /** Ends the caller's wait with a LockRedisError. */
  expire(): void {
    this.reject?.(
      new LockRedisError(this.key, 'acquire', new Error(`no answer within ${this.timeout} ms`)),
    );
  }
}

/**
 * The first acquire attempts in flight (a linked list), each with the time its caller stops
 * waiting: Redis paused, or a connection gone silent. One unref'd timer checks them every
 * CHECK_INTERVAL ms while any is in flight, and stops when none is. A hold that an expired
 * attempt gets after all is handed to `late`.
 */
export class FirstAttempts {
  private head: FirstAttempt | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(private readonly late: (hold: LockHold) => void) {}

  /**
   * Settles like `attempt` (sent at `sentAt`), or rejects with a LockRedisError once `timeout`
   * ms have passed since.
   */
  async bound(
    key: string,
    attempt: Promise<LockHold | number>,
    sentAt: number,
    timeout: number,
  ): Promise<LockHold | number> {
    const first = new FirstAttempt(key, attempt, timeout, sentAt + timeout);
    this.link(first);
    try {
      return await first;
    } finally {
      this.unlink(first);
    }
  }

  /** The attempts still in flight, each settling (never rejecting) when Redis answers it. */
  inFlight(): Promise<unknown>[] {
    const settling: Promise<unknown>[] = [];
    for (let first = this.head; first; first = first.next) {
      settling.push(first.attempt.catch(() => undefined));
    }
    return settling;
  }

  private link(first: FirstAttempt): void {
    first.next = this.head;
    if (this.head) this.head.prev = first;
    this.head = first;
    if (this.timer === undefined) {
      this.timer = setInterval(() => this.check(), CHECK_INTERVAL);
      this.timer.unref();
    }
  }

  /** Idempotent: an expired attempt is unlinked by check() and again when its caller resumes. */
  private unlink(first: FirstAttempt): void {
    if (first.prev) first.prev.next = first.next;
    else if (this.head === first) this.head = first.next;
    if (first.next) first.next.prev = first.prev;
    first.prev = first.next = undefined;
  }

  /** An attempt still listed has not settled: its caller unlinks it as soon as it resumes. */
  private check(): void {
    if (this.head === undefined) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    const now = Date.now();
    let first: FirstAttempt | undefined = this.head;
    while (first !== undefined) {
      const next: FirstAttempt | undefined = first.next;
      if (now >= first.deadline) {
        this.unlink(first);
        first.expire();
        first.attempt.then(
          (result) => typeof result !== 'number' && this.late(result),
          () => undefined,
        );
      }
      first = next;
    }
  }
}
