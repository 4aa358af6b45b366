import type { Socket } from 'node:net';
import type { Cluster, Redis } from 'ioredis';

/**
 * Lock calls per socket write while batching. Small enough that Redis starts on the first
 * calls of a burst while later ones are still being made (the two run side by side), large
 * enough that a burst of concurrent calls costs a few system calls instead of one each.
 */
export const CALLS_PER_WRITE = 16;

/** Calls written into the corked socket since its last flush. */
const corked = new WeakMap<Socket, { calls: number }>();

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
 * commands back. Cluster clients (a connection per node) and sockets not writable yet (commands
 * then wait in ioredis' offline queue) are left alone.
 */
export function batchWrites(client: Redis | Cluster): void {
  if (client.isCluster) return;
  const connection = client as Redis;
  const socket = connection.stream as Socket | undefined;
  if (socket === undefined || !socket.writable) return;
  const batch = corked.get(socket);
  if (batch === undefined) {
    // Redis has nothing to do: this call goes out at once (no latency added to a lone call).
    if (connection.commandQueue === undefined || connection.commandQueue.length === 0) return;
    corked.set(socket, { calls: 1 });
    socket.cork();
    void Promise.resolve(socket).then(flush);
  } else if (++batch.calls % CALLS_PER_WRITE === 0) {
    // uncork() then cork(): what the socket holds goes out in one writev.
    socket.uncork();
    socket.cork();
  }
}
