import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LuaScript } from './lua-script';

function load(file: string): LuaScript {
  return new LuaScript(readFileSync(join(__dirname, 'scripts', file), 'utf8'));
}

/** Every script of the store, one per state change; see the comment at the top of each file. */
export const LockScripts = {
  /** Plain locks (Redisson's RLock). */
  acquire: load('acquire.lua'),
  /** With a fencing token (RFencedLock). */
  acquireFenced: load('acquire-fenced.lua'),
  release: load('release.lua'),
  /** Frees whatever lock lives under a name: plain, fair (and its queue) or read-write. */
  forceUnlock: load('force-unlock.lua'),
  /** Read-write locks (RReadWriteLock). */
  readAcquire: load('read-acquire.lua'),
  readRelease: load('read-release.lua'),
  writeAcquire: load('write-acquire.lua'),
  writeRelease: load('write-release.lua'),
  /** Fair locks (RFairLock). */
  fairAcquire: load('fair-acquire.lua'),
  fairRelease: load('fair-release.lua'),
  fairLeave: load('fair-leave.lua'),
  /** Multi-locks: several RLocks, all or none. */
  multiAcquire: load('multi-acquire.lua'),
  multiRelease: load('multi-release.lua'),
  /** Semaphores of leased permits (RPermitExpirableSemaphore). */
  semaphoreAcquire: load('semaphore-acquire.lua'),
  semaphoreRelease: load('semaphore-release.lua'),
  semaphoreRenew: load('semaphore-renew.lua'),
  semaphoreAvailable: load('semaphore-available.lua'),
  semaphoreForceUnlock: load('semaphore-force-unlock.lua'),
  /** Watchdog renewal of lock holds of every kind but permits. */
  renew: load('renew-all.lua'),
  /** The same on one Cluster master, for holds of many slots (keys in ARGV). */
  renewOnNode: load('renew-node.lua'),
} as const;
