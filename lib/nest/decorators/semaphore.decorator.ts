import {
  assertPermits,
  checkedElsewhere,
  checkLockOptions,
  PERMIT_RUN_OPTIONS,
  withoutOptions,
  type CheckedRunOptions,
  type OptionTableOf,
  type PermitRunOptions,
} from '../../core';
import { LockOptionsError } from '../../errors';
import { engineOf, lockingDecorator, keyBuilder, type LockedDecorator } from './locked.decorator';

/** Options of `@Semaphore`: the semaphore's key and limit, and run options. */
export interface SemaphoreOptions extends Omit<PermitRunOptions, 'signal'> {
  /** The semaphore's key: a template (`'export:<0>'`) or a function of the method's arguments. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  key: string | ((...args: any[]) => string);
  /** How many holders the semaphore allows at once (1 to 1 000 000). */
  permits: number;
}

/** The option table of `@Semaphore`: a permit's run options less the signal, key and permits. */
const SEMAPHORE_OPTIONS = {
  permits: {
    check: (value: unknown): number => {
      assertPermits(value);
      return value;
    },
  },
  /** Checked when its template compiles (LockKeyError). */
  key: { check: checkedElsewhere<SemaphoreOptions['key']>() },
  ...withoutOptions(PERMIT_RUN_OPTIONS, ['signal']),
} as const satisfies OptionTableOf<SemaphoreOptions>;

/**
 * Runs the method holding a permit of a semaphore of leased permits (see
 * `LockService.semaphore`): at most `permits` calls at once across every process; a call made
 * while the chain holds a permit of the same semaphore reuses it. Key templates and the
 * Promise/Observable handling are those of `@Locked`.
 *
 * @example @Semaphore('export:<0>', { permits: 3 })
 * @example @Semaphore({ key: (job: Job) => `export:${job.tenant}`, permits: 2, waitTime: 0, onBusy: 'skip' })
 */
export function Semaphore(
  template: string,
  options: Omit<SemaphoreOptions, 'key'>,
): LockedDecorator;
export function Semaphore(options: SemaphoreOptions): LockedDecorator;
export function Semaphore(
  templateOrOptions: string | SemaphoreOptions,
  maybeOptions?: Omit<SemaphoreOptions, 'key'>,
): LockedDecorator {
  const options: SemaphoreOptions =
    typeof templateOrOptions === 'object' && templateOrOptions !== null
      ? templateOrOptions
      : ({ ...maybeOptions, key: templateOrOptions } as SemaphoreOptions);
  const { key, permits, runOptions } = checkSemaphoreOptions(options);
  return lockingDecorator('@Semaphore', (decorated) => {
    const build = keyBuilder(key, decorated);
    return (args) => {
      const name = build(args);
      return (locks, body, signal) => {
        const engine = engineOf(locks);
        if (engine !== undefined) return engine.runChecked(name, body, runOptions, signal, permits);
        return locks
          .semaphore(name, { permits })
          .run(body, signal ? { ...runOptions, signal } : runOptions);
      };
    };
  });
}

/** `@Semaphore`'s options, checked when it decorates (`permits` is required). */
function checkSemaphoreOptions(options: SemaphoreOptions): {
  key: SemaphoreOptions['key'];
  permits: number;
  runOptions: CheckedRunOptions;
} {
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('@Semaphore', 'expected a key template and { permits }.');
  }
  const { key, permits, ...runOptions } = checkLockOptions(
    options,
    SEMAPHORE_OPTIONS,
  ) as CheckedRunOptions & Partial<Pick<SemaphoreOptions, 'key' | 'permits'>>;
  assertPermits(permits);
  return { key: key!, permits, runOptions: Object.freeze(runOptions) };
}
