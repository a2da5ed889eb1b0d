// record_limits.test.mjs - recordings share the server fairly and lose
// nothing: all recordings together keep at most a budget and leave the
// world's saves their room on a small disk (a recording that reaches either
// stops, its index saying why); max_mb and max_seconds are checked at the
// edge; names are checked on the bytes received; racing starts are each
// recorded or refused, never acknowledged and lost; the listing is complete,
// sorted and paged; nothing outside the recordings folder is served.
//
// FLUID_REC_RACE=N sets how many starts the race makes (default 200; 1000
// is the figure of the bar, run by hand).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync, writeFileSync, mkdirSync, readFileSync, symlinkSync, cpSync, existsSync, statfsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { Agent } from 'undici';
import { startServer, stopAll, connect, http, get, ROOT, until, metric } from './lib.mjs';

const dir = mkdtempSync(join(tmpdir(), 'fluid-reclim-'));
after(async () => { await stopAll(); rmSync(dir, { recursive: true, force: true }); });
const FLUID_REC = process.env.FLUID_REC || join(ROOT, 'build', 'fluid-rec');
const SERVER_BIN = process.env.FLUID_SERVER || join(ROOT, 'build', 'fluid-server');
const RACE = Number(process.env.FLUID_REC_RACE || 200);

const status = async (s) => (await get(s, '/api/recordings')).json.recording;

// Every recording the listing has, page by page (limit per page).
async function listAll(s, limit = 1000) {
  const names = [];
  let total = null;
  for (let offset = 0; ; offset += limit) {
    const r = await get(s, `/api/recordings?offset=${offset}&limit=${limit}`);
    assert.equal(r.status, 200, r.text.slice(0, 200));
    total ??= r.json.total;
    assert.equal(r.json.total, total, 'the total stays the same from page to page');
    assert.equal(r.json.complete, true);
    assert.ok(r.json.recordings.length <= limit);
    names.push(...r.json.recordings.map((x) => x.name));
    if (r.json.recordings.length < limit) break;
  }
  assert.equal(names.length, total, 'the pages hold the total');
  return names;
}

// `fluid-rec check` on a recording folder: { ok, frames }.
function check(folder) {
  const r = spawnSync(FLUID_REC, ['check', folder], { encoding: 'utf8' });
  const m = /(\d+) frames decoded/.exec(r.stdout);
  return { ok: r.status === 0, frames: m ? Number(m[1]) : 0, out: r.stdout + r.stderr };
}

// A server whose data directory (saves, and recordings below it) is a
// tmpfs of `size` in its own mount namespace; null when that cannot be made.
async function onSmallDisk(t, name, size, args) {
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], { encoding: 'utf8' });
  if (probe.status !== 0) { t.skip(`cannot make a private mount namespace (needs root): ${probe.stderr.trim()}`); return null; }
  const disk = join(dir, name);
  mkdirSync(disk);
  const wrapper = join(dir, `${name}.sh`);
  writeFileSync(wrapper, `#!/bin/sh\nexec unshare -m sh -c 'd=$0; s=$1; shift; mount -t tmpfs -o size=${size} tmpfs "$d" && exec "$s" "$@"' ` +
    `"${disk}" "${SERVER_BIN}" "$@"\n`, { mode: 0o755 });
  const s = await startServer(['--scene', 'dam_break', '--particles', '5000', '--data-dir', disk, '--save-interval', '0.5', ...args], { binary: wrapper });
  // the server's own view of its disk (its mount namespace): /proc/PID/root
  s.disk = `/proc/${s.proc.pid}/root${disk}`;
  return s;
}

