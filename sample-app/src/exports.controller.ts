import { Controller, Get, HttpCode, Post } from '@nestjs/common';
import { performance } from 'node:perf_hooks';
import { ExportsService, type OrdersExport } from './exports.service';

/** What `POST /exports/orders` answers: the export and how long it waited for a permit. */
export interface ExportReply extends OrdersExport {
  waitedMs: number;
}

/** Order exports, at most EXPORT_PERMITS at once (see ExportsService). */
@Controller('exports')
export class ExportsController {
  constructor(private readonly exports: ExportsService) {}

  /** Exports every order as CSV; waits for a free permit first. */
  @Post('orders')
  @HttpCode(200)
  async exportOrders(): Promise<ExportReply> {
    const started = performance.now();
    const result = await this.exports.exportOrders();
    const waitedMs = Math.max(0, performance.now() - started - result.runMs);
    return { ...result, waitedMs: Math.round(waitedMs), runMs: Math.round(result.runMs) };
  }

  /** `{ permits, available }`: the limit and how many permits are free now. */
  @Get('permits')
  permits(): Promise<{ permits: number; available: number }> {
    return this.exports.permits();
  }
}
