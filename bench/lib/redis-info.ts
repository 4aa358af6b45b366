import type { Redis } from 'ioredis';

/** CPU time redis-server has spent so far, user + system, in µs (INFO cpu). */
export async function redisCpuUs(redis: Redis): Promise<number> {
  const info = await redis.info('cpu');
  const field = (name: string) => Number(new RegExp(`${name}:([\\d.]+)`).exec(info)![1]);
  return (field('used_cpu_sys') + field('used_cpu_user')) * 1e6;
}

/** Calls per command (INFO commandstats: since start or the last CONFIG RESETSTAT), by name. */
export async function commandStats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls: Record<string, number> = {};
  for (const match of info.matchAll(/cmdstat_([\w|]+):calls=(\d+)/g))
    calls[match[1]] = Number(match[2]);
  return calls;
}

/** Commands redis-server has processed so far, every client (INFO stats). */
export async function totalCommands(redis: Redis): Promise<number> {
  return Number(/total_commands_processed:(\d+)/.exec(await redis.info('stats'))![1]);
}
