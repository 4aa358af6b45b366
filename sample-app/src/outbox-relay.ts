import { Inject, Injectable } from '@nestjs/common';
import { Interval } from '@nestjs/schedule';
import type { Redis } from 'ioredis';
import { LeaderOnly, LockService } from 'nestjs-redis-lock';
import { APP_CONFIG, REDIS, type AppConfig } from './config';

/** The relay's leadership name. */
export const OUTBOX_RELAY = 'outbox-relay';

/**
 * The outbox relay: one instance at a time moves messages on (here: records a pass), the
 * leader of `outbox-relay`. Every instance's interval fires; `@LeaderOnly` runs it only on the
 * leader, inside its term (`locks.current()` is the term's lock: its fencing token is the term,
 * its signal aborts when the term ends). Each pass is recorded in Redis
 * (`<prefix>relay:passes`: "<epoch ms> <instance> <term>").
 */
@Injectable()
export class OutboxRelay {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly locks: LockService,
  ) {}

  @Interval(50)
  @LeaderOnly(OUTBOX_RELAY)
  async relay(): Promise<void> {
    const term = this.locks.current()?.fencingToken;
    await this.redis.rpush(
      `${this.config.keyPrefix}relay:passes`,
      `${Date.now()} ${this.config.jobs?.instance ?? ''} ${term}`,
    );
  }
}
