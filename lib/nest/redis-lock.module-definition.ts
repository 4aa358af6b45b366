import { ConfigurableModuleBuilder } from '@nestjs/common';
import type { RedisLockModuleOptions } from './options/redis-lock-options.interface';
import { EXTRAS_DEFAULTS } from './options/redis-lock-options.validation';

/** The dynamic-module plumbing of RedisLockModule: forRoot / forRootAsync, global by default. */
export const {
  ConfigurableModuleClass: RedisLockConfigurableModule,
  MODULE_OPTIONS_TOKEN: REDIS_LOCK_MODULE_OPTIONS,
  OPTIONS_TYPE: REDIS_LOCK_OPTIONS_TYPE,
  ASYNC_OPTIONS_TYPE: REDIS_LOCK_ASYNC_OPTIONS_TYPE,
} = new ConfigurableModuleBuilder<RedisLockModuleOptions>({ moduleName: 'RedisLock' })
  .setClassMethodName('forRoot')
  .setExtras(EXTRAS_DEFAULTS, (definition, extras) => ({
    ...definition,
    global: extras.isGlobal,
  }))
  .build();

/**
 * Options of `RedisLockModule.forRootAsync`: `imports`, `inject` and one of `useFactory`,
 * `useClass`, `useExisting`, plus `isGlobal` (default true).
 */
export type RedisLockModuleAsyncOptions = typeof REDIS_LOCK_ASYNC_OPTIONS_TYPE;
