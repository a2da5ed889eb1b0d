// run.mjs - runs the web client's tests with node:test, one file at a time:
//   node tests/web/run.mjs unit   JavaScript unit tests (no browser, no server)
//   node tests/web/run.mjs e2e    headless Chromium against the real server
// Prints the spec report and closes with "web-<kind>: N passed, N failed".
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
const kind = process.argv[2] === 'e2e' ? 'e2e' : 'unit';
const only = process.argv.slice(3);
const dir = join(here, kind);
const files = readdirSync(dir).filter((f) => f.endsWith('.test.mjs'))
  .filter((f) => !only.length || only.some((o) => f.includes(o))).sort().map((f) => join(dir, f));
let passed = 0, failed = 0;
const stream = run({ files, concurrency: 1, timeout: kind === 'e2e' ? 600000 : 60000 });
stream.on('test:pass', (d) => { if (d.details?.type !== 'suite' && !d.skip) passed++; });
stream.on('test:fail', (d) => { if (d.details?.type !== 'suite') failed++; });
stream.compose(spec).pipe(process.stdout);
stream.on('end', () => {
  setTimeout(() => {
    console.log(`web-${kind}: ${passed} passed, ${failed} failed`);
    process.exitCode = failed || !files.length ? 1 : 0;
  }, 100);
});
