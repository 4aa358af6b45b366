/**
 * One soak process: argv = JSON settings (SoakWorkerSettings). Prints "ready", waits for a start
 * time (ms, Date.now()) on stdin, runs critical sections with LockService.run until the time is
 * up, and prints a JSON SoakWorkerReport.
 *
 * Each section, on one of the lock keys: writes its fencing token to a fenced store (a Lua
 * check-and-set that refuses a token below the stored one), increments a counter by GET then SET
 * (a lost update shows as counter < sections), sometimes re-enters the lock (the nested hold must
 * see the same token), writes its token again at the end, and records its times (soak-records.ts)
 * for the parent's analysis. The lock goes through `lockPort` (the fault proxy, or Redis itself);
 * the store is another Redis the faults never touch.
 *
 * With `unlocked` it runs the same sections without the lock (tokens from a plain INCR): the
 * control run that shows the detectors do detect.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { LockAcquireTimeoutError, LockLostError, LockService, RedisLockModule } from '../../lib';
import {
  micros,
  WAIT,
  type SectionRecord,
  type SoakWorkerReport,
  type WaitOutcome,
} from './soak-records';
import { sleep } from '../../tools/time';

/** What the parent passes to a worker. */
export interface SoakWorkerSettings {
  lockPort: number;
  storePort: number;
  /** Lock key prefix; the keys are `${prefix}:0` … */
  prefix: string;
  keys: number;
  seconds: number;
  /**
   * Sections this process completes at least: it runs past `seconds` until it has them (for at
   * most MIN_SECTIONS_GRACE), so a slow machine makes the soak longer, not thinner.
   */
  minSections?: number;
  workers: number;
  /** Watchdog lease, ms. */
  leaseTime: number;
  unlocked?: boolean;
}

/** Accepts a write unless its fencing token is below the stored one; returns 1 or 0. */
const FENCED_WRITE = `
local stored = tonumber(redis.call('get', KEYS[1]) or '0')
if tonumber(ARGV[1]) < stored then return 0 end
redis.call('set', KEYS[1], ARGV[1])
return 1`;

/** Pause after a wait failed (not timed out), ms. */
const FAILED_WAIT_PAUSE = 20;

/** How long past `seconds` a process may go on to reach `minSections`, ms. */
const MIN_SECTIONS_GRACE = 30_000;

/** How long after the end a call or the shutdown may still take, ms. */
const HANG_LIMIT = 30_000;

/** Length of a quiet slot, µs: each key in turn gets no new calls for a slot (see pickKey). */
const QUIET_SLOT = 2_500_000;

/**
 * A key for the next call. Key k is quiet in every fifth slot (shifted by k, on the machine-wide
 * clock, so all workers agree): its lock falls free and stays free, and a waiter still waiting
 * then is stuck. That gives the stuck-waiter check free stretches to look at.
 */
function pickKey(keys: number): number {
  const slot = Math.floor(micros() / QUIET_SLOT);
  const open = Array.from({ length: keys }, (_, k) => k).filter((k) => (slot + k) % 5 !== 0);
  const from = open.length > 0 ? open : [0];
  return from[Math.floor(Math.random() * from.length)];
}

/** Extra time a section takes, ms: a few outlast the lease (renewed, or lost under a fault). */
const pickHold = () => (Math.random() < 0.003 ? 200 + Math.floor(Math.random() * 1_300) : 0);

/** A wait time for one call: mostly short (timeouts happen), sometimes long. */
const pickWaitTime = () => (Math.random() < 0.5 ? 200 + Math.floor(Math.random() * 1800) : 10_000);

