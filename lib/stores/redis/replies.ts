import { LockError, LockRedisError } from '../../errors';
import { wrongKindError, type AcquireReply } from '../../store';
import { isReplyError } from './client';

const NOT_GRANTED_NO_LEASE: AcquireReply = { granted: false, ttl: Infinity };
const GRANTED: AcquireReply = { granted: true, fencingToken: undefined };

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

/**
 * Decodes acquire.lua's and acquire-fenced.lua's reply: 0 acquired, > 0 acquired with that
 * fencing token; < 0 busy, PTTL -2 - reply.
 */
export function acquireReply(reply: unknown): AcquireReply {
  const result = Number(reply);
  if (result === 0) return GRANTED;
  if (result > 0) return { granted: true, fencingToken: result };
  return result === -1 ? NOT_GRANTED_NO_LEASE : { granted: false, ttl: -2 - result };
}

/** Decodes release.lua's reply: the listeners told, or null when the owner did not hold it. */
export function releaseReply(reply: unknown): number | null {
  return reply === null ? null : Number(reply);
}
