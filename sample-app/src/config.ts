/** What the orders app needs to run: where Redis is and how to name its keys there. */
export interface AppConfig {
  /** `redis://host:port` of the server holding both the orders and the locks. */
  redisUrl: string;
  /**
   * Prepended to every key the app writes: its order data and (as RedisLockModule's
   * `keyPrefix`) its locks. Lets several apps, or demo runs, share one Redis.
   */
  keyPrefix: string;
  /**
   * Run the background work too: the report job every second (`@ScheduledLock`: one instance a
   * tick) and the outbox relay (`@LeaderOnly`: one instance at a time), each named `instance`.
   */
  jobs?: { instance: string };
  /**
   * RedisLockModule's `tracing`: lock spans on the global TracerProvider (register one first,
   * see tracing.ts). Default false.
   */
  tracing?: boolean;
}

/** Injection token of the AppConfig. */
export const APP_CONFIG = Symbol('APP_CONFIG');
/** Injection token of the app's ioredis client (orders data, and lent to RedisLockModule). */
export const REDIS = Symbol('REDIS');
