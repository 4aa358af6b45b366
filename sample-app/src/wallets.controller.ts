import { Body, Controller, Get, HttpCode, Param, ParseIntPipe, Post } from '@nestjs/common';
import { positiveInteger } from './positive-integer';
import type { Wallet } from './wallets.repository';
import { WalletsService, type TransferReceipt } from './wallets.service';

/** Wallets of store credit and transfers between them (see WalletsService). */
@Controller('wallets')
export class WalletsController {
  constructor(private readonly wallets: WalletsService) {}

  /** `POST /wallets {"balance": 1000}` opens a wallet. */
  @Post()
  create(@Body() body: { balance?: unknown } | undefined): Promise<Wallet> {
    return this.wallets.create(positiveInteger(body?.balance, 'balance'));
  }

  /** `POST /wallets/transfer {"from": 1, "to": 2, "amount": 7}`, under a lock on both wallets. */
  @Post('transfer')
  @HttpCode(200)
  transfer(
    @Body() body: { from?: unknown; to?: unknown; amount?: unknown } | undefined,
  ): Promise<TransferReceipt> {
    return this.wallets.transfer(
      positiveInteger(body?.from, 'from'),
      positiveInteger(body?.to, 'to'),
      positiveInteger(body?.amount, 'amount'),
    );
  }

  /** A wallet's balance (no lock: one Redis read is a consistent snapshot). */
  @Get(':id')
  find(@Param('id', ParseIntPipe) id: number): Promise<Wallet> {
    return this.wallets.find(id);
  }
}
