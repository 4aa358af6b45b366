/** Default watchdog lease, ms (Redisson's lockWatchdogTimeout). */
export const DEFAULT_LEASE_TIME = 30_000;
/** Default wait for `acquire`, `run` and `@Locked`, ms. */
export const DEFAULT_WAIT_TIME = 10_000;
/** Default time `app.close()` gives locked calls to finish before their locks are released, ms. */
export const DEFAULT_SHUTDOWN_TIMEOUT = 5_000;

/** Set on a prototype by `@Locked`: its instances need a LockService bound. */
export const HAS_LOCKED_METHODS = Symbol('nestjs-redis-lock:has-locked-methods');
/** Set on each Nest-created instance with `@Locked` methods: the LockService of its app. */
export const LOCK_SERVICE_REF = Symbol('nestjs-redis-lock:lock-service');

/** Name of the logger context. */
export const LOGGER_CONTEXT = 'RedisLock';
