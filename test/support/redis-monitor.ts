import { connect } from 'node:net';
import type { Redis } from 'ioredis';

/** One command a server ran, as MONITOR shows it. */
export interface MonitoredCommand {
  /** The server's time, `seconds.microseconds`. */
  readonly time: string;
  /** The client's address, or `lua` for a command a script ran. */
  readonly source: string;
  /** The command and its arguments, unescaped. */
  readonly args: string[];
}

/** A running MONITOR; close() ends it. */
export interface ServerMonitor {
  close(): void;
}

/**
 * Watches every command `client`'s server runs (MONITOR) on a socket of its own, resolving once
 * the server has confirmed MONITOR. Not ioredis' monitor(): it enters monitoring mode in a promise
 * callback after MONITOR's +OK, so a command another connection ran at that moment, read in the
 * same chunk as the +OK, is taken for a reply ("Command queue state error") and fails the start
 * (seen in CI, when a client connecting beside it sent its ready check).
 */
export function monitorServer(
  client: Redis,
  onCommand: (command: MonitoredCommand) => void,
): Promise<ServerMonitor> {
  const { host, port } = client.options;
  const socket = connect({ host: host ?? '127.0.0.1', port: port ?? 6379 });
  socket.setEncoding('latin1'); // MONITOR escapes every byte outside printable ASCII
  const monitor: ServerMonitor = { close: () => void socket.destroy() };
  return new Promise((resolve, reject) => {
    let started = false;
    let pending = '';
    // Once started, an error or close means the server went away (a suite stops it before
    // closing its watch): there is nothing more to see.
    socket.on('error', (error) => started || reject(error));
    socket.on('close', () => started || reject(new Error('MONITOR closed before it started')));
    socket.on('connect', () => socket.write('MONITOR\r\n'));
    socket.on('data', (chunk: string) => {
      pending += chunk;
      let end: number;
      while ((end = pending.indexOf('\r\n')) >= 0) {
        const line = pending.slice(0, end);
        pending = pending.slice(end + 2);
        if (started) {
          onCommand(parseLine(line));
        } else if (line === '+OK') {
          started = true;
          resolve(monitor);
        } else {
          monitor.close();
          reject(new Error(`MONITOR was refused: ${line}`));
          return;
        }
      }
    });
  });
}

/** `+<time> [<db> <source>] "<arg>" "<arg>"...`, each argument escaped as sdscatrepr does. */
function parseLine(line: string): MonitoredCommand {
  const match = /^\+(\S+) \[\d+ ([^\]]+)\] (.*)$/s.exec(line);
  if (!match) throw new Error(`Not a MONITOR line: ${line}`);
  return { time: match[1], source: match[2], args: parseArgs(match[3]) };
}

const ESCAPES: Readonly<Record<string, string>> = {
  n: '\n',
  r: '\r',
  t: '\t',
  a: '\x07',
  b: '\b',
  '"': '"',
  '\\': '\\',
};

function parseArgs(text: string): string[] {
  const args: string[] = [];
  let i = 0;
  while (i < text.length) {
    if (text[i] !== '"') throw new Error(`Bad MONITOR arguments at ${i}: ${text}`);
    let arg = '';
    for (i++; text[i] !== '"'; i++) {
      if (i >= text.length) throw new Error(`Unterminated MONITOR argument: ${text}`);
      if (text[i] !== '\\') {
        arg += text[i];
      } else if (text[i + 1] === 'x') {
        arg += String.fromCharCode(parseInt(text.slice(i + 2, i + 4), 16));
        i += 3;
      } else {
        arg += ESCAPES[text[i + 1]] ?? text[i + 1];
        i++;
      }
    }
    args.push(Buffer.from(arg, 'latin1').toString('utf8'));
    i += 2; // the closing quote and the space after it
  }
  return args;
}