async function main() {
  const settings = JSON.parse(process.argv[2]) as SoakWorkerSettings;
  const report: SoakWorkerReport = {
    sections: 0,
    lostTold: 0,
    lostAtRelease: 0,
    lostEvents: 0,
    nestedMismatch: 0,
    unhandledRejections: 0,
    errors: 0,
    hungCalls: 0,
    errorSamples: [],
    records: [],
    waits: [],
  };
  process.on('unhandledRejection', (reason) => {
    report.unhandledRejections++;
    if (report.errorSamples.length < 3) report.errorSamples.push(`unhandled: ${String(reason)}`);
  });
  @Module({
    imports: [
      RedisLockModule.forRoot({
        redis: {
          host: '127.0.0.1',
          port: settings.lockPort,
          retryStrategy: () => 50,
          connectTimeout: 500,
        },
        leaseTime: settings.leaseTime,
        fencing: true, // the fenced store checks every token
        onLockLost: 'throw', // a loss found only at release surfaces as LockLostError
      }),
    ],
  })
  class SoakModule {}
  const app = await NestFactory.createApplicationContext(SoakModule, { logger: false });
  const locks = app.get(LockService);
  locks.lockLost$.subscribe(() => report.lostEvents++);
  const store = new Redis({ host: '127.0.0.1', port: settings.storePort });
  const lockKey = (k: number) => `${settings.prefix}:${k}`;
  const fenced = async (k: number, token: number) =>
    (await store.eval(FENCED_WRITE, 1, `${lockKey(k)}:store`, token)) === 1 ? 1 : 0;

  /** One critical section on key `k` as the holder of `lock`; `call` is when run() was called. */
  const section = async (
    k: number,
    call: number,
    lock: { fencingToken?: number; signal: AbortSignal },
  ) => {
    const enter = micros();
    let told = lock.signal.aborted ? enter : 0;
    lock.signal.addEventListener('abort', () => (told ||= micros()), { once: true });
    const token = lock.fencingToken!;
    const entryOk = await fenced(k, token);
    const entryDone = micros();
    const value = Number((await store.get(`${lockKey(k)}:counter`)) ?? 0);
    if (Math.random() < 0.3) await sleep(Math.floor(Math.random() * 3));
    const hold = pickHold();
    if (hold > 0) await sleep(hold);
    await store.set(`${lockKey(k)}:counter`, value + 1);
    if (!settings.unlocked && Math.random() < 0.2) {
      try {
        await locks.run(lockKey(k), (nested) => {
          if (nested.fencingToken !== token) report.nestedMismatch++;
        });
      } catch (error) {
        if (!lock.signal.aborted) throw error; // re-entry of a lost lock is refused: expected
      }
    }
    const exitSent = micros();
    const exitOk = await fenced(k, token);
    const exit = micros();
    const record: SectionRecord = [
      k,
      call,
      enter,
      exit,
      told,
      token,
      entryOk,
      exitOk,
      entryDone,
      exitSent,
    ];
    report.records.push(record);
    report.sections++;
    if (told !== 0) report.lostTold++;
    return record;
  };

  const oneCall = async () => {
    const k = pickKey(settings.keys);
    const call = micros();
    if (settings.unlocked) {
      const token = await store.incr(`${lockKey(k)}:fake-token`);
      await section(k, call, { fencingToken: token, signal: new AbortController().signal });
      return;
    }
    let record: SectionRecord | undefined;
    let waitEnd = 0;
    const wait = (outcome: WaitOutcome, end: number) => report.waits.push([k, call, end, outcome]);
    try {
      await locks.run(
        lockKey(k),
        async (lock) => {
          waitEnd = micros();
          wait(WAIT.granted, waitEnd);
          record = await section(k, call, lock);
        },
        { waitTime: pickWaitTime() },
      );
    } catch (error) {
      if (waitEnd === 0) {
        const timedOut = error instanceof LockAcquireTimeoutError;
        wait(timedOut ? WAIT.timedOut : WAIT.failed, micros());
        if (timedOut) return;
        const text = `wait failed: ${String(error)}`;
        if (report.errorSamples.length < 3 && !report.errorSamples.includes(text)) {
          report.errorSamples.push(text);
        }
        await sleep(FAILED_WAIT_PAUSE); // a failing Redis must not turn the loop into a busy loop
        return;
      }
      if (error instanceof LockLostError && record && record[4] === 0) {
        report.lostAtRelease++;
        return;
      }
      if (error instanceof LockLostError && record) return; // lost and told: counted as lostTold
      report.errors++;
      if (report.errorSamples.length < 3) report.errorSamples.push(String(error));
    }
  };

  process.stdout.write('ready\n');
  let input = '';
  for await (const chunk of process.stdin) input += (chunk as Buffer).toString();
  await sleep(Math.max(0, Number(input) - Date.now()));
  const endAt = Date.now() + settings.seconds * 1000;
  const graceEnd = endAt + (settings.minSections ? MIN_SECTIONS_GRACE : 0);
  const goOn = () =>
    Date.now() < endAt || (report.sections < (settings.minSections ?? 0) && Date.now() < graceEnd);
  let pending = 0;
  const working = Promise.all(
    Array.from({ length: settings.workers }, async () => {
      while (goOn()) {
        pending++;
        await oneCall().catch((error: unknown) => {
          // A store error or a failed wait report: counted, the worker goes on.
          report.errors++;
          if (report.errorSamples.length < 3) report.errorSamples.push(String(error));
        });
        pending--;
      }
    }),
  );
  // Every call is bounded (its wait, then a short section): one still pending long after the
  // end never settles, and is reported instead of hanging the soak.
  await Promise.race([working, sleep(graceEnd - Date.now() + HANG_LIMIT)]);
  report.hungCalls = pending;
  store.disconnect();
  await Promise.race([app.close(), sleep(HANG_LIMIT)]);
  await sleep(50); // a late rejection from the close still counts
  // Exit once the report is flushed: a hung call's timers must not keep the process.
  process.stdout.write(`${JSON.stringify(report)}\n`, () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`soak worker failed: ${String(error)}\n`);
  process.exit(1);
});
