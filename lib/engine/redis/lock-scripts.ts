import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { LuaScript } from './lua-script';

function load(file: string): LuaScript {
  return new LuaScript(readFileSync(join(__dirname, 'scripts', file), 'utf8'));
}

/** The plain lock's scripts (Redisson's RLock); see the comment at the top of each file. */
export const LockScripts = {
  acquire: load('acquire.lua'),
  release: load('release.lua'),
  renew: load('renew.lua'),
  /** Renewal of holds of many slots on one Cluster master (keys in ARGV). */
  renewOnNode: load('renew-node.lua'),
  forceUnlock: load('force-unlock.lua'),
} as const;
