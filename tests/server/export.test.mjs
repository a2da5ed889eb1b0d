// export.test.mjs - GET /api/particles?format=ply|vtp|vtu|csv: the
// whole world as a file, read back by readers independent of the server
// (read_export.py: meshio for PLY and VTU, the XML and csv modules for VTP
// and CSV), holds the same particles as the JSON view; an unknown format is
// answered 406 with the list; the token rules of reads are unchanged.  An
// export's length is not counted ahead: it comes chunked (HTTP/1.1), read
// alike by Node's fetch, curl and Python; an HTTP/1.0 client gets it ended by
// the connection's close.  Slow readers of large exports and snapshots get
// them whole; exports and snapshots are bounded per party (source address),
// at once and per minute, with 429 and Retry-After beyond.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync, spawn } from 'node:child_process';
import { promisify } from 'node:util';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { Agent } from 'undici';
import { startServer, stopAll, get, http, metric, childEnv, ROOT, TLS, WAIT, until } from './lib.mjs';

const execFileAsync = promisify(execFile);
const dir = mkdtempSync(join(tmpdir(), 'fluid-export-'));
after(async () => { await stopAll(); rmSync(dir, { recursive: true, force: true }); });
// Debian's python3 (a pyenv or venv python on PATH may lack python3-meshio)
const PYTHON = existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3';
const CURL = (() => { try { execFileSync('curl', ['--version']); return true; } catch { return false; } })();
const sha256 = (b) => createHash('sha256').update(b).digest('hex');

// GET path from a given loopback source address (another party to the
// server's budgets); the whole body.
async function fetchFrom(s, path, localAddress = '127.0.0.1', headers = {}) {
  const dispatcher = new Agent({ localAddress, ...(s.ca ? { connect: { ca: s.ca } } : {}) });
  try {
    const r = await fetch(s.base + path, { dispatcher, headers, signal: AbortSignal.timeout(WAIT) });
    return { status: r.status, headers: r.headers, body: Buffer.from(await r.arrayBuffer()) };
  } finally { await dispatcher.close(); }
}

// slow_reader.py as a child process (plain HTTP): resolves its final JSON line.
const slowRead = (s, path, ...args) => execFileAsync(PYTHON, [join(ROOT, 'tests/server/slow_reader.py'), String(s.port), path, ...args.map(String)], { encoding: 'utf8', maxBuffer: 1 << 20 })
  .then(({ stdout }) => JSON.parse(stdout.trim().split('\n').pop()));

// A reader that holds an answer under way: reads it at `rate` bytes a second
// (far slower than it comes, never stalling long enough to be cut).
// .head resolves with the status line once the headers came; .kill() ends it.
function holdingReader(s, path, bind, rate = 20000) {
  const p = spawn(PYTHON, [join(ROOT, 'tests/server/slow_reader.py'), String(s.port), path, String(rate), '--bind', bind, '--head'], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  const head = new Promise((resolve, reject) => {
    p.stdout.on('data', (d) => {
      out += d;
      const m = /\{"head": "([^"]*)"\}/.exec(out);
      if (m) resolve(m[1]);
    });
    p.on('exit', (code) => reject(new Error(`slow_reader exited ${code} before the headers: ${out}`)));
  });
  const gone = new Promise((resolve) => p.on('exit', resolve));
  return { head, kill: async () => { p.kill('SIGKILL'); await gone; } };
}

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
    // the length is not counted ahead: the body comes in chunks
    assert.equal(r.headers.get('transfer-encoding'), 'chunked', fmt);
    assert.equal(r.headers.get('content-length'), null, fmt);
    const bytes = Buffer.from(await r.arrayBuffer());
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

