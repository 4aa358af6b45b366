import { Injectable } from '@nestjs/common';
import { HealthIndicatorService, type HealthIndicatorResult } from '@nestjs/terminus';
import { LockService } from '../nest/lock.service';

/** Options of `RedisLockHealthIndicator.isHealthy`. */
export interface RedisLockHealthOptions {
  /** How long to wait for Redis' answer to a PING, ms. Default 1 000. */
  timeout?: number;
}

/**
 * A @nestjs/terminus indicator: `up` with the PING latency to the locks' Redis (`latencyMs`)
 * and the number of locks this application holds (`heldLocks`), `down` with the reason when
 * Redis does not answer. Import `RedisLockHealthModule` to get it (or add it to the providers of
 * a module that imports TerminusModule).
 */
@Injectable()
export class RedisLockHealthIndicator {
  constructor(
    private readonly locks: LockService,
    private readonly health: HealthIndicatorService,
  ) {}

  /** Checks Redis with one PING; `key` names the entry in the health report. */
  async isHealthy<const Key extends string = 'redisLock'>(
    key: Key = 'redisLock' as Key,
    options: RedisLockHealthOptions = {},
  ): Promise<HealthIndicatorResult<Key>> {
    const indicator = this.health.check(key);
    const heldLocks = this.locks.heldCount;
    try {
      const latency = await this.locks.ping(options.timeout ?? 1_000);
      return indicator.up({ latencyMs: Math.round(latency * 100) / 100, heldLocks });
    } catch (error) {
      return indicator.down({ message: (error as Error).message, heldLocks });
    }
  }
}
