import type { Socket } from 'node:net';
import type { Redis } from 'ioredis';
import { IOREDIS_VERSION } from './ioredis-version';

/**
 * Lock calls per socket write while batching. Small enough that Redis starts on the first
 * calls of a burst while later ones are still being made (the two run side by side), large
 * enough that a burst of concurrent calls costs a few system calls instead of one each.
 */
export const CALLS_PER_WRITE = 16;

/** The warning given once when the installed ioredis lacks what batching reads. */
export const UNBATCHED_WARNING = 'NESTJS_REDIS_LOCK_UNBATCHED';

/**
 * What batching reads of an ioredis connection: fields ioredis does not document (its own
 * code uses them), so a release could rename them. missingInternals() says which are gone, a
 * test (test/stores/redis/client/ioredis-internals.spec.ts) fails when one is, and at run time
 * batching stops with a warning instead of silently (see batchWrites).
 */
interface BatchingInternals {
  /** The connection's socket (a net.Socket, or a tls.TLSSocket), once it has connected. */
  readonly stream?: Socket;
  /** Commands written and not yet answered. */
  readonly commandQueue?: { readonly length: number };
}

/**
 * Which of the internals batching reads a connected (`ready`) ioredis connection lacks: none on
 * the ioredis this library is tested with.
 */
export function missingInternals(connection: Redis): string[] {
  const { stream, commandQueue } = connection as unknown as BatchingInternals;
  const missing: string[] = [];
  if (typeof stream?.cork !== 'function' || typeof stream.uncork !== 'function') {
    missing.push('`stream` (its socket)');
  }
  if (typeof commandQueue?.length !== 'number') missing.push('`commandQueue`');
  return missing;
}

/** Calls written into the corked socket since its last flush. */
const corked = new WeakMap<Socket, { calls: number }>();
/** Set once the internals were found missing: every call goes out on its own from then on. */
let unbatched = false;

/** Sends what the socket holds (see batchWrites). */
function flush(socket: Socket): void {
  corked.delete(socket);
  socket.uncork();
}

/**
 * Lets lock calls made while Redis is busy with earlier ones reach it in a few writes. A call
 * made while no command is in flight goes out at once, as without batching (a lone call waits
 * for nothing). A call made while commands are in flight corks the command connection's socket:
 * the calls after it join, every CALLS_PER_WRITE-th sends what the socket holds, and a microtask
 * queued by the first sends the rest once the code that made them yields. Redis is busy
 * meanwhile, so the batch costs no latency; with 64 concurrent lock calls one write system
 * call carries up to 16 commands instead of one. Writes keep their order. The flush is a promise
 * reaction, not a timer or process.nextTick, so fake timers in a user's tests cannot hold
 * commands back. Sockets not writable yet (commands then wait in ioredis' offline queue) are
 * left alone. On an ioredis without the internals it reads (see missingInternals), warns once
 * (process warning UNBATCHED_WARNING) and sends every call on its own from then on.
 */
export function batchWrites(connection: Redis): void {
  if (unbatched) return;
  const { stream: socket, commandQueue } = connection as unknown as BatchingInternals;
  if (socket === undefined || !socket.writable) {
    if (socket === undefined && connection.status === 'ready') internalsGone(connection);
    return;
  }
  const batch = corked.get(socket);
  if (batch === undefined) {
    const inFlight = commandQueue?.length;
    // Redis has nothing to do: this call goes out at once (no latency added to a lone call).
    if (inFlight === 0) return;
    if (inFlight === undefined || typeof socket.cork !== 'function') {
      internalsGone(connection);
      return;
    }
    corked.set(socket, { calls: 1 });
    socket.cork();
    void Promise.resolve(socket).then(flush);
  } else if (++batch.calls % CALLS_PER_WRITE === 0) {
    // uncork() then cork(): what the socket holds goes out in one writev.
    socket.uncork();
    socket.cork();
  }
}

function internalsGone(connection: Redis): void {
  unbatched = true;
  const missing = missingInternals(connection);
  process.emitWarning(
    `nestjs-redis-lock: ioredis ${IOREDIS_VERSION} has no ${missing.join(' or ') || 'usable socket or command queue'} on its connections: lock calls are sent unbatched (one socket write each; slower under many concurrent calls, otherwise the same).`,
    { code: UNBATCHED_WARNING },
  );
}
