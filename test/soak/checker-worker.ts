/**
 * One process of the family checker: argv = JSON CheckerWorkerSettings. Runs `workers` loops of
 * random operations on every kind (plain, multi over 2-3 names, write with downgrades, read,
 * fair, a semaphore permit) until `endAt`, then closes its application and exits. Every event is
 * written to stdout as one line as it happens (format: checker-records.ts).
 *
 * A section acts a few times (a short sleep between, rarely one longer than the lease); before
 * each act it looks at its signal and stops once it aborted, as a careful user's code does.
 */
import 'reflect-metadata';
import { Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import {
  LockAcquireTimeoutError,
  LockLostError,
  LockService,
  RedisLockModule,
  type LockHandle,
} from '../../lib';
import { micros } from './soak-records';
import {
  CHECKER_RESOURCES,
  FAIR,
  PLAIN,
  RW,
  SEM,
  SEMAPHORE_PERMITS,
  type HoldMode,
} from './checker-records';
import { sleep } from '../../tools/time';

/** What the parent passes to a worker. */
export interface CheckerWorkerSettings {
  /** One Redis server's port, or the nodes of a Cluster. */
  redis: { port: number } | { cluster: number[] };
  prefix: string;
  /** Date.now() at which the loops stop; 0: read it from stdin once booted (the first workers). */
  endAt: number;
  workers: number;
  leaseTime: number;
  fairQueueTimeout: number;
}

const settings = JSON.parse(process.argv[2]) as CheckerWorkerSettings;
const pick = <T>(items: readonly T[]): T => items[Math.floor(Math.random() * items.length)];
const out = (line: string) => process.stdout.write(`${line}\n`);
const name = (resource: number) => `${settings.prefix}:${CHECKER_RESOURCES[resource]}`;

let sids = 0;

/** A section: writes E, then B before each act, T when told; `close` writes X. */
class Section {
  readonly sid = ++sids;
  private told = false;

  constructor(
    mode: HoldMode,
    resources: number[],
    readonly signal: AbortSignal,
    parent?: Section,
  ) {
    const enter = micros();
    out(`E ${this.sid} ${mode} ${parent?.sid ?? -1} ${enter} ${resources.join(',')}`);
    const onAbort = () => {
      this.told = true;
      out(`T ${this.sid} ${micros()}`);
    };
    if (signal.aborted) onAbort();
    else signal.addEventListener('abort', onAbort, { once: true });
  }

  /** Acts `count` more times unless told first; one act in 200 waits past the lease. */
  async act(count: number): Promise<void> {
    for (let i = 0; i < count; i++) {
      if (this.signal.aborted || this.told) return;
      out(`B ${this.sid} ${micros()}`);
      const long = Math.random() < 0.002;
      await sleep(long ? settings.leaseTime * (1.2 + Math.random()) : Math.random() * 4);
    }
    if (!this.signal.aborted) out(`B ${this.sid} ${micros()}`);
  }

  close(outcome: 'ok' | 'lost' | 'err'): void {
    out(`X ${this.sid} ${micros()} ${outcome}`);
  }
}

/** Length of a quiet slot, µs: in slot s, resource s % 8 gets no new calls (see `quiet`). */
const QUIET_SLOT = 3_000_000;

/**
 * Whether an operation on `resources` must not start now. Each resource in turn gets no new
 * calls for a slot (on the machine-wide clock, so every worker agrees): its lock falls free and
 * stays free, and a waiter still waiting then is stuck (what the stuck-wait check looks for).
 */
const quiet = (resources: number[]) => resources.includes(Math.floor(micros() / QUIET_SLOT) % 8);

/** A wait time: mostly short (timeouts happen), sometimes long. */
const waitTime = () => (Math.random() < 0.6 ? 100 + Math.floor(Math.random() * 1_500) : 8_000);

/** The body a call runs holding its lock, given the hold's signal. */
type Inside = (signal: AbortSignal) => Promise<void>;

/** Runs one call on `resources`; records its wait and its section's end. */
async function call(
  resources: number[],
  take: (inside: Inside) => Promise<unknown>,
  mode: HoldMode,
  after?: (section: Section) => Promise<void>,
): Promise<void> {
  const start = micros();
  let section: Section | undefined;
  try {
    await take(async (signal) => {
      out(`W ${start} ${micros()} g ${resources.join(',')}`);
      section = new Section(mode, resources, signal);
      await section.act(1 + Math.floor(Math.random() * 3));
      if (after) await after(section);
    });
    section?.close('ok');
  } catch (error) {
    if (!section) {
      const outcome = error instanceof LockAcquireTimeoutError ? 't' : 'f';
      out(`W ${start} ${micros()} ${outcome} ${resources.join(',')}`);
      if (outcome === 'f') await sleep(20); // Redis unreachable: no busy loop
      return;
    }
    section.close(error instanceof LockLostError ? 'lost' : 'err');
    if (!(error instanceof LockLostError)) out(`M ${String(error).replace(/\n/g, ' ')}`);
  }
}

async function main() {
  const connection =
    'port' in settings.redis
      ? {
          redis: {
            host: '127.0.0.1',
            port: settings.redis.port,
            retryStrategy: () => 50,
            connectTimeout: 500,
          },
        }
      : { cluster: { nodes: settings.redis.cluster.map((port) => ({ host: '127.0.0.1', port })) } };
  @Module({
    imports: [
      RedisLockModule.forRoot({
        ...connection,
        leaseTime: settings.leaseTime,
        fairQueueTimeout: settings.fairQueueTimeout,
        onLockLost: 'throw',
      }),
    ],
  })
  class CheckerModule {}
  process.on('unhandledRejection', (reason) => out(`U ${String(reason).replace(/\n/g, ' ')}`));
  const app = await NestFactory.createApplicationContext(CheckerModule, { logger: false });
  const locks = app.get(LockService);
  const semaphore = locks.semaphore(name(SEM), { permits: SEMAPHORE_PERMITS });
  out('R');
  const endAt =
    settings.endAt ||
    (await new Promise<number>((resolve) =>
      process.stdin.once('data', (d) => resolve(Number(String(d)))),
    ));

  /** A downgrade: the write's chain takes the read lock, which outlives the write. */
  const writeThenRead = async () => {
    let read: { handle: LockHandle; section: Section } | undefined;
    const downgrade = Math.random() < 0.4;
    await call(
      [RW],
      (f) => locks.run(name(RW), (l) => f(l.signal), { mode: 'write', waitTime: waitTime() }),
      'x',
      async (section) => {
        if (!downgrade || section.signal.aborted) return;
        const handle = await locks.acquire(name(RW), { mode: 'read', waitTime: 0 });
        read = { handle, section: new Section('r', [RW], handle.signal, section) };
        await read.section.act(1);
      },
    );
    if (!read) return;
    await read.section.act(1 + Math.floor(Math.random() * 3));
    const released = await read.handle.release().then(
      () => 'ok' as const,
      (error: unknown) => (error instanceof LockLostError ? ('lost' as const) : ('err' as const)),
    );
    read.section.close(released);
  };

  /** One random operation: the resources it takes, and how. */
  const operation = (): [number[], () => Promise<void>] => {
    const choice = Math.floor(Math.random() * 6);
    const opts = { waitTime: waitTime() };
    if (choice === 0) {
      const r = pick(PLAIN);
      const take = (f: Inside) =>
        locks.run(name(r), (l) => f(l.signal), { ...opts, fencing: true });
      return [[r], () => call([r], take, 'x')];
    }
    if (choice === 1) {
      const size = 2 + Math.floor(Math.random() * 2);
      const members = [...PLAIN].sort(() => Math.random() - 0.5).slice(0, size);
      const take = (f: Inside) => locks.run(members.map(name), (l) => f(l.signal), opts);
      return [members, () => call(members, take, 'x')];
    }
    if (choice === 2) return [[RW], writeThenRead];
    if (choice === 3) {
      const take = (f: Inside) =>
        locks.run(name(RW), (l) => f(l.signal), { ...opts, mode: 'read' });
      return [[RW], () => call([RW], take, 'r')];
    }
    if (choice === 4) {
      const take = (f: Inside) =>
        locks.run(name(FAIR), (l) => f(l.signal), { ...opts, fair: true });
      return [[FAIR], () => call([FAIR], take, 'x')];
    }
    const take = (f: Inside) => semaphore.run((p) => f(p.signal), opts);
    return [[SEM], () => call([SEM], take, 'p')];
  };

  await Promise.all(
    Array.from({ length: settings.workers }, async () => {
      while (Date.now() < endAt) {
        const [resources, run] = operation();
        if (quiet(resources)) {
          await sleep(5);
          continue;
        }
        await run().catch((error: unknown) => out(`M loop: ${String(error)}`));
      }
    }),
  );
  await app.close();
  await sleep(50); // a late rejection from the close still counts
  process.stdout.write('D\n', () => process.exit(0));
}

main().catch((error: unknown) => {
  process.stderr.write(`checker worker failed: ${String(error)}\n`);
  process.exit(1);
});
