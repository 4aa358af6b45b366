/** The inspector page's style sheet (inline in the page, allowed by its hash). */
export const STYLE = `
:root { color-scheme: light dark; --line: #d0d4da; --muted: #6b7280; --accent: #2563eb;
  --bad: #b91c1c; --row: rgba(127, 127, 127, 0.06); }
* { box-sizing: border-box; }
body { margin: 0; padding: 20px 24px; font: 14px/1.45 system-ui, -apple-system, "Segoe UI",
  Roboto, sans-serif; }
header { display: flex; align-items: baseline; gap: 16px; flex-wrap: wrap; }
h1 { font-size: 20px; margin: 0; }
h2 { font-size: 16px; margin: 28px 0 8px; }
#status { color: var(--muted); font-size: 12px; }
#status.error { color: var(--bad); }
form { display: flex; gap: 10px; align-items: center; margin: 14px 0; }
input { font: inherit; padding: 5px 8px; border: 1px solid var(--line); border-radius: 6px;
  min-width: 320px; background: transparent; color: inherit; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 6px 10px; border-bottom: 1px solid var(--line);
  vertical-align: top; }
th { font-size: 12px; text-transform: uppercase; letter-spacing: 0.04em; color: var(--muted);
  font-weight: 600; }
tbody tr:nth-child(even) { background: var(--row); }
td.key, td.id { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace;
  word-break: break-all; }
td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
.kind { display: inline-block; padding: 0 7px; border-radius: 9px; font-size: 12px;
  border: 1px solid var(--line); }
.holder { white-space: nowrap; }
.holder + .holder { margin-top: 2px; }
.unknown, .muted { color: var(--muted); }
.unknown { font-style: italic; }
.mode { font-size: 11px; color: var(--muted); margin-left: 4px; }
button { font: inherit; font-size: 12px; padding: 3px 10px; border-radius: 6px; cursor: pointer;
  border: 1px solid var(--bad); color: var(--bad); background: transparent; }
button:disabled { opacity: 0.5; cursor: default; }
.empty { color: var(--muted); padding: 14px 10px; }
.stale tbody { opacity: 0.55; }
`;
