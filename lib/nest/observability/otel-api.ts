/** The OpenTelemetry API's module type (a type only: nothing is imported at load). */
export type OtelApi = typeof import('@opentelemetry/api');

/**
 * The OpenTelemetry API when installed, else undefined: an optional peer, required lazily (when
 * the module's providers are built) so the library loads without it.
 */
export function loadOtel(): OtelApi | undefined {
  try {
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    return require('@opentelemetry/api') as OtelApi;
  } catch {
    return undefined;
  }
}
