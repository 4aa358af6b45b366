import { GRANTED, type AcquireReply } from '../../../store';
import type { LuaScript, ScriptClient } from '../lua-script';

/** How a script announces what it frees: sharded pub/sub (a Cluster of Redis >= 7) or classic. */
export type PublishCommand = 'spublish' | 'publish';

/** KEYS then ARGV, as EVALSHA takes them after the key count. */
export type KeysAndArgs = (string | number)[];

/**
 * One script's typed definition: the script, how its input lays out as KEYS and ARGV (one
 * layout, written once, here) and how its reply reads. `In` is the input's parameters.
 */
export interface ScriptDefinition<In extends readonly unknown[], Out> {
  readonly script: LuaScript;
  /** Writes KEYS then ARGV for the input into `out` (empty); answers how many are KEYS. */
  layout(out: KeysAndArgs, ...input: In): number;
  /** Reads the script's reply. */
  decode(this: void, reply: unknown): Out;
}

/** One script call ready to run (see runSynced): its definition's script, layout and decoder. */
export interface ScriptCall<Out = unknown> {
  readonly script: LuaScript;
  readonly numKeys: number;
  readonly keysAndArgs: KeysAndArgs;
  decode(this: void, reply: unknown): Out;
}

/** The call of `definition` with `input`. */
export function scriptCall<In extends readonly unknown[], Out>(
  definition: ScriptDefinition<In, Out>,
  ...input: In
): ScriptCall<Out> {
  const keysAndArgs: KeysAndArgs = [];
  const numKeys = definition.layout(keysAndArgs, ...input);
  return { script: definition.script, numKeys, keysAndArgs, decode: definition.decode };
}

/** Runs `definition` with `input` (no WAIT) and decodes its reply. */
export function runScript<In extends readonly unknown[], Out>(
  client: ScriptClient,
  definition: ScriptDefinition<In, Out>,
  ...input: In
): Promise<Out> {
  const call = scriptCall(definition, ...input);
  return call.script.run(client, call.numKeys, ...call.keysAndArgs).then(call.decode);
}

/**
 * The layout buffer of the fast path (plainly `lay(definition)` then `callLaid`): one array
 * reused by every call, so laying out a call costs no allocation. Safe because a layout and
 * the call that spreads it run in one synchronous step (the spread copies it).
 */
const laid: KeysAndArgs = [];

/** The fast path's layout buffer, emptied: give it to a definition's `layout`. */
export function layoutBuffer(): KeysAndArgs {
  laid.length = 0;
  return laid;
}

/**
 * Runs `script` on the call laid out in layoutBuffer() (`numKeys` of them KEYS), its reply
 * mapped by `onReply` and a failure by `onError` in the step that reads it (LuaScript.call).
 */
export function callLaid<T>(
  client: ScriptClient,
  script: LuaScript,
  numKeys: number,
  onReply: (reply: unknown) => T,
  onError: (error: unknown) => T,
): Promise<T> {
  return script.call(client, onReply, onError, numKeys, ...laid);
}

/**
 * Lays out a channel known in advance, as the scripts take it (see release.lua): with
 * SPUBLISH, declared as a key (it must lie in the script's slot) and '' in its argument's
 * place; with PUBLISH, an argument only (ACL key patterns then need not cover it). Pushes the
 * key (when one) onto `out` and answers the argument.
 */
export function channelKey(out: KeysAndArgs, channel: string, publish: PublishCommand): string {
  if (publish !== 'spublish') return channel;
  out.push(channel);
  return '';
}

/** Decodes the `-2 - pttl` refusal most acquire scripts return: the holder's lease, ms. */
export function refusedTtl(reply: number): AcquireReply {
  return { granted: false, ttl: reply === -1 ? Infinity : -2 - reply };
}

/** Decodes the reply of an acquire script that grants with 0 and refuses as refusedTtl reads. */
export function decodeGrantOrWait(reply: unknown): AcquireReply {
  const value = Number(reply);
  return value === 0 ? GRANTED : refusedTtl(value);
}

/** Decodes a release reply: listeners told (a negative count: none), or null when not held. */
export function decodeRelease(reply: unknown): number | null {
  return reply === null ? null : Math.max(0, Number(reply));
}
