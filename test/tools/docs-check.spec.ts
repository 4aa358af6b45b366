import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brokenLinks } from '../../tools/docs/links';
import { headingAnchors, readMarkdown } from '../../tools/docs/markdown';
import { snippetErrors } from '../../tools/docs/snippets';

// tools/docs-check.ts (npm run docs:check, run by CI): links and ```ts snippets of the docs.
describe('docs check', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'docs-check-'));
    mkdirSync(join(dir, 'docs'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  function file(name: string, text: string) {
    writeFileSync(join(dir, name), text);
    return readMarkdown(join(dir, name));
  }

  it("makes GitHub's anchors: lower case, punctuation and markup dropped, repeats numbered", () => {
    const md = file(
      'anchors.md',
      [
        '### 4. When the lock is busy',
        "## `acquire()` does not change the caller's chain",
        '## Read-write [locks](x.md) & fair_locks',
        '## Options',
        '## Options',
        '```sh',
        '# not a heading',
        '```',
      ].join('\n'),
    );
    expect([...headingAnchors(md)]).toEqual([
      '4-when-the-lock-is-busy',
      'acquire-does-not-change-the-callers-chain',
      'read-write-locks--fair_locks',
      'options',
      'options-1',
    ]);
  });

  it('reports relative links to missing files and #anchors no heading makes, not those in code', () => {
    file('docs/guide.md', '# Guide\n\n## Two words\n');
    const readme = file(
      'README.md',
      [
        '[ok](docs/guide.md) [ok too](docs/guide.md#two-words) [here](#intro) [web](https://x.y/z)',
        '# Intro',
        '[gone](docs/missing.md) and [bad anchor](docs/guide.md#three-words)',
        '`[in code](docs/nowhere.md)`',
        '```md',
        '[in a block](nowhere.md)',
        '```',
      ].join('\n'),
    );
    expect(brokenLinks([readme], dir)).toEqual([
      {
        file: 'README.md',
        line: 3,
        target: 'docs/missing.md',
        problem: 'no such file: docs/missing.md',
      },
      {
        file: 'README.md',
        line: 3,
        target: 'docs/guide.md#three-words',
        problem: 'no heading makes the anchor #three-words',
      },
    ]);
  });

  it('compiles ```ts blocks against lib/: reports API drift at its line, honours nocheck and member', () => {
    const md = file(
      'snippets.md',
      [
        'A module:',
        '```ts',
        "import { LockService } from 'nestjs-redis-lock';",
        'export async function f(locks: LockService) {',
        "  await locks.acquire('k', { waitTim: 5 });", // line 5: a misspelt option
        '}',
        '```',
        'Statements, with the names the preamble declares:',
        '```ts',
        "await locks.run('k', () => this.orders.pay(1), { onBusy: 'skip' });",
        "await locks.runn('k', () => 1);", // line 11: no such method
        '```',
        '```ts member',
        "@Locked('job:<0>', { waitTime: 0 })",
        'async sweep(_id: string): Promise<void> {}',
        '```',
        '```ts nocheck',
        "@Locked('a') // a sketch",
        '```',
      ].join('\n'),
    );
    const errors = snippetErrors([md], process.cwd()).filter((e) => e.file.endsWith('snippets.md'));
    expect(errors.map((error) => error.line)).toEqual([5, 11]);
    expect(errors[0].message).toMatch(/waitTim/);
    expect(errors[1].message).toMatch(/runn/);
  }, 300_000); // one compile of lib/ and the Nest types: tens of seconds on a busy machine
});
