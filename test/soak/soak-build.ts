/**
 * Transpiles the soak worker and the library (TypeScript → CommonJS, file by file, as ts-node's
 * transpile-only mode does) into a temporary directory once per soak, so that each worker
 * process starts on plain JavaScript instead of loading the TypeScript compiler.
 */
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
import { dirname, join, relative } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..', '..');
/** The workers and what they import besides the library. */
const SOAK_FILES = [
  'soak-worker.ts',
  'soak-records.ts',
  'checker-worker.ts',
  'checker-records.ts',
].map((f) => join(__dirname, f));

const COMPILER_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
};

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** A transpiled copy of the worker: run `entry` with `env` (NODE_PATH finds the packages). */
export interface WorkerBuild {
  entry: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

/** Transpiles the library and the workers; `worker`: the file the build's entry runs. */
export function buildWorker(worker = 'soak-worker.ts'): WorkerBuild {
  const out = mkdtempSync(join(tmpdir(), 'soak-build-'));
  for (const file of [...filesUnder(join(ROOT, 'lib')), ...SOAK_FILES]) {
    const target = join(out, relative(ROOT, file));
    mkdirSync(dirname(target), { recursive: true });
    if (!file.endsWith('.ts')) {
      copyFileSync(file, target); // the Lua scripts
      continue;
    }
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: COMPILER_OPTIONS,
      fileName: file,
    });
    writeFileSync(target.replace(/\.ts$/, '.js'), outputText);
  }
  return {
    entry: join(out, relative(ROOT, join(__dirname, worker)).replace(/\.ts$/, '.js')),
    env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}
