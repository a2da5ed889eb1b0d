// run_files.mjs - runs node:test files one at a time, each in its own
// `node --test` process, prints their spec report and closes with
// "LABEL: N passed, N failed, N skipped" and the reason of every skip.
// Used by tests/server/run.mjs and tests/web/run.mjs.
//
// It drives the `node` command line, not `run()` from node:test: on Node 18
// (Debian bookworm's), `run()` piped through a reporter prints nothing and
// its stream never ends, so such a runner exits 0 having reported no test.
// The command line with `--test-reporter` behaves the same on Node 18.15
// and later.  A run that selects no file, or whose files hold no test that
// ran, fails.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const reporter = fileURLToPath(new URL('./count_reporter.mjs', import.meta.url));

// One file in its own process group, so that a file that hangs is ended with
// every server it started.  hangMs only turns a hang into a failure.
function runFile(file, hangMs, out) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--test', '--test-reporter=spec', '--test-reporter-destination=stdout',
      `--test-reporter=${reporter}`, `--test-reporter-destination=${out}`, file],
    { stdio: ['ignore', 'inherit', 'inherit'], detached: true });
    const kill = () => { try { process.kill(-child.pid, 'SIGKILL'); } catch { /* already gone */ } };
    const onSignal = () => { kill(); process.exit(130); };
    process.once('SIGINT', onSignal);
    process.once('SIGTERM', onSignal);
    let hung = false;
    const timer = setTimeout(() => { hung = true; kill(); }, hangMs);
    child.on('exit', (code, signal) => {
      clearTimeout(timer);
      process.removeListener('SIGINT', onSignal);
      process.removeListener('SIGTERM', onSignal);
      kill(); // whatever the file left running in its group
      resolve({ code, signal, hung });
    });
  });
}

export async function runFiles(label, files, { hangMs }) {
  const tmp = mkdtempSync(join(tmpdir(), 'node-tests-'));
  const total = { passed: 0, failed: 0, skipped: [], failures: [] };
  for (const [i, file] of files.entries()) {
    const out = join(tmp, `${i}.json`);
    const r = await runFile(file, hangMs, out);
    let counts = null;
    try { counts = JSON.parse(readFileSync(out, 'utf8').trim().split('\n').pop()); } catch { /* no report */ }
    const name = relative(process.cwd(), file);
    if (!counts || r.hung) {
      console.log(`!!! ${name}: ${r.hung ? `still running after ${hangMs / 60000} min, ended` : `ended without a report (exit ${r.code}, signal ${r.signal})`}`);
      total.failed++;
      total.failures.push({ file: name, name: '(the whole file)' });
      if (counts) total.passed += counts.passed;
      continue;
    }
    if (r.code !== 0 && counts.failed === 0) {
      console.log(`!!! ${name}: exited ${r.code} with no failed test`);
      counts.failed = 1;
      counts.failures.push({ file: name, name: `(exit ${r.code})` });
    }
    total.passed += counts.passed;
    total.failed += counts.failed;
    total.skipped.push(...counts.skipped);
    total.failures.push(...counts.failures);
  }
  rmSync(tmp, { recursive: true, force: true });
  const short = (f) => relative(process.cwd(), f.startsWith('file:') ? fileURLToPath(f) : f);
  for (const s of total.skipped) console.log(`skipped: ${short(s.file)}: ${s.name}: ${s.reason}`);
  for (const f of total.failures) console.log(`failed: ${short(f.file)}: ${f.name}`);
  if (!files.length) console.log(`!!! ${label}: no test file selected`);
  else if (total.passed + total.failed === 0) console.log(`!!! ${label}: no test ran`);
  const ran = total.passed + total.failed > 0;
  console.log(`${label}: ${total.passed} passed, ${total.failed + (ran ? 0 : 1)} failed, ${total.skipped.length} skipped`);
  return total.failed || !ran ? 1 : 0;
}