test('an export reads the same in Node fetch, curl and Python urllib; chunked keeps the connection, HTTP/1.0 gets the body ended by the close',
  { skip: !CURL && 'curl is not installed' }, async () => {
  // one reader after another, each format: more exports than a party's default burst
  const s = await startServer(['--scene', 'dam_break', '--particles', '4000', '--exports-per-min', '600']);
  await until(async () => (await get(s, '/api/stats')).json.tick >= 10, 'the first 10 ticks');
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200);
  for (const fmt of ['ply', 'csv']) {
    const path = `/api/particles?format=${fmt}`;
    const viaFetch = await fetchFrom(s, path);
    assert.equal(viaFetch.status, 200);
    assert.equal(viaFetch.headers.get('transfer-encoding'), 'chunked');
    assert.ok(viaFetch.body.length > 100000, `${fmt}: ${viaFetch.body.length} bytes`);
    const want = sha256(viaFetch.body);
    for (const [v, flag] of [['1.1', '--http1.1'], ['1.0', '--http1.0']]) {
      const file = join(dir, `curl-${v}.${fmt}`);
      const head = execFileSync('curl', ['-sS', '--fail', flag, '-D', '-', '-o', file, s.base + path], { env: childEnv(), encoding: 'utf8' });
      if (v === '1.1') {
        assert.match(head, /^transfer-encoding: chunked\r$/mi, head);
      } else { // no length and no chunks: the server closes the connection after the last byte
        assert.doesNotMatch(head, /transfer-encoding|content-length/i, head);
        assert.match(head, /^connection: close\r$/mi, head);
      }
      assert.equal(sha256(readFileSync(file)), want, `curl HTTP/${v}, ${fmt}: the bytes fetch read`);
    }
    const py = JSON.parse(execFileSync(PYTHON, [join(ROOT, 'tests/server/url_reader.py'), s.base + path], { env: childEnv(), encoding: 'utf8' }));
    assert.equal(py.status, 200);
    assert.equal(py.transfer_encoding, 'chunked');
    assert.equal(py.sha256, want, `Python urllib, ${fmt}: the bytes fetch read`);
    if (!TLS) { // the framing itself, byte by byte: size lines, CRLFs, the empty last chunk
      const raw = await slowRead(s, path, 1e9);
      assert.deepEqual([raw.chunked, raw.complete, raw.framing_error, raw.received, raw.sha256], [true, true, null, viaFetch.body.length, want]);
    }
  }
  // after a chunked answer the connection serves the next request: curl opens one for both
  const both = execFileSync('curl', ['-sS', '--fail', '-o', '/dev/null', '-o', '/dev/null', '-w', '%{num_connects}\n',
    `${s.base}/api/particles?format=csv`, `${s.base}/api/stats`], { env: childEnv(), encoding: 'utf8' });
  assert.deepEqual(both.trim().split('\n').map(Number), [1, 0], 'connections opened for each of two requests');
});

