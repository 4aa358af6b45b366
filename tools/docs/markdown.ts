import { readFileSync } from 'node:fs';

/** A fenced code block of a markdown file. */
export interface CodeBlock {
  /** The info string's words: `['ts']`, `['ts', 'nocheck']`. */
  readonly info: string[];
  readonly code: string;
  /** The 1-based line of the block's first code line in its file. */
  readonly line: number;
}

/** A markdown file: its lines outside code blocks (code spans blanked) and its code blocks. */
export interface MarkdownFile {
  readonly path: string;
  /** Each line, with fenced code and inline code spans blanked (so links in code are not read). */
  readonly prose: string[];
  /** Each line, with fenced code blanked (headings keep their code spans). */
  readonly text: string[];
  readonly blocks: CodeBlock[];
}

const FENCE = /^(\s*)(`{3,}|~{3,})(.*)$/;

/** Reads `path` (or parses `text`) into prose lines and fenced code blocks. */
export function readMarkdown(path: string, text = readFileSync(path, 'utf8')): MarkdownFile {
  const lines = text.split('\n');
  const prose: string[] = [];
  const outside: string[] = [];
  const blocks: CodeBlock[] = [];
  let open:
    { fence: string; indent: number; info: string[]; start: number; code: string[] } | undefined;
  lines.forEach((line, index) => {
    const fence = FENCE.exec(line);
    if (open) {
      if (fence && fence[2].startsWith(open.fence) && fence[3].trim() === '') {
        blocks.push({ info: open.info, code: open.code.join('\n'), line: open.start });
        open = undefined;
      } else open.code.push(line.replace(new RegExp(`^ {0,${open.indent}}`), ''));
      prose.push('');
      outside.push('');
      return;
    }
    if (fence) {
      const info = fence[3].trim().split(/\s+/).filter(Boolean);
      open = { fence: fence[2], indent: fence[1].length, info, start: index + 2, code: [] };
      prose.push('');
      outside.push('');
      return;
    }
    outside.push(line);
    prose.push(line.replace(/(`+)(?:(?!\1).)+?\1/g, (span) => ' '.repeat(span.length)));
  });
  if (open) throw new Error(`${path}:${open.start - 1}: a code fence is never closed`);
  return { path, prose, text: outside, blocks };
}

/**
 * The anchors GitHub gives the file's headings: the text lower-cased, inline markup and
 * punctuation dropped (letters, digits, spaces, `-` and `_` stay), spaces as `-`; a repeated
 * anchor gets `-1`, `-2`, … in order.
 */
export function headingAnchors(file: MarkdownFile): Set<string> {
  const anchors = new Set<string>();
  const seen = new Map<string, number>();
  for (const line of file.text) {
    const heading = /^#{1,6}\s+(.*?)\s*#*\s*$/.exec(line);
    if (!heading) continue;
    const slug = slugOf(heading[1]);
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  }
  return anchors;
}

/** GitHub's slug of a heading's text (its markdown: links keep their text, code its content). */
export function slugOf(text: string): string {
  return text
    .replace(/!?\[([^\]]*)\]\([^)]*\)/g, '$1')
    .replace(/<[^>]+>/g, '')
    .toLowerCase()
    .replace(/[^\p{L}\p{N}\p{M}\s_-]/gu, '')
    .replace(/ /g, '-');
}
