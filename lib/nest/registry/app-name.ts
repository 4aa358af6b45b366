import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';

/**
 * The application's name when `appName` is not given: `npm_package_name` (set by `npm run`/`npm
 * start`), else the `name` of the nearest package.json above the main module, else above the
 * working directory; 'unknown' when none is found.
 */
export function defaultAppName(): string {
  const fromNpm = process.env.npm_package_name;
  if (fromNpm) return fromNpm;
  const main = require.main?.filename;
  return (
    (main === undefined ? undefined : packageNameAbove(dirname(main))) ??
    packageNameAbove(process.cwd()) ??
    'unknown'
  );
}

/** The name in the first package.json found in `dir` or a directory above it. */
function packageNameAbove(dir: string): string | undefined {
  for (let current = dir; ; current = dirname(current)) {
    const name = packageName(join(current, 'package.json'));
    if (name !== undefined) return name;
    if (dirname(current) === current) return undefined;
  }
}

function packageName(path: string): string | undefined {
  try {
    const { name } = JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown };
    return typeof name === 'string' && name !== '' ? name : undefined;
  } catch {
    return undefined;
  }
}
