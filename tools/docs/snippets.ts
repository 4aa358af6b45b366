import { join, relative, resolve } from 'node:path';
import * as ts from 'typescript';
import type { MarkdownFile } from './markdown';

/** A TypeScript snippet's compile error, at its line in the markdown file. */
export interface SnippetError {
  readonly file: string;
  readonly line: number;
  readonly message: string;
}

/**
 * How a ```ts block is compiled (its info string's second word):
 * - none: a module when it has `import`/`export` lines, else statements run inside an async
 *   method of a class whose every member is `any` (`this.orders`, `await`, `locks` work);
 * - `member`: class members (a decorated method), put in such a class;
 * - `nocheck`: not compiled (a deliberate sketch: decorators without methods, `…`).
 */
export type SnippetMode = 'module' | 'body' | 'member' | 'nocheck';

/** What the snippets may use without importing or declaring it. */
const AMBIENT_IMPORTS: Record<string, string[]> = {
  '@nestjs/common': [
    'Body',
    'Controller',
    'Get',
    'Injectable',
    'Module',
    'Param',
    'ParseIntPipe',
    'Post',
    'type INestApplication',
  ],
  '@nestjs/schedule': ['Cron'],
  '@nestjs/terminus': ['HealthCheck', 'HealthCheckService'],
  '@nestjs/testing': ['Test'],
  'nestjs-redis-lock': [
    'LockAcquireTimeoutError',
    'LockService',
    'Locked',
    'MemoryLockStore',
    'RedisLockInspectorModule',
    'RedisLockModule',
    'ScheduledLock',
    'Semaphore',
  ],
  'nestjs-redis-lock/health': ['RedisLockHealthIndicator', 'RedisLockHealthModule'],
};

/** The application's own names the snippets use, as loosely typed as they need, one a line. */
const AMBIENT_DECLARATIONS = [
  'declare class OrdersService { [member: string]: any }',
  'declare class StockStore { [member: string]: any }',
  'declare class ConfigModule {}',
  'declare class AdminGuard { canActivate(): boolean }',
  'declare class ConfigService { get<T>(key: string): T | undefined; getOrThrow<T>(key: string): T }',
  'type Receipt = any;',
  'interface ReportQuery { region: string }',
  'interface PayDto { orderId: number }',
  'declare const app: INestApplication;',
  'declare const locks: LockService;',
  'declare const accounts: any;',
  'declare const db: any;',
  'declare const jobs: any;',
  'declare const id: string;',
  'declare const amount: number;',
  'declare const balance: number;',
  'declare function transfer(from: number, to: number, amount: number): Promise<void>;',
  'declare function exportAll(): Promise<void>;',
  'declare function bootApp(module: unknown): Promise<INestApplication>;',
];

/** The class body and member snippets are put in: every member `any`, but `locks`. */
const CONTEXT = 'class SnippetContext { [member: string]: any; declare locks: LockService; }';

/** The mode of a ```ts block with info words `info`, or undefined for another language. */
export function snippetMode(info: readonly string[], code: string): SnippetMode | undefined {
  if (info[0] !== 'ts' && info[0] !== 'typescript') return undefined;
  const declared = info[1];
  if (declared === 'nocheck' || declared === 'member') return declared;
  if (declared !== undefined) throw new Error(`unknown snippet marker "${declared}"`);
  return /^(import|export)\s/m.test(code) ? 'module' : 'body';
}

/** The names a snippet declares or imports itself (the preamble leaves them out). */
function ownNames(code: string): Set<string> {
  const names = new Set<string>();
  const declaration =
    /\b(?:const|let|var|class|function|interface|type|enum)\s+([A-Za-z_$][\w$]*)/g;
  for (const [, name] of code.matchAll(declaration)) names.add(name);
  for (const [, list] of code.matchAll(/^import\s+(?:type\s+)?\{([^}]*)\}/gm)) {
    for (const part of list.split(',')) {
      const name = part
        .trim()
        .replace(/^type\s+/, '')
        .split(/\s+as\s+/)
        .pop();
      if (name) names.add(name);
    }
  }
  return names;
}

