import { Inject, Injectable } from '@nestjs/common';
import { Cron, CronExpression } from '@nestjs/schedule';
import type { Redis } from 'ioredis';
import { ScheduledLock } from 'nestjs-redis-lock';
import { APP_CONFIG, REDIS, type AppConfig } from './config';

/** How long a tick's lock stays taken after the job ended, ms: absorbs instances' late ticks. */
export const REPORT_HOLD_AT_LEAST = 500;

/**
 * The report job: its `@Cron` fires every second on every instance; `@ScheduledLock` lets the
 * first instance to take `job:ReportJob.run` run the tick and the others skip it, and
 * `holdAtLeast` keeps an instance whose tick fires late (after the job ended) from running it
 * again. Each run is recorded in Redis (`<prefix>report:runs`: "<second> <instance>").
 */
@Injectable()
export class ReportJob {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  @Cron(CronExpression.EVERY_SECOND)
  @ScheduledLock({ holdAtLeast: REPORT_HOLD_AT_LEAST })
  async run(): Promise<void> {
    const second = Math.floor(Date.now() / 1_000);
    await this.redis.rpush(
      `${this.config.keyPrefix}report:runs`,
      `${second} ${this.config.jobs?.instance ?? ''}`,
    );
  }
}
