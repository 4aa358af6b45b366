import type { INestApplication } from '@nestjs/common';
import type { Redis } from 'ioredis';
import type { LockService } from '../lib';
import { lockApp } from './support/lock-app';
import type { TestRedis } from './support/redis-server';
import { suiteRedis } from './support/suite-redis';

/** Clients that share one process, each its own application (its own connections). */
const CLIENTS = 8;
/** Sections run in all, by whichever client gets the lock. */
const SECTIONS = 800;
/**
 * The smallest count any client may have against the busiest one (issue target: 0.5). A client
 * that re-takes the lock it just released ahead of the clients its release woke starves them
 * (1 or 2 sections of 400 each before the hand-off hold-back); races decided by Redis' fixed
 * delivery order skew the counts down that order (min/max 0.21 in a loaded benchmark run before
 * the turn order).
 */
const MIN_TO_MAX = 0.5;

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

  it(`${CLIENTS} LockService instances looping on one key each get an even share of turns`, async () => {
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
    expect(turns.reduce((sum, count) => sum + count, 0)).toBe(SECTIONS);
    expect(Math.min(...turns)).toBeGreaterThanOrEqual(Math.max(...turns) * MIN_TO_MAX);
  });
});
