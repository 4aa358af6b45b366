import { LockKeyError, LockOptionsError } from '../../errors';
import { MAX_TIMER_DELAY } from '../../time/time-limit';

/** Smallest lease accepted: the watchdog renews every third of it. */
const MIN_LEASE_TIME = 30;
/** Longest lock name accepted, in UTF-8 bytes (keyPrefix included). */
export const MAX_KEY_BYTES = 1024;

/** A short, safe description of a value for error messages. */
export function describe(value: unknown): string {
  if (typeof value === 'string') {
    return value.length > 60 ? `a string of length ${value.length}` : JSON.stringify(value);
  }
  if (typeof value === 'number' || typeof value === 'bigint' || typeof value === 'boolean') {
    return String(value);
  }
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'function') return 'a function';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Throws for the first own key of `options` not in `known`, suggesting a near miss (`waittime`). */
export function assertKnownOptions(options: object, known: readonly string[]): void {
  for (const name of Object.keys(options)) {
    if (known.includes(name)) continue;
    const near = known.find((option) => option.toLowerCase() === name.toLowerCase());
    throw new LockOptionsError(
      name,
      `unknown option${near ? `; did you mean "${near}"?` : `. Known options: ${known.join(', ')}.`}`,
    );
  }
}

/** Checks a wait time: a number of ms from 0 to MAX_TIMER_DELAY, or Infinity. */
export function assertWaitTime(value: unknown, option = 'waitTime'): asserts value is number {
  if (
    typeof value !== 'number' ||
    Number.isNaN(value) ||
    value < 0 ||
    (value > MAX_TIMER_DELAY && value !== Infinity)
  ) {
    throw new LockOptionsError(
      option,
      `expected a number of milliseconds >= 0 and <= 2^31-1 (about 24.8 days), or Infinity to wait forever, got ${describe(value)}.`,
    );
  }
}

/** Checks a lease: a whole number of ms from MIN_LEASE_TIME to MAX_TIMER_DELAY (its expiry is a timer). */
export function assertLeaseTime(value: unknown, option = 'leaseTime'): asserts value is number {
  if (
    typeof value !== 'number' ||
    !Number.isInteger(value) ||
    value < MIN_LEASE_TIME ||
    value > MAX_TIMER_DELAY
  ) {
    throw new LockOptionsError(
      option,
      `expected a whole number of milliseconds from ${MIN_LEASE_TIME} to 2^31-1, got ${describe(value)}.`,
    );
  }
}

/** Checks a true/false option. */
export function assertBoolean(value: unknown, option: string): asserts value is boolean {
  if (typeof value !== 'boolean') {
    throw new LockOptionsError(option, `expected true or false, got ${describe(value)}.`);
  }
}

/** Checks that `value` is one of `allowed`. */
export function assertOneOf<T extends string>(
  value: unknown,
  allowed: readonly T[],
  option: string,
): asserts value is T {
  if (!allowed.includes(value as T)) {
    throw new LockOptionsError(
      option,
      `expected one of ${allowed.map((item) => `'${item}'`).join(', ')}, got ${describe(value)}.`,
    );
  }
}

/**
 * Checks a lock key (LockKeyError: not a non-empty, well-formed string, a hash tag that is not
 * well formed, too long with the prefix) and returns the Redis name `prefix + key`.
 */
export function lockName(prefix: string, key: unknown): string {
  if (typeof key !== 'string' || key.length === 0) {
    throw new LockKeyError(`A lock key must be a non-empty string, got ${describe(key)}.`);
  }
  if (!key.isWellFormed()) {
    throw new LockKeyError(
      `Lock key ${describe(key)} contains a lone UTF-16 surrogate, which is not valid unicode: Redis would store it as U+FFFD, so different keys would share one lock.`,
    );
  }
  const tag = hashTagProblem(key);
  if (tag !== undefined) throw new LockKeyError(hashTagMessage(`Lock key ${describe(key)}`, tag));
  const name = prefix + key;
  if (name.length * 3 > MAX_KEY_BYTES && Buffer.byteLength(name) > MAX_KEY_BYTES) {
    throw new LockKeyError(
      `Lock key "${name.slice(0, 40)}…" is ${Buffer.byteLength(name)} bytes long; the limit is ${MAX_KEY_BYTES}. Build keys from ids, not payloads.`,
    );
  }
  return name;
}

/**
 * What is wrong with the braces of a key or `keyPrefix`, if anything. Redisson names a lock's
 * other keys and channels `P:{N}`, or `P:N` when N has a `{`, and a Redis Cluster hashes a name by
 * its tag (the text between its first `{` and the first `}` after it, when not empty), else
 * whole. Those names share the lock's slot only when N has no brace at all or a well-formed
 * tag: `a{b` and `{}x` hash whole but `P:a{b` elsewhere; `a}b` whole but `P:{a}b}` by `a`.
 * Checking the prefix and the key each is enough: a name of two well-formed parts is.
 */
export function hashTagProblem(text: string): string | undefined {
  const open = text.indexOf('{');
  if (open === -1) return text.includes('}') ? 'has a "}" with no "{" before it' : undefined;
  const close = text.indexOf('}', open + 1);
  if (close === -1) return 'has a "{" with no "}" after it';
  return close === open + 1 ? 'has an empty hash tag "{}"' : undefined;
}

/** The message for a hash tag problem of `what` (a key or the keyPrefix). */
export function hashTagMessage(what: string, problem: string): string {
  return `${what} ${problem}: on a Redis Cluster, the lock's channel, fencing token and other keys (named as Redisson names them) would hash to another slot than the lock, and its releases would fail. Use a complete hash tag such as "{order:42}:pay", or no braces.`;
}
