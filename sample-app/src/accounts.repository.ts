import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, type AppConfig } from './config';

export interface Account {
  id: number;
  balance: number;
}

/**
 * Customer accounts in Redis: a hash `<prefix>account:<id>` with the balance. Reading the
 * balance and writing it back are separate calls on purpose: a deposit is a read-modify-write
 * that is only safe under AccountsService's write lock.
 */
@Injectable()
export class AccountsRepository {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prefix = config.keyPrefix;
  }

  async create(balance: number): Promise<Account> {
    const id = await this.redis.incr(`${this.prefix}account:seq`);
    await this.redis.hset(this.accountKey(id), { balance });
    return { id, balance };
  }

  async find(id: number): Promise<Account | undefined> {
    const balance = await this.redis.hget(this.accountKey(id), 'balance');
    return balance === null ? undefined : { id, balance: Number(balance) };
  }

  async setBalance(id: number, balance: number): Promise<void> {
    await this.redis.hset(this.accountKey(id), { balance });
  }

  private accountKey(id: number): string {
    return `${this.prefix}account:${id}`;
  }
}