// A download slower than the server's stall timeout (10 s) arrives whole: the
// timeout measures the reader's progress, not the answer's total time.  The
// answers are larger than the kernel's socket buffers (a 66k world's CSV,
// about 5.6 MB, and its snapshot, about 4 MB; the reader's receive buffer is
// 4 kB), so the server waits on the reader for most of them.  Both are read
// at once (one party may have two under way), at 50 kB/s: about 110 s, 11
// times the stall timeout.  A reader that stops taking bytes for longer than
// the timeout is cut, and /metrics counts it.
// FLUID_TEST_SLOW=0 (the bookworm pass of the Node suites, whose point is
// Node 18) leaves out this test's two minutes of slow reading: the server's
// behaviour does not depend on the Node.js that runs the test.
test('a 5 MB export and a 4 MB snapshot read at 50 kB/s arrive whole, byte for byte; readers that stop are cut and counted',
  { skip: (TLS && 'the slow reader speaks plain HTTP') || (process.env.FLUID_TEST_SLOW === '0' && 'FLUID_TEST_SLOW=0: runs in make test on the host') }, async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '66000']);
  // once the particles have moved they print every digit: the CSV is then about 5.6-5.9 MB
  await until(async () => (await get(s, '/api/stats')).json.tick >= 2, 'the first 2 ticks');
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200); // paused: fast and slow reads are of one world
  const csv = '/api/particles?format=csv';
  const fast = await fetchFrom(s, csv);
  assert.equal(fast.status, 200);
  assert.ok(fast.body.length > 5e6, `a CSV of ${fast.body.length} bytes`);
  const snap = await fetchFrom(s, '/api/snapshot');
  assert.equal(snap.status, 200);
  assert.equal(Number(snap.headers.get('content-length')), snap.body.length);
  assert.ok(snap.body.length > 4e6, `a snapshot of ${snap.body.length} bytes`);
  const [slowCsv, slowSnap] = await Promise.all([slowRead(s, csv, 50000), slowRead(s, '/api/snapshot', 50000)]);
  assert.deepEqual([slowCsv.chunked, slowCsv.complete, slowCsv.framing_error], [true, true, null]);
  assert.equal(slowCsv.received, fast.body.length, `export: received ${slowCsv.received} of ${fast.body.length} bytes`);
  assert.equal(slowCsv.sha256, sha256(fast.body), 'export: byte for byte the answer read at once');
  assert.deepEqual([slowSnap.chunked, slowSnap.length, slowSnap.complete], [false, snap.body.length, true]);
  assert.equal(slowSnap.received, snap.body.length, `snapshot: received ${slowSnap.received} of ${snap.body.length} bytes`);
  assert.equal(slowSnap.sha256, sha256(snap.body), 'snapshot: byte for byte the answer read at once');
  assert.equal(metric((await get(s, '/metrics')).text, 'fluid_http_answers_cut_total'), 0);
  // read 1 MB at once, then nothing for 16 s (the server's stall timeout is 10 s): both cut
  const [stalledCsv, stalledSnap] = await Promise.all([slowRead(s, csv, 1e9, 1000000, 16), slowRead(s, '/api/snapshot', 1e9, 1000000, 16)]);
  assert.ok(!stalledCsv.complete && stalledCsv.received < fast.body.length, `a stalled reader got ${stalledCsv.received} of ${fast.body.length} bytes`);
  assert.ok(!stalledSnap.complete && stalledSnap.received < snap.body.length, `a stalled reader got ${stalledSnap.received} of ${snap.body.length} bytes`);
  const m = (await get(s, '/metrics')).text;
  assert.equal(metric(m, 'fluid_http_answers_cut_total'), 2);
  assert.equal(metric(m, 'fluid_http_heavy_answers'), 0, 'the cut answers gave their places back');
  assert.match(s.stderr, /closed with \d+ bytes of an unfinished export sent \(the reader took nothing for 10 s, or left\)/);
  assert.match(s.stderr, /snapshot closed with \d+ of \d+ bytes sent \(the reader took nothing for 10 s, or left\)/);
  await s.stop();
});

