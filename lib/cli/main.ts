#!/usr/bin/env node
/**
 * The `nestjs-redis-lock` command (package.json `bin`): inspect, list, clients, unlock, on a
 * Redis the applications need not be running on. See docs/inspector.md.
 */
import { runCli } from './run-cli';

runCli(process.argv.slice(2), process.env, {
  out: (text) => process.stdout.write(text),
  err: (text) => process.stderr.write(text),
}).then(
  (code) => (process.exitCode = code),
  (error: unknown) => {
    process.stderr.write(`nestjs-redis-lock: ${String(error)}\n`);
    process.exitCode = 3;
  },
);
