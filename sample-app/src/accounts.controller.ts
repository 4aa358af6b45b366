import { Body, Controller, Get, HttpCode, Param, ParseIntPipe, Post } from '@nestjs/common';
import type { Account } from './accounts.repository';
import { AccountsService, type BalanceSnapshot, type DepositReceipt } from './accounts.service';
import { positiveInteger } from './positive-integer';

/** Accounts: many balance reads at once, deposits one at a time (see AccountsService). */
@Controller('accounts')
export class AccountsController {
  constructor(private readonly accounts: AccountsService) {}

  /** `POST /accounts {"balance": 100}` opens an account. */
  @Post()
  create(@Body() body: { balance?: unknown } | undefined): Promise<Account> {
    return this.accounts.create(positiveInteger(body?.balance, 'balance'));
  }

  /** The balance, read under the account's read lock (shared with other reads). */
  @Get(':id/balance')
  balance(@Param('id', ParseIntPipe) id: number): Promise<BalanceSnapshot> {
    return this.accounts.balance(id);
  }

  /** `POST /accounts/:id/deposit {"amount": 10}`, under the account's write lock. */
  @Post(':id/deposit')
  @HttpCode(200)
  deposit(
    @Param('id', ParseIntPipe) id: number,
    @Body() body: { amount?: unknown } | undefined,
  ): Promise<DepositReceipt> {
    return this.accounts.deposit(id, positiveInteger(body?.amount, 'amount'));
  }
}
