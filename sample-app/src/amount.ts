import { BadRequestException } from '@nestjs/common';

/** A request's amount: a positive whole number (cents, points), else 400. */
export function positiveAmount(value: unknown, name = 'amount'): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new BadRequestException(`${name} must be a positive whole number`);
  }
  return value;
}
