/**
 * Worker processes on plain JavaScript: lib/, a worker and every file it imports outside lib/
 * transpiled (TypeScript → CommonJS, file by file, as ts-node's transpile-only mode does) into a
 * temporary directory, the Lua scripts copied. ts-node costs seconds of CPU per process, which
 * several workers on 2 shared cores turn into tens of seconds. Packages resolve through NODE_PATH.
 */
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import ts from 'typescript';

const ROOT = join(__dirname, '..');

const COMPILER_OPTIONS: ts.CompilerOptions = {
  module: ts.ModuleKind.CommonJS,
  target: ts.ScriptTarget.ES2022,
  experimentalDecorators: true,
  emitDecoratorMetadata: true,
  esModuleInterop: true,
};

/** A transpiled copy of a worker: run `entry` with `env` (NODE_PATH finds the packages). */
export interface WorkerBuild {
  entry: string;
  env: NodeJS.ProcessEnv;
  remove(): void;
}

function filesUnder(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? filesUnder(join(dir, entry.name)) : [join(dir, entry.name)],
  );
}

/** `file` and the TypeScript files it imports by relative path, transitively, outside lib/. */
function importsOf(file: string, found = new Set<string>()): Set<string> {
  if (found.has(file) || !relative(join(ROOT, 'lib'), file).startsWith('..')) return found;
  found.add(file);
  for (const { fileName } of ts.preProcessFile(readFileSync(file, 'utf8')).importedFiles) {
    if (!fileName.startsWith('.')) continue;
    const base = resolve(dirname(file), fileName);
    const target = [`${base}.ts`, join(base, 'index.ts')].find((path) => existsSync(path));
    if (target) importsOf(target, found);
  }
  return found;
}

/**
 * Transpiles lib/ and `worker` (an absolute .ts path) with what it imports outside lib/;
 * `assets` (absolute paths, e.g. Lua scripts a worker reads) are copied as they are.
 */
export function transpileWorker(worker: string, assets: readonly string[] = []): WorkerBuild {
  const out = mkdtempSync(join(tmpdir(), 'lock-worker-'));
  for (const file of [...filesUnder(join(ROOT, 'lib')), ...importsOf(worker), ...assets]) {
    const target = join(out, relative(ROOT, file));
    mkdirSync(dirname(target), { recursive: true });
    if (file.endsWith('.lua')) copyFileSync(file, target);
    if (!file.endsWith('.ts') || file.endsWith('.d.ts')) continue;
    const { outputText } = ts.transpileModule(readFileSync(file, 'utf8'), {
      compilerOptions: COMPILER_OPTIONS,
      fileName: file,
    });
    writeFileSync(target.replace(/\.ts$/, '.js'), outputText);
  }
  return {
    entry: join(out, relative(ROOT, worker).replace(/\.ts$/, '.js')),
    env: { ...process.env, NODE_PATH: join(ROOT, 'node_modules') },
    remove: () => rmSync(out, { recursive: true, force: true }),
  };
}
