import { createServer, Socket, type Server } from 'node:net';
import { freePort } from '../support/redis-server';

/**
 * A loopback TCP proxy in front of Redis on `target`. `cut()` resets every connection and
 * refuses new ones until `restore()`; `stall()` stops moving bytes on open connections (a
 * network that drops packets without resetting), `unstall()` moves them again; `dropReplies()`
 * forwards requests but loses Redis' answers until the next `cut()`.
 */
export async function tcpProxy(target: number) {
  const port = await freePort();
  const pairs = new Set<{ client: Socket; upstream: Socket }>();
  let refusing = false;
  let stalled = false;
  let dropping = false;
  const server: Server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = new Socket();
    const pair = { client, upstream };
    pairs.add(pair);
    upstream.connect(target, '127.0.0.1');
    for (const socket of [client, upstream]) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    if (stalled) {
      client.pause();
      upstream.pause();
    }
    client.on('data', (data: Buffer) => upstream.write(data));
    upstream.on('data', (data: Buffer) => {
      if (!dropping) client.write(data);
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  const each = (fn: (socket: Socket) => void) => {
    for (const { client, upstream } of pairs) {
      fn(client);
      fn(upstream);
    }
  };
  return {
    port,
    /** Open connections through the proxy. */
    get connections() {
      return pairs.size;
    },
    cut() {
      refusing = true;
      dropping = false;
      each((socket) => socket.destroy());
    },
    restore() {
      refusing = false;
    },
    stall() {
      stalled = true;
      each((socket) => socket.pause());
    },
    unstall() {
      stalled = false;
      each((socket) => socket.resume());
    },
    dropReplies() {
      dropping = true;
    },
    close: () =>
      new Promise<void>((resolve) => {
        refusing = true;
        each((socket) => socket.destroy());
        server.close(() => resolve());
      }),
  };
}

/** A loopback TCP proxy in front of Redis (see tcpProxy). */
export type TcpProxy = Awaited<ReturnType<typeof tcpProxy>>;
