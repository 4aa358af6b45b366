/** The parts of @opentelemetry/api and @opentelemetry/sdk-trace-base this sample uses. */
interface OtelApi {
  trace: { setGlobalTracerProvider(provider: unknown): boolean; disable(): void };
}
/** A finished span, as the in-memory exporter keeps it. */
interface FinishedSpan {
  name: string;
  attributes: Record<string, unknown>;
  instrumentationScope: { name: string };
}
interface OtelSdkTrace {
  BasicTracerProvider: new (options: { spanProcessors: unknown[] }) => {
    shutdown(): Promise<void>;
  };
  SimpleSpanProcessor: new (exporter: unknown) => unknown;
  ConsoleSpanExporter: new () => unknown;
  InMemorySpanExporter: new () => { getFinishedSpans(): FinishedSpan[] };
}

/** The library's spans seen so far: how many of each name, by `lock.outcome`. */
export interface SpanCounts {
  /** `lock.acquire` spans by outcome (acquired, busy, timeout, error). */
  acquire: Record<string, number>;
  /** `lock.hold` spans by outcome (released, lost). */
  hold: Record<string, number>;
  /** `lock.acquire` spans of waits that took more than one attempt. */
  retried: number;
}

/** A registered TracerProvider: what it recorded (in memory), and its shutdown. */
export interface SampleTracing {
  /** Counts of the library's spans kept in memory (with `memory`). */
  counts(): SpanCounts;
  /** Unregisters the provider and shuts it down. */
  stop(): Promise<void>;
}

/**
 * Registers an OpenTelemetry TracerProvider as the global one: `console` prints every span
 * (ConsoleSpanExporter), `memory` keeps them for counts(). Give the app `tracing: true`
 * (RedisLockModule's option) only when this returned a provider: the OpenTelemetry packages are
 * loaded here, and when they are not installed this returns undefined and the app runs without
 * spans. Use an OTLP exporter (and a BatchSpanProcessor) in production.
 */
export function startTracing(options: {
  console?: boolean;
  memory?: boolean;
}): SampleTracing | undefined {
  let api: OtelApi;
  let sdk: OtelSdkTrace;
  try {
    /* eslint-disable @typescript-eslint/no-require-imports */
    api = require('@opentelemetry/api') as OtelApi;
    sdk = require('@opentelemetry/sdk-trace-base') as OtelSdkTrace;
    /* eslint-enable @typescript-eslint/no-require-imports */
  } catch {
    return undefined;
  }
  const memory = new sdk.InMemorySpanExporter();
  const exporters = [
    ...(options.console ? [new sdk.ConsoleSpanExporter()] : []),
    ...(options.memory ? [memory] : []),
  ];
  const provider = new sdk.BasicTracerProvider({
    spanProcessors: exporters.map((exporter) => new sdk.SimpleSpanProcessor(exporter)),
  });
  api.trace.setGlobalTracerProvider(provider);
  return {
    counts() {
      const counts: SpanCounts = { acquire: {}, hold: {}, retried: 0 };
      for (const span of memory.getFinishedSpans()) {
        if (span.instrumentationScope.name !== 'nestjs-redis-lock') continue;
        const byOutcome = span.name === 'lock.acquire' ? counts.acquire : counts.hold;
        const outcome = String(span.attributes['lock.outcome']);
        byOutcome[outcome] = (byOutcome[outcome] ?? 0) + 1;
        if (span.name === 'lock.acquire' && Number(span.attributes['lock.attempts']) > 1) {
          counts.retried++;
        }
      }
      return counts;
    },
    async stop() {
      api.trace.disable();
      await provider.shutdown();
    },
  };
}
