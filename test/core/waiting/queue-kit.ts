import type { LockHold } from '../../../lib/core/lock-hold';
import type { Attempt, KeyQueue, QueueHost } from '../../../lib/core/waiting/key-queue';
import { Deferred } from '../engine-kit';

/** A scripted attempt function: each call is one pending reply, answered by the test. */
export function scripted(): Attempt & { replies: Deferred<LockHold | number>[] } {
  const replies: Deferred<LockHold | number>[] = [];
  const attempt = () => {
    const reply = new Deferred<LockHold | number>();
    replies.push(reply);
    return reply.promise;
  };
  return Object.assign(attempt, { replies });
}

/** A fake QueueHost whose SUBSCRIBE the test answers; with `passing`, it can pass turns on. */
export function fakeHost(passing = false) {
  const subscription = new Deferred<void>();
  const host = {
    subscription,
    subscribe: jest.fn((_name: string) => subscription.promise),
    unsubscribe: jest.fn((_name: string) => Promise.resolve()),
    abandoned: jest.fn((_hold: LockHold) => undefined),
    failed: jest.fn((_error: unknown) => undefined),
    dropped: jest.fn((_queue: KeyQueue) => undefined),
    passTurn: passing ? jest.fn((_channel: string) => undefined) : undefined,
  };
  return host satisfies QueueHost;
}
