import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LuaScript } from './lua-script';

const read = (file: string) => readFileSync(join(__dirname, 'scripts', file), 'utf8');

/**
 * A script's text, each `-- @include <file>` line replaced by that file (a part shared by several
 * scripts, `*.part.lua`): Redis runs every script on its own, so a shared function is spliced in.
 */
export function loadScript(file: string): LuaScript {
  return new LuaScript(
    read(file).replace(/^-- @include (\S+)\n/gm, (_, part: string) => read(part)),
  );
}

/** Every script of the store, one per state change; see the comment at the top of each file. */
export const LockScripts = {
  /** Plain locks (Redisson's RLock). */
  acquire: loadScript('acquire.lua'),
  /** With a fencing token (RFencedLock). */
  acquireFenced: loadScript('acquire-fenced.lua'),
  release: loadScript('release.lua'),
  /** A plain lock's release that keeps it held until its holdAtLeast period ends. */
  releaseKept: loadScript('release-kept.lua'),
  /** Frees whatever lock lives under a name: plain, fair (and its queue) or read-write. */
  forceUnlock: loadScript('force-unlock.lua'),
  /** Read-write locks (RReadWriteLock). */
  readAcquire: loadScript('read-acquire.lua'),
  readRelease: loadScript('read-release.lua'),
  writeAcquire: loadScript('write-acquire.lua'),
  writeRelease: loadScript('write-release.lua'),
  /** Fair locks (RFairLock). */
  fairAcquire: loadScript('fair-acquire.lua'),
  fairRelease: loadScript('fair-release.lua'),
  fairLeave: loadScript('fair-leave.lua'),
  /** Multi-locks: several RLocks, all or none. */
  multiAcquire: loadScript('multi-acquire.lua'),
  multiRelease: loadScript('multi-release.lua'),
  /** Semaphores of leased permits (RPermitExpirableSemaphore). */
  semaphoreAcquire: loadScript('semaphore-acquire.lua'),
  semaphoreRelease: loadScript('semaphore-release.lua'),
  semaphoreRenew: loadScript('semaphore-renew.lua'),
  semaphoreAvailable: loadScript('semaphore-available.lua'),
  semaphoreForceUnlock: loadScript('semaphore-force-unlock.lua'),
  /** Watchdog renewal of lock holds of every kind but permits. */
  renew: loadScript('renew-all.lua'),
  /** The same on one Cluster master, for holds of many slots (keys in ARGV). */
  renewOnNode: loadScript('renew-node.lua'),
} as const;