/** The name a preamble line declares. */
function declaredName(line: string): string {
  return /(?:class|const|function|type|interface)\s+([A-Za-z_$][\w$]*)/.exec(line)![1];
}

/** The source compiled for one snippet, and the line of the snippet's first line in it. */
export function snippetSource(code: string, mode: Exclude<SnippetMode, 'nocheck'>) {
  const own = ownNames(code);
  const imports = Object.entries(AMBIENT_IMPORTS).map(([from, names]) => {
    const wanted = names.filter((name) => !own.has(name.replace(/^type /, '')));
    return wanted.length ? `import { ${wanted.join(', ')} } from '${from}';` : '';
  });
  const declarations = AMBIENT_DECLARATIONS.filter((line) => !own.has(declaredName(line)));
  const head = [...imports, ...declarations, CONTEXT];
  if (mode === 'module') head.push('export {};');
  else head.push('export class Snippet extends SnippetContext {');
  if (mode === 'body') head.push('async run(): Promise<void> {');
  const tail = mode === 'module' ? [] : mode === 'member' ? ['}'] : ['}', '}'];
  return { text: [...head, code, ...tail].join('\n'), firstLine: head.length + 1 };
}

/** Compiles every ```ts block of `files` against `lib/` (as `nestjs-redis-lock`); its errors. */
export function snippetErrors(files: readonly MarkdownFile[], root: string): SnippetError[] {
  const sources = new Map<
    string,
    { text: string; firstLine: number; file: string; line: number }
  >();
  for (const file of files) {
    file.blocks.forEach((block, index) => {
      const mode = snippetMode(block.info, block.code);
      if (mode === undefined || mode === 'nocheck') return;
      const name = join(
        root,
        '.docs-snippets',
        `${relative(root, file.path).replace(/\W/g, '_')}_${index}.ts`,
      );
      sources.set(name, {
        ...snippetSource(block.code, mode),
        file: relative(root, file.path),
        line: block.line,
      });
    });
  }
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    lib: [
      'lib.es2022.d.ts',
      'lib.es2024.string.d.ts',
      'lib.esnext.disposable.d.ts',
      'lib.dom.d.ts',
    ],
    module: ts.ModuleKind.ESNext,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    strict: true,
    experimentalDecorators: true,
    emitDecoratorMetadata: true,
    esModuleInterop: true,
    skipLibCheck: true,
    noEmit: true,
    types: ['node', 'jest'],
    baseUrl: root,
    paths: {
      'nestjs-redis-lock': ['lib/index.ts'],
      'nestjs-redis-lock/health': ['lib/health/index.ts'],
      'nestjs-redis-lock/node-redis': ['lib/node-redis/index.ts'],
    },
  };
  const host = ts.createCompilerHost(options);
  const base = { ...host };
  host.fileExists = (name) => sources.has(resolve(name)) || base.fileExists(name);
  host.readFile = (name) => sources.get(resolve(name))?.text ?? base.readFile(name);
  host.getSourceFile = (name, language, ...rest) => {
    const source = sources.get(resolve(name));
    return source
      ? ts.createSourceFile(name, source.text, language)
      : base.getSourceFile(name, language, ...rest);
  };
  const program = ts.createProgram([...sources.keys()], options, host);
  const errors: SnippetError[] = [];
  for (const diagnostic of ts.getPreEmitDiagnostics(program)) {
    const message = ts.flattenDiagnosticMessageText(diagnostic.messageText, '\n');
    const source = diagnostic.file && sources.get(resolve(diagnostic.file.fileName));
    if (!source || diagnostic.start === undefined) {
      errors.push({ file: diagnostic.file?.fileName ?? '(program)', line: 0, message });
      continue;
    }
    const { line } = diagnostic.file!.getLineAndCharacterOfPosition(diagnostic.start);
    const inSnippet = line + 1 - source.firstLine;
    errors.push({
      file: source.file,
      line: inSnippet >= 0 ? source.line + inSnippet : source.line - 1,
      message: inSnippet >= 0 ? message : `(in the checker's preamble) ${message}`,
    });
  }
  return errors;
}
