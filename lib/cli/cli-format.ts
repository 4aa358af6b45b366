/** The CLI's human-readable output: aligned tables and labelled lines. */
import type {
  ClientSummary,
  HolderView,
  LockDescription,
  LockSummary,
  OwnerView,
} from '../inspector';

/** Rows under a header, each column as wide as its widest cell, two spaces apart. */
export function table(header: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = header.map((title, i) => Math.max(title.length, ...rows.map((r) => r[i].length)));
  const line = (cells: readonly string[]) =>
    cells
      .map((cell, i) => cell.padEnd(widths[i]))
      .join('  ')
      .trimEnd();
  return [line(header), ...rows.map(line)].join('\n');
}

/** A duration in words: `850 ms`, `28.1 s`, `12 min`. */
export function duration(ms: number | null | undefined): string {
  if (ms === null || ms === undefined) return '-';
  if (ms === Infinity) return 'no lease';
  if (ms < 1_000) return `${Math.round(ms)} ms`;
  if (ms < 120_000) return `${(ms / 1_000).toFixed(1)} s`;
  if (ms < 7_200_000) return `${Math.round(ms / 60_000)} min`;
  return `${(ms / 3_600_000).toFixed(1)} h`;
}

/** The process behind an owner: `app (host, pid 42)`, or `unknown client`. */
export function processOf(view: OwnerView): string {
  const { client } = view;
  return client ? `${client.app} (${client.host}, pid ${client.pid})` : 'unknown client';
}

function holderRows(holders: readonly HolderView[]): string[][] {
  return holders.map((h) => [
    h.owner,
    String(h.holdCount),
    h.mode ?? (h.kept ? 'kept' : ''),
    h.client?.app ?? 'unknown client',
    h.client?.host ?? '',
    h.client ? String(h.client.pid) : '',
    h.ttl === undefined ? '' : duration(h.ttl),
  ]);
}

/** inspect's output. */
export function formatDescription(lock: LockDescription): string {
  const lines = [
    `key      ${lock.key}${lock.name === lock.key ? '' : ` (${lock.name})`}`,
    `kind     ${lock.kind}${lock.kind === 'other' ? ` (a ${lock.redisType})` : ''}`,
    `lease    ${duration(lock.ttl)}`,
  ];
  if (lock.fencingToken !== undefined) lines.push(`token    ${lock.fencingToken}`);
  if (lock.permits) lines.push(`permits  ${lock.permits.used} used, ${lock.permits.free} free`);
  lines.push(`waiting  ${lock.waiting} process${lock.waiting === 1 ? '' : 'es'}`);
  if (lock.holders.length > 0) {
    const header = ['OWNER', 'COUNT', 'MODE', 'APP', 'HOST', 'PID', 'LEASE'];
    lines.push('', 'holders', indent(table(header, holderRows(lock.holders))));
  }
  if (lock.queue.length > 0) {
    const rows = lock.queue.map((q, i) => [
      String(i + 1),
      q.owner,
      processOf(q),
      q.deadline === undefined ? '-' : new Date(q.deadline).toISOString(),
    ]);
    lines.push('', 'queue', indent(table(['#', 'OWNER', 'PROCESS', 'DEADLINE'], rows)));
  }
  return lines.join('\n');
}

/** list's output. */
export function formatList(locks: readonly LockSummary[]): string {
  if (locks.length === 0) return 'no held locks found';
  const rows = locks.map((lock) => [
    lock.key,
    lock.kind,
    lock.permits ? `${lock.permits.used} permit(s)` : String(lock.holders.length),
    duration(lock.ttl),
    [...new Set(lock.holders.map(processOf))].join('; '),
  ]);
  return table(['KEY', 'KIND', 'HOLDERS', 'LEASE', 'HELD BY'], rows);
}

/** clients' output. */
export function formatClients(clients: readonly ClientSummary[], now = Date.now()): string {
  if (clients.length === 0) return 'no clients found';
  const rows = clients.map(({ clientId, client, locks }) => [
    client?.app ?? 'unknown client',
    client?.host ?? '',
    client ? String(client.pid) : '',
    client?.version ?? '',
    client ? duration(now - client.startedAt) : '',
    String(locks),
    clientId,
  ]);
  return table(['APP', 'HOST', 'PID', 'VERSION', 'UP', 'LOCKS', 'CLIENT ID'], rows);
}

/** JSON of `value` (Infinity, a lease without end, as the string "Infinity"). */
export function json(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) => (v === Infinity ? 'Infinity' : v), 2);
}

function indent(text: string): string {
  return text
    .split('\n')
    .map((line) => `  ${line}`)
    .join('\n');
}
