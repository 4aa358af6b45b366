/** The inspector page (opt-in): RedisLockInspectorModule.register() (see docs/inspector.md). */
export { RedisLockInspectorModule } from './inspector-page.module';
export type { RedisLockInspectorOptions } from './inspector-page.options';