// Runs a recording into the small disk's limit; checks that saves go on
// after it stopped, that its index says why, and returns what it said.
async function recordIntoLimit(t, s, name) {
  const r = await http(s, 'POST', '/api/recordings', { body: { name } });
  assert.equal(r.status, 200, r.text);
  let st = null;
  await until(async () => { st = await status(s); return !st.active && st.name === name; },
    () => `recording ${name} to stop on its own (${JSON.stringify(st)})`, { everyMs: 200 });
  const saves0 = (await get(s, '/api/stats')).json.saves;
  let stats = null;
  await until(async () => { stats = (await get(s, '/api/stats')).json; return stats.saves >= saves0 + 3; },
    () => `three more saves after the recording stopped (${saves0} -> ${stats?.saves})`);
  assert.equal(stats.save_failures, 0, 'no save failed');
  const idx = (await get(s, `/api/recordings/${name}/index.json`)).json;
  assert.equal(idx.recording, false, 'the index says it no longer records');
  assert.equal(idx.stopped, st.stopped, 'the index says why it stopped, as the status does');
  assert.ok(idx.segments.length >= 1 && idx.segments.every((x) => x.frames > 0));
  assert.ok(idx.segments.every((x) => x.complete), 'every segment was closed with its end mark (the stop came before the disk was full)');
  const tool = check(join(s.disk, 'recordings', name));
  assert.ok(tool.ok, tool.out);
  assert.ok(tool.frames > 0);
  const list = (await get(s, '/api/recordings')).json;
  const entry = list.recordings.find((x) => x.name === name);
  assert.equal(entry.stopped, st.stopped, 'the listing says why too');
  assert.ok(list.disk.used_bytes <= list.disk.budget_bytes, `${list.disk.used_bytes} bytes used of ${list.disk.budget_bytes}`);
  t.diagnostic(`${name}: ${tool.frames} frames, ${entry.bytes} bytes, stopped: ${st.stopped}; then ${stats.saves - saves0} saves, none failed`);
  return st.stopped;
}

test('a 3 MB disk: saves go on while a recording runs into the budget, and its index says why it stopped', async (t) => {
  // a budget of 0.5 MB: reached well before the reserve the saves need (2 x
  // 0.55 MB of the 3 MB, beside the save itself and its next copy)
  const s = await onSmallDisk(t, 'disk-budget', '3m', ['--record-total-mb', '0.5']);
  if (!s) return;
  assert.equal((await get(s, '/api/recordings')).json.disk.budget_bytes, 0.5e6);
  const why = await recordIntoLimit(t, s, 'big');
  assert.match(why, /recordings budget is used up: [\d.]+ MB kept of 0\.5 MB/);
  const m = (await get(s, '/metrics')).text;
  assert.equal(metric(m, 'fluid_recordings_stopped_total{reason="budget"}'), 1);
  assert.equal(metric(m, 'fluid_recordings_stopped_total{reason="disk"}'), 0);
  assert.match(s.stdout + s.stderr, /recording big stopped: the recordings budget is used up/);
  // a start with the budget used up is refused (507), and leaves no folder
  const again = await http(s, 'POST', '/api/recordings', { body: { name: 'more' } });
  assert.equal(again.status, 507, again.text);
  assert.equal(again.json.code, 'no_space', again.text);
  assert.match(again.json.error, /no room for recordings/);
  assert.ok(!existsSync(join(s.disk, 'recordings', 'more')), 'a refused start leaves no folder');
  assert.deepEqual(await listAll(s), ['big']);
  await s.stop();
});

