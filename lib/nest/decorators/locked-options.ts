import {
  checkedElsewhere,
  checkLockOptions,
  RUN_OPTIONS,
  withoutOptions,
  type CheckedRunOptions,
  type OptionTableOf,
  type RunOptions,
} from '../../core';
import { LockOptionsError } from '../../errors';

/** Options of `@Locked`: exactly one of `key` (one lock) and `keys` (a multi-lock). */
export interface LockedOptions extends Omit<RunOptions, 'signal'> {
  /**
   * The lock key: a template (`'order:<0>'`, `'order:<0.id>:<1>'`) or a function of the
   * method's arguments returning the key.
   */
  // `any`: the function is typed by the user with the method's own parameter types.
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  key?: string | ((...args: any[]) => string);
  /**
   * The keys of a multi-lock (all or none, deadlock-free): a list of templates
   * (`['account:<0>', 'account:<1>']`) or a function of the method's arguments returning the
   * list. Plain locks only (no `mode`, no `fair`).
   */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  keys?: readonly string[] | ((...args: any[]) => readonly string[]);
}

/** The option table of `@Locked`: run's options less the signal, and the key or keys. */
const LOCKED_OPTIONS = {
  /** Checked when its template compiles (LockKeyError). */
  key: { check: checkedElsewhere<NonNullable<LockedOptions['key']>>() },
  keys: { check: checkedElsewhere<NonNullable<LockedOptions['keys']>>() },
  ...withoutOptions(RUN_OPTIONS, ['signal']),
} as const satisfies OptionTableOf<LockedOptions>;

/** `@Locked`'s options, checked when it decorates: the key or keys, and the run options. */
export interface CheckedLockedOptions {
  readonly key: LockedOptions['key'];
  readonly keys: LockedOptions['keys'];
  readonly runOptions: CheckedRunOptions;
}

export function checkLockedOptions(options: LockedOptions): CheckedLockedOptions {
  const { key, keys, ...runOptions } = checkLockOptions(
    options,
    LOCKED_OPTIONS,
  ) as CheckedRunOptions & Pick<LockedOptions, 'key' | 'keys'>;
  if (key !== undefined && keys !== undefined) {
    throw new LockOptionsError(
      'keys',
      '@Locked takes one of key (one lock) and keys (a multi-lock), got both.',
    );
  }
  if (keys !== undefined && (runOptions.mode !== undefined || runOptions.fair !== undefined)) {
    throw new LockOptionsError(
      runOptions.mode !== undefined ? 'mode' : 'fair',
      'a multi-lock (a list of keys) takes plain locks only.',
    );
  }
  if (keys !== undefined && (runOptions.holdAtLeast ?? 0) > 0) {
    throw new LockOptionsError(
      'holdAtLeast',
      'plain locks only: a multi-lock (a list of keys) is released at once.',
    );
  }
  return { key, keys, runOptions: Object.freeze(runOptions) };
}
