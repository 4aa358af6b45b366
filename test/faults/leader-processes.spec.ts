import { join } from 'node:path';
import { ChildLines, killChildren } from '../support/child-processes';
import { startRedis, type TestRedis } from '../support/redis-server';
import { sleep, until } from '../../tools/time';
import { transpileWorker, type WorkerBuild } from '../../tools/transpile-worker';

/** The children's leader lease, ms. */
const LEASE = 1_000;
/** Children start slowly on a busy machine (even transpiled, without ts-node). */
const START_TIMEOUT = 20_000;
/** leader-child.ts transpiled once (ts-node costs seconds of CPU per child). */
let build: WorkerBuild | undefined;

/** One instance (a child process) and its leadership as its lines tell it. */
class Instance {
  readonly child: ChildLines;
  constructor(
    redis: TestRedis,
    prefix: string,
    readonly id: number,
  ) {
    build ??= transpileWorker(join(__dirname, 'leader-child.ts'));
    const args = [String(redis.port), prefix, 'leader', String(LEASE)];
    this.child = new ChildLines([build.entry, ...args], { env: build.env });
  }

  /** Its terms: when elected (Date.now() in the child), the term, and when it ended if it did. */
  terms(): { term: number; from: number; to: number | undefined }[] {
    const terms: { term: number; from: number; to: number | undefined }[] = [];
    for (const line of this.child.lines) {
      const [what, first, second] = line.split(' ');
      if (what === 'elected')
        terms.push({ term: Number(first), from: Number(second), to: undefined });
      if (what === 'ended') terms.at(-1)!.to = Number(first);
    }
    return terms;
  }

  get leading(): boolean {
    const last = this.terms().at(-1);
    return last !== undefined && last.to === undefined;
  }
}

describe('leader election across processes (its own redis-server, transpiled children)', () => {
  jest.setTimeout(40_000);
  let redis: TestRedis;
  const instances: Instance[] = [];
  /**
   * Terms that may overlap the next one, as documented: a paused leader's (it is told when it
   * resumes), and the term Redis lost in a restart without persistence (told within its lease).
   */
  const windows = new Set<number>();
  /** When the leader of a term was SIGKILLed (it cannot act after, nor print its term's end). */
  const killed = new Map<number, number>();

  beforeAll(async () => {
    redis = await startRedis({ control: true });
    const prefix = `lp:${process.pid}:`;
    for (let id = 0; id < 4; id++) instances.push(new Instance(redis, prefix, id));
    await Promise.all(instances.map(({ child }) => child.line(/^ready$/, START_TIMEOUT)));
  }, START_TIMEOUT + 10_000);
  afterAll(async () => {
    await killChildren();
    build?.remove();
    await redis?.stop();
  });

  const alive = () =>
    instances.filter(
      ({ child }) => child.process.exitCode === null && child.process.signalCode === null,
    );
  const leaders = () => alive().filter((instance) => instance.leading);
  const lastTerm = () => Math.max(...instances.flatMap((i) => i.terms().map(({ term }) => term)));
  async function oneLeader(timeout = LEASE * 3): Promise<Instance> {
    await until(() => leaders().length === 1, timeout, { what: 'one leader' });
    return leaders()[0];
  }
  /** The one leader once it is another than `old` (whose term ended or who died). */
  async function nextLeader(old: Instance, timeout = LEASE * 3): Promise<Instance> {
    await until(() => leaders().length === 1 && leaders()[0] !== old, timeout, {
      what: 'a new leader',
    });
    return leaders()[0];
  }

  it('one of four instances is elected, and stays the only leader', async () => {
    const leader = await oneLeader(START_TIMEOUT);
    await sleep(LEASE * 1.5);
    expect(leaders()).toEqual([leader]);
  });

  it('SIGTERM (enableShutdownHooks): the leader resigns, another is elected well within a lease', async () => {
    const leader = await oneLeader();
    const term = lastTerm();
    const sentAt = Date.now();
    leader.child.process.kill('SIGTERM');
    const next = await nextLeader(leader);
    const ended = leader.terms().at(-1)!.to!;
    const elected = next.terms().at(-1)!;
    expect(elected.term).toBeGreaterThan(term);
    expect(elected.from).toBeGreaterThanOrEqual(ended); // resigned first, then the new one won
    expect(elected.from - sentAt).toBeLessThan(LEASE);
    console.log(
      `graceful hand-over: ${elected.from - ended} ms from the old term's end to the new term, ${elected.from - sentAt} ms from SIGTERM`,
    );
  });

  it('SIGKILL: another is elected within one lease (plus a margin), with a higher term', async () => {
    const leader = await oneLeader();
    const term = lastTerm();
    leader.child.kill();
    const killedAt = Date.now();
    killed.set(term, killedAt);
    const next = await nextLeader(leader);
    const elected = next.terms().at(-1)!;
    expect(elected.term).toBeGreaterThan(term);
    expect(elected.from - killedAt).toBeLessThan(LEASE + 500);
    console.log(
      `SIGKILL hand-over: ${elected.from - killedAt} ms after the kill (lease ${LEASE} ms)`,
    );
  });

  it('a leader paused (SIGSTOP) past its lease: another is elected; resumed, its first read says it no longer leads', async () => {
    const leader = await oneLeader();
    const term = lastTerm();
    windows.add(term);
    const before = leader.child.lines.length;
    leader.child.process.kill('SIGSTOP');
    const stoppedAt = Date.now();
    try {
      await until(() => alive().some((i) => i !== leader && i.leading), LEASE * 3, {
        what: 'a new leader',
      });
      // Stopped longer than its lease, so that the child sees the stall as one.
      await sleep(stoppedAt + LEASE * 1.5 - Date.now());
    } finally {
      leader.child.process.kill('SIGCONT');
    }
    let resumed: string | undefined;
    await until(
      () =>
        (resumed = leader.child.lines.slice(before).find((l) => l.startsWith('resumed'))) !==
        undefined,
      5_000,
      { what: 'the first read after resuming' },
    );
    const [, isLeader, aborted] = resumed!.split(' ');
    expect([isLeader, aborted]).toEqual(['false', 'true']);
    await until(() => !leader.leading, 2_000);
    expect(leaders()).toHaveLength(1);
    expect(leaders()[0].terms().at(-1)!.term).toBeGreaterThan(term);
  });

  it('Redis restarted (data gone): the leader is told, and one instance is elected again with a higher term', async () => {
    const leader = await oneLeader();
    const term = lastTerm();
    windows.add(term);
    await redis.kill();
    await redis.restart();
    await until(() => !leader.leading || leader.terms().at(-1)!.term > term, LEASE * 4, {
      what: 'the leader told',
    });
    const next = await oneLeader(LEASE * 4);
    expect(next.terms().at(-1)!.term).toBeGreaterThan(term);
  });

  it('terms strictly increase and never overlap (outside the documented windows)', () => {
    const all = instances.flatMap((i) => i.terms()).sort((a, b) => a.from - b.from);
    const terms = all.map(({ term }) => term);
    expect([...terms].sort((a, b) => a - b)).toEqual(terms);
    expect(new Set(terms).size).toBe(terms.length);
    const checked = all.filter(({ term }) => !windows.has(term));
    const overlaps = checked.slice(1).filter((term, i) => {
      const before = checked[i];
      return term.from < (before.to ?? killed.get(before.term)!);
    });
    expect(overlaps).toEqual([]);
  });
});
