import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { join } from 'node:path';
import { Test } from '@nestjs/testing';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { LockService, RedisLockModule, type RedisLockModuleOptions } from '../../lib';
import type { TestCluster } from '../support/redis-cluster';

/** A Nest application with RedisLockModule on `cluster` (module-owned unless `options` say). */
export async function clusterApp(
  cluster: TestCluster,
  options: Partial<RedisLockModuleOptions> = {},
  metadata: ModuleMetadata = {},
): Promise<{ app: INestApplication; locks: LockService; prefix: string }> {
  const prefix = options.keyPrefix ?? `c:${randomUUID().slice(0, 8)}:`;
  const source = options.client ? {} : { cluster: { nodes: nodesOf(cluster) } };
  const moduleRef = await Test.createTestingModule({
    ...metadata,
    imports: [
      RedisLockModule.forRoot({ ...source, ...options, keyPrefix: prefix }),
      ...(metadata.imports ?? []),
    ],
    providers: metadata.providers ?? [],
  }).compile();
  const app = moduleRef.createNestApplication({ logger: false });
  await app.init();
  return { app, locks: app.get(LockService), prefix };
}

/** The cluster's nodes as `cluster.nodes` takes them. */
export function nodesOf(cluster: TestCluster): { host: string; port: number }[] {
  return cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
}

/** A cluster-worker.ts process; `lines` resolves each line it prints, in order. */
export class WorkerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  private output = '';
  private errors = '';

  constructor(cluster: TestCluster, prefix: string, args: string[]) {
    this.child = spawn(
      process.execPath,
      [
        ...['-r', 'ts-node/register/transpile-only', join(__dirname, 'cluster-worker.ts')],
        ...[cluster.ports.join(','), prefix, ...args],
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    this.child.stdout.on('data', (data: Buffer) => (this.output += data.toString()));
    this.child.stderr.on('data', (data: Buffer) => (this.errors += data.toString()));
  }

  /** Resolves when the worker has printed `line`; rejects when it exits first. */
  printed(line: string): Promise<void> {
    return new Promise((resolve, reject) => {
      const check = () => {
        if (this.output.split('\n').includes(line)) {
          this.child.stdout.off('data', check);
          this.child.off('exit', exited);
          resolve();
        }
      };
      const exited = (code: number | null) =>
        this.output.split('\n').includes(line)
          ? resolve()
          : reject(new Error(`worker exited (${code}) before "${line}": ${this.errors}`));
      this.child.stdout.on('data', check);
      this.child.once('exit', exited);
      check();
    });
  }

  kill(): void {
    this.child.kill('SIGKILL');
  }
}
