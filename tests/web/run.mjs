// run.mjs - runs the web client's tests, one file at a time:
//   node tests/web/run.mjs unit   JavaScript unit tests (no browser, no server)
//   node tests/web/run.mjs e2e    headless Chromium against the real server
// Further arguments keep only the files whose names contain one of them.
// Prints the spec report and closes with "web-<kind>: N passed, N failed,
// N skipped" (tests/runner/run_files.mjs).
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFiles } from '../runner/run_files.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// Servers start with their scene's own size (no particle budget measured at
// start: that would make counts depend on the machine); the budget's own test
// sets it.
process.env.FLUID_STEP_BUDGET ??= '0';
const kind = process.argv[2] === 'e2e' ? 'e2e' : 'unit';
const only = process.argv.slice(3);
const dir = join(here, kind);
const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs'))
  .filter((f) => !only.length || only.some((o) => f.includes(o))).sort().map((f) => join(dir, f));
process.exitCode = await runFiles(`web-${kind}`, files, { hangMs: (kind === 'e2e' ? 20 : 5) * 60000 });
