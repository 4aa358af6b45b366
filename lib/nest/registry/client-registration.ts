import { hostname } from 'node:os';
import type { LockEngine } from '../../core';
import { hasPort, type ClientInfo, type LockStore } from '../../store';
import { LIBRARY_VERSION } from '../../version';
import type { ResolvedModuleOptions } from '../options/redis-lock-options.validation';
import { defaultAppName } from './app-name';

/** What the engine's client registers: its id, the app, host, pid, version, start and prefix. */
export function clientInfo(engine: LockEngine, options: ResolvedModuleOptions): ClientInfo {
  return {
    id: engine.clientId,
    app: options.appName ?? defaultAppName(),
    host: hostname(),
    pid: process.pid,
    version: LIBRARY_VERSION,
    startedAt: Date.now(),
    keyPrefix: options.keyPrefix,
  };
}

/**
 * Registers the engine's client in the store's client registry (a store with the port: Redis;
 * unless the `clientRegistry` option is off),
 * kept for one `leaseTime` past its last refresh, so a dead process's record is gone within a
 * lease, as its locks are. False when the store keeps no registry (the memory store).
 */
export function registerClient(
  store: LockStore,
  engine: LockEngine,
  options: ResolvedModuleOptions,
): boolean {
  if (!options.clientRegistry || !hasPort(store, 'clientRegistry')) return false;
  store.registerClient(clientInfo(engine, options), options.leaseTime);
  return true;
}

/** Removes the client's record (best effort), when the store keeps a registry. */
export async function unregisterClient(store: LockStore): Promise<void> {
  if (hasPort(store, 'clientRegistry')) await store.unregisterClient();
}
