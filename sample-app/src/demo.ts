import 'reflect-metadata';
import { NestFactory } from '@nestjs/core';
import { Redis } from 'ioredis';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import type { AddressInfo } from 'node:net';
import { relative } from 'node:path';
import { performance } from 'node:perf_hooks';
import { AppModule } from './app.module';
import { resolveRedis } from './demo-redis';
import type { Order } from './orders.repository';
import type { PaymentReceipt } from './orders.service';

/**
 * `npm run demo`: starts the orders app on a free port, pays orders with concurrent requests
 * and checks that every order was charged exactly once. Exits 0 when it was, 1 otherwise.
 * Redis: REDIS_URL, else 127.0.0.1:6379, else a redis-server it starts (`--own-redis` skips
 * 6379). Every key it writes carries a per-run prefix and is deleted at the end.
 */

const SAME_ORDER_REQUESTS = 20;
const PARALLEL_ORDERS = 10;

interface Reply<T> {
  status: number;
  body: T;
  ms: number;
}

async function main(): Promise<number> {
  const redis = await resolveRedis({ ownServer: process.argv.includes('--own-redis') });
  const keyPrefix = `nestjs-redis-lock-demo:${randomBytes(6).toString('hex')}:`;
  const failures: string[] = [];
  const check = (ok: boolean, failure: string) => {
    if (!ok) failures.push(failure);
  };
  console.log(
    `nestjs-redis-lock demo: Nest ${packageVersion('@nestjs/core')}, Node ${process.version}, ` +
      `library ${relative(process.cwd(), require.resolve('nestjs-redis-lock'))}`,
  );
  console.log(`Redis ${redis.url} (${redis.origin}), key prefix ${keyPrefix}`);
  try {
    const app = await NestFactory.create(AppModule.forRoot({ redisUrl: redis.url, keyPrefix }), {
      logger: ['warn', 'error'],
    });
    try {
      await app.listen(0, '127.0.0.1');
      const { port } = (app.getHttpServer() as { address(): AddressInfo }).address();
      const base = `http://127.0.0.1:${port}`;
      console.log(`Orders app on ${base}\n`);

      const orders: Order[] = [];
      for (let i = 0; i <= PARALLEL_ORDERS; i++) {
        const created = await post<Order>(`${base}/orders`, { amount: 10 + i });
        if (created.status !== 201) throw new Error(`POST /orders answered ${created.status}`);
        orders.push(created.body);
      }
      const [contended, ...others] = orders;
      const receipts: PaymentReceipt[] = [];

      // 1) Many requests race to pay one order: exactly one may charge it.
      const burst = await timed(() =>
        Promise.all(
          Array.from({ length: SAME_ORDER_REQUESTS }, () =>
            post<PaymentReceipt>(`${base}/orders/${contended.id}/pay`),
          ),
        ),
      );
      const burstOrder = await get<Order>(`${base}/orders/${contended.id}`);
      console.log(
        `1) ${SAME_ORDER_REQUESTS} concurrent POST /orders/${contended.id}/pay (one order)`,
      );
      console.log(`   ${statusLine(burst.result)} in ${ms(burst.ms)}; ${latencies(burst.result)}`);
      console.log(`   order ${contended.id}: ${describeOrder(burstOrder.body)}`);
      check(
        count(burst.result, 200) === 1 && count(burst.result, 409) === SAME_ORDER_REQUESTS - 1,
        `order ${contended.id}: expected 1 x 200 and ${SAME_ORDER_REQUESTS - 1} x 409, got ${statusLine(burst.result)}`,
      );
      check(paidOnce(burstOrder.body), `order ${contended.id}: ${describeOrder(burstOrder.body)}`);
      receipts.push(...paid(burst.result));

      // 2) One request per order, all at once: different keys do not wait for each other.
      const spread = await timed(() =>
        Promise.all(others.map((order) => post<PaymentReceipt>(`${base}/orders/${order.id}/pay`))),
      );
      const spreadOrders = await Promise.all(
        others.map((order) => get<Order>(`${base}/orders/${order.id}`)),
      );
      const ids = `${others[0].id}-${others[others.length - 1].id}`;
      console.log(`2) ${others.length} concurrent POST /orders/:id/pay (orders ${ids}, one each)`);
      console.log(
        `   ${statusLine(spread.result)} in ${ms(spread.ms)}; ${latencies(spread.result)}`,
      );
      const wrong = spreadOrders.map((reply) => reply.body).filter((order) => !paidOnce(order));
      console.log(
        wrong.length === 0
          ? `   orders ${ids}: each paid, paidCount 1, 1 payment`
          : wrong.map((order) => `   order ${order.id}: ${describeOrder(order)}`).join('\n'),
      );
      check(
        count(spread.result, 200) === others.length,
        `orders ${ids}: expected ${others.length} x 200, got ${statusLine(spread.result)}`,
      );
      for (const order of wrong) check(false, `order ${order.id}: ${describeOrder(order)}`);
      receipts.push(...paid(spread.result));

      const depths = [...new Set(receipts.map((receipt) => receipt.holdCount))];
      console.log(
        `Reentrancy: the service method saw holdCount ${depths.join('/')} in ${receipts.length} ` +
          'payments (controller and service both locked on order:pay:<id>)',
      );
      check(
        depths.length === 1 && depths[0] === 2,
        `expected holdCount 2 inside the service, got ${depths.join(', ')}`,
      );
    } finally {
      await app.close();
    }
  } finally {
    const removed = await removeKeys(redis.url, keyPrefix);
    await redis.stop();
    console.log(`Cleanup: app closed, ${removed} demo keys deleted`);
  }

  if (failures.length > 0) {
    console.log(`\nFAILED: ${failures.length} check(s) failed`);
    for (const failure of failures) console.log(`  - ${failure}`);
    return 1;
  }
  console.log(
    `\nOK: ${PARALLEL_ORDERS + 1} orders, each paid exactly once ` +
      `(${SAME_ORDER_REQUESTS + PARALLEL_ORDERS} pay requests)`,
  );
  return 0;
}

