/** The parts of @opentelemetry/api and @opentelemetry/sdk-metrics this sample uses. */
interface OtelApi {
  metrics: { setGlobalMeterProvider(provider: unknown): boolean };
}
interface OtelSdkMetrics {
  ConsoleMetricExporter: new () => unknown;
  PeriodicExportingMetricReader: new (options: {
    exporter: unknown;
    exportIntervalMillis: number;
  }) => unknown;
  MeterProvider: new (options: { readers: unknown[] }) => unknown;
}

/**
 * With METRICS=console, registers an OpenTelemetry MeterProvider that prints every metric
 * (the lock metrics among them: redis_lock.wait.duration, redis_lock.hold.duration,
 * redis_lock.timeouts, redis_lock.lost, redis_lock.renewal.failures) every METRICS_INTERVAL
 * ms (default 10 000). Call it before the application is created: the library takes its meter
 * from the global provider when LockService is built. The OpenTelemetry packages are loaded
 * only then, so the app runs without them. Use @opentelemetry/exporter-prometheus or an OTLP
 * exporter in production.
 */
export function startMetrics(): void {
  if (process.env.METRICS !== 'console') return;
  /* eslint-disable @typescript-eslint/no-require-imports */
  const { metrics } = require('@opentelemetry/api') as OtelApi;
  const sdk = require('@opentelemetry/sdk-metrics') as OtelSdkMetrics;
  /* eslint-enable @typescript-eslint/no-require-imports */
  const reader = new sdk.PeriodicExportingMetricReader({
    exporter: new sdk.ConsoleMetricExporter(),
    exportIntervalMillis: Number(process.env.METRICS_INTERVAL ?? 10_000),
  });
  metrics.setGlobalMeterProvider(new sdk.MeterProvider({ readers: [reader] }));
}
