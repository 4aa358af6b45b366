import { Injectable } from '@nestjs/common';
import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';

/** How long the pretend payment provider takes to answer, ms. */
export const GATEWAY_LATENCY_MS = 25;

/**
 * A stand-in for a real payment provider: every call charges the customer. Its latency is
 * the window in which, without a lock, a second request would also see the order unpaid.
 */
@Injectable()
export class PaymentGateway {
  async charge(amount: number): Promise<{ paymentId: string; amount: number; paidAt: string }> {
    await sleep(GATEWAY_LATENCY_MS);
    return { paymentId: `pay_${randomUUID()}`, amount, paidAt: new Date().toISOString() };
  }
}
