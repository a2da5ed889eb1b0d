// run.mjs - runs every *.test.mjs here with node:test, one file at a time,
// prints the spec report and closes with "N passed, N failed".
import { run } from 'node:test';
import { spec } from 'node:test/reporters';
import { readdirSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// Servers start with their scene's own size (no particle budget measured at
// start: that would make counts depend on the machine); the budget's own test
// sets it.
process.env.FLUID_STEP_BUDGET ??= '0';
const only = process.argv.slice(2);
const files = readdirSync(here).filter((f) => f.endsWith('.test.mjs'))
  .filter((f) => !only.length || only.some((o) => f.includes(o))).sort().map((f) => join(here, f));
let passed = 0, failed = 0;
const stream = run({ files, concurrency: 1, timeout: 180000 });
stream.on('test:pass', (d) => { if (d.details?.type !== 'suite' && !d.skip) passed++; });
stream.on('test:fail', (d) => { if (d.details?.type !== 'suite') failed++; });
stream.compose(spec).pipe(process.stdout);
stream.on('end', () => {
  // After the spec reporter flushes.
  setTimeout(() => {
    console.log(`server-integration: ${passed} passed, ${failed} failed`);
    process.exitCode = failed ? 1 : 0;
  }, 100);
});
