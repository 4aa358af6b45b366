import { Injectable } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { LockService, Semaphore } from 'nestjs-redis-lock';
import { OrdersRepository } from './orders.repository';
import { Overlap } from './overlap';

/** How many order exports may run at once, across every instance of the app. */
export const EXPORT_PERMITS = 2;
/** The semaphore's key. */
const EXPORT_KEY = 'export:orders';
/** How long an export takes after reading the orders (a pretend file rendering), ms. */
export const EXPORT_MS = 60;

/** What an export produces. */
export interface OrdersExport {
  /** One line per order: id,amount,status,paidCount. */
  csv: string;
  rows: number;
  /** Exports running in this process at once, this one included: at most EXPORT_PERMITS. */
  exportsAtOnce: number;
  /** How long the export ran once it had its permit, ms. */
  runMs: number;
}

/**
 * Order exports are heavy, so at most EXPORT_PERMITS run at once across the fleet: each holds
 * a leased permit of the semaphore `export:orders` (renewed while it runs, given back if its
 * process dies). The others wait for a permit (the module's waitTime), then get 409.
 */
@Injectable()
export class ExportsService {
  private readonly running = new Overlap();

  constructor(
    private readonly orders: OrdersRepository,
    private readonly locks: LockService,
  ) {}

  @Semaphore(EXPORT_KEY, { permits: EXPORT_PERMITS })
  async exportOrders(): Promise<OrdersExport> {
    return this.running.run(async () => {
      const started = performance.now();
      let exportsAtOnce = this.running.now;
      const orders = await this.orders.all();
      await sleep(EXPORT_MS);
      const csv = orders
        .map((order) => `${order.id},${order.amount},${order.status},${order.paidCount}`)
        .join('\n');
      exportsAtOnce = Math.max(exportsAtOnce, this.running.now);
      return { csv, rows: orders.length, exportsAtOnce, runMs: performance.now() - started };
    });
  }

  /** The semaphore's limit and how many permits are free now (across the fleet). */
  async permits(): Promise<{ permits: number; available: number }> {
    const available = await this.locks
      .semaphore(EXPORT_KEY, { permits: EXPORT_PERMITS })
      .available();
    return { permits: EXPORT_PERMITS, available };
  }
}
