import { BadRequestException } from '@nestjs/common';

/** A request body's field that must be a positive whole number (an amount, an id), else 400. */
export function positiveInteger(value: unknown, name: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value <= 0) {
    throw new BadRequestException(`${name} must be a positive whole number`);
  }
  return value;
}
