import { Module, type DynamicModule } from '@nestjs/common';
import { inspectorPageController } from './inspector-page.controller';
import {
  resolveInspectorPageOptions,
  type RedisLockInspectorOptions,
} from './inspector-page.options';

/**
 * The inspector page, opt-in: `RedisLockInspectorModule.register({ path, guard, allowUnlock })`,
 * imported beside RedisLockModule (registered globally, the default: the page reads with its
 * LockInspector and unlocks with its LockService). Serves a self-contained HTML page at `path`
 * (default `/locks`) that lists the held locks and refreshes itself, and its JSON API under
 * `${path}/api`: GET `locks?match=&limit=`, `locks/:key`, `clients`; POST or DELETE `locks/:key`
 * force unlocks, only with `allowUnlock: true` (else 403). `guard` guards every route.
 */
@Module({})
export class RedisLockInspectorModule {
  /** The module serving the page; checks the options here (LockOptionsError naming one). */
  static register(options: RedisLockInspectorOptions = {}): DynamicModule {
    const resolved = resolveInspectorPageOptions(options);
    return { module: RedisLockInspectorModule, controllers: [inspectorPageController(resolved)] };
  }
}
