import {
  type PermitRunOptions,
  assertRunPolicies,
  LOCKED_OPTION_NAMES,
  assertKnownOptions,
  assertLeaseTime,
  assertWaitTime,
  assertPermits,
} from '../../core';
import { LockOptionsError } from '../../errors';
import { guardDecorator, keyBuilder, type LockedDecorator } from './locked.decorator';

/** Options of `@Semaphore`: the semaphore's key and limit, and run options. */
export interface SemaphoreOptions extends Omit<PermitRunOptions, 'signal'> {
  /** The semaphore's key: a template (`'export:<0>'`) or a function of the method's arguments. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  key: string | ((...args: any[]) => string);
  /** How many holders the semaphore allows at once (1 to 1 000 000). */
  permits: number;
}

const SEMAPHORE_OPTION_NAMES = [
  'permits',
  ...LOCKED_OPTION_NAMES.filter((name) => !['mode', 'fair', 'fencing'].includes(name)),
];

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
  return guardDecorator('@Semaphore', (decorated) => {
    const build = keyBuilder(key, decorated);
    return (args) => {
      const name = build(args);
      return (locks, body, signal) =>
        locks
          .semaphore(name, { permits })
          .run(body, signal ? { ...runOptions, signal } : runOptions);
    };
  });
}

function checkSemaphoreOptions(options: SemaphoreOptions): {
  key: SemaphoreOptions['key'];
  permits: number;
  runOptions: PermitRunOptions;
} {
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('@Semaphore', 'expected a key template and { permits }.');
  }
  assertKnownOptions(options, SEMAPHORE_OPTION_NAMES);
  const { key, permits, waitTime, leaseTime, ...policies } = options;
  assertPermits(permits);
  if (waitTime !== undefined) assertWaitTime(waitTime);
  if (leaseTime !== undefined) assertLeaseTime(leaseTime);
  assertRunPolicies(policies);
  return { key, permits, runOptions: { ...policies, waitTime, leaseTime } };
}
