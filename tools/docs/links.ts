import { existsSync, statSync } from 'node:fs';
import { dirname, relative, resolve } from 'node:path';
import { headingAnchors, readMarkdown, type MarkdownFile } from './markdown';

/** A link that does not resolve: where it is and why. */
export interface BrokenLink {
  readonly file: string;
  readonly line: number;
  readonly target: string;
  readonly problem: string;
}

const LINK = /!?\[(?:[^\]\\]|\\.)*\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;

/**
 * The links of `files` that do not resolve: a relative path to a file or folder that does not
 * exist, or an `#anchor` no heading of the target markdown file has (GitHub's slugs). Web links
 * (`http:`, `https:`, `mailto:`) are not fetched.
 */
export function brokenLinks(files: readonly MarkdownFile[], root: string): BrokenLink[] {
  const anchors = new Map<string, Set<string>>();
  const anchorsOf = (path: string) => {
    let found = anchors.get(path);
    if (!found) {
      const file =
        files.find((candidate) => resolve(candidate.path) === path) ?? readMarkdown(path);
      found = headingAnchors(file);
      anchors.set(path, found);
    }
    return found;
  };
  const broken: BrokenLink[] = [];
  for (const file of files) {
    file.prose.forEach((text, index) => {
      for (const match of text.matchAll(LINK)) {
        const target = match[1];
        if (/^[a-z][a-z+.-]*:/i.test(target)) continue;
        const problem = checkTarget(file.path, target, anchorsOf);
        if (problem) {
          broken.push({ file: relative(root, file.path), line: index + 1, target, problem });
        }
      }
    });
  }
  return broken;
}

function checkTarget(
  from: string,
  target: string,
  anchorsOf: (path: string) => Set<string>,
): string | undefined {
  const hash = target.indexOf('#');
  const pathPart = decodeURI(hash < 0 ? target : target.slice(0, hash));
  const anchor = hash < 0 ? undefined : decodeURIComponent(target.slice(hash + 1));
  const path = pathPart === '' ? resolve(from) : resolve(dirname(from), pathPart);
  if (!existsSync(path)) return `no such file: ${pathPart}`;
  if (anchor === undefined) return undefined;
  if (statSync(path).isDirectory() || !path.endsWith('.md')) {
    return `#${anchor} points into ${pathPart || 'this file'}, which is not a markdown file`;
  }
  return anchorsOf(path).has(anchor) ? undefined : `no heading makes the anchor #${anchor}`;
}