test('a 3 MB disk with a large budget: the recording stops at the reserve the saves need', async (t) => {
  const s = await onSmallDisk(t, 'disk-reserve', '3m', ['--record-total-mb', '100']);
  if (!s) return;
  const disk = (await get(s, '/api/recordings')).json.disk;
  assert.equal(disk.budget_bytes, 100e6);
  assert.ok(disk.reserve_bytes >= 1 << 20, `the saves keep at least 1 MiB free: ${disk.reserve_bytes}`);
  const why = await recordIntoLimit(t, s, 'fill');
  assert.match(why, /disk is nearly full: [\d.]+ MB free, and the world's saves need [\d.]+ MB of free space/);
  const m = (await get(s, '/metrics')).text;
  assert.equal(metric(m, 'fluid_recordings_stopped_total{reason="disk"}'), 1);
  assert.equal(metric(m, 'fluid_recordings_stopped_total{reason="budget"}'), 0);
  await s.stop();
});

test('max_mb and max_seconds: finite numbers in their ranges, within the budget', async () => {
  const rec = join(dir, 'bounds');
  const s = await startServer(['--scene', 'dam_break', '--particles', '1000', '--record-dir', rec, '--record-total-mb', '100']);
  const refused = [
    { max_mb: 0 }, { max_mb: -1 }, { max_mb: 1e-7 }, { max_mb: 1e6 }, { max_mb: 101 }, { max_mb: 'NaN' }, { max_mb: '5' },
    { max_seconds: 0 }, { max_seconds: -5 }, { max_seconds: 1e-7 }, { max_seconds: 1e8 }, { max_seconds: 'Infinity' },
  ];
  for (const body of refused) {
    const r = await http(s, 'POST', '/api/recordings', { body: { name: 'bounded', ...body } });
    assert.equal(r.status, 400, `${JSON.stringify(body)}: ${r.status} ${r.text}`);
    assert.match(r.json.error, /max_mb|max_seconds/);
  }
  for (const text of ['{"name":"bounded","max_mb":1e999}', '{"name":"bounded","max_seconds":-1e999}']) {
    const r = await http(s, 'POST', '/api/recordings', { body: text });
    assert.equal(r.status, 400, `${text}: ${r.text}`);
  }
  assert.ok(!existsSync(join(rec, 'bounded')), 'no refused start left a folder');
  const ok = await http(s, 'POST', '/api/recordings', { body: { name: 'bounded', max_mb: 0.5, max_seconds: 30 } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
  await s.stop();
});

test('a name is checked on the bytes received: a NUL in it is refused (REST and WebSocket)', async () => {
  const rec = join(dir, 'nul');
  // the default budget: what is kept (nothing) and half the free space at
  // start; other tests write to the same disk meanwhile, so the free space is
  // read before the server starts and after it answers
  const freeNow = () => { const { bavail, bsize } = statfsSync(dir); return bavail * bsize; };
  const free0 = freeNow();
  const s = await startServer(['--scene', 'dam_break', '--particles', '1000', '--record-dir', rec]);
  const budget = (await get(s, '/api/recordings')).json.disk.budget_bytes;
  const free1 = freeNow();
  const lo = Math.min(free0, free1), hi = Math.max(free0, free1);
  assert.ok(budget >= Math.min(lo / 2, 100e9) - 0.02 * hi && budget <= Math.min(hi / 2, 100e9) + 0.02 * hi,
    `the default budget ${budget} is half the free space (${free0} before the start, ${free1} after), at most 100 GB`);
  for (const text of ['{"name":"a\\u0000b"}', '{"name":"a\u0000b"}', '{"name":"ok","x":"\\u0000"}']) {
    const r = await http(s, 'POST', '/api/recordings', { body: text });
    assert.equal(r.status, 400, `${JSON.stringify(text)}: ${r.status} ${r.text}`);
    assert.match(r.json.error, /NUL/);
  }
  // an escaped backslash before "u0000" is text, not a NUL
  const text = await http(s, 'POST', '/api/recordings', { body: '{"name":"a\\\\u0000b"}' });
  assert.equal(text.status, 400);
  assert.match(text.json.error, /'name' must be/);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  c.send({ type: 'record_start', rid: 7, name: 'a\u0000b' });
  const reply = await c.next((m) => m.type === 'reply' && m.rid === 7);
  assert.equal(reply.ok, false);
  assert.match(reply.error, /'name' must be a string/);
  c.close();
  assert.deepEqual(existsSync(rec) ? readdirSync(rec) : [], [], 'no recording was made');
  await s.stop();
});

test(`${RACE} recording starts racing from 8 clients: each answered ok has recorded, and each is listed`, async (t) => {
  const rec = join(dir, 'race');
  const s = await startServer(['--scene', 'dam_break', '--particles', '1000', '--record-dir', rec]);
  const ok = [], refused = [], limited = [];
  let next = 0;
  // each client from its own loopback address: its own party, with its own
  // bucket of recording starts (PROTOCOL.md, "Fair shares"); past it, 429
  async function client(k) {
    const dispatcher = new Agent({ localAddress: `127.0.0.${k + 1}` });
    for (;;) {
      const i = next++;
      if (i >= RACE) break;
      const name = `race-${k}-${i}`;
      const res = await fetch(`${s.base}/api/recordings`, { method: 'POST', body: JSON.stringify({ name }), dispatcher });
      const r = { status: res.status, text: await res.text() };
      r.json = JSON.parse(r.text);
      if (r.status === 200) {
        assert.equal(r.json.name, name);
        ok.push(name);
      } else if (r.status === 429) {
        assert.equal(r.json.code, 'rate_limited', `${name}: ${r.text}`);
        limited.push(name);
      } else {
        assert.equal(r.status, 503, `${name}: ${r.status} ${r.text}`);
        assert.equal(r.json.code, 'busy', `${name}: ${r.text}`);
        refused.push(name);
      }
    }
    await dispatcher.close();
  }
  await Promise.all([0, 1, 2, 3, 4, 5, 6, 7].map(client));
  assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
  await until(async () => !(await status(s)).active, 'the last recording to stop');
  const onDisk = readdirSync(rec).sort();
  assert.deepEqual(onDisk, [...ok].sort(), 'every start answered ok, and no other, has its folder');
  const listed = await listAll(s, 300);
  assert.deepEqual(listed, onDisk, 'the listing has every recording on disk, sorted by name');
  await s.stop();
  let frames = 0;
  for (const name of ok) {
    const r = check(join(rec, name));
    assert.ok(r.ok && r.frames >= 1, `${name}: ${r.out}`);
    frames += r.frames;
  }
  assert.ok(ok.length >= 8, `${ok.length} starts answered ok: at least one a party`);
  t.diagnostic(`${RACE} starts: ${ok.length} answered ok and recorded (${frames} frames), ${refused.length} refused as busy, ${limited.length} past their party's bucket`);
});

test('a listing of more than 1,000 recordings is complete, sorted and paged', async (t) => {
  const rec = join(dir, 'many');
  const s1 = await startServer(['--scene', 'dam_break', '--particles', '500', '--record-dir', rec]);
  assert.equal((await http(s1, 'POST', '/api/recordings', { body: { name: 'seed' } })).status, 200);
  assert.equal((await http(s1, 'POST', '/api/recordings/stop')).status, 200);
  await until(async () => !(await status(s1)).active, 'the seed recording to stop');
  await s1.stop();
  const N = 1100;
  const names = ['seed'];
  for (let i = 0; i < N; i++) {
    const name = `copy-${String(i).padStart(4, '0')}`;
    cpSync(join(rec, 'seed'), join(rec, name), { recursive: true });
    const idx = join(rec, name, 'index.json');
    writeFileSync(idx, readFileSync(idx, 'utf8').replace('"name": "seed"', `"name": "${name}"`));
    names.push(name);
  }
  names.sort();
  const s = await startServer(['--scene', 'dam_break', '--particles', '500', '--record-dir', rec]);
  const first = (await get(s, '/api/recordings')).json;
  assert.equal(first.total, N + 1);
  assert.equal(first.recordings.length, 100, 'the default page is 100');
  assert.deepEqual(await listAll(s, 1000), names);
  assert.deepEqual(await listAll(s, 37), names);
  const page = (await get(s, '/api/recordings?offset=1090&limit=50')).json;
  assert.deepEqual(page.recordings.map((x) => x.name), names.slice(1090));
  assert.equal(page.recordings[0].frames > 0 && page.recordings[0].segment_count, 1);
  for (const q of ['limit=0', 'limit=1001', 'offset=-1', 'offset=abc', 'limit=1e3'])
    assert.equal((await get(s, `/api/recordings?${q}`)).status, 400, q);
  assert.equal((await get(s, '/api/recordings?offset=5000')).json.recordings.length, 0);
  // a folder copied in while the server runs is listed at once (the folder's mtime changed)
  cpSync(join(rec, 'seed'), join(rec, 'zz-late'), { recursive: true });
  assert.equal((await get(s, '/api/recordings?offset=1101')).json.recordings[0]?.name, 'zz-late');
  t.diagnostic(`${N + 1} recordings listed in pages of 1000 and 37`);
  await s.stop();
});

test('a symbolic link in the recordings folder is neither listed nor served', async () => {
  const rec = join(dir, 'links');
  const outside = join(dir, 'outside');
  mkdirSync(outside);
  writeFileSync(join(outside, 'index.json'), '{"version": 1, "name": "secret", "segments": []}');
  writeFileSync(join(outside, 'seg-000001.fsrec'), 'secret bytes');
  const s = await startServer(['--scene', 'dam_break', '--particles', '500', '--record-dir', rec]);
  assert.equal((await http(s, 'POST', '/api/recordings', { body: { name: 'real' } })).status, 200);
  assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
  await until(async () => !(await status(s)).active, 'the recording to stop');
  symlinkSync(outside, join(rec, 'linked'));                                          // a linked folder
  symlinkSync(join(outside, 'seg-000001.fsrec'), join(rec, 'real', 'seg-000099.fsrec')); // a linked file
  mkdirSync(join(rec, 'half'));
  symlinkSync(join(outside, 'index.json'), join(rec, 'half', 'index.json'));          // a linked index
  for (const path of ['linked/index.json', 'linked/seg-000001.fsrec', 'real/seg-000099.fsrec', 'half/index.json']) {
    const r = await get(s, `/api/recordings/${path}`);
    assert.equal(r.status, 404, `${path}: ${r.status} ${r.text}`);
    assert.ok(!r.text.includes('secret'), path);
  }
  assert.equal((await get(s, '/api/recordings/real/index.json')).status, 200);
  assert.deepEqual(await listAll(s), ['real']);
  await s.stop();
});

test('--record at launch: two servers in the same second record under two names; one that cannot record runs on', async (t) => {
  const rec = join(dir, 'launch');
  mkdirSync(rec);
  // every name of the next two minutes is taken: a launch must find the next free one
  const stamp = (d) => `rec-${d.toISOString().slice(0, 19).replace(/[-:]/g, '').replace('T', '-')}`;
  // one clock reading for all of them (a reading per name skips a second
  // when the loop crosses a second's boundary), and the second before it
  const t0 = Date.now();
  for (let k = -1; k < 120; k++) mkdirSync(join(rec, stamp(new Date(t0 + k * 1000))), { recursive: true });
  const [a, b] = await Promise.all([0, 1].map(() => startServer(['--scene', 'dam_break', '--particles', '500', '--record', rec])));
  const names = [];
  for (const s of [a, b]) {
    let st = null;
    await until(async () => { st = await status(s); return st.active && st.frames > 0; }, () => `the launch recording (${JSON.stringify(st)})`);
    assert.match(st.name, /^rec-\d{8}-\d{6}-\d+$/);
    names.push(st.name);
  }
  assert.notEqual(names[0], names[1]);
  for (const s of [a, b]) {
    assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
    await until(async () => !(await status(s)).active, 'the recording to stop');
    await s.stop();
  }
  for (const name of names) assert.ok(check(join(rec, name)).frames > 0, name);
  // a recordings folder that cannot be made: logged, and the server serves
  const c = await startServer(['--scene', 'dam_break', '--particles', '500', '--record', '/proc/self/no/such/folder']);
  assert.equal((await get(c, '/api/health')).status, 200);
  assert.match(c.stdout + c.stderr, /cannot record from the start \(cannot make the recordings folder .*\); the server runs on without it/);
  t.diagnostic(`launch recordings: ${names.join(', ')}`);
  await c.stop();
});
