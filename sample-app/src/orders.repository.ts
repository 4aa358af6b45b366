import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, type AppConfig } from './config';

export type OrderStatus = 'pending' | 'paid';

/** One successful charge, as recorded in the order's payment list. */
export interface Payment {
  paymentId: string;
  amount: number;
  paidAt: string;
  /** The lock's fencing token when the payment was recorded. */
  fencingToken?: number;
}

export interface Order {
  id: number;
  amount: number;
  status: OrderStatus;
  /** How many times the order was charged: anything but 0 or 1 is a double payment. */
  paidCount: number;
  payments: Payment[];
}

/**
 * Orders in Redis: a hash `<prefix>order:<id>` (amount, status, paidCount) and a list
 * `<prefix>order:<id>:payments`. Nothing here is atomic across calls on purpose: the
 * check-then-pay sequence in OrdersService is only safe because it runs under a lock.
 */
@Injectable()
export class OrdersRepository {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prefix = config.keyPrefix;
  }

  async create(amount: number): Promise<Order> {
    const id = await this.redis.incr(`${this.prefix}order:seq`);
    await this.redis.hset(this.orderKey(id), { amount, status: 'pending', paidCount: 0 });
    return { id, amount, status: 'pending', paidCount: 0, payments: [] };
  }

  async find(id: number): Promise<Order | undefined> {
    const [hash, payments] = await Promise.all([
      this.redis.hgetall(this.orderKey(id)),
      this.redis.lrange(this.paymentsKey(id), 0, -1),
    ]);
    if (hash.status === undefined) return undefined;
    return {
      id,
      amount: Number(hash.amount),
      status: hash.status as OrderStatus,
      paidCount: Number(hash.paidCount),
      payments: payments.map((entry) => JSON.parse(entry) as Payment),
    };
  }

  /** Every order, in id order. */
  async all(): Promise<Order[]> {
    const last = Number((await this.redis.get(`${this.prefix}order:seq`)) ?? 0);
    const orders = await Promise.all(Array.from({ length: last }, (_, i) => this.find(i + 1)));
    return orders.filter((order) => order !== undefined);
  }

  /** Records a charge: marks the order paid, counts the charge, appends it. Returns paidCount. */
  async recordPayment(id: number, payment: Payment): Promise<number> {
    const results = await this.redis
      .multi()
      .hset(this.orderKey(id), 'status', 'paid')
      .hincrby(this.orderKey(id), 'paidCount', 1)
      .rpush(this.paymentsKey(id), JSON.stringify(payment))
      .exec();
    const [error, paidCount] = results?.[1] ?? [new Error('MULTI was discarded'), 0];
    if (error) throw error;
    return Number(paidCount);
  }

  private orderKey(id: number): string {
    return `${this.prefix}order:${id}`;
  }

  private paymentsKey(id: number): string {
    return `${this.prefix}order:${id}:payments`;
  }
}
