// examples.test.mjs - the scripts in examples/ run against a live server and
// print a front that has advanced; the Python and the shell script agree.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startServer, stopAll, ROOT, childEnv } from './lib.mjs';

const run = promisify(execFile);
after(async () => { await stopAll(); });

function parse(out) {
  const m = /after (\d+) ticks \(t = ([\d.]+) s\): front at x = ([\d.]+) m\nx\/a = ([\d.]+) at T = t\*sqrt\(2g\/a\) = ([\d.]+)/.exec(out);
  assert.ok(m, out);
  return { ticks: +m[1], t: +m[2], x: +m[3], xa: +m[4], T: +m[5] };
}

test('examples/dam_break_front.py and .sh run the experiment through REST and agree', async (t) => {
  const s = await startServer(['--particles', '3000']);
  const py = await run('python3', [join(ROOT, 'examples', 'dam_break_front.py'), '--server', s.base, '--ticks', '120'],
    { timeout: 120000, env: childEnv() });
  t.diagnostic(py.stdout.trim());
  const a = parse(py.stdout);
  assert.equal(a.ticks, 120);
  assert.ok(Math.abs(a.t - 2.0) < 1e-3, `t = ${a.t}`); // 120 steps of 1/60 s
  assert.ok(a.xa > 1.5, `the front advanced: x/a = ${a.xa}`);
  const sh = await run('sh', [join(ROOT, 'examples', 'dam_break_front.sh'), s.base, '120'], { timeout: 120000, env: childEnv() });
  t.diagnostic(sh.stdout.trim());
  const b = parse(sh.stdout);
  assert.equal(b.ticks, 120);
  assert.ok(Math.abs(b.x - a.x) < 1e-3 && Math.abs(b.xa - a.xa) < 0.011, 'same experiment, same answer (deterministic)');
  await s.stop();
});
