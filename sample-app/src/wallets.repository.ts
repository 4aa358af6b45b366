import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, type AppConfig } from './config';

/** A customer's store credit. */
export interface Wallet {
  id: number;
  balance: number;
}

/**
 * Wallets in Redis: a hash `<prefix>wallet:<id>` with the balance. A transfer reads two
 * balances and writes both back later: only safe while nobody else moves money in or out of
 * either wallet, which WalletsService's multi-lock ensures.
 */
@Injectable()
export class WalletsRepository {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) config: AppConfig,
  ) {
    this.prefix = config.keyPrefix;
  }

  async create(balance: number): Promise<Wallet> {
    const id = await this.redis.incr(`${this.prefix}wallet:seq`);
    await this.redis.hset(this.walletKey(id), { balance });
    return { id, balance };
  }

  async find(id: number): Promise<Wallet | undefined> {
    const balance = await this.redis.hget(this.walletKey(id), 'balance');
    return balance === null ? undefined : { id, balance: Number(balance) };
  }

  /** Writes new balances, all in one MULTI. */
  async setBalances(wallets: Wallet[]): Promise<void> {
    const multi = this.redis.multi();
    for (const { id, balance } of wallets) multi.hset(this.walletKey(id), { balance });
    const results = await multi.exec();
    const error = results === null ? new Error('MULTI was discarded') : results[0]?.[0];
    if (error) throw error;
  }

  private walletKey(id: number): string {
    return `${this.prefix}wallet:${id}`;
  }
}
