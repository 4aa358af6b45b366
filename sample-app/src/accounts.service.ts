import { Injectable, NotFoundException } from '@nestjs/common';
import { setTimeout as sleep } from 'node:timers/promises';
import { Locked } from 'nestjs-redis-lock';
import { AccountsRepository, type Account } from './accounts.repository';
import { Overlaps } from './overlap';

/** How long a balance read takes after its first look (a pretend statement rendering), ms. */
export const READ_MS = 30;
/** How long a deposit takes between reading and writing the balance (a pretend ledger), ms. */
export const WRITE_MS = 15;

/** What `GET /accounts/:id/balance` answers. */
export interface BalanceSnapshot {
  accountId: number;
  balance: number;
  /** Whether the balance read again at the end of the read was still the same. */
  stable: boolean;
  /** The most readers of this account inside balance() at once while this one was (itself included). */
  readersAtOnce: number;
  /** The most deposits of this account in progress while this read was: 0 under the lock. */
  writersSeen: number;
}

/** What `POST /accounts/:id/deposit` answers. */
export interface DepositReceipt {
  accountId: number;
  amount: number;
  balance: number;
  /** The most balance reads of this account in progress while this deposit was: 0 under the lock. */
  readersSeen: number;
  /** The most deposits of this account in progress at once, this one included: 1 under the lock. */
  writersAtOnce: number;
}

/**
 * Balances under a read-write lock `account:balance:<id>`: any number of reads of one account
 * run together (`mode: 'read'`), a deposit runs alone (`mode: 'write'`: no reader, no other
 * writer), across requests and processes. The Overlaps only count this process' calls, to show
 * what the lock allowed.
 */
@Injectable()
export class AccountsService {
  private readonly readers = new Overlaps();
  private readonly writers = new Overlaps();

  constructor(private readonly accounts: AccountsRepository) {}

  create(balance: number): Promise<Account> {
    return this.accounts.create(balance);
  }

  /** Reads the balance twice, READ_MS apart: under the read lock no deposit lands in between. */
  @Locked('account:balance:<0>', { mode: 'read' })
  async balance(id: number): Promise<BalanceSnapshot> {
    const readers = this.readers.of(id);
    const writers = this.writers.of(id);
    return readers.run(async () => {
      let writersSeen = writers.now;
      const first = await this.find(id);
      await sleep(READ_MS);
      const second = await this.find(id);
      const readersAtOnce = readers.now;
      writersSeen = Math.max(writersSeen, writers.now);
      return {
        accountId: id,
        balance: first.balance,
        stable: first.balance === second.balance,
        readersAtOnce,
        writersSeen,
      };
    });
  }

  /** Adds to the balance (read, wait, write): lost updates without the write lock. */
  @Locked('account:balance:<0>', { mode: 'write' })
  async deposit(id: number, amount: number): Promise<DepositReceipt> {
    const readers = this.readers.of(id);
    const writers = this.writers.of(id);
    return writers.run(async () => {
      const writersAtOnce = writers.now;
      let readersSeen = readers.now;
      const account = await this.find(id);
      await sleep(WRITE_MS);
      const balance = account.balance + amount;
      await this.accounts.setBalance(id, balance);
      readersSeen = Math.max(readersSeen, readers.now);
      return { accountId: id, amount, balance, readersSeen, writersAtOnce };
    });
  }

  private async find(id: number): Promise<Account> {
    const account = await this.accounts.find(id);
    if (!account) throw new NotFoundException(`Account ${id} does not exist`);
    return account;
  }
}
