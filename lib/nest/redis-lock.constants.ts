/** Default watchdog lease, ms (Redisson's lockWatchdogTimeout). */
export const DEFAULT_LEASE_TIME = 30_000;
/** Default wait for `acquire`, `run` and `@Locked`, ms. */
export const DEFAULT_WAIT_TIME = 10_000;
/** Default time `app.close()` gives locked calls to finish before their locks are released, ms. */
export const DEFAULT_SHUTDOWN_TIMEOUT = 5_000;

/**
 * The property Nest injects LockService into on instances of classes with `@Locked` methods.
 * Its description is what Nest's startup error names when no LockService is visible: the fix.
 */
export const LOCK_SERVICE_REF = Symbol(
  'LockService for @Locked/@Semaphore (nestjs-redis-lock): import RedisLockModule.forRoot(), ' +
    'forRootAsync() or forTesting() in the application (it is global by default)',
);

/** Name of the logger context. */
export const LOGGER_CONTEXT = 'RedisLock';
