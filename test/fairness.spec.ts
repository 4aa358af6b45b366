import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { LockService } from '../lib';
import { lockApp } from './support/lock-app';
import type { TestRedis } from './support/redis-server';
import { suiteRedis } from './support/suite-redis';

/** Clients that share one process, each its own application (its own connections). */
const CLIENTS = 4;
/** Sections run in all, by whichever client gets the lock. */
const SECTIONS = 400;
/**
 * The smallest share of a fair turn (SECTIONS / CLIENTS) every client must get. A client that
 * re-takes the lock it just released ahead of the clients its release woke starves them: they
 * got 1 or 2 sections of 400 each before the hand-off hold-back.
 */
const FAIR_SHARE_FRACTION = 0.3;

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

  it(`${CLIENTS} LockService instances looping on one key each get a fair share of turns`, async () => {
    const first = await lockApp(redis, { waitTime: 20_000 });
    apps = [first];
    for (let i = 1; i < CLIENTS; i++) {
      apps.push(await lockApp(redis, { keyPrefix: first.prefix, waitTime: 20_000 }));
    }
    const counter = `${first.prefix}counter`;
    const turns = apps.map(() => 0);
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
    const fairShare = SECTIONS / CLIENTS;
    for (const count of turns)
      expect(count).toBeGreaterThanOrEqual(fairShare * FAIR_SHARE_FRACTION);
  });
});
