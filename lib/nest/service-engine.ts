/**
 * The key of LockService's engine (a getter): `@Locked` and `@Semaphore` run on it with the
 * options they checked when decorating. A LockService of your own (an override) lacks it, so
 * they call its `run()` / `semaphore()` instead.
 */
export const SERVICE_ENGINE = Symbol('LockService engine');
