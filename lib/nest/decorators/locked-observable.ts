import { Observable, isObservable, type Subscription } from 'rxjs';
import { LockError } from '../../errors';

/** Runs `body` holding a lock or a permit; `signal` cancels the wait. */
export type LockedRun = (body: () => Promise<void>, signal: AbortSignal) => Promise<unknown>;

/**
 * The Observable a `@Locked` method declared as returning one gives its caller: the lock is
 * taken on subscription and held until the method's Observable completes, errors or is
 * unsubscribed; values pass through. Runs through `run` (LockService.run or a semaphore's run),
 * so the wait, `onBusy`, the lost-lock policy and the release are the same as for a
 * Promise-returning method.
 */
export function lockedObservable(
  run: LockedRun,
  subscribe: () => unknown,
  where: string,
): Observable<unknown> {
  return new Observable((subscriber) => {
    const cancel = new AbortController();
    let inner: Subscription | undefined;
    let finish: (() => void) | undefined;
    run(
      () =>
        new Promise<void>((resolve, reject) => {
          finish = resolve;
          if (subscriber.closed) return resolve();
          const source = subscribe();
          if (!isObservable(source)) {
            throw new LockError(
              `${where}: the method is declared to return an Observable but did not.`,
            );
          }
          inner = source.subscribe({
            next: (value) => subscriber.next(value),
            error: reject,
            complete: resolve,
          });
        }),
      cancel.signal,
    ).then(
      () => subscriber.complete(),
      (error: unknown) => subscriber.error(error),
    );
    return () => {
      cancel.abort();
      inner?.unsubscribe();
      finish?.();
    };
  });
}
