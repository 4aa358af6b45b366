import type { LockErrorAnswer } from './lock-error-answer';
import type { LockRedisError } from '../../errors';

/** HTTP status a Redis failure answers with (module option `redisErrorStatus`). */
export type RedisErrorStatus = 500 | 502 | 503 | 504;

/** The statuses `redisErrorStatus` accepts. */
export const REDIS_ERROR_STATUSES: readonly RedisErrorStatus[] = [500, 502, 503, 504];

/**
 * Whole seconds a client is asked to wait before retrying after a 503 (`Retry-After`): about how
 * long a reconnect or a failover takes, while the lock calls of the outage fail fast.
 */
export const REDIS_RETRY_AFTER = 1;

const PHRASES: Record<RedisErrorStatus, [error: string, code: string]> = {
  500: ['Internal Server Error', 'INTERNAL_SERVER_ERROR'],
  502: ['Bad Gateway', 'BAD_GATEWAY'],
  503: ['Service Unavailable', 'SERVICE_UNAVAILABLE'],
  504: ['Gateway Timeout', 'GATEWAY_TIMEOUT'],
};

/**
 * Maps a LockRedisError (Redis down, unanswered or refusing a lock call) to what the caller
 * gets: `status` (503 by default) with `Retry-After` when it is 503; names the key only with
 * `exposeKeys`, and never the Redis error itself (it is logged, and it is the error's `cause`).
 */
export function redisErrorAnswer(
  error: LockRedisError,
  status: RedisErrorStatus,
  exposeKeys: boolean,
): LockErrorAnswer {
  const [phrase, code] = PHRASES[status];
  return {
    statusCode: status,
    error: phrase,
    code,
    message: exposeKeys
      ? `Lock "${error.key}" could not be taken: its store is unavailable.`
      : 'The lock service is unavailable.',
    retryAfter: status === 503 ? REDIS_RETRY_AFTER : undefined,
  };
}
