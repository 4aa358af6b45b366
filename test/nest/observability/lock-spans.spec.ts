import { context, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import {
  BasicTracerProvider,
  InMemorySpanExporter,
  SimpleSpanProcessor,
  type ReadableSpan,
} from '@opentelemetry/sdk-trace-base';
import {
  LockAcquireTimeoutError,
  LockRedisError,
  TRACER_NAME,
  type LockService,
} from '../../../lib';
import { freePort } from '../../support/redis-server';
import { lockAppEach } from '../../support/lock-app';
import { suiteRedis } from '../../support/suite-redis';
import { fastRedis, lockNode } from '../../faults/fault-kit';
import { sleep } from '../../../tools/time';

describe('OpenTelemetry spans (module option tracing)', () => {
  const server = suiteRedis();
  const exporter = new InMemorySpanExporter();
  const provider = new BasicTracerProvider({
    spanProcessors: [new SimpleSpanProcessor(exporter)],
  });
  const contextManager = new AsyncLocalStorageContextManager();
  const caller = trace.getTracer('test');
  beforeAll(() => {
    context.setGlobalContextManager(contextManager.enable());
    trace.setGlobalTracerProvider(provider);
  });
  afterAll(async () => {
    trace.disable();
    context.disable();
    await provider.shutdown();
  });
  beforeEach(() => exporter.reset());

  /** The library's spans ended so far, by name. */
  const spans = (name: 'lock.acquire' | 'lock.hold'): ReadableSpan[] =>
    exporter
      .getFinishedSpans()
      .filter((span) => span.instrumentationScope.name === TRACER_NAME && span.name === name);
  const only = (name: 'lock.acquire' | 'lock.hold'): ReadableSpan => {
    const found = spans(name);
    expect(found).toHaveLength(1);
    return found[0];
  };

  /** Runs `fn` in an active span of the test's own: the callers' parent. */
  const inSpan = <T>(fn: (span: Span) => Promise<T>): Promise<T> =>
    caller.startActiveSpan('caller', async (span) => {
      try {
        return await fn(span);
      } finally {
        span.end();
      }
    });

  describe('without exposeKeys', () => {
    let locks: LockService;
    lockAppEach(
      () => server.redis,
      { tracing: true },
      (app) => ({ locks } = app),
    );

    it('spans the wait and the hold as children of the active span, without the key', async () => {
      const parent = await inSpan(async (span) => {
        const lock = await locks.acquire('s:a');
        await sleep(30);
        await lock.release();
        return span.spanContext();
      });

      const acquire = only('lock.acquire');
      const hold = only('lock.hold');
      for (const span of [acquire, hold]) {
        expect(span.parentSpanContext?.spanId).toBe(parent.spanId);
        expect(span.spanContext().traceId).toBe(parent.traceId);
        expect(span.attributes['lock.kind']).toBe('plain');
        expect(span.attributes).not.toHaveProperty('lock.key');
        expect(span.attributes).not.toHaveProperty('lock.mode');
      }
      expect(acquire.attributes).toMatchObject({ 'lock.outcome': 'acquired', 'lock.attempts': 1 });
      expect(acquire.attributes['lock.wait_ms']).toEqual(expect.any(Number));
      expect(acquire.status.code).toBe(SpanStatusCode.UNSET);
      expect(hold.attributes['lock.outcome']).toBe('released');
      expect(hold.attributes['lock.held_ms']).toBeGreaterThanOrEqual(25);
      expect(hold.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('marks a failed try busy and a wait that ran out timeout, neither an error', async () => {
      const held = await locks.acquire('s:b');
      await expect(locks.tryAcquire('s:b')).resolves.toBeNull();
      await expect(locks.acquire('s:b', { waitTime: 200 })).rejects.toThrow(
        LockAcquireTimeoutError,
      );
      await held.release();

      const [first, busy, timeout] = spans('lock.acquire');
      expect(first.attributes['lock.outcome']).toBe('acquired');
      expect(busy.attributes).toMatchObject({ 'lock.outcome': 'busy', 'lock.attempts': 1 });
      expect(timeout.attributes['lock.outcome']).toBe('timeout');
      expect(timeout.attributes['lock.wait_ms']).toBeGreaterThanOrEqual(190);
      expect(timeout.attributes['lock.attempts']).toBeGreaterThanOrEqual(1);
      for (const span of [busy, timeout]) expect(span.status.code).toBe(SpanStatusCode.UNSET);
    });

    it('counts the attempts of a wait that got the lock after a release', async () => {
      const held = await locks.acquire('s:c');
      const waiting = locks.acquire('s:c', { waitTime: 5_000 });
      await sleep(50);
      await held.release();
      await (await waiting).release();
      const waited = spans('lock.acquire')[1];
      expect(waited.attributes['lock.outcome']).toBe('acquired');
      expect(waited.attributes['lock.attempts']).toBeGreaterThanOrEqual(2);
      expect(waited.attributes['lock.wait_ms']).toBeGreaterThanOrEqual(45);
    });

    it('ends the hold as lost, with the reason, when forceUnlock takes it', async () => {
      const held = await locks.acquire('s:d');
      await locks.forceUnlock('s:d');
      const hold = only('lock.hold'); // ended at the loss, before the release
      expect(hold.attributes['lock.outcome']).toBe('lost');
      expect(hold.status.code).toBe(SpanStatusCode.ERROR);
      expect(hold.status.message).toMatch(/forceUnlock/);
      const event = hold.events.find((e) => e.name === 'lock.lost');
      expect(event?.attributes?.['lock.lost.reason']).toMatch(/deleted by forceUnlock/);
      await expect(held.release()).rejects.toThrow(/was lost/);
      expect(spans('lock.hold')).toHaveLength(1);
    });

    it('ends the hold as lost when its release finds the key deleted by another party', async () => {
      const held = await locks.acquire('s:e');
      const keys = await server.raw.keys('*s:e');
      expect(keys).toHaveLength(1);
      await server.raw.del(keys[0]);
      await expect(held.release()).rejects.toThrow(/was lost/);
      const hold = only('lock.hold');
      expect(hold.attributes['lock.outcome']).toBe('lost');
      expect(hold.status.code).toBe(SpanStatusCode.ERROR);
      expect(hold.events.map((e) => e.name)).toContain('lock.lost');
    });

    it('names each kind, and the mode of read-write locks', async () => {
      await (await locks.acquire('s:f', { fair: true })).release();
      await (await locks.acquire('s:g', { mode: 'read' })).release();
      await (await locks.acquire('s:g', { mode: 'write' })).release();
      await (await locks.acquire(['s:h', 's:i'])).release();
      await (await locks.semaphore('s:j', { permits: 2 }).acquire()).release();
      const attributes = spans('lock.acquire').map((span) => span.attributes);
      expect(attributes).toMatchObject([
        { 'lock.kind': 'fair', 'lock.outcome': 'acquired' },
        { 'lock.kind': 'read', 'lock.mode': 'read', 'lock.outcome': 'acquired' },
        { 'lock.kind': 'write', 'lock.mode': 'write', 'lock.outcome': 'acquired' },
        { 'lock.kind': 'multi', 'lock.outcome': 'acquired', 'lock.attempts': 1 },
        { 'lock.kind': 'permit', 'lock.outcome': 'acquired' },
      ]);
      expect(spans('lock.hold').map((span) => span.attributes['lock.outcome'])).toEqual(
        Array(5).fill('released'),
      );
    });

    it('spans nothing for a re-entry', async () => {
      await locks.run('s:k', () => locks.run('s:k', () => sleep(1)));
      expect(spans('lock.acquire')).toHaveLength(1);
      expect(spans('lock.hold')).toHaveLength(1);
    });
  });

  describe('with exposeKeys', () => {
    let locks: LockService;
    lockAppEach(
      () => server.redis,
      { tracing: true, exposeKeys: true },
      (app) => ({ locks } = app),
    );

    it('names the key on both spans', async () => {
      await locks.run('s:l', () => sleep(1));
      await (await locks.acquire(['s:m', 's:n'])).release();
      const keys = (name: 'lock.acquire' | 'lock.hold') =>
        spans(name).map((span) => span.attributes['lock.key']);
      expect(keys('lock.acquire')).toEqual(['s:l', 's:m, s:n']);
      expect(keys('lock.hold')).toEqual(['s:l', 's:m, s:n']);
    });
  });

  describe('without the option', () => {
    let locks: LockService;
    lockAppEach(
      () => server.redis,
      {},
      (app) => ({ locks } = app),
    );

    it('records no span', async () => {
      await locks.run('s:o', () => sleep(1));
      expect(exporter.getFinishedSpans()).toHaveLength(0);
    });
  });

  it('ends the wait as an error, with the exception, when Redis cannot be reached', async () => {
    const node = await lockNode(fastRedis(await freePort()), {
      tracing: true,
      checkOnStartup: 'off',
    });
    try {
      const parent = await inSpan(async (span) => {
        await expect(node.locks.acquire('s:p', { waitTime: 300 })).rejects.toThrow(LockRedisError);
        return span.spanContext();
      });
      const acquire = only('lock.acquire');
      expect(acquire.parentSpanContext?.spanId).toBe(parent.spanId);
      expect(acquire.attributes['lock.outcome']).toBe('error');
      expect(acquire.status.code).toBe(SpanStatusCode.ERROR);
      expect(acquire.events.map((e) => e.name)).toContain('exception');
      expect(spans('lock.hold')).toHaveLength(0);
    } finally {
      await node.close();
    }
  });

  it('loads without @opentelemetry/api, and tracing then fails naming the option', () => {
    jest.isolateModules(() => {
      jest.doMock('@opentelemetry/api', () => {
        throw new Error("Cannot find module '@opentelemetry/api'");
      });
      /* eslint-disable @typescript-eslint/no-require-imports */
      expect(() => require('../../../lib') as unknown).not.toThrow();
      const { LockSpans } =
        require('../../../lib/nest/observability/lock-spans') as typeof import('../../../lib/nest/observability/lock-spans');
      const errors = require('../../../lib/errors') as typeof import('../../../lib/errors');
      /* eslint-enable @typescript-eslint/no-require-imports */
      expect(() => LockSpans.create(false)).toThrow(errors.LockOptionsError);
      expect(() => LockSpans.create(false)).toThrow(/tracing.*@opentelemetry\/api/s);
    });
  });
});
