// export.test.mjs - GET /api/particles?format=ply|vtp|vtu|csv: the
// whole world as a file, read back by readers independent of the server
// (read_export.py: meshio for PLY and VTU, the XML and csv modules for VTP
// and CSV), holds the same particles as the JSON view; an unknown format is
// answered 406 with the list; the token rules of reads are unchanged.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { startServer, stopAll, get, http, metric, ROOT, TLS, until } from './lib.mjs';

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'fluid-export-'));
after(async () => { await stopAll(); rmSync(dir, { recursive: true, force: true }); });
// Debian's python3 (a pyenv or venv python on PATH may lack python3-meshio)
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';

async function allJson(s) {
  const out = { ids: [], positions: [], velocities: [], materials: [], temperatures: [] };
  for (let off = 0; ; off += 10000) {
    const p = (await get(s, `/api/particles?offset=${off}&limit=10000`)).json;
    for (const k of Object.keys(out)) out[k].push(...p[k]);
    if (off + p.count >= p.total) return { ...out, names: p.material_names, tick: p.tick };
  }
}

const f32 = (x) => Math.fround(x);
function close(a, b, what) {
  // the JSON view rounds to 7 significant digits; the files carry float32
  const tol = 1e-6 + 6e-7 * Math.abs(b); // 7 significant digits in JSON, float32 in the file
  assert.ok(Math.abs(a - b) <= tol, `${what}: ${a} vs ${b}`);
}

test('PLY, VTP, VTU and CSV exports hold the particles of the JSON view, read by independent readers', async (t) => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '4000']);
  const n0 = (await get(s, '/api/stats')).json.particles;
  const e = await http(s, 'POST', '/api/emitter', { body: { slot: 0, pos: [0.5, 0.8, 0.3], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 500, material: 'goo' } });
  assert.equal(e.status, 200);
  // until the emitter has added 50 particles of goo
  await until(async () => (await get(s, '/api/stats')).json.particles >= n0 + 50, 'the emitter to add 50 particles');
  await http(s, 'POST', '/api/pause');
  const want = await allJson(s);
  assert.ok(new Set(want.materials).size >= 2, 'two materials in the world');
  for (const fmt of ['ply', 'vtp', 'vtu', 'csv']) {
    const r = await fetch(`${s.base}/api/particles?format=${fmt}`);
    assert.equal(r.status, 200, fmt);
    assert.match(r.headers.get('content-disposition'), new RegExp(`filename="particles-${want.tick}\\.${fmt}"`));
    const bytes = Buffer.from(await r.arrayBuffer());
    assert.equal(bytes.length, Number(r.headers.get('content-length')), `${fmt}: length as announced`);
    const file = join(dir, `p.${fmt}`);
    writeFileSync(file, bytes);
    const got = JSON.parse(execFileSync(PYTHON, [join(ROOT, 'tests', 'server', 'read_export.py'), fmt, file], { maxBuffer: 64 << 20 }));
    assert.deepEqual(got.ids, want.ids, `${fmt}: ids in order`);
    assert.deepEqual(got.materials, want.materials, `${fmt}: materials`);
    for (let k = 0; k < want.ids.length; k++) {
      for (let a = 0; a < 3; a++) {
        close(f32(got.positions[k][a]), want.positions[k][a], `${fmt} particle ${want.ids[k]} position ${a}`);
        close(f32(got.velocities[k][a]), want.velocities[k][a], `${fmt} particle ${want.ids[k]} velocity ${a}`);
      }
      close(got.temperatures[k], want.temperatures[k], `${fmt} particle ${want.ids[k]} temperature`);
    }
    if (fmt === 'csv') assert.deepEqual(got.material_names, want.materials.map((m) => want.names[m]));
    t.diagnostic(`${fmt}: ${bytes.length} bytes for ${want.ids.length} particles`);
  }
  // Accept picks the format too; an unknown one is 406 with the list
  const a = await fetch(`${s.base}/api/particles`, { headers: { Accept: 'text/csv' } });
  assert.equal(a.status, 200);
  assert.match(a.headers.get('content-type'), /^text\/csv/);
  await a.arrayBuffer();
  for (const [path, headers] of [['/api/particles?format=xyz', {}], ['/api/particles', { Accept: 'application/x-foo' }]]) {
    const r = await fetch(s.base + path, { headers });
    assert.equal(r.status, 406, path);
    assert.match((await r.json()).error, /json, ply, vtp, vtu, csv/);
  }
  assert.equal((await fetch(`${s.base}/api/particles`, { headers: { Accept: 'text/html,*/*;q=0.8' } })).status, 200);
  assert.equal((await http(s, 'GET', '/api/particles?format=ply&limit=5')).status, 400);
});

test('the export is a read: with --token it needs none, as the JSON view', async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '1000', '--token', 'tok']);
  const r = await fetch(`${s.base}/api/particles?format=csv`);
  assert.equal(r.status, 200);
  assert.equal((await fetch(`${s.base}/api/particles`)).status, 200);
  await r.arrayBuffer();
});

// A download slower than the server's stall timeout (10 s) arrives whole: the
// timeout measures the reader's progress, not the answer's total time.  The
// answer is larger than the kernel's socket buffers (a 60k world's CSV, about
// 5 MB; the reader's receive buffer is 4 kB), so the server waits on the
// reader for most of it.  A reader that stops taking bytes for longer than
// the timeout is cut, and /metrics counts it.
test('a slow download of a 5 MB export arrives whole; a reader that stops is cut and counted',
  { skip: TLS && 'the slow reader speaks plain HTTP' }, async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '60000']);
  // moving particles print every digit: the CSV is then about 5 MB (on the start's lattice, 3.4 MB)
  await until(async () => (await get(s, '/api/stats')).json.tick >= 30, 'the first 30 ticks');
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200);
  const path = '/api/particles?format=csv';
  const fast = await http(s, 'GET', path, { raw: true });
  assert.equal(fast.status, 200);
  const bytes = Buffer.from(fast.text); // CSV: ASCII
  assert.ok(bytes.length > 4e6, `a CSV of ${bytes.length} bytes`);
  const sha = createHash('sha256').update(bytes).digest('hex');
  // asynchronously: the event loop keeps serving this process's other connections meanwhile
  const read = async (...args) => JSON.parse((await execFileAsync(PYTHON, [join(ROOT, 'tests/server/slow_reader.py'), String(s.port), path, ...args.map(String)], { encoding: 'utf8' })).stdout);
  // 150 kB/s: about 35 s for the whole answer, 3.5 times the stall timeout
  const slow = await read(150000);
  assert.equal(slow.length, bytes.length);
  assert.equal(slow.received, bytes.length, `received ${slow.received} of ${slow.length} bytes`);
  assert.equal(slow.sha256, sha, 'byte for byte the answer read at once');
  const cut0 = metric((await get(s, '/metrics')).text, 'fluid_http_answers_cut_total');
  assert.equal(cut0, 0);
  // read 1 MB at once, then nothing for 25 s
  const stalled = await read(1e9, 1000000, 25);
  assert.ok(stalled.received < bytes.length, `a stalled reader got ${stalled.received} of ${bytes.length} bytes`);
  assert.equal(metric((await get(s, '/metrics')).text, 'fluid_http_answers_cut_total'), 1);
  assert.match(s.stderr, /closed with \d+ of \d+ bytes sent \(the reader took nothing for 10 s, or left\)/);
  await s.stop();
});
