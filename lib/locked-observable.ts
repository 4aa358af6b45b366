import { Observable, isObservable, type Subscription } from 'rxjs';
import type { RunOptions } from './engine/options/lock-options';
import { LockError } from './lock.errors';
import type { LockService } from './lock.service';

/**
 * The Observable a `@Locked` method declared as returning one gives its caller: the lock is
 * taken on subscription and held until the method's Observable completes, errors or is
 * unsubscribed; values pass through. Runs through `LockService.run`, so the wait, `onBusy`,
 * the lost-lock policy and the release are the same as for a Promise-returning method.
 */
export function lockedObservable(
  locks: LockService,
  key: string,
  options: RunOptions,
  subscribe: () => unknown,
  where: string,
): Observable<unknown> {
  return new Observable((subscriber) => {
    const cancel = new AbortController();
    let inner: Subscription | undefined;
    let finish: (() => void) | undefined;
    locks
      .run(
        key,
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
        { ...options, signal: cancel.signal },
      )
      .then(
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
