import {
  Global,
  Inject,
  Module,
  type DynamicModule,
  type OnApplicationShutdown,
} from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, type AppConfig } from './config';

/**
 * Provides the AppConfig and one ioredis client to the whole app. The client is the app's: it
 * is closed here on shutdown (RedisLockModule, which is lent it as `client`, never closes it).
 */
@Global()
@Module({})
export class StorageModule implements OnApplicationShutdown {
  static forRoot(config: AppConfig): DynamicModule {
    return {
      module: StorageModule,
      providers: [
        { provide: APP_CONFIG, useValue: config },
        { provide: REDIS, useFactory: () => new Redis(config.redisUrl) },
      ],
      exports: [APP_CONFIG, REDIS],
    };
  }

  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  // Runs after every beforeApplicationShutdown hook, so the lock module has already released its
  // locks through this client.
  async onApplicationShutdown(): Promise<void> {
    if (this.redis.status === 'ready') await this.redis.quit();
    else this.redis.disconnect();
  }
}
