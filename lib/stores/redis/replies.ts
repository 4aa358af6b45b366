import { LockError, LockRedisError } from '../../errors';
import { wrongKindError } from '../../store';
import { isReplyError } from './client/reply-errors';

/** Turns a failed Redis call into a LockRedisError (or the wrong-kind LockKeyError) for `key`. */
export function failure(key: string, operation: string): (error: unknown) => never {
  return (error) => {
    throw redisError(key, operation, error);
  };
}

/**
 * A LockRedisError for `key` (refused when Redis answered with an error); a WRONGTYPE answer (a
 * lock on a semaphore's name, or the reverse) is the LockKeyError the memory store gives too.
 */
export function redisError(key: string, operation: string, error: unknown): LockError {
  if (error instanceof LockError) return error; // already typed (a LockKeyError of WRONGTYPE)
  const refused = isReplyError(error);
  if (refused && (error as Error).message.startsWith('WRONGTYPE')) {
    return wrongKindError(key, error);
  }
  return new LockRedisError(key, operation, error, refused);
}
