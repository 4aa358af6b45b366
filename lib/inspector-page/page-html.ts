/**
 * The inspector page: one HTML document with its CSS and script inline (no CDN, no framework).
 * The script and the style never change, so the page's Content-Security-Policy allows exactly
 * them by hash; the options the script needs travel in `data-` attributes of `<body>`, escaped.
 * The script puts every value it shows into the page as text (`textContent`), never as HTML.
 */
import { createHash } from 'node:crypto';
import { SCRIPT } from './page-script';
import { STYLE } from './page-style';

/** `'sha256-…'` of a script or style, for the Content-Security-Policy. */
function hashOf(text: string): string {
  return `'sha256-${createHash('sha256').update(text, 'utf8').digest('base64')}'`;
}

/** The page's Content-Security-Policy: its own script and style, fetches to its own origin. */
export const PAGE_CSP = [
  "default-src 'none'",
  `script-src ${hashOf(SCRIPT)}`,
  `style-src ${hashOf(STYLE)}`,
  "connect-src 'self'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** `text` with the characters that mean something in HTML (text or attribute) escaped. */
export function escapeHtml(text: string): string {
  return text.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!,
  );
}

/** The page's HTML; `allowUnlock` adds an unlock button to each row. */
export function pageHtml(allowUnlock: boolean): string {
  const title = 'Held locks';
  const unlockHeader = allowUnlock ? '<th></th>' : '';
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<link rel="icon" href="data:,">
<title>${title}</title>
<style>${STYLE}</style>
</head>
<body data-allow-unlock="${escapeHtml(String(allowUnlock))}">
<header><h1>${title}</h1><span id="status">Loading…</span></header>
<form id="filter" role="search">
<label for="match">Filter</label>
<input id="match" name="match" type="search" autocomplete="off" spellcheck="false"
  placeholder="order:* or a part of the key">
</form>
<table id="locks">
<thead><tr><th>Key</th><th>Kind</th><th>Holders</th><th class="num">TTL</th><th class="num">Waiting</th><th class="num">Queue</th><th class="num">Permits</th>${unlockHeader}</tr></thead>
<tbody></tbody>
</table>
<h2>Clients</h2>
<table id="clients">
<thead><tr><th>App</th><th>Host</th><th class="num">Pid</th><th>Version</th><th class="num">Up</th><th class="num">Locks</th><th>Client id</th></tr></thead>
<tbody></tbody>
</table>
<script>${SCRIPT}</script>
</body>
</html>
`;
}
