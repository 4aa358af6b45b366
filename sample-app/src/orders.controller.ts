import { Body, Controller, Get, HttpCode, Param, ParseIntPipe, Post } from '@nestjs/common';
import { Locked } from 'nestjs-redis-lock';
import type { Order } from './orders.repository';
import { OrdersService, type PaymentReceipt } from './orders.service';

@Controller('orders')
export class OrdersController {
  constructor(private readonly orders: OrdersService) {}

  /** `POST /orders {"amount": 42}` creates a pending order. */
  @Post()
  create(@Body() body: { amount?: unknown } | undefined): Promise<Order> {
    return this.orders.create(body?.amount);
  }

  @Get(':id')
  find(@Param('id', ParseIntPipe) id: number): Promise<Order> {
    return this.orders.find(id);
  }

  /**
   * Pays an order: 200 with a receipt, 409 when it is already paid, 404 when it does not exist.
   * `<0>` is the id after ParseIntPipe, so the lock is `order:pay:7`, never `order:pay:"7"`.
   * Concurrent requests for one order run one at a time (in this process or any other on the
   * same Redis); requests for different orders run in parallel.
   */
  @Post(':id/pay')
  @HttpCode(200)
  @Locked('order:pay:<0>', { fencing: true })
  pay(@Param('id', ParseIntPipe) id: number): Promise<PaymentReceipt> {
    return this.orders.pay(id);
  }
}
