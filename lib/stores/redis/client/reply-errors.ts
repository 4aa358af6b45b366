/** How each loaded adapter recognises a Redis error reply among its client's errors. */
const replyErrorChecks: ((error: unknown) => boolean)[] = [];

/**
 * Whether `error` is an error reply from Redis (WRONGTYPE, NOPERM, READONLY, OOM...), as
 * opposed to a failure of the link: as the adapter of the client that gave it says (see
 * recogniseReplyErrors). Every error the store gets from a client came through an adapter, so
 * that adapter is loaded and has said how.
 */
export function isReplyError(error: unknown): boolean {
  return replyErrorChecks.some((check) => check(error));
}

/** Called once by an adapter when it loads: how its client's error replies are recognised. */
export function recogniseReplyErrors(check: (error: unknown) => boolean): void {
  replyErrorChecks.push(check);
}
