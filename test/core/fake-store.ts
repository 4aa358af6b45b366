import type {
  LockTarget,
  AcquireReply,
  AcquireRequest,
  LockStore,
  NoticeListener,
  StoredHold,
} from '../../lib/store/lock-store';
import { LockRedisError, StoreUnreachableError } from '../../lib/errors';

/** A lock in the fake store. */
interface Entry {
  owner: string;
  /** Date.now() at which the lease ends; Infinity without a lease. */
  expiresAt: number;
}

/** What a scripted fault does to the next call of a method. */
type Fault = 'hang' | 'lose-answer' | 'refuse';

/** A call held back by a 'hang' fault: `go()` lets it run, `fail()` rejects it. */
export interface HeldCall {
  go(): void;
  fail(error: unknown): void;
}

/**
 * An in-memory LockStore for engine unit tests: a test double of our own seam, honouring its
 * contract (atomic steps, a lock re-granted to its own owner, idempotent release answering how
 * many listeners were told, notices to subscribed names only). Faults are scripted per call.
 */
export class FakeStore implements LockStore {
  /** Every call, in order: method and lock name (or names). */
  readonly calls: { method: string; name: string; owner?: string }[] = [];
  private readonly locks = new Map<string, Entry>();
  private readonly tokens = new Map<string, number>();
  /** Answers of releases already done, by owner: a resent release gets the first answer. */
  private readonly releasedBy = new Map<string, number | null>();
  /** Owners whose lock a kept release kept: a resent one answers true and moves nothing. */
  private readonly keptBy = new Set<string>();
  private readonly subscribed = new Set<string>();
  private readonly faults: { method: string; fault: Fault; held?: (call: HeldCall) => void }[] = [];
  private listener: NoticeListener | undefined;
  /** While set, the store is unreachable: every call fails at once, unsent, with this cause. */
  down: Error | undefined;

  unreachable(): Error | undefined {
    return this.down;
  }

  /** The next call of `method` fails, loses its answer (done, then rejected) or hangs. */
  fault(method: keyof LockStore | 'releaseKept', fault: Fault): void {
    this.faults.push({ method, fault });
  }

  /** The next call of `method` waits until the test lets it run; resolves that handle. */
  hold(method: keyof LockStore): Promise<HeldCall> {
    return new Promise((resolve) => this.faults.push({ method, fault: 'hang', held: resolve }));
  }

  /** The owner holding lock `name`, if any (expired leases count as free). */
  holder(name: string): string | undefined {
    return this.live(name)?.owner;
  }

  /** Another process takes lock `name` (Infinity: without a lease). */
  take(name: string, owner: string, leaseTime: number): void {
    this.locks.set(name, { owner, expiresAt: Date.now() + leaseTime });
  }

  /** Lock `name` vanishes without a notice (expired, or lost in a failover). */
  vanish(name: string): void {
    this.locks.delete(name);
  }

  /** Another process releases lock `name`: deleted, and subscribers are told. */
  freeByOther(name: string): void {
    this.locks.delete(name);
    this.notify(name);
  }

  acquire(request: AcquireRequest): Promise<AcquireReply> {
    this.calls.push({ method: 'acquire', name: request.name, owner: request.owner });
    return this.run('acquire', request.key, () => {
      const entry = this.live(request.name);
      if (entry !== undefined && entry.owner !== request.owner) {
        return { granted: false, ttl: entry.expiresAt - Date.now() };
      }
      this.locks.set(request.name, {
        owner: request.owner,
        expiresAt: Date.now() + request.leaseTime,
      });
      const token = (this.tokens.get(request.name) ?? 0) + 1;
      this.tokens.set(request.name, token);
      return { granted: true, fencingToken: request.fencing ? token : undefined };
    });
  }

  release(hold: StoredHold): Promise<number | null> {
    this.calls.push({ method: 'release', name: hold.name, owner: hold.owner });
    return this.run('release', hold.key, () => {
      if (this.releasedBy.has(hold.owner)) return this.releasedBy.get(hold.owner)!;
      if (this.live(hold.name)?.owner !== hold.owner) return null;
      this.locks.delete(hold.name);
      const listeners = this.notify(hold.name);
      this.releasedBy.set(hold.owner, listeners);
      return listeners;
    });
  }

