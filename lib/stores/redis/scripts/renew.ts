import { LockScripts } from '../lock-scripts';
import type { KeysAndArgs, ScriptDefinition } from './script-definition';

/**
 * One key (and owner) to renew for one hold: what renew-all.lua, renew-node.lua and
 * semaphore-renew.lua take per entry. A kind says which entries its holds have (RedisKind).
 */
export interface RenewEntry {
  /**
   * The renew scripts' letter for it: 'l' exclusive, 'w' write hold, 'r' read hold (renew-all);
   * 'p' a permit (semaphore-renew).
   */
  readonly letter: 'l' | 'w' | 'r' | 'p';
  /** The hash (for 'p': the permits zset), then for 'r' the hold's lease key. */
  readonly keys: readonly string[];
  readonly owner: string;
  /** The index of the hold it belongs to. */
  readonly hold: number;
}

/** Whether semaphore-renew.lua renews the entry on one server (renew-all.lua the others). */
export function isPermitEntry(entry: RenewEntry): boolean {
  return entry.letter === 'p';
}

/** Each entry's answer: 1 renewed, 0 lost; renew-node.lua: 2 when its node cannot serve it. */
const decodeEach = (reply: unknown): number[] => (reply as unknown[]).map(Number);

/** renew-all.lua: KEYS each entry's keys; ARGV lease, the letters, each entry's owner. */
export const RENEW_ALL: ScriptDefinition<
  [entries: readonly RenewEntry[], leaseTime: number],
  number[]
> = {
  script: LockScripts.renew,
  layout(out: KeysAndArgs, entries: readonly RenewEntry[], leaseTime: number): number {
    for (const entry of entries) out.push(...entry.keys);
    const numKeys = out.length;
    out.push(leaseTime, entries.map((entry) => entry.letter).join(''));
    for (const entry of entries) out.push(entry.owner);
    return numKeys;
  },
  decode: decodeEach,
};

/**
 * renew-node.lua (a Cluster master, keys of many slots): no KEYS; ARGV lease, the letters, then
 * per entry its first key, its owner and its other keys.
 */
export const RENEW_NODE: ScriptDefinition<
  [entries: readonly RenewEntry[], leaseTime: number],
  number[]
> = {
  script: LockScripts.renewOnNode,
  layout(out: KeysAndArgs, entries: readonly RenewEntry[], leaseTime: number): number {
    out.push(leaseTime, entries.map((entry) => entry.letter).join(''));
    for (const entry of entries) out.push(entry.keys[0], entry.owner, ...entry.keys.slice(1));
    return 0;
  },
  decode: decodeEach,
};

/** semaphore-renew.lua: KEYS each permit's zset; ARGV lease, each permit's owner. */
export const SEMAPHORE_RENEW: ScriptDefinition<
  [entries: readonly RenewEntry[], leaseTime: number],
  number[]
> = {
  script: LockScripts.semaphoreRenew,
  layout(out: KeysAndArgs, entries: readonly RenewEntry[], leaseTime: number): number {
    for (const entry of entries) out.push(entry.keys[0]);
    out.push(leaseTime);
    for (const entry of entries) out.push(entry.owner);
    return entries.length;
  },
  decode: decodeEach,
};
