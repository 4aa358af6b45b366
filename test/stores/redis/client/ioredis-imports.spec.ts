import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

const LIB = join(__dirname, '../../../../lib');
const ADAPTER = 'stores/redis/client/ioredis/';

/** Every .ts file under `dir`, relative to lib/. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return sources(path);
    return entry.name.endsWith('.ts') ? [relative(LIB, path)] : [];
  });
}

/**
 * The client port holds: only the ioredis adapter imports ioredis (value or type, import or
 * require); the rest of lib/ speaks to the port, and the module's options name ioredis' types
 * through the re-export in stores/redis/index.ts.
 */
describe('ioredis is imported by its adapter only', () => {
  it(`no file of lib/ outside ${ADAPTER} imports ioredis`, () => {
    const importsIoredis = /(?:from\s+|import\s*\(\s*|require\s*\(\s*)['"]ioredis(?:\/[^'"]*)?['"]/;
    const files = sources(LIB);
    const importing = files.filter((file) =>
      importsIoredis.test(readFileSync(join(LIB, file), 'utf8')),
    );
    expect(importing.filter((file) => !file.startsWith(ADAPTER))).toEqual([]);
    expect(importing.length).toBeGreaterThan(0); // the pattern still finds the adapter's
  });
});
