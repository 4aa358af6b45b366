import type { INestApplication } from '@nestjs/common';
import { metrics } from '@opentelemetry/api';
import {
  DataPointType,
  MeterProvider,
  MetricReader,
  type MetricData,
} from '@opentelemetry/sdk-metrics';
import { Subject } from 'rxjs';
import { LockService, METER_NAME, type LockEvent } from '../../lib';
import { LockEvents } from '../../lib/nest/observability/lock-events';
import { lockApp } from '../support/lock-app';
import { suiteRedis } from '../support/suite-redis';
import { sleep } from '../../tools/time';

/** A reader the test collects from on demand. */
class TestReader extends MetricReader {
  protected onShutdown(): Promise<void> {
    return Promise.resolve();
  }
  protected onForceFlush(): Promise<void> {
    return Promise.resolve();
  }
}

describe('LockService.events$ and OpenTelemetry metrics', () => {
  const server = suiteRedis();
  const reader = new TestReader();
  const provider = new MeterProvider({ readers: [reader] });
  const apps: INestApplication[] = [];
  beforeAll(() => metrics.setGlobalMeterProvider(provider));
  afterAll(async () => {
    await Promise.all(apps.map((app) => app.close()));
    metrics.disable();
    await provider.shutdown();
  });

  async function start(exposeKeys: boolean) {
    const { app, locks } = await lockApp(server.redis, { exposeKeys });
    apps.push(app);
    const events: LockEvent[] = [];
    locks.events$.subscribe((event) => events.push(event));
    return { locks, events };
  }

  /** Walks one lock through acquire, a wait, release, a busy try and a loss. */
  async function lifecycle(locks: LockService, key: string) {
    const first = await locks.acquire(key);
    const second = locks.acquire(key, { waitTime: 5_000 }); // not first's chain: it waits
    await sleep(50);
    await first.release();
    const held = await second;
    await expect(locks.tryAcquire(key)).resolves.toBeNull();
    await locks.forceUnlock(key);
    await expect(held.release()).rejects.toThrow(/was lost/);
  }

  async function metric(name: string): Promise<MetricData> {
    const { resourceMetrics } = await reader.collect();
    const scope = resourceMetrics.scopeMetrics.find((s) => s.scope.name === METER_NAME);
    const found = scope?.metrics.find((m) => m.descriptor.name === name);
    if (found === undefined) throw new Error(`no metric ${name}`);
    return found;
  }

  it('emits typed events without keys, and records metrics without key attributes', async () => {
    const { locks, events } = await start(false);
    await lifecycle(locks, 'm:a');

    expect(events.map((event) => event.type)).toEqual([
      'acquired',
      'released',
      'acquired',
      'busy',
      'lost',
    ]);
    expect(events.some((event) => 'key' in event)).toBe(false);
    const [, released, waited] = events as [LockEvent, { holdMs: number }, { waitMs: number }];
    expect(released.holdMs).toBeGreaterThanOrEqual(45); // held across the 50 ms sleep
    expect(waited.waitMs).toBeGreaterThanOrEqual(45); // waited for that release

    const wait = await metric('redis_lock.wait.duration');
    expect(wait.dataPointType).toBe(DataPointType.HISTOGRAM);
    expect(wait.dataPoints).toHaveLength(1);
    expect(wait.dataPoints[0].attributes).toEqual({});
    expect((wait.dataPoints[0].value as { count: number }).count).toBe(2);
    const hold = await metric('redis_lock.hold.duration');
    expect((hold.dataPoints[0].value as { count: number }).count).toBe(1);
    expect((await metric('redis_lock.timeouts')).dataPoints[0].value).toBe(1);
    expect((await metric('redis_lock.lost')).dataPoints[0].value).toBe(1);
  });

  it('names keys in events and attributes with exposeKeys', async () => {
    const { locks, events } = await start(true);
    await lifecycle(locks, 'm:b');
    expect(events.map((event) => 'key' in event && event.key)).toEqual(Array(5).fill('m:b'));
    const lost = await metric('redis_lock.lost');
    expect(lost.dataPoints.find((p) => p.attributes['lock.key'] === 'm:b')?.value).toBe(1);
  });

  it('builds no event while nobody subscribes', () => {
    const next = jest.spyOn(Subject.prototype, 'next');
    try {
      const observer = new LockEvents(true);
      observer.acquired('k', 1);
      observer.released('k', 1);
      observer.busy('k', 1);
      expect(next).not.toHaveBeenCalled();
    } finally {
      next.mockRestore();
    }
  });

  it('loads and records nothing without @opentelemetry/api', () => {
    jest.isolateModules(() => {
      jest.doMock('@opentelemetry/api', () => {
        throw new Error("Cannot find module '@opentelemetry/api'");
      });
      /* eslint-disable @typescript-eslint/no-require-imports */
      expect(() => require('../../lib') as unknown).not.toThrow();
      const { LockMetrics } =
        require('../../lib/nest/observability/lock-metrics') as typeof import('../../lib/nest/observability/lock-metrics');
      /* eslint-enable @typescript-eslint/no-require-imports */
      expect(LockMetrics.create(false)).toBeUndefined();
    });
  });
});
