import { StoreUnreachableError } from '../../errors';
import type { RedisConnection } from './client/redis-client';
import { redisError } from './replies';

/** Error codes that say at once that the address refuses us: no point waiting for an answer. */
const REFUSAL_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ENOTFOUND', 'EHOSTUNREACH']);
/** Replies by which Redis refuses the connection's credentials. */
const AUTH_REFUSAL = /^(WRONGPASS|NOAUTH|NOPERM|ERR AUTH|ERR invalid password)/;

/**
 * The error behind a connection error event: a Cluster's "failed to refresh slots" names its
 * last node's error, which says what happened (e.g. `connect ECONNREFUSED 127.0.0.1:7000`).
 */
export function rootCause(error: Error): Error {
  const last = (error as { lastNodeError?: unknown }).lastNodeError;
  return last instanceof Error ? last : error;
}

/**
 * Whether a connection error is a refusal known at once (connection refused or reset, host
 * unknown or unreachable, credentials refused), as opposed to an address that does not answer.
 */
export function isRefusal(error: Error): boolean {
  const cause = rootCause(error);
  const code = (cause as { code?: unknown }).code;
  return (typeof code === 'string' && REFUSAL_CODES.has(code)) || AUTH_REFUSAL.test(cause.message);
}

/**
 * Whether the command connection can take a request now, and why not. A request made while it
 * is down fails at once instead of waiting in ioredis' offline queue to be sent after the
 * reconnect (a grant nobody waits for any more). Requests written before it closed fail when it
 * closes (a release after a grace: its resent answer says whether the lock was still held);
 * ioredis resends them after the reconnect, and a grant that brings is freed by the attempt's
 * cleanup (see HoldCalls). The first connect is not "down" until it fails: requests made
 * meanwhile wait for it, as they always did.
 */
export class ConnectionState {
  private lastError: Error | undefined;
  private wasReady = false;
  /** Requests written and not yet answered: each one's failure callback, and its grace (ms). */
  private readonly inFlight = new Map<(error: Error) => void, number>();
  /** Resolved at the connection's next 'ready' (see reachable). */
  private back: { promise: Promise<void>; resolve: () => void } | undefined;

  constructor(
    private readonly connection: RedisConnection,
    /** Where it goes, for messages. */
    private readonly address: string,
  ) {
    connection.on('ready', () => {
      this.wasReady = true;
      this.lastError = undefined;
      this.back?.resolve();
      this.back = undefined;
    });
    connection.on('error', (error) => (this.lastError = rootCause(error)));
    connection.on('close', () => this.closed());
  }

  /**
   * Why a request cannot be sent now (the connection's last error, e.g. `connect ECONNREFUSED`),
   * or undefined when it can.
   */
  down(): Error | undefined {
    const { status } = this.connection;
    if (status === 'ready') return undefined;
    if (!this.wasReady && this.lastError === undefined && status !== 'end') return undefined;
    return this.lastError ?? new Error(`the connection to ${this.address} is ${status}`);
  }

  /**
   * Resolves once the connection is ready (at once when it is now). After a reconnect that is a
   * step after its 'ready' event, so after the unanswered commands ioredis resends then (it
   * writes them right after emitting it): what is sent from here goes out behind them.
   */
  reachable(): Promise<void> {
    if (this.connection.status === 'ready') return Promise.resolve();
    if (this.back === undefined) {
      let resolve!: () => void;
      const promise = new Promise<void>((done) => (resolve = done));
      this.back = { promise, resolve };
    }
    return this.back.promise;
  }

  /**
   * A request of `operation` on `key` (`request` writes it): refused unsent with
   * StoreUnreachableError while the connection is down, else failed (LockRedisError) if the
   * connection closes before its answer, after `grace` ms (ioredis resends it once reconnected);
   * an answer that comes after that goes to `late`.
   */
  send<T>(
    key: string,
    operation: string,
    request: () => Promise<T>,
    grace = 0,
    late?: (value: T) => void,
  ): Promise<T> {
    const down = this.down();
    if (down) return Promise.reject(new StoreUnreachableError(key, operation, down));
    return new Promise<T>((resolve, reject) => {
      const mapError = (error: unknown) => reject(redisError(key, operation, error));
      const [answered, failed] = this.track(resolve, mapError, grace);
      request().then((value) => answered(value) || late?.(value), failed);
    });
  }

  /**
   * `answered` and `failed` of one request written now, wrapped so that exactly one of them
   * runs: the answer, or a failure if the connection closes first (`grace` ms after the close,
   * for a request whose resent answer is worth that wait). The answer's wrapper says whether it
   * was delivered (false: it came after the failure).
   */
  track<T>(
    answered: (value: T) => void,
    failed: (error: unknown) => void,
    grace = 0,
  ): [(value: T) => boolean, (error: unknown) => void] {
    const fail = (error: unknown) => {
      if (this.inFlight.delete(fail)) failed(error);
    };
    this.inFlight.set(fail, grace);
    return [
      (value) => {
        if (!this.inFlight.delete(fail)) return false;
        answered(value);
        return true;
      },
      fail,
    ];
  }

  private closed(): void {
    if (this.inFlight.size === 0) return;
    const error = new Error(
      `the connection to ${this.address} closed before Redis answered${this.lastError ? ` (${this.lastError.message})` : ''}`,
      { cause: this.lastError },
    );
    for (const [fail, grace] of [...this.inFlight]) {
      if (grace > 0) setTimeout(fail, grace, error).unref();
      else fail(error);
    }
  }
}
