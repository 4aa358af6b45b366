/** A place in a WaitList, as its owner sees it. */
export interface WaitTicket<D> {
  /** What the waiter brought (e.g. its acquire attempt). */
  readonly data: D;
  /** True once the waiter got its turn, timed out, was aborted or was failed. */
  readonly done: boolean;
}

class Ticket<T, D> implements WaitTicket<D> {
  done = false;
  timer: NodeJS.Timeout | undefined;
  cancel: (() => void) | undefined;

  constructor(
    readonly data: D,
    readonly resolve: (value: T | null) => void,
    readonly reject: (reason: unknown) => void,
  ) {}
}

/**
 * A FIFO of waiting callers. Each waiter's promise ends in one of four ways: its turn
 * (`grant`, resolves the value), its wait time (resolves null), its AbortSignal (rejects with
 * the signal's reason) or `fail` (rejects). `onLeave` runs after every departure. Timers are
 * unref'd: a waiting lock call never keeps the process alive by itself.
 */
export class WaitList<T, D> {
  private readonly tickets: Ticket<T, D>[] = [];

  constructor(private readonly onLeave: () => void = () => undefined) {}

  get length(): number {
    return this.tickets.length;
  }

  /** The first waiter, if any. */
  head(): WaitTicket<D> | undefined {
    return this.tickets[0];
  }

  /** Queues a waiter for at most `waitTime` ms (Infinity: no limit) or until `signal` aborts. */
  add(data: D, waitTime: number, signal?: AbortSignal): Promise<T | null> {
    if (signal?.aborted) return Promise.reject(signal.reason);
    return new Promise<T | null>((resolve, reject) => {
      const ticket = new Ticket<T, D>(data, resolve, reject);
      if (Number.isFinite(waitTime)) {
        ticket.timer = setTimeout(() => this.end(ticket, () => resolve(null)), waitTime);
        ticket.timer.unref();
      }
      if (signal) {
        const onAbort = () => this.end(ticket, () => reject(signal.reason));
        signal.addEventListener('abort', onAbort, { once: true });
        ticket.cancel = () => signal.removeEventListener('abort', onAbort);
      }
      this.tickets.push(ticket);
    });
  }

  /** Gives `ticket` its turn with `value`; false when it had already left. */
  grant(ticket: WaitTicket<D>, value: T): boolean {
    const own = ticket as Ticket<T, D>;
    return this.end(own, () => own.resolve(value));
  }

  /** Rejects `ticket` with `reason`; false when it had already left. */
  fail(ticket: WaitTicket<D>, reason: unknown): boolean {
    const own = ticket as Ticket<T, D>;
    return this.end(own, () => own.reject(reason));
  }

  /** Rejects every waiter with `reason`. */
  failAll(reason: unknown): void {
    for (const ticket of [...this.tickets]) this.fail(ticket, reason);
  }

  private end(ticket: Ticket<T, D>, settle: () => void): boolean {
    if (ticket.done) return false;
    ticket.done = true;
    clearTimeout(ticket.timer);
    ticket.cancel?.();
    const index = this.tickets.indexOf(ticket);
    if (index >= 0) this.tickets.splice(index, 1);
    settle();
    this.onLeave();
    return true;
  }
}