  /** KeptReleasePort: the owner's lock stays `keepFor` ms more, nobody told. */
  releaseKept(hold: StoredHold, keepFor: number): Promise<boolean> {
    this.calls.push({ method: 'releaseKept', name: hold.name, owner: hold.owner });
    return this.run('releaseKept', hold.key, () => {
      if (this.keptBy.has(hold.owner)) return true;
      const entry = this.live(hold.name);
      if (entry?.owner !== hold.owner) return false;
      entry.expiresAt = Date.now() + keepFor;
      this.keptBy.add(hold.owner);
      return true;
    });
  }

  renew(holds: readonly StoredHold[], leaseTime: number): Promise<boolean[]> {
    this.calls.push({ method: 'renew', name: holds.map((h) => h.name).join(',') });
    return this.run('renew', holds[0]?.key ?? '', () =>
      holds.map((hold) => {
        const entry = this.live(hold.name);
        if (entry?.owner !== hold.owner) return false;
        entry.expiresAt = Date.now() + leaseTime;
        return true;
      }),
    );
  }

  forceUnlock({ key, name }: LockTarget): Promise<boolean> {
    this.calls.push({ method: 'forceUnlock', name });
    return this.run('forceUnlock', key, () => {
      const existed = this.live(name) !== undefined;
      this.locks.delete(name);
      if (existed) this.notify(name);
      return existed;
    });
  }

  remainingTtl({ key, name }: LockTarget): Promise<number | null> {
    this.calls.push({ method: 'remainingTtl', name });
    return this.run('remainingTtl', key, () => {
      const entry = this.live(name);
      return entry === undefined ? null : entry.expiresAt - Date.now();
    });
  }

  leave(): Promise<void> {
    return Promise.resolve();
  }

  available(): Promise<number> {
    return Promise.resolve(0);
  }

  /** The plain lock's channel is its name here. */
  channel(target: LockTarget): string {
    return target.name;
  }

  subscribe(name: string): Promise<void> {
    this.calls.push({ method: 'subscribe', name });
    return this.run('subscribe', name, () => void this.subscribed.add(name));
  }

  unsubscribe(name: string): Promise<void> {
    this.calls.push({ method: 'unsubscribe', name });
    return this.run('unsubscribe', name, () => void this.subscribed.delete(name));
  }

  listen(listener: NoticeListener): void {
    this.listener = listener;
  }

  private live(name: string): Entry | undefined {
    const entry = this.locks.get(name);
    if (entry !== undefined && entry.expiresAt <= Date.now()) {
      this.locks.delete(name);
      return undefined;
    }
    return entry;
  }

  /** Tells the listener of a release (asynchronously, as a notice arrives); its listener count. */
  private notify(name: string): number {
    if (!this.subscribed.has(name)) return 0;
    setImmediate(() => this.listener?.notice(name));
    return 1;
  }

  /** Runs one atomic step as a store call, applying the next scripted fault of `method`. */
  private run<T>(method: string, key: string, step: () => T): Promise<T> {
    if (this.down) return Promise.reject(new StoreUnreachableError(key, method, this.down));
    const index = this.faults.findIndex((f) => f.method === method);
    if (index < 0) return Promise.resolve().then(step);
    const [{ fault, held }] = this.faults.splice(index, 1);
    const noAnswer = () => new LockRedisError(key, method, new Error('connection lost'));
    switch (fault) {
      case 'refuse':
        return Promise.reject(new LockRedisError(key, method, new Error('NOPERM'), true));
      case 'lose-answer':
        return Promise.resolve()
          .then(step)
          .then(() => Promise.reject(noAnswer()));
      case 'hang':
        return new Promise<T>((resolve, reject) => {
          held?.({ go: () => resolve(Promise.resolve().then(step)), fail: reject });
        });
    }
  }
}
