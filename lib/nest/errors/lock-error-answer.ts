import { holderText, LockAcquireTimeoutError, type LockKeyError } from '../../errors';

/** HTTP status a busy lock answers with (module option `busyStatus`). */
export type BusyStatus = 409 | 423 | 503;

/** What a caller is told about a LockAcquireTimeoutError or a LockKeyError, in any transport. */
export interface LockErrorAnswer {
  /** HTTP status: `busyStatus` for a busy lock, 400 for a bad key argument. */
  statusCode: number;
  /** The status' reason phrase, as in Nest's HttpException bodies. */
  error: string;
  /**
   * A sentence for the client; names the key, and the holder's registered process when known,
   * only when `exposeKeys` is set.
   */
  message: string;
  /** Whole seconds to wait before retrying (HTTP `Retry-After`), at least 1; see busyError. */
  retryAfter: number | undefined;
  /** GraphQL `extensions.code`. */
  code: string;
}

const PHRASES: Record<number, [error: string, code: string]> = {
  400: ['Bad Request', 'BAD_USER_INPUT'],
  409: ['Conflict', 'CONFLICT'],
  423: ['Locked', 'LOCKED'],
  503: ['Service Unavailable', 'SERVICE_UNAVAILABLE'],
};

/** Maps a busy lock or a bad key argument to what the caller gets. */
export function lockErrorAnswer(
  error: LockAcquireTimeoutError | LockKeyError,
  busyStatus: BusyStatus,
  exposeKeys: boolean,
): LockErrorAnswer {
  if (error instanceof LockAcquireTimeoutError) {
    const [phrase, code] = PHRASES[busyStatus];
    return {
      statusCode: busyStatus,
      error: phrase,
      code,
      message: exposeKeys
        ? `Lock "${error.key}" is held by another operation${error.holder ? ` (${holderText(error.holder)})` : ''}.`
        : 'The resource is locked by another operation.',
      // Whole seconds (HTTP), rounded up, at least 1: 0 would invite an immediate retry.
      retryAfter:
        error.retryAfter === undefined
          ? undefined
          : Math.max(1, Math.ceil(error.retryAfter / 1000)),
    };
  }
  const [phrase, code] = PHRASES[400];
  return {
    statusCode: 400,
    error: phrase,
    code,
    message: exposeKeys ? error.message : 'Invalid lock key argument.',
    retryAfter: undefined,
  };
}
