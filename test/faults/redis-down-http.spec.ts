import {
  Controller,
  Headers,
  HttpCode,
  Param,
  Post,
  UseInterceptors,
  type CallHandler,
  type ExecutionContext,
  type INestApplication,
  type NestInterceptor,
} from '@nestjs/common';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { tap } from 'rxjs';
import { Locked } from '../../lib';
import { httpApp } from '../nest/nest-kit';
import { faultRedis } from './fault-kit';
import { sleep, until } from '../../tools/time';

/** Each request's wait for its lock, ms. */
const WAIT = 500;
/** What a call may take beyond its wait (and beyond the longest event-loop stall seen). */
const MARGIN = 100;
/** Work done under the lock, ms. */
const WORK = 5;
const WORKERS = 8;
const KEYS = 4;
/** How long Redis stays down: past the wait (503s) and a release's resend grace (500 ms). */
const OUTAGE = 1_500;

const monotonic = () => performance.now();

/** When each request (by its x-request header) entered its locked section. */
const entered = new Map<string, number>();
/** When each request's handler (the @Locked method) was called, and when it failed. */
const called = new Map<string, number>();
const failed = new Map<string, number>();

/** Stamps the call of the locked method and its failure: its lock wait, without HTTP's delays. */
class StampCalls implements NestInterceptor {
  intercept(context: ExecutionContext, next: CallHandler) {
    const id = context.switchToHttp().getRequest<{ headers: Record<string, string> }>().headers[
      'x-request'
    ];
    called.set(id, monotonic());
    return next.handle().pipe(tap({ error: () => failed.set(id, monotonic()) }));
  }
}
/** Keys whose locked section runs now, and the overlaps seen. */
const inside = new Set<string>();
let overlaps = 0;

@Controller('jobs')
@UseInterceptors(StampCalls)
class JobsController {
  @Post(':id')
  @HttpCode(200)
  @Locked('job:<0>', { waitTime: WAIT })
  async run(@Param('id') id: string, @Headers('x-request') request: string) {
    entered.set(request, monotonic());
    if (inside.has(id)) overlaps++;
    inside.add(id);
    await sleep(WORK);
    inside.delete(id);
    return { id };
  }
}

/** One request as the client saw it. */
interface Sent {
  id: string;
  start: number;
  end: number;
  status: number;
  retryAfter: string | null;
}

describe('Redis killed and restarted under concurrent @Locked HTTP traffic (its own redis-server)', () => {
  const server = faultRedis();
  let app: INestApplication;
  let url: string;

  beforeAll(async () => {
    // The module's and ioredis' defaults: a new user's setup.
    ({ app } = await httpApp('express', server.redis, {}, { controllers: [JobsController] }));
    server.closing(app);
    await app.listen(0, '127.0.0.1');
    url = await app.getUrl();
  });

  it('no request waits past its waitTime + 100 ms, every failure is a 503, every success ran alone, and traffic resumes within 1 s of the restart', async () => {
    const sent: Sent[] = [];
    let running = true;
    let seq = 0;
    const worker = async (n: number) => {
      while (running) {
        const id = `r${++seq}`;
        const start = monotonic();
        const response = await fetch(`${url}/jobs/${n % KEYS}`, {
          method: 'POST',
          headers: { 'x-request': id },
        });
        await response.arrayBuffer();
        const retryAfter = response.headers.get('retry-after');
        sent.push({ id, start, end: monotonic(), status: response.status, retryAfter });
      }
    };
    // A timer cannot fire while the event loop is blocked (CPU load): the bound allows for it.
    const loopDelay = monitorEventLoopDelay({ resolution: 10 });
    loopDelay.enable();
    const workers = Array.from({ length: WORKERS }, (_, n) => worker(n));
    // The service works before the kill: wait for its first answers (a loaded run's first
    // requests took 1.8 s, and none had ended after a fixed 300 ms).
    await until(() => sent.filter((r) => r.status === 200).length >= WORKERS, 10_000, {
      what: 'the first requests answered',
    });
    await server.redis.kill();
    const killedAt = monotonic();
    await sleep(OUTAGE);
    await server.redis.restart();
    const restartedAt = monotonic();
    await sleep(1_500);
    running = false;
    await Promise.all(workers);
    loopDelay.disable();
    const stalled = loopDelay.max / 1e6;

    // The lock wait: from the locked method's call to its section or its failure.
    const waits = sent.map((r) => (entered.get(r.id) ?? failed.get(r.id)!) - called.get(r.id)!);
    const count = (status: number) => sent.filter((r) => r.status === status).length;
    const firstOkAfterRestart = Math.min(
      ...sent.filter((r) => r.status === 200 && r.end > restartedAt).map((r) => r.end),
    );
    const figures = {
      requests: sent.length,
      ok: count(200),
      unavailable: count(503),
      busy: count(409),
      maxWaitMs: Math.round(Math.max(...waits)),
      maxRequestMs: Math.round(Math.max(...sent.map((r) => r.end - r.start))),
      resumeMs: Math.round(firstOkAfterRestart - restartedAt),
      outageMs: Math.round(restartedAt - killedAt),
      maxLoopDelayMs: Math.round(stalled),
    };
    process.stderr.write(`redis-down-http figures: ${JSON.stringify(figures)}\n`);

    // A failure is a 503 (Redis unreachable). A 409 (busy past the 500 ms wait behind 5 ms
    // sections) only when the event loop stalled for half a wait or more: a loaded run stalled
    // this process 686 ms and two requests got 409, as they should.
    // On failure, each such request shows its times from the kill and from the restart (ms).
    const allowed = stalled >= WAIT / 2 ? [200, 503, 409] : [200, 503];
    const around = (at: number) => ({
      fromKill: Math.round(at - killedAt),
      fromRestart: Math.round(at - restartedAt),
    });
    expect(
      sent
        .filter((r) => !allowed.includes(r.status))
        .map((r) => ({
          ...r,
          start: around(r.start),
          called: around(called.get(r.id)!),
          end: around(r.end),
          figures,
        })),
    ).toEqual([]);
    expect(sent.filter((r) => r.status === 503 && r.retryAfter !== '1')).toEqual([]);
    expect(overlaps).toBe(0);
    expect(figures.maxWaitMs).toBeLessThanOrEqual(WAIT + MARGIN + stalled);
    expect(figures.resumeMs).toBeLessThan(1_000);
    // Before the kill and after the resume the service worked; during the outage it said 503.
    expect(sent.filter((r) => r.end < killedAt && r.status === 200).length).toBeGreaterThan(0);
    expect(figures.unavailable).toBeGreaterThan(0);
    const settledAfter = restartedAt + 1_000;
    expect(sent.filter((r) => r.start > settledAfter && r.status !== 200)).toEqual([]);
  });
});
