import { LockOptionsError } from '../../errors';
import { booleanCheck, leaseTimeCheck } from '../options/checks';
import { checkOptions, type CheckedOptions, type OptionTableOf } from '../options/option-table';
import { describe } from '../options/validate';

/** Options of a leadership campaign (`LockService.leader(name, options)`). */
export interface LeaderOptions {
  /**
   * The leader lock's lease, ms (default: the module's `leaseTime`). The watchdog renews it every
   * third; a leader that dies (or stalls) is replaced this long after its last renewal. Shorter
   * is a faster take-over, at the cost of more renewals and of a pause of that length losing
   * the term.
   */
  leaseTime?: number;
  /**
   * Issue a fencing token with every term (default `true`): `term` is that token, strictly
   * increasing across terms of the name. With `false`, `term` stays `undefined`.
   */
  fencing?: boolean;
}

/** The option table of a leadership campaign. */
export const LEADER_OPTIONS = {
  leaseTime: { check: leaseTimeCheck },
  fencing: { check: booleanCheck, default: true },
} as const satisfies OptionTableOf<LeaderOptions>;

/** A campaign's options, checked, without defaults. */
export type CheckedLeaderOptions = CheckedOptions<typeof LEADER_OPTIONS>;

/** Checks a campaign's options (LockOptionsError): an object of LEADER_OPTIONS, or nothing. */
export function checkLeaderOptions(options: unknown): CheckedLeaderOptions {
  if (options === undefined) return {};
  if (typeof options !== 'object' || options === null) {
    throw new LockOptionsError('options', `expected an object, got ${describe(options)}.`);
  }
  return checkOptions(LEADER_OPTIONS, options);
}