async function post<T>(url: string, body?: unknown): Promise<Reply<T>> {
  return request<T>(url, {
    method: 'POST',
    ...(body === undefined
      ? {}
      : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
}

async function get<T>(url: string): Promise<Reply<T>> {
  return request<T>(url, { method: 'GET' });
}

async function request<T>(url: string, init: RequestInit): Promise<Reply<T>> {
  const started = performance.now();
  const response = await fetch(url, init);
  const body = (await response.json()) as T;
  return { status: response.status, body, ms: performance.now() - started };
}

async function timed<T>(run: () => Promise<T>): Promise<{ result: T; ms: number }> {
  const started = performance.now();
  const result = await run();
  return { result, ms: performance.now() - started };
}

function count(replies: Reply<unknown>[], status: number): number {
  return replies.filter((reply) => reply.status === status).length;
}

function paid(replies: Reply<PaymentReceipt>[]): PaymentReceipt[] {
  return replies.filter((reply) => reply.status === 200).map((reply) => reply.body);
}

function paidOnce(order: Order): boolean {
  return order.status === 'paid' && order.paidCount === 1 && order.payments.length === 1;
}

function describeOrder(order: Order): string {
  const payments = order.payments.length;
  return `status ${order.status}, paidCount ${order.paidCount}, ${payments} payment${payments === 1 ? '' : 's'}`;
}

function statusLine(replies: Reply<unknown>[]): string {
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

function latencies(replies: Reply<unknown>[]): string {
  const sorted = replies.map((reply) => reply.ms).sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  return `per request min ${ms(sorted[0])}, median ${ms(median)}, max ${ms(sorted[sorted.length - 1])}`;
}

function ms(value: number): string {
  return `${Math.round(value)} ms`;
}

function packageVersion(name: string): string {
  const manifest = JSON.parse(readFileSync(require.resolve(`${name}/package.json`), 'utf8')) as {
    version: string;
  };
  return manifest.version;
}

/** Deletes every key of this run: order data, lock keys and Redisson's auxiliary keys. */
async function removeKeys(url: string, keyPrefix: string): Promise<number> {
  const client = new Redis(url, { maxRetriesPerRequest: 1 });
  client.on('error', () => undefined);
  let removed = 0;
  try {
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `*${keyPrefix}*`, 'COUNT', 1000);
      cursor = next;
      if (keys.length > 0) removed += await client.del(...keys);
    } while (cursor !== '0');
  } finally {
    client.disconnect();
  }
  return removed;
}

main().then(
  (code) => {
    process.exitCode = code;
    // Everything is closed now; if something still holds the event loop, say so and fail.
    setTimeout(() => {
      console.error('demo: the process is still running 10 s after shutdown (open handles)');
      process.exit(1);
    }, 10_000).unref();
  },
  (error: unknown) => {
    console.error(`demo failed: ${error instanceof Error ? error.message : String(error)}`);
    process.exit(1);
  },
);
