import { StoreUnreachableError } from '../store/lock-store';
import type { ScriptClient } from './lua-script';
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
 * reconnect (a grant nobody waits for any more). Requests written before it closed are failed
 * when it closes, but for releases (see send): ioredis resends them after the reconnect, and a
 * grant that brings is freed by the attempt's cleanup (see HoldCalls). The first connect is not
 * "down" until it fails: requests made meanwhile wait for it, as they always did.
 */
export class ConnectionState {
  private lastError: Error | undefined;
  private wasReady = false;
  /** Requests written and not yet answered, each with its failure callback. */
  private readonly inFlight = new Set<(error: Error) => void>();

  constructor(
    private readonly connection: ScriptClient,
    /** Where it goes, for messages. */
    private readonly address: string,
  ) {
    connection.on('ready', () => {
      this.wasReady = true;
      this.lastError = undefined;
    });
    connection.on('error', (error: Error) => (this.lastError = rootCause(error)));
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
   * A request of `operation` on `key` (`request` writes it): refused unsent with
   * StoreUnreachableError while the connection is down, else failed (LockRedisError) if the
   * connection closes before its answer; with `resent`, it waits instead for ioredis to send it
   * again after the reconnect (an idempotent request whose answer matters, bounded by its caller).
   */
  send<T>(key: string, operation: string, request: () => Promise<T>, resent = false): Promise<T> {
    const down = this.down();
    if (down) return Promise.reject(new StoreUnreachableError(key, operation, down));
    const mapError = (error: unknown) => redisError(key, operation, error);
    if (resent) {
      return request().catch((error: unknown) => {
        throw mapError(error);
      });
    }
    return this.bound(request(), mapError);
  }

  /**
   * `answered` and `failed` of one request written now, wrapped so that exactly one of them
   * runs: the answer, or a failure if the connection closes first.
   */
  track<T>(
    answered: (value: T) => void,
    failed: (error: unknown) => void,
  ): [(value: T) => void, (error: unknown) => void] {
    const fail = (error: unknown) => {
      if (this.inFlight.delete(fail)) failed(error);
    };
    this.inFlight.add(fail);
    return [
      (value) => {
        if (this.inFlight.delete(fail)) answered(value);
      },
      fail,
    ];
  }

  /**
   * `promise` of a request written now, rejected if the connection closes before it settles;
   * its failures mapped by `mapError`.
   */
  bound<T>(promise: Promise<T>, mapError: (error: unknown) => unknown): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const [answered, failed] = this.track(resolve, (error) => reject(mapError(error)));
      promise.then(answered, failed);
    });
  }

  private closed(): void {
    if (this.inFlight.size === 0) return;
    const error = new Error(
      `the connection to ${this.address} closed before Redis answered${this.lastError ? ` (${this.lastError.message})` : ''}`,
      { cause: this.lastError },
    );
    for (const fail of [...this.inFlight]) fail(error);
  }
}
