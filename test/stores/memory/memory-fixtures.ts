import { MemoryLockStore } from '../../../lib/stores/memory/memory-store';
import type { MemoryStoreClient } from '../../../lib/stores/memory/memory-store-client';
import type {
  AcquireReply,
  AcquireRequest,
  HoldKind,
  LockTarget,
  NoticeListener,
  StoredHold,
} from '../../../lib/store/lock-store';

/** Extra fields of a request or target (names, permits, queue, placeTimeout, leaseTime). */
type Extra = Partial<Omit<AcquireRequest, 'kind' | 'name' | 'owner'>>;

/** An acquire request of `kind` on `name` for `owner` (lease 5 s unless given). */
export function request(
  kind: HoldKind,
  name: string,
  owner: string,
  extra: Extra = {},
): AcquireRequest {
  return { kind, key: name, name, owner, leaseTime: 5_000, fencing: false, ...extra };
}

/** The hold `owner` has of `kind` on `name`. */
export function hold(kind: HoldKind, name: string, owner: string, extra: Extra = {}): StoredHold {
  return { kind, key: name, name, owner, ...extra };
}

/** The ttl of a refused reply (fails the test when it was granted). */
export function ttlOf(reply: AcquireReply): number {
  if (reply.granted) throw new Error('expected a refused acquire, got a grant');
  return reply.ttl;
}

/** A connection that records the notices it gets on the channels it subscribes to. */
export interface Recording {
  readonly client: MemoryStoreClient;
  readonly notices: string[];
}

/** Connects to `store` and subscribes to `channels`, recording what arrives. */
export async function recording(store: MemoryLockStore, ...channels: string[]): Promise<Recording> {
  const client = store.connect();
  const notices: string[] = [];
  const listener: NoticeListener = {
    notice: (channel) => notices.push(channel),
    reconnected: () => undefined,
  };
  client.listen(listener);
  for (const channel of channels) await client.subscribe(channel);
  return { client, notices };
}

/** A recording subscribed to the channel on which `owner` waits for `target` (a new connection's). */
export function waiting(
  store: MemoryLockStore,
  target: LockTarget,
  owner: string,
): Promise<Recording> {
  return recording(store, store.connect().channel(target, owner));
}

/** Lets the notices sent so far arrive (they are delivered with setImmediate). */
export function delivered(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * Jest hooks: a new store before each test, handed to `made`, under fake timers that leave
 * setImmediate real (so that notices still arrive); real timers again after it. The spec imports
 * './date-clock' first, so that the store's clock runs on the faked Date.
 */
export function storeOnFakeClock(made: (store: MemoryLockStore) => void): void {
  beforeEach(() => {
    jest.useFakeTimers({ doNotFake: ['setImmediate', 'nextTick', 'queueMicrotask'] });
    made(new MemoryLockStore());
  });
  afterEach(() => jest.useRealTimers());
}

export { MemoryLockStore };
