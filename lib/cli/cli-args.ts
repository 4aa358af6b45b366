import { parseArgs } from 'node:util';

/** Exit codes of the CLI (docs/inspector.md). */
export const EXIT = {
  ok: 0,
  /** `inspect`: the key is free; `unlock`: nothing was held. */
  notFound: 1,
  usage: 2,
  /** Redis could not be reached, or failed a command. */
  redis: 3,
} as const;

/** The CLI's usage text. */
export const USAGE = `Usage: nestjs-redis-lock <command> [options]

Commands:
  inspect <key>          who holds <key>: kind, holders (app, host, pid), lease, token, queue, waiters
  list [pattern]         held locks whose keys match pattern (SCAN glob, default *)
  clients                registered clients and how many locks each holds
  unlock <key> --force   free <key> whoever holds it (its waiters are woken)

Options:
  --url <url>            redis:// or rediss:// URL (default $REDIS_URL, else redis://127.0.0.1:6379)
  --cluster <nodes>      a Redis Cluster: host:port,host:port,...
  --prefix <prefix>      the applications' keyPrefix (default none)
  --limit <n>            list, clients: at most n locks (default 100, clients 10000)
  --json                 print JSON instead of tables
  --help, --version

Exit codes: 0 done, 1 inspect: the key is free / unlock: it was not held, 2 usage error,
3 Redis unreachable or failing.
`;

/** What to do, parsed from argv. */
export interface CliCommand {
  readonly command: 'inspect' | 'list' | 'clients' | 'unlock' | 'help' | 'version';
  /** inspect, unlock: the key; list: the pattern. */
  readonly argument: string | undefined;
  readonly url: string;
  readonly cluster: { host: string; port: number }[] | undefined;
  readonly prefix: string;
  readonly limit: number | undefined;
  readonly json: boolean;
}

/** A command line the CLI cannot run: printed with the usage, exit code 2. */
export class UsageError extends Error {}

/** `host:port,host:port` as Cluster nodes. */
function clusterNodes(list: string): { host: string; port: number }[] {
  return list.split(',').map((node) => {
    const match = /^\[?([^\]]+?)\]?:(\d+)$/.exec(node.trim());
    if (!match) throw new UsageError(`--cluster: expected host:port,..., got "${node}".`);
    return { host: match[1], port: Number(match[2]) };
  });
}

/** Parses the CLI's arguments (without `node` and the script); throws UsageError. */
export function parseCli(argv: readonly string[], env: NodeJS.ProcessEnv): CliCommand {
  let parsed;
  try {
    parsed = parseArgs({
      args: [...argv],
      allowPositionals: true,
      options: {
        url: { type: 'string' },
        cluster: { type: 'string' },
        prefix: { type: 'string', default: '' },
        limit: { type: 'string' },
        json: { type: 'boolean', default: false },
        force: { type: 'boolean', default: false },
        help: { type: 'boolean', short: 'h', default: false },
        version: { type: 'boolean', default: false },
      },
    });
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  const { values, positionals } = parsed;
  const [name, argument, ...extra] = positionals;
  const command = values.help ? 'help' : values.version ? 'version' : name;
  if (values.url !== undefined && values.cluster !== undefined) {
    throw new UsageError('give --url or --cluster, not both.');
  }
  const limit = values.limit === undefined ? undefined : Number(values.limit);
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new UsageError(`--limit: expected a whole number >= 1, got "${values.limit}".`);
  }
  const base = {
    argument,
    url: values.url ?? env.REDIS_URL ?? 'redis://127.0.0.1:6379',
    cluster: values.cluster === undefined ? undefined : clusterNodes(values.cluster),
    prefix: values.prefix,
    limit,
    json: values.json,
  };
  if (command === 'help' || command === 'version') return { ...base, command };
  if (extra.length > 0) throw new UsageError(`unexpected argument "${extra[0]}".`);
  switch (command) {
    case 'inspect':
    case 'unlock':
      if (argument === undefined || argument === '') {
        throw new UsageError(`${command} needs a key.`);
      }
      if (command === 'unlock' && !values.force) {
        throw new UsageError('unlock frees a lock someone holds: confirm with --force.');
      }
      return { ...base, command };
    case 'list':
      return { ...base, command };
    case 'clients':
      if (argument !== undefined) throw new UsageError(`unexpected argument "${argument}".`);
      return { ...base, command };
    case undefined:
      throw new UsageError('no command given.');
    default:
      throw new UsageError(`unknown command "${command}".`);
  }
}
