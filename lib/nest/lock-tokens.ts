/**
 * The module's options as the library uses them: checked, defaults filled in
 * (ResolvedModuleOptions). Provided by a factory from `forRoot`'s options.
 */
export const RESOLVED_LOCK_OPTIONS = Symbol('RESOLVED_LOCK_OPTIONS');

/**
 * The LockStore the module's locks live in: opened by a factory from the options (connections
 * to Redis, or the memory store), or the `store` option's own. Override it in a testing module:
 * `.overrideProvider(LOCK_STORE).useValue(store)`.
 */
export const LOCK_STORE = Symbol('LOCK_STORE');

/** The lock engine on LOCK_STORE that LockService, `@Locked` and `@Semaphore` run on. */
export const LOCK_ENGINE = Symbol('LOCK_ENGINE');
