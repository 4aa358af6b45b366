/**
 * Watches the scripts a Redis server runs (MONITOR: a script's call comes first, then each
 * command it runs, marked `lua`) and finds the keys they touch that their call did not declare
 * in KEYS. Servers and proxies that check declared keys (Dragonfly by default, ElastiCache
 * Serverless, some proxies) refuse those; docs/redis-layout.md lists the only ones allowed
 * (UNDECLARED_ALLOWED here), which the Redisson layout leaves no way to declare.
 */
import { createHash, randomUUID } from 'node:crypto';
import type { Redis } from 'ioredis';
import { LockScripts } from '../../lib/stores/redis/lock-scripts';
import { monitorServer } from './redis-monitor';

/** A key a script touched without its call declaring it. */
export interface UndeclaredKey {
  readonly script: string;
  readonly command: string;
  readonly key: string;
}

/**
 * The documented exceptions (docs/redis-layout.md, "Keys a script does not declare"), by
 * script: keys named by other holders' hash fields, which no caller can know before the call.
 */
export const UNDECLARED_ALLOWED: Readonly<Record<string, RegExp>> = Object.fromEntries(
  ['readAcquire', 'readRelease', 'writeRelease', 'renew', 'forceUnlock'].map(
    // Read-write lock lease keys '<P>:<holder>[:write]:rwlock_timeout:<level>'.
    (script) => [script, /:rwlock_timeout:\d+$/],
  ),
);

const SCRIPT_BY_SHA = new Map(Object.entries(LockScripts).map(([name, lua]) => [lua.sha, name]));

interface ScriptCall {
  readonly script: string;
  readonly keys: ReadonlySet<string>;
  readonly commands: string[][];
}

/**
 * Starts watching `client`'s server; stop() ends the watch and tells what was undeclared. Only
 * the library's scripts count, unless `everyScript` (scripts of others, such as the Redisson
 * stand-in's, are theirs to declare).
 */
export async function watchDeclaredKeys(
  client: Redis,
  everyScript = false,
): Promise<{
  stop(): Promise<UndeclaredKey[]>;
}> {
  const calls: ScriptCall[] = [];
  let current: ScriptCall | undefined;
  const end = { marker: `declared-keys:end:${randomUUID()}`, seen: () => {} };
  const monitor = await monitorServer(client, ({ args, source }) => {
    if (args[0] === 'echo' && args[1] === end.marker) end.seen();
    if (source === 'lua') {
      current?.commands.push(args);
      return;
    }
    current = undefined;
    const command = args[0]?.toLowerCase();
    if (command !== 'evalsha' && command !== 'eval') return;
    // A script sent whole (EVAL) is the library's when its text is (the same SHA1).
    const sha = command === 'evalsha' ? args[1] : createHash('sha1').update(args[1]).digest('hex');
    const script = SCRIPT_BY_SHA.get(sha);
    if (script === undefined && !everyScript) return;
    const numKeys = Number(args[2]);
    const keys = new Set(args.slice(3, 3 + numKeys));
    current = { script: script ?? 'not a library script', keys, commands: [] };
    calls.push(current);
  });
  return {
    async stop() {
      // MONITOR's socket may deliver a command's line after the command's reply: the commands
      // sent before stop() are all seen once a command sent now is.
      let timeout: NodeJS.Timeout | undefined;
      const seen = new Promise<void>((resolve, reject) => {
        end.seen = resolve;
        timeout = setTimeout(() => reject(new Error('MONITOR did not show ECHO in 10 s')), 10_000);
      });
      try {
        await client.echo(end.marker);
        await seen;
      } finally {
        clearTimeout(timeout);
        monitor.close();
      }
      return undeclared(calls);
    },
  };
}

/** Commands the scripts may run: the argument positions of their keys (`'all'`: every one). */
const KEY_POSITIONS: Readonly<Record<string, readonly number[] | 'all'>> = {
  del: 'all',
  exists: 'all',
  unlink: 'all',
  publish: [],
  time: [],
  spublish: [1], // a sharded channel: declared as a key, so that it lies in the key's slot
};
/** Commands whose first argument is their one key. */
const ONE_KEY =
  /^(get|set|incr|incrby|pexpire|expire|pttl|ttl|persist|type|h\w+|z\w+|l\w+|r\w+|s(add|rem|card|ismember|members))$/;

function keysOf(command: readonly string[]): string[] {
  const name = command[0].toLowerCase();
  const positions = KEY_POSITIONS[name] ?? (ONE_KEY.test(name) ? [1] : undefined);
  if (positions === undefined) {
    throw new Error(`A script ran "${name}": add where its keys are to KEY_POSITIONS.`);
  }
  return positions === 'all' ? command.slice(1) : positions.map((i) => command[i]);
}

/** The keys each call's commands touched that it did not declare (nor UNDECLARED_ALLOWED). */
function undeclared(calls: readonly ScriptCall[]): UndeclaredKey[] {
  const found = new Map<string, UndeclaredKey>();
  for (const call of calls) {
    for (const command of call.commands) {
      for (const key of keysOf(command)) {
        if (call.keys.has(key) || UNDECLARED_ALLOWED[call.script]?.test(key)) continue;
        const entry = { script: call.script, command: command[0].toLowerCase(), key };
        found.set(JSON.stringify(entry), entry);
      }
    }
  }
  return [...found.values()];
}
