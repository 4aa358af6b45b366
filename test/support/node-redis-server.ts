import { createClient, createCluster } from 'redis';
import { nodeRedisClient } from '../../lib/node-redis';
import type { WrappedRedisClient } from '../../lib';
import type { TestRedis } from './redis-server';

/** A node-redis client or Cluster client a test made. */
type NodeRedis = ReturnType<typeof createClient> | ReturnType<typeof createCluster>;

/**
 * A suite's Redis server as node-redis users reach it: each app of the suite gets a node-redis
 * client of its own (created unconnected: the module connects it), wrapped with nodeRedisClient.
 * The clients are the test's, as a user's are theirs: the module never closes them; close()
 * does, after the suite's tests.
 */
export class NodeRedisServer {
  private readonly clients: NodeRedis[] = [];

  constructor(private readonly server: () => TestRedis) {}

  /** The server's URL (a child process reaches it with ioredis). */
  get url(): string {
    return this.server().url;
  }

  /** A new node-redis client on the server, not connected yet, wrapped for `client`. */
  client(): WrappedRedisClient {
    return nodeRedisClient(this.track(createClient({ url: this.url })));
  }

  /** Keeps `client` to close it after the suite; connection errors are expected of a test's. */
  track<T extends NodeRedis>(client: T): T {
    client.on('error', () => undefined);
    this.clients.push(client);
    return client;
  }

  close(): Promise<void> {
    for (const client of this.clients.splice(0)) destroy(client);
    return Promise.resolve();
  }
}

/** Closes a node-redis client at once, if it is not closed already (node-redis 5 throws then). */
export function destroy(client: { readonly isOpen: boolean; destroy(): void }): void {
  if (client.isOpen) client.destroy();
}
