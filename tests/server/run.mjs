// run.mjs - runs every *.test.mjs here (or those whose names contain one of
// the arguments), one file at a time, prints the spec report and closes with
// "server-integration: N passed, N failed, N skipped" (tests/runner/run_files.mjs).
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runFiles } from '../runner/run_files.mjs';

const here = dirname(fileURLToPath(import.meta.url));
// Servers start with their scene's own size (no particle budget measured at
// start: that would make counts depend on the machine); the budget's own test
// sets it.
process.env.FLUID_STEP_BUDGET ??= '0';
const only = process.argv.slice(2);
const files = readdirSync(here).filter((f) => f.endsWith('.test.mjs'))
  .filter((f) => !only.length || only.some((o) => f.includes(o))).sort().map((f) => join(here, f));
process.exitCode = await runFiles('server-integration', files, { hangMs: 20 * 60000 });
