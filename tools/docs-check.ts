import { readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { brokenLinks } from './docs/links';
import { readMarkdown } from './docs/markdown';
import { snippetErrors } from './docs/snippets';

/**
 * Checks README.md, CONTRIBUTING.md, docs/*.md and bench/*.md: every relative link and #anchor
 * resolves, and every ```ts block compiles against lib/ (see tools/docs/snippets.ts for the
 * ```ts member and ```ts nocheck markers). Prints each problem as file:line and exits 1 when there is one.
 * Run by `npm run docs:check` and .ci/run.
 */
function main(): void {
  const root = resolve(__dirname, '..');
  const paths = [
    join(root, 'README.md'),
    join(root, 'CONTRIBUTING.md'),
    ...readdirSync(join(root, 'docs'))
      .filter((name) => name.endsWith('.md'))
      .sort()
      .map((name) => join(root, 'docs', name)),
    join(root, 'bench', 'README.md'),
    join(root, 'bench', 'HISTORY.md'),
  ];
  const files = paths.map((path) => readMarkdown(path));
  const problems = [
    ...brokenLinks(files, root).map(
      (link) => `${link.file}:${link.line}: link ${link.target}: ${link.problem}`,
    ),
    ...snippetErrors(files, root).map((error) => `${error.file}:${error.line}: ${error.message}`),
  ];
  const blocks = files.reduce((sum, file) => sum + file.blocks.length, 0);
  for (const problem of problems) console.error(problem);
  console.log(
    `docs:check: ${files.length} files, ${blocks} code blocks: ` +
      (problems.length === 0 ? 'links resolve, snippets compile' : `${problems.length} problems`),
  );
  if (problems.length > 0) process.exitCode = 1;
}

main();
