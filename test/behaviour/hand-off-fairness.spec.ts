import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { LockService } from '../../lib';
import { lockApp } from '../support/lock-app';
import { monitorServer } from '../support/redis-monitor';
import type { TestRedis } from '../support/redis-server';
import { suiteRedis } from '../support/suite-redis';

/** Clients that share one process, each its own application (its own connections). */
const CLIENTS = 8;
/**
 * Sections run in all, by whichever client gets the lock: 400, an even 50 each, still far from
 * the 1 or 2 a starved client got. 800 outran Jest's 30 s beside two busy loops and the other
 * project's copy of this suite (a CPU-starved process, not a slow hand-off: speed is the
 * benchmark's to measure), so this test also has a longer timeout.
 */
const SECTIONS = 400;
/** Ample for 400 sections on a starved CPU (about 3 s alone). */
const TIMEOUT = 120_000;
/**
 * The smallest share of an even split (SECTIONS / CLIENTS) every client must get. This test is
 * the starvation alarm: before the hand-off hold-back the clients a release woke got 1 or 2
 * sections of an even 100 each; with HANDOFF_HOLD_BACK at 0 it still fails (2026-11-28:
 * [1, 0, 0, 2, 7, 0, 177, 213] of 400). How even the turns are (min/max, issue target 0.5) is
 * measured by the benchmark's fairness scenario, not here: alone the turns come out 0.85-0.9,
 * while a full jest run on 2 cores skewed them down to a least client of 53 and 75 of 100.
 */
const MIN_SHARE_OF_EVEN = 0.25;

describe('fairness between clients in one process', () => {
  let redis: TestRedis;
  let raw: Redis;
  const server = suiteRedis();
  beforeAll(() => ({ redis, raw } = server));

  let apps: { app: INestApplication; locks: LockService; prefix: string }[] = [];
  afterEach(async () => {
    await Promise.all(apps.map(({ app }) => app.close()));
    apps = [];
  });

  it(
    `${CLIENTS} LockService instances looping on one key each get turns (no client starves)`,
    async () => {
      const first = await lockApp(redis, { waitTime: 20_000 });
      apps = [first];
      for (let i = 1; i < CLIENTS; i++) {
        apps.push(await lockApp(redis, { keyPrefix: first.prefix, waitTime: 20_000 }));
      }
      const counter = `${first.prefix}counter`;
      const turns = apps.map(() => 0);
      // Every client in the race first: each takes the lock once (its connections and its
      // subscription to the lock's notices are up), so a client that starts late under load is
      // not counted as starved.
      await Promise.all(apps.map(({ locks }) => locks.run('shared', () => Promise.resolve())));
      let started = 0;
      // Every client loops until the sections run out; each section is a GET-then-SET increment.
      await Promise.all(
        apps.map(async ({ locks }, client) => {
          while (started < SECTIONS) {
            await locks.run('shared', async () => {
              if (started >= SECTIONS) return;
              started++;
              const value = Number((await raw.get(counter)) ?? 0);
              await raw.set(counter, value + 1);
              turns[client]++;
            });
          }
        }),
      );
      expect(await raw.get(counter)).toBe(String(SECTIONS));
      expect(turns.reduce((sum, count) => sum + count, 0)).toBe(SECTIONS);
      expect(Math.min(...turns)).toBeGreaterThanOrEqual((SECTIONS / CLIENTS) * MIN_SHARE_OF_EVEN);
    },
    TIMEOUT,
  );

  it(
    'a client that stops wanting the lock passes its turn on (a PUBLISH of its own), once, then it is gone',
    async () => {
      const first = await lockApp(redis, { waitTime: 20_000 });
      apps = [first];
      for (let i = 1; i < 3; i++) {
        apps.push(await lockApp(redis, { keyPrefix: first.prefix, waitTime: 20_000 }));
      }
      await Promise.all(apps.map(({ locks }) => locks.run('shared', () => Promise.resolve())));
      // Every pass: a PUBLISH a client sends itself (a release publishes inside its script).
      const channel = `redisson_lock__channel:{${first.prefix}shared}`;
      const marker = `end:${first.prefix}`;
      let passes = 0;
      let markerSeen!: () => void;
      const ended = new Promise<void>((resolve) => (markerSeen = resolve));
      const monitor = await monitorServer(raw, ({ args, source }) => {
        const command = args[0]?.toLowerCase();
        if (command === 'echo' && args[1] === marker) markerSeen();
        else if (command === 'publish' && source !== 'lua' && args[1] === channel) {
          expect(args[2]).toBe('0'); // Redisson's unlock message
          passes++;
        }
      });
      let releases = 0;
      const loop = async (locks: LockService, until: () => boolean) => {
        while (!until()) {
          await locks.run('shared', () => Promise.resolve());
          releases++;
        }
      };
      try {
        // Three clients take turns, then the third stops while the other two go on for some
        // rounds, within its subscription's linger (1 s).
        const rotated = loop(apps[2].locks, () => releases >= 150);
        await Promise.all([
          loop(apps[0].locks, () => releases >= 180),
          loop(apps[1].locks, () => releases >= 180),
          rotated,
        ]);
        await raw.echo(marker); // MONITOR shows it after every command before it
        await ended;
      } finally {
        monitor.close();
      }
      // The third client's turn came with no caller left: passed on, then its queue went. A
      // queue passes at most once; a client's queue can also go and come back within the loops
      // (1 to 4 passes seen in all, under load), and the first two pass when they stop. A turn
      // passed round and round among idle queues would count hundreds.
      expect(passes).toBeGreaterThanOrEqual(1);
      expect(passes).toBeLessThanOrEqual(12);
    },
    TIMEOUT,
  );
});
