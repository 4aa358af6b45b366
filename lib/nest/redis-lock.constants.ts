/**
 * The property Nest injects LockService into on instances of classes with `@Locked` methods.
 * Its description is what Nest's startup error names when no LockService is visible: the fix.
 */
export const LOCK_SERVICE_REF = Symbol(
  'LockService for @Locked/@Semaphore/@LeaderOnly (nestjs-redis-lock): import RedisLockModule.forRoot(), ' +
    'forRootAsync() or forTesting() in the application (it is global by default)',
);

/** Name of the logger context. */
export const LOGGER_CONTEXT = 'RedisLock';
