import { performance } from 'node:perf_hooks';

/** The demo's HTTP client and the formatting of its report lines. */

export interface Reply<T> {
  status: number;
  body: T;
  ms: number;
}

/** Collects the demo's failed checks: `check(ok, failure)` records `failure` unless `ok`. */
export type Check = (ok: boolean, failure: string) => void;

export async function post<T>(url: string, body?: unknown): Promise<Reply<T>> {
  return request<T>(url, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
}

export async function get<T>(url: string): Promise<Reply<T>> {
  return request<T>(url, { method: 'GET' });
}

async function request<T>(url: string, init: RequestInit): Promise<Reply<T>> {
  const started = performance.now();
  const response = await fetch(url, init);
  const body = (await response.json()) as T;
  return { status: response.status, body, ms: performance.now() - started };
}

export async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await run();
  return { result, ms: performance.now() - started };
}

export function count(replies: Reply<unknown>[], status: number): number {
  return replies.filter((reply) => reply.status === status).length;
}

/** The bodies of the 200 replies. */
export function ok<T>(replies: Reply<T>[]): T[] {
  return replies.filter((reply) => reply.status === 200).map((reply) => reply.body);
}

export function statusLine(replies: Reply<unknown>[]): string {
  const counts = new Map<number, number>();
  for (const reply of replies) counts.set(reply.status, (counts.get(reply.status) ?? 0) + 1);
  return (
    'HTTP ' +
    [...counts]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status} x${n}`)
      .join(', ')
  );
}

export function latencies(replies: Reply<unknown>[]): string {
  const sorted = replies.map((reply) => reply.ms).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return `per request min ${ms(sorted[0])}, median ${ms(median)}, max ${ms(sorted[sorted.length - 1])}`;
}

export function ms(value: number): string {
  return `${Math.round(value)} ms`;
}
