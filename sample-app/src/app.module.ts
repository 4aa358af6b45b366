import { Module, type DynamicModule } from '@nestjs/common';
import { ScheduleModule } from '@nestjs/schedule';
import type { Redis } from 'ioredis';
import { RedisLockInspectorModule, RedisLockModule } from 'nestjs-redis-lock';
import { AccountsController } from './accounts.controller';
import { AccountsRepository } from './accounts.repository';
import { AccountsService } from './accounts.service';
import { APP_CONFIG, REDIS, type AppConfig } from './config';
import { ExportsController } from './exports.controller';
import { ExportsService } from './exports.service';
import { LocalOnlyGuard } from './local-only.guard';
import { OrdersController } from './orders.controller';
import { OrdersRepository } from './orders.repository';
import { OrdersService } from './orders.service';
import { OutboxRelay } from './outbox-relay';
import { PaymentGateway } from './payment-gateway';
import { ReportJob } from './report.job';
import { StorageModule } from './storage.module';
import { WalletsController } from './wallets.controller';
import { WalletsRepository } from './wallets.repository';
import { WalletsService } from './wallets.service';

/**
 * The orders app: orders (plain lock), accounts (read-write lock), wallets (multi-lock) and
 * order exports (semaphore); with `jobs`, also a report job (`@ScheduledLock`) and the outbox
 * relay (`@LeaderOnly`); the inspector page of held locks at `/locks` (read-only, from this
 * machine only). `AppModule.forRoot({ redisUrl, keyPrefix, jobs? })`.
 */
@Module({})
export class AppModule {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: AppModule,
      imports: [
        StorageModule.forRoot(config),
        // The locks share the app's ioredis client (and its keyPrefix); the module duplicates
        // it once for pub/sub and never closes the client it was lent.
        RedisLockModule.forRootAsync({
          inject: [REDIS, APP_CONFIG],
          useFactory: (client: Redis, app: AppConfig) => ({
            client,
            keyPrefix: app.keyPrefix,
            tracing: app.tracing ?? false,
          }),
        }),
        // Who holds which lock: a page at /locks and its JSON API under /locks/api.
        RedisLockInspectorModule.register({ path: '/locks', guard: LocalOnlyGuard }),
        ...(config.jobs ? [ScheduleModule.forRoot()] : []),
      ],
      controllers: [OrdersController, AccountsController, WalletsController, ExportsController],
      providers: [
        OrdersRepository,
        OrdersService,
        PaymentGateway,
        AccountsRepository,
        AccountsService,
        WalletsRepository,
        WalletsService,
        ExportsService,
        ...(config.jobs ? [ReportJob, OutboxRelay] : []),
      ],
    };
  }
}
