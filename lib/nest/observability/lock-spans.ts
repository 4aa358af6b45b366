import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { HoldTrace, LockTracer, TracedWait, WaitTrace } from '../../core';
import { LockOptionsError, messageOf, type LockLostError } from '../../errors';
import { now } from '../../time/clock';
import { loadOtel, type OtelApi } from './otel-api';

/** Name of the tracer (instrumentation scope) the library's spans come from. */
export const TRACER_NAME = 'nestjs-redis-lock';

/**
 * Lock spans through `@opentelemetry/api`'s global TracerProvider (module option `tracing`): for
 * each outermost acquisition, `lock.acquire` over its wait, then `lock.hold` from the grant to
 * the release or the loss; both children of the span active where the call started. Attributes:
 * `lock.kind`, `lock.mode` (read-write locks), `lock.key` (only with `exposeKeys`); the wait's
 * `lock.outcome` (acquired, busy, timeout, error), `lock.wait_ms` and `lock.attempts`; the hold's
 * `lock.outcome` (released, lost) and `lock.held_ms`. A loss sets the error status and adds a
 * `lock.lost` event with its reason.
 */
export class LockSpans implements LockTracer {
  // Private: the public types (lib/index.ts) name nothing of the optional peer.
  private constructor(
    /** Its context functions and status codes. */
    private readonly otel: OtelApi,
    private readonly tracer: Tracer,
    private readonly exposeKeys: boolean,
  ) {}

  /**
   * The spans on the global tracer; throws LockOptionsError when `@opentelemetry/api` is not
   * installed (`tracing: true` was asked for).
   */
  static create(exposeKeys: boolean): LockSpans {
    const otel = loadOtel();
    if (otel === undefined) {
      throw new LockOptionsError(
        'tracing',
        'spans need the package @opentelemetry/api (npm install @opentelemetry/api), which could not be loaded.',
      );
    }
    return new LockSpans(otel, otel.trace.getTracer(TRACER_NAME), exposeKeys);
  }

  waiting(wait: TracedWait): WaitTrace {
    const attributes: Attributes = { 'lock.kind': wait.kind };
    if (wait.mode !== undefined) attributes['lock.mode'] = wait.mode;
    if (this.exposeKeys) attributes['lock.key'] = wait.key;
    const parent = this.otel.context.active();
    const span = this.tracer.startSpan('lock.acquire', { attributes }, parent);
    return new WaitSpan(this.otel, this.tracer, span, parent, attributes, wait.waitTime);
  }
}

/** The `lock.acquire` span of one wait. */
class WaitSpan implements WaitTrace {
  private readonly started = now();

  constructor(
    private readonly otel: OtelApi,
    private readonly tracer: Tracer,
    private readonly span: Span,
    /** The caller's context: the hold's span is its child too. */
    private readonly parent: Context,
    /** The lock's attributes, for the hold's span. */
    private readonly attributes: Attributes,
    private readonly waitTime: number,
  ) {}

  run<T>(fn: () => T): T {
    const { context, trace } = this.otel;
    return context.with(trace.setSpan(this.parent, this.span), fn);
  }

  acquired(attempts: number): HoldTrace {
    this.end('acquired', attempts);
    const hold = this.tracer.startSpan('lock.hold', { attributes: this.attributes }, this.parent);
    return new HoldSpan(this.otel, hold);
  }

  busy(attempts: number): void {
    this.end(this.waitTime > 0 ? 'timeout' : 'busy', attempts);
  }

  failed(error: unknown, attempts: number): void {
    if (error instanceof Error) this.span.recordException(error);
    this.span.setStatus({ code: this.otel.SpanStatusCode.ERROR, message: messageOf(error) });
    this.end('error', attempts);
  }

  private end(outcome: string, attempts: number): void {
    this.span.setAttributes({
      'lock.outcome': outcome,
      'lock.wait_ms': now() - this.started,
      'lock.attempts': attempts,
    });
    this.span.end();
  }
}

/** The `lock.hold` span of one hold. */
class HoldSpan implements HoldTrace {
  private readonly started = now();
  private ended = false;

  constructor(
    private readonly otel: OtelApi,
    private readonly span: Span,
  ) {}

  released(failure?: unknown): void {
    if (this.ended) return;
    if (failure !== undefined) {
      this.span.addEvent('lock.release_failed', { 'exception.message': messageOf(failure) });
    }
    this.end('released');
  }

  lost(error: LockLostError): void {
    if (this.ended) return;
    this.span.addEvent('lock.lost', { 'lock.lost.reason': error.reason });
    this.span.setStatus({
      code: this.otel.SpanStatusCode.ERROR,
      message: `lock lost: ${error.reason}`,
    });
    this.end('lost');
  }

  private end(outcome: string): void {
    this.ended = true;
    this.span.setAttributes({ 'lock.outcome': outcome, 'lock.held_ms': now() - this.started });
    this.span.end();
  }
}
