import {
  count,
  latencies,
  ms,
  ok,
  post,
  get,
  statusLine,
  timed,
  type Check,
  type Reply,
} from './demo-http';
import type { Order } from './orders.repository';
import type { PaymentReceipt } from './orders.service';

const SAME_ORDER_REQUESTS = 20;
const PARALLEL_ORDERS = 10;
/** How many orders part 1 creates. */
export const ORDERS = PARALLEL_ORDERS + 1;

/**
 * Demo parts 1 and 2, the plain lock `order:pay:<id>`: 20 concurrent payments of one order
 * (exactly one may charge it), then one payment each for 10 other orders at once (different
 * keys do not wait for each other); the service re-enters the controller's lock. Returns the
 * summary for the final OK line.
 */
export async function payOrders(base: string, check: Check): Promise<string> {
  const orders: Order[] = [];
  for (let i = 0; i < ORDERS; i++) {
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
  console.log(`1) ${SAME_ORDER_REQUESTS} concurrent POST /orders/${contended.id}/pay (one order)`);
  console.log(`   ${statusLine(burst.result)} in ${ms(burst.ms)}; ${latencies(burst.result)}`);
  const alreadyPaid = burst.result.filter(isAlreadyPaid).length;
  const busy = count(burst.result, 409) - alreadyPaid;
  console.log(
    `   the 409s mean "already paid": each request waited its turn for the lock, then found the ` +
      `order paid (${alreadyPaid} of them; busy locks, "locked by another operation": ${busy})`,
  );
  console.log(`   order ${contended.id}: ${describeOrder(burstOrder.body)}`);
  check(
    count(burst.result, 200) === 1 && alreadyPaid === SAME_ORDER_REQUESTS - 1,
    `order ${contended.id}: expected 1 x 200 and ${SAME_ORDER_REQUESTS - 1} x 409 "already paid", got ${statusLine(burst.result)} (${busy} busy)`,
  );
  check(paidOnce(burstOrder.body), `order ${contended.id}: ${describeOrder(burstOrder.body)}`);
  receipts.push(...ok(burst.result));

  // 2) One request per order, all at once: different keys do not wait for each other.
  const spread = await timed(() =>
    Promise.all(others.map((order) => post<PaymentReceipt>(`${base}/orders/${order.id}/pay`))),
  );
  const spreadOrders = await Promise.all(
    others.map((order) => get<Order>(`${base}/orders/${order.id}`)),
  );
  const ids = `${others[0].id}-${others[others.length - 1].id}`;
  console.log(`2) ${others.length} concurrent POST /orders/:id/pay (orders ${ids}, one each)`);
  console.log(`   ${statusLine(spread.result)} in ${ms(spread.ms)}; ${latencies(spread.result)}`);
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
  receipts.push(...ok(spread.result));

  const depths = [...new Set(receipts.map((receipt) => receipt.holdCount))];
  console.log(
    `Reentrancy: the service method saw holdCount ${depths.join('/')} in ${receipts.length} ` +
      'payments (controller and service both locked on order:pay:<id>)',
  );
  check(
    depths.length === 1 && depths[0] === 2,
    `expected holdCount 2 inside the service, got ${depths.join(', ')}`,
  );
  return (
    `${ORDERS} orders, each paid exactly once ` +
    `(${SAME_ORDER_REQUESTS + PARALLEL_ORDERS} pay requests)`
  );
}

/** A 409 from the service's "already paid" check, not from a busy lock. */
function isAlreadyPaid(reply: Reply<unknown>): boolean {
  const message = (reply.body as { message?: unknown } | null)?.message;
  return reply.status === 409 && typeof message === 'string' && message.includes('already paid');
}

function paidOnce(order: Order): boolean {
  return order.status === 'paid' && order.paidCount === 1 && order.payments.length === 1;
}

function describeOrder(order: Order): string {
  const payments = order.payments.length;
  return `status ${order.status}, paidCount ${order.paidCount}, ${payments} payment${payments === 1 ? '' : 's'}`;
}
