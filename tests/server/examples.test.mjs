// examples.test.mjs - the scripts in examples/ run against a live server and
// print a front that has advanced; the Python and the shell script agree.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, ROOT, childEnv } from './lib.mjs';

const run = promisify(execFile);
// Debian's python3, with python3-numpy (the client's) and python3-matplotlib; a pyenv or venv python3 first on
// PATH may have neither
const PY = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
after(async () => { await stopAll(); });

function parse(out) {
  const m = /after (\d+) ticks \(t = ([\d.]+) s\): front at x = ([\d.]+) m\nx\/a = ([\d.]+) at T = t\*sqrt\(2g\/a\) = ([\d.]+)/.exec(out);
  assert.ok(m, out);
  return { ticks: +m[1], t: +m[2], x: +m[3], xa: +m[4], T: +m[5] };
}

test('examples/dam_break_front.py (on the Python client) and .sh run the experiment through REST and agree', async (t) => {
  const s = await startServer(['--particles', '3000']);
  const py = await run(PY, [join(ROOT, 'examples', 'dam_break_front.py'), '--server', s.base, '--ticks', '120'],
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

test('the dam-break example draws the front and the residual height beside Martin & Moyce (PNG); export_series writes a .pvd series', async (t) => {
  const s = await startServer(['--particles', '3000']);
  const dir = mkdtempSync(join(tmpdir(), 'fluid-examples-'));
  const py = PY;
  const png = join(dir, 'front.png');
  const r = await run(py, [join(ROOT, 'examples', 'dam_break_front.py'), '--server', s.base, '--ticks', '60', '--plot', png],
    { timeout: 180000, env: childEnv() });
  t.diagnostic(r.stdout.trim());
  const head = readFileSync(png).subarray(0, 8);
  assert.deepEqual([...head], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a], 'a PNG');
  const out = join(dir, 'series');
  await run(py, [join(ROOT, 'examples', 'export_series.py'), '--server', s.base, '--count', '3', '--interval', '0.2', '--out', out],
    { timeout: 60000, env: childEnv() });
  const pvd = readFileSync(join(out, 'series.pvd'), 'utf8');
  const files = [...pvd.matchAll(/file="([^"]+)"/g)].map((m) => m[1]);
  assert.equal(files.length, 3);
  for (const f of files) assert.match(readFileSync(join(out, f), 'utf8'), /<Piece NumberOfPoints="\d+" NumberOfVerts=/);
  rmSync(dir, { recursive: true, force: true });
  await s.stop();
});

test('examples/spheric2.py runs SPHERIC Test 2 through REST and compares the probes with the measurements', async (t) => {
  const s = await startServer(['--particles', '3000']);
  const data = join(ROOT, '..', 'shared', 'validation', 'spheric2');
  const args = [join(ROOT, 'examples', 'spheric2.py'), '--server', s.base, '--solver', 'clavet', '--particles', '3000',
    '--seconds', '0.5'];
  if (existsSync(data)) args.push('--data', data);
  const py = await run(PY, args, { timeout: 120000, env: childEnv() });
  t.diagnostic(py.stdout.trim());
  assert.match(py.stdout, /^scene spheric2, \d+ particles, solver clavet, 0\.5\d s simulated, 31 samples$/m);
  assert.match(py.stdout, /^H2 arrival \(first above 0\.02 m\): /m);
  if (existsSync(data)) {
    const h4 = /^H4: mean absolute error ([\d.]+) m/m.exec(py.stdout);
    assert.ok(h4 && +h4[1] < 0.05, `H4 follows the reservoir's level: ${h4 && h4[1]} m`);
  }
  await s.stop();
});

test('examples/spheric2.py --front times a series\' front at H1, H2 and the box against both experiments', async (t) => {
  // a front leaving the gate (x = 1.992 m) at 4 m/s: at H1 (0.504 m on) at 0.126 s, H2 (1.000 m) at 0.250 s,
  // the box's face (1.1675 m) at 0.2919 s, interpolated between samples 1/60 s apart
  const dir = mkdtempSync(join(tmpdir(), 'fluid-front-'));
  const csv = join(dir, 'spheric2_mps_100.csv');
  const rows = ['# SPHERIC Test 2, solver mps, 100 particles, spacing 0.1 m (a front made up for the test)',
    't,H1,H2,H3,H4,P1,P2,P3,P4,P5,P6,P7,P8,front,P1near'];
  for (let k = 0; k <= 30; k++) {
    const time = k / 60;
    rows.push([time.toFixed(5), 0, 0, 0, 0.55, 0, 0, 0, 0, 0, 0, 0, 0, (1.992 - 4 * time).toFixed(6), 0].join(','));
  }
  writeFileSync(csv, rows.join('\n') + '\n');
  const py = await run(PY, [join(ROOT, 'examples', 'spheric2.py'), '--from-csv', csv, '--front'], { timeout: 60000, env: childEnv() });
  t.diagnostic(py.stdout.trim());
  const at = (name) => new RegExp(`^  at ${name} +\\(([\\d.]+) m from the gate\\) \\| ([\\d.]+) s \\| (.*) \\| (.*)$`, 'm').exec(py.stdout);
  for (const [name, dist, when] of [['H1', 0.504, 0.126], ['H2', 1.0, 0.25], ['box', 1.1675, 0.2919]]) {
    const m = at(name);
    assert.ok(m, `a line for ${name}`);
    assert.ok(Math.abs(+m[1] - dist) < 1e-3 && Math.abs(+m[2] - when) < 1e-3, `${name}: ${m[0]}`);
  }
  const lob = join(ROOT, '..', 'shared', 'validation', 'lobovsky2014', 'aquagpusph_H300_front.csv');
  if (existsSync(lob)) {
    // Lobovsky's front at x / H = 0.916 and 1.818 passes t sqrt(g/H) = 1.008 and 1.653: 0.239 and 0.391 s at H = 0.55 m
    assert.match(at('H1')[4], /^0\.239 s$/);
    assert.match(at('H2')[4], /^0\.391 s$/);
  }
  rmSync(dir, { recursive: true, force: true });
});

test('examples/spheric2.py sums P1\'s step means into its impact\'s impulse', async (t) => {
  // P1 reads 6 kPa over the steps from 0.4 to 0.5 s (steps of 1/60 s), 0 elsewhere: its integral from 0.3 s
  // reaches 2 Pa s at 0.4 + 2 / 6000 s; 300 Pa s over the next 50 ms, 598 over the next 100 ms
  const dir = mkdtempSync(join(tmpdir(), 'fluid-impulse-'));
  const csv = join(dir, 'spheric2_mps_100.csv');
  const rows = ['# SPHERIC Test 2, solver mps, 100 particles, spacing 0.1 m (an impact made up for the test)',
    't,H1,H2,H3,H4,P1,P2,P3,P4,P5,P6,P7,P8,front,P1near'];
  for (let k = 0; k <= 42; k++) {
    const p1 = k >= 25 && k <= 30 ? 6000 : 0;
    rows.push([(k / 60).toFixed(5), 0, 0, 0, 0.55, p1, 0, 0, 0, 0, 0, 0, 0, 1.992, 0].join(','));
  }
  writeFileSync(csv, rows.join('\n') + '\n');
  const py = await run(PY, [join(ROOT, 'examples', 'spheric2.py'), '--from-csv', csv], { timeout: 60000, env: childEnv() });
  t.diagnostic(py.stdout.trim());
  const m = /^P1 impact impulse .*: from ([\d.]+) s \(measured (.*) s\); over 50 \/ 100 ms (\d+) \/ (\d+) Pa s/m.exec(py.stdout);
  assert.ok(m, 'an impulse line');
  assert.equal(m[1], '0.400');
  assert.equal(+m[3], 300);
  assert.equal(+m[4], 598);
  if (existsSync(join(ROOT, '..', 'shared', 'validation', 'spheric2', 'P1.csv'))) {
    assert.match(m[2], /^0\.39\d$/, 'the data\'s impact starts at about 0.395 s');
  }
  rmSync(dir, { recursive: true, force: true });
});
