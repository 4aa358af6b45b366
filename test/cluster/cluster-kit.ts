import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as ts from 'typescript';
import { Test } from '@nestjs/testing';
import type { INestApplication, ModuleMetadata } from '@nestjs/common';
import { LockService, RedisLockModule, type RedisLockModuleOptions } from '../../lib';
import { STEADY_NODE_TIMEOUT, type TestCluster } from '../../tools/redis/cluster';
import { suiteCluster } from '../support/suite-topology';

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

/**
 * A file's 3-master Redis Cluster (suiteCluster) and the apps its tests open, closed after them
 * all (`closers` takes more). `apps()` opens two LockServices (as two processes) on one key
 * prefix, with a long lease: no wake-up by expiry.
 */
export function clusterAppSuite(): {
  suite: { readonly cluster: TestCluster };
  closers: (() => Promise<unknown>)[];
  apps: () => Promise<[LockService, LockService, string]>;
} {
  const suite = suiteCluster({
    masters: 3,
    replicasPerMaster: 0,
    nodeTimeout: STEADY_NODE_TIMEOUT,
  });
  const closers: (() => Promise<unknown>)[] = [];
  afterAll(async () => {
    await Promise.all(closers.map((close) => close()));
  });
  const apps = async (): Promise<[LockService, LockService, string]> => {
    const first = await clusterApp(suite.cluster, { leaseTime: 30_000, waitTime: 5_000 });
    const second = await clusterApp(suite.cluster, {
      keyPrefix: first.prefix,
      leaseTime: 30_000,
      waitTime: 5_000,
    });
    closers.push(
      () => first.app.close(),
      () => second.app.close(),
    );
    return [first.locks, second.locks, first.prefix];
  };
  return { suite, closers, apps };
}

/** The cluster's nodes as `cluster.nodes` takes them. */
export function nodesOf(cluster: TestCluster): { host: string; port: number }[] {
  return cluster.ports.map((port) => ({ host: '127.0.0.1', port }));
}

const ROOT = join(__dirname, '..', '..');
let build: { dir: string; worker: string } | undefined;

/**
 * lib/ and cluster-worker.ts transpiled once per test process into a temp dir (Lua scripts
 * copied), so each worker starts in plain JavaScript: ts-node costs ~3 s of CPU per process,
 * which 4 workers on 2 shared cores turned into ~20 s. Packages resolve through NODE_PATH.
 */
function workerBuild(): string {
  if (build) return build.worker;
  const dir = mkdtempSync(join(tmpdir(), 'lock-worker-'));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.CommonJS,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
  };
  const emit = (from: string, to: string) => {
    const { outputText } = ts.transpileModule(readFileSync(from, 'utf8'), {
      compilerOptions: options,
    });
    writeFileSync(to.replace(/\.ts$/, '.js'), outputText);
  };
  const copyTree = (from: string, to: string) => {
    mkdirSync(to, { recursive: true });
    for (const entry of readdirSync(from, { withFileTypes: true })) {
      const [source, target] = [join(from, entry.name), join(to, entry.name)];
      if (entry.isDirectory()) copyTree(source, target);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.d.ts')) emit(source, target);
      else if (entry.name.endsWith('.lua')) copyFileSync(source, target);
    }
  };
  copyTree(join(ROOT, 'lib'), join(dir, 'lib'));
  mkdirSync(join(dir, 'test', 'cluster'), { recursive: true });
  emit(join(__dirname, 'cluster-worker.ts'), join(dir, 'test', 'cluster', 'cluster-worker.ts'));
  build = { dir, worker: join(dir, 'test', 'cluster', 'cluster-worker.js') };
  return build.worker;
}

/** Removes the workers' build (call in afterAll). */
export function removeWorkerBuild(): void {
  if (build) rmSync(build.dir, { recursive: true, force: true });
  build = undefined;
}

/** A cluster-worker.ts process (from workerBuild()); `lines` resolves each line it prints. */
export class WorkerProcess {
  readonly child: ChildProcessWithoutNullStreams;
  private output = '';
  private errors = '';

  constructor(cluster: TestCluster, prefix: string, args: string[]) {
    this.child = spawn(
      process.execPath,
      [workerBuild(), cluster.ports.join(','), prefix, ...args],
      {
        stdio: ['pipe', 'pipe', 'pipe'],
        env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
      },
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
