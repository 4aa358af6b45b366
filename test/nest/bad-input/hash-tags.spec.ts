import { Injectable } from '@nestjs/common';
import { Locked, LockKeyError } from '../../../lib';
import { hashTagProblem } from '../../../lib/core/options/validate';
import { keySlot } from '../../../lib/stores/redis/key-slot';
import {
  channelName,
  fairQueueName,
  fairTimeoutName,
  fairWaiterChannel,
  permitsName,
  readLeaseKey,
  rwChannelName,
  semaphoreChannelName,
  tokenKey,
  unlockLatchKey,
} from '../../../lib/stores/redis/redis-names';
import { lockAppEach, type LockApp } from '../../support/lock-app';
import { STORE_KINDS, suiteStore } from '../../support/suite-store';

/** Every auxiliary name of lock `name`, as Redisson names them. */
const auxNames = (name: string) => [
  channelName(name),
  tokenKey(name),
  unlockLatchKey(name, '0123456789abcdef0123456789abcdef'),
  rwChannelName(name),
  readLeaseKey(name, 'client:1'),
  fairQueueName(name),
  fairTimeoutName(name),
  fairWaiterChannel(name, 'client:1'),
  permitsName(name),
  semaphoreChannelName(name),
];

/** What Redis Cluster hashes of `key`: its hash tag (first `{`, next `}`, not empty), or all. */
function hashedText(key: string): string {
  const tag = /^[^{]*\{([^}]+)\}/.exec(key);
  return tag ? tag[1] : key;
}

/** Every string of up to `length` characters from `alphabet`. */
function strings(alphabet: string, length: number): string[] {
  let level = [''];
  const all: string[] = [];
  for (let i = 0; i < length; i++) {
    level = level.flatMap((text) => [...alphabet].map((char) => text + char));
    all.push(...level);
  }
  return all;
}

describe('hash tags: a name is accepted exactly when its auxiliary names share its cluster slot', () => {
  const names = strings('a{}:', 6); // 5 460 names

  it('every accepted name has all its auxiliary names in its own slot', () => {
    const accepted = names.filter((name) => hashTagProblem(name) === undefined);
    expect(accepted.length).toBeGreaterThan(1_000);
    for (const name of accepted) {
      const slot = keySlot(name);
      expect({ name, slots: auxNames(name).map(keySlot) }).toEqual({
        name,
        slots: auxNames(name).map(() => slot),
      });
    }
  });

  it('every refused name has an auxiliary name hashed on other text (refusing it is needed)', () => {
    const refused = names.filter((name) => hashTagProblem(name) !== undefined);
    expect(refused.length).toBeGreaterThan(1_000);
    // Compared by the text hashed, not the slot: two texts may share a slot by chance.
    const sameText = refused.filter((name) =>
      auxNames(name).every((aux) => hashedText(aux) === hashedText(name)),
    );
    expect(sameText).toEqual([]);
  });
});

@Injectable()
class Orders {
  runs = 0;
  @Locked('order:<0>')
  pay(_id: string): Promise<void> {
    this.runs++;
    return Promise.resolve();
  }
}

describe.each(STORE_KINDS)('a key whose hash tag is not well formed (%s store)', (kind) => {
  const store = suiteStore(kind);
  let app: LockApp;
  lockAppEach(store, { waitTime: 0 }, (made) => (app = made), { providers: [Orders] });

  it.each(['a{b', '{}x', 'a}b'])(
    '%j is refused with LockKeyError by every kind of lock, before anything is stored',
    async (key) => {
      const { locks } = app;
      const calls: (() => Promise<unknown>)[] = [
        () => locks.acquire(key),
        () => locks.acquire(key, { fair: true }),
        () => locks.acquire(key, { fencing: true }),
        () => locks.acquire(key, { mode: 'read' }),
        () => locks.acquire(key, { mode: 'write' }),
        () => locks.acquire(['ok', key]),
        () => locks.semaphore(key, { permits: 2 }).acquire(),
        () => locks.run(key, () => 'ran'),
        () => app.app.get(Orders).pay(key),
      ];
      for (const call of calls) {
        await expect(Promise.resolve().then(call)).rejects.toBeInstanceOf(LockKeyError);
      }
      // A semaphore is refused when it is made, before its first call.
      expect(() => locks.semaphore(key, { permits: 1 })).toThrow(LockKeyError);
      expect(app.app.get(Orders).runs).toBe(0);
      expect(await store.exists(`${app.prefix}ok`)).toBe(false);
      expect(await store.exists(`${app.prefix}order:${key}`)).toBe(false);
    },
  );
});