// Exports and snapshots copy the whole world on the sim thread and hold a
// document while it is read: a party (a source address; the server's token
// makes another) has at most 2 under way, and all parties together 8.  The
// readers here hold theirs by reading slowly (a 5.5 MB VTU at 20 kB/s; the
// kernel's buffers take about 2 MB of it), and are killed at the end.
test('at most 2 exports and snapshots under way per party and 8 in all: beyond, 429 (or 503) with Retry-After, while other parties are served',
  { skip: TLS && 'the holding readers speak plain HTTP' }, async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '66000', '--token', 'tok']);
  await until(async () => (await get(s, '/api/stats')).json.tick >= 2, 'the first 2 ticks');
  assert.equal((await http(s, 'POST', '/api/pause', { headers: { Authorization: 'Bearer tok' } })).status, 200);
  const vtu = '/api/particles?format=vtu';
  const under = async () => metric((await get(s, '/metrics')).text, 'fluid_http_heavy_answers');
  const readers = [];
  const hold = async (bind, path = vtu) => {
    const h = holdingReader(s, path, bind);
    readers.push(h);
    assert.match(await h.head, /^HTTP\/1\.1 200 /, `${bind} ${path}`);
  };
  try {
    await hold('127.0.0.1');
    await hold('127.0.0.1', '/api/snapshot');
    assert.equal(await under(), 2);
    for (const path of [vtu, '/api/snapshot']) {
      const third = await fetchFrom(s, path, '127.0.0.1');
      assert.equal(third.status, 429, `a third from one address: ${path}`);
      assert.ok(Number(third.headers.get('retry-after')) >= 1, `Retry-After: ${third.headers.get('retry-after')}`);
      assert.match(JSON.parse(third.body).error, /at most 2 under way from one address/);
    }
    // another address is another party: served whole
    const other = await fetchFrom(s, vtu, '127.0.0.2');
    assert.equal(other.status, 200);
    assert.ok(other.body.length > 5e6 && other.body.toString('latin1').endsWith('</VTKFile>\n'), `${other.body.length} bytes`);
    // so is the same address with the server's token
    const tokened = await fetchFrom(s, vtu, '127.0.0.1', { Authorization: 'Bearer tok' });
    assert.equal(tokened.status, 200);
    assert.equal(tokened.body.length, other.body.length);
    // all parties together: 8 under way; a ninth is 503 wherever it comes from
    for (const bind of ['127.0.0.2', '127.0.0.2', '127.0.0.3', '127.0.0.3', '127.0.0.4', '127.0.0.4']) await hold(bind);
    assert.equal(await under(), 8);
    const ninth = await fetchFrom(s, vtu, '127.0.0.5');
    assert.equal(ninth.status, 503);
    assert.ok(Number(ninth.headers.get('retry-after')) >= 1, `Retry-After: ${ninth.headers.get('retry-after')}`);
    assert.match(JSON.parse(ninth.body).error, /busy: 8 exports and snapshots are under way/);
    const m = (await get(s, '/metrics')).text;
    assert.equal(metric(m, 'fluid_commands_refused_total{reason="export_budget"}'), 1);
    assert.equal(metric(m, 'fluid_commands_refused_total{reason="snapshot_budget"}'), 1);
    assert.equal(metric(m, 'fluid_commands_refused_total{reason="heavy_busy"}'), 1);
  } finally {
    for (const h of readers) await h.kill();
  }
  // the readers gone, their answers are cut and their places given back
  await until(async () => (await under()) === 0, 'the places of the killed readers');
  assert.equal(metric((await get(s, '/metrics')).text, 'fluid_http_answers_cut_total'), 8);
  assert.equal((await fetchFrom(s, vtu, '127.0.0.5')).status, 200);
  await s.stop();
});

// The minute's bounds are token buckets (12 exports and 6 snapshots a
// minute, holding a burst of 8 and 2) that refill continuously: requests in
// a row are refused once the bucket is empty, after at least its burst.
// (How many more pass depends on how fast they come; the count asserted is
// the burst's.)
test('at most 12 exports and 6 snapshots a minute per party (bursts of 8 and 2): then 429 with Retry-After; another party is served',
  async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '1000']);
  for (const [path, burst, perMin, reason] of [['/api/particles?format=csv', 8, 12, 'export_budget'], ['/api/snapshot', 2, 6, 'snapshot_budget']]) {
    let ok = 0, refused = null;
    for (let k = 0; k < 1000 && !refused; k++) {
      const r = await fetchFrom(s, path, '127.0.0.1');
      if (r.status === 200) ok++;
      else refused = r;
    }
    assert.ok(refused, `${path}: refused at last`);
    assert.equal(refused.status, 429, `${path}: ${refused.body}`);
    assert.ok(ok >= burst, `${path}: ${ok} answered before the first 429`);
    const after = Number(refused.headers.get('retry-after'));
    assert.ok(Number.isInteger(after) && after >= 1 && after <= 60, `Retry-After: ${refused.headers.get('retry-after')}`);
    assert.match(JSON.parse(refused.body).error, new RegExp(`at most ${perMin} a minute from one address`));
    assert.equal(metric((await get(s, '/metrics')).text, `fluid_commands_refused_total{reason="${reason}"}`), 1);
    assert.equal((await fetchFrom(s, path, '127.0.0.2')).status, 200, `${path} from another address`);
  }
  // the JSON view is not an export: not bounded by the minute's exports
  assert.equal((await fetchFrom(s, '/api/particles?limit=10', '127.0.0.1')).status, 200);
  await s.stop();
});
