import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { randomUUID } from 'node:crypto';
import { transpileWorker, type WorkerBuild } from '../../tools/transpile-worker';
import { killChildren } from '../support/child-processes';
import { holderProcess, removeHolderBuild, type HolderProcess } from '../support/holder-process';
import { suiteRedis } from '../support/suite-redis';

/** What one run of the CLI gave. */
interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

// The CLI as a user runs it (lib/cli/main.ts, transpiled), against a real redis-server whose
// locks another process holds; no application of this process is involved.
describe('nestjs-redis-lock CLI', () => {
  const server = suiteRedis();
  const prefix = `cli:${randomUUID().slice(0, 8)}:`;
  let build: WorkerBuild;
  let holder: HolderProcess;

  beforeAll(async () => {
    build = transpileWorker(join(__dirname, '../../lib/cli/main.ts'));
    holder = await holderProcess(server.redis.url, prefix, 'cli-holder');
    await holder.send('lock order:1');
    await holder.send('lock order:2');
    await holder.send('permit exports 2');
  }, 60_000);
  afterAll(async () => {
    await killChildren();
    removeHolderBuild();
    build?.remove();
  });

  function cli(...args: string[]): Promise<Ran> {
    return new Promise((resolve) => {
      execFile(
        process.execPath,
        [build.entry, ...args],
        { env: { ...build.env, REDIS_URL: server.redis.url } },
        (error, stdout, stderr) => {
          const code = error ? (typeof error.code === 'number' ? error.code : -1) : 0;
          resolve({ code, stdout, stderr });
        },
      );
    });
  }

  it('inspect <key>: a table naming the holder process; --json the description; exit 0', async () => {
    const table = await cli('inspect', 'order:1', '--url', server.redis.url, '--prefix', prefix);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^kind +plain$/m);
    expect(table.stdout).toContain('cli-holder');
    expect(table.stdout).toContain(String(holder.pid));
    expect(table.stdout).toMatch(/^token +\d+$/m);

    const json = await cli('inspect', 'order:1', '--prefix', prefix, '--json');
    expect(json.code).toBe(0);
    const lock = JSON.parse(json.stdout) as {
      kind: string;
      holders: { clientId: string; client: { pid: number } }[];
    };
    expect(lock.kind).toBe('plain');
    expect(lock.holders[0].clientId).toBe(holder.clientId);
    expect(lock.holders[0].client.pid).toBe(holder.pid);
  });

  it('inspect of a free key exits 1; of a semaphore shows its permits', async () => {
    const free = await cli('inspect', 'order:none', '--prefix', prefix);
    expect(free.code).toBe(1);
    expect(free.stdout).toMatch(/^kind +free$/m);
    const sem = await cli('inspect', 'exports', '--prefix', prefix);
    expect(sem.code).toBe(0);
    expect(sem.stdout).toMatch(/^permits +1 used, 1 free$/m);
  });

  it('list [pattern] and clients', async () => {
    const list = await cli('list', 'order:*', '--prefix', prefix);
    expect(list.code).toBe(0);
    const rows = list.stdout.trim().split('\n');
    expect(rows[0]).toMatch(/^KEY +KIND +HOLDERS +LEASE +HELD BY$/);
    expect(rows.slice(1).map((row) => row.split(/\s+/)[0])).toEqual(['order:1', 'order:2']);
    const json = JSON.parse((await cli('list', '--prefix', prefix, '--json')).stdout) as {
      key: string;
    }[];
    expect(json.map((lock) => lock.key)).toEqual(['exports', 'order:1', 'order:2']);

    const clients = await cli('clients', '--prefix', prefix, '--json');
    expect(clients.code).toBe(0);
    const mine = (JSON.parse(clients.stdout) as { clientId: string; locks: number }[]).find(
      (client) => client.clientId === holder.clientId,
    );
    expect(mine?.locks).toBe(3);
    expect((await cli('clients', '--prefix', prefix)).stdout).toMatch(/^cli-holder +\S+ +\d+ /m);
  });

  it('unlock needs --force (exit 2), frees the lock (exit 0), then finds nothing (exit 1)', async () => {
    const refused = await cli('unlock', 'order:2', '--prefix', prefix);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--force');
    expect(await server.raw.exists(`${prefix}order:2`)).toBe(1);

    const done = await cli('unlock', 'order:2', '--force', '--prefix', prefix);
    expect(done.code).toBe(0);
    expect(done.stdout.trim()).toBe('unlocked order:2');
    expect(await server.raw.exists(`${prefix}order:2`)).toBe(0);
    expect((await cli('unlock', 'order:2', '--force', '--prefix', prefix)).code).toBe(1);

    const sem = await cli('unlock', 'exports', '--force', '--prefix', prefix);
    expect(sem.code).toBe(0);
    expect(await server.raw.zcard(`{${prefix}exports}:timeout`)).toBe(0);
  });

  it('usage errors exit 2; an unreachable Redis exits 3', async () => {
    for (const args of [[], ['frobnicate'], ['inspect'], ['list', '--limit', '0']]) {
      const ran = await cli(...args);
      expect(ran.code).toBe(2);
      expect(ran.stderr).toContain('Usage: nestjs-redis-lock');
    }
    const down = await cli('list', '--url', 'redis://127.0.0.1:1');
    expect(down.code).toBe(3);
    expect(down.stderr).toContain('Cannot reach Redis at 127.0.0.1:1');
  });
});
