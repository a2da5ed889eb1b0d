// record.test.mjs - recordings: the frame stream written to disk and
// replayed headlessly equals what the live stream delivered, frame for frame;
// the disk bound holds; a damaged segment replays up to the damage; names and
// paths are checked at the edge; the recording tool (build/fluid-rec) reads it;
// the page's decoder (the server's, built to WebAssembly) decodes a recording
// exactly as its oracle (the JavaScript port of the walk) does.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, readdirSync, statSync, writeFileSync, mkdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawnSync } from 'node:child_process';
import { decode } from '@msgpack/msgpack';
import { startServer, stopAll, connect, http, get, ROOT, until } from './lib.mjs';
import { readSegment, REC } from '../../web-client/src/recording.js';
import { FrameDecoder } from '../web/oracle/frame_decoder.js';
import { wasmDecoderFactory } from '../web/oracle/wasm.mjs';

const dir = mkdtempSync(join(tmpdir(), 'fluid-rec-'));
after(async () => { await stopAll(); rmSync(dir, { recursive: true, force: true }); });
const FLUID_REC = process.env.FLUID_REC || join(ROOT, 'build', 'fluid-rec');

// The recording's status (GET /api/recordings' `recording`).
const status = async (s) => (await get(s, '/api/recordings')).json.recording;

// Waits until the recording has written `frames` frames and check(status) holds.
async function recordUntil(s, frames, check = () => true, what = '') {
  let st = null;
  await until(async () => { st = await status(s); return st.frames >= frames && check(st); },
    () => `the recording to write ${frames} frames${what} (${JSON.stringify(st)})`, { everyMs: 100 });
  return st;
}

// Stops the recording; waits until the encoder thread has closed it.
async function stopRecording(s, name) {
  assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
  await until(async () => !(await status(s)).active && (await get(s, `/api/recordings/${name}/index.json`)).json?.recording === false,
    `recording ${name} to close`);
}

async function fetchBytes(s, path) {
  const r = await fetch(s.base + path);
  return { status: r.status, bytes: new Uint8Array(await r.arrayBuffer()) };
}

// Every frame of a recording, decoded by the oracle: [{seq, tick, ids, q}]
// and what stopped it.  With wasm, each payload is decoded by the page's
// decoder too (one per segment, as the replay page does), and the frames and
// refusals compared with the oracle's (wasmSame counts the identical frames).
async function replay(s, name, { wasm = false } = {}) {
  const idx = (await get(s, `/api/recordings/${name}/index.json`)).json;
  let dec = null, wdec = null, wasmSame = 0;
  const makeWasm = wasm ? wasmDecoderFactory() : null;
  const frames = [], damage = [], bcasts = [];
  for (const seg of idx.segments) {
    const { status, bytes } = await fetchBytes(s, `/api/recordings/${name}/${seg.file}`);
    assert.equal(status, 200, seg.file);
    const r = readSegment(bytes);
    if (r.damage) damage.push(`${seg.file}: ${r.damage}`);
    for (const rec of r.records) {
      if (rec.kind === REC.HEADER) {
        const h = decode(rec.bytes);
        assert.equal(h.type, 'hello');
        dec = dec || new FrameDecoder(h.capacity);
        if (makeWasm) wdec = makeWasm(h.capacity);
        continue;
      }
      if (rec.kind === REC.BCAST) { bcasts.push(decode(rec.bytes).type); continue; }
      if (rec.kind !== REC.FRAME) continue;
      const m = decode(rec.bytes);
      const f = dec.decode(m.data);
      frames.push({ seq: m.seq, tick: m.tick, key: m.key, ids: Uint32Array.from(f.id.subarray(0, f.n)), q: Uint16Array.from(f.q.subarray(0, 3 * f.n)) });
      if (wdec) {
        const w = wdec.decode(m.data); // throws (fails the test) where the oracle decoded
        assert.equal(w.seq, f.seq, `frame ${m.seq}: seq`);
        assert.deepEqual(w.id, f.id.subarray(0, f.n), `frame ${m.seq}: the WebAssembly decoder's ids`);
        assert.deepEqual(w.q, f.q.subarray(0, 3 * f.n), `frame ${m.seq}: the WebAssembly decoder's positions`);
        assert.deepEqual(w.mat, f.mat.subarray(0, f.n), `frame ${m.seq}: the WebAssembly decoder's materials`);
        assert.deepEqual(w.temp, f.temp.subarray(0, f.n), `frame ${m.seq}: the WebAssembly decoder's temperatures`);
        assert.deepEqual(w.grid.levels, f.grid.levels, `frame ${m.seq}: grid`);
        wasmSame++;
      }
    }
  }
  return { idx, frames, damage, bcasts, wasmSame };
}

test('a recording of 300 frames of the dam break with an emitter replays to exactly what the live stream delivered', async (t) => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '5000', '--record-dir', dir]);
  const live = await connect(s);
  const seen = new Map(); // seq -> {ids, q} as the live client decoded them
  live.onMessage = (m) => { if (m.type === 'frame' && m.ids) seen.set(m.seq, { ids: m.ids, q: m.q }); };
  await live.next((m) => m.type === 'frame' && m.ids);
  const e = await http(s, 'POST', '/api/emitter', { body: { slot: 0, pos: [0.5, 0.8, 0.3], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 300 } });
  assert.equal(e.status, 200);
  const np = (await get(s, '/api/stats')).json.particles;
  const seq0 = Math.max(...seen.keys());
  const r = await http(s, 'POST', '/api/recordings', { body: { name: 'dam' } });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.name, 'dam');
  // 300 frames (10 s of the stream), 150 of them decoded by the live client
  // too (however many a loaded host made the server skip for it), and the
  // emitter's particles in them
  let n = np;
  await recordUntil(s, 300);
  const liveSince = () => [...seen.keys()].filter((q) => q > seq0).length;
  await until(() => liveSince() >= 150, () => `the live client to decode 150 frames while recording (${liveSince()})`);
  await until(async () => (n = (await get(s, '/api/stats')).json.particles) >= np + 200, () => `200 emitted particles (${np} -> ${n})`);
  await recordUntil(s, (await status(s)).frames + 30); // frames of those particles
  await stopRecording(s, 'dam');
  live.onMessage = null;
  const list = (await get(s, '/api/recordings')).json;
  assert.equal(list.recording.active, false);
  assert.equal(list.recording.name, 'dam');
  const rec = await replay(s, 'dam', { wasm: true });
  assert.deepEqual(rec.damage, []);
  assert.equal(rec.wasmSame, rec.frames.length, 'the page\'s WebAssembly decoder decoded every recorded frame as the oracle did');
  assert.equal(rec.idx.recording, false);
  assert.ok(rec.idx.segments.every((x) => x.complete), 'every segment closed with its end mark');
  assert.ok(rec.frames.length >= 300, `frames recorded: ${rec.frames.length}`);
  assert.ok(rec.frames[0].key, 'the recording opens with a keyframe');
  const n0 = rec.frames[0].ids.length, n1 = rec.frames[rec.frames.length - 1].ids.length;
  assert.ok(n1 > n0 + 100, `the emitter added particles while recording (${n0} -> ${n1})`);
  // every frame the live client decoded while recording is in the recording, the same
  let compared = 0;
  for (const f of rec.frames) {
    const l = seen.get(f.seq);
    if (!l) continue;
    compared++;
    assert.deepEqual(f.ids, l.ids, `frame ${f.seq}: ids`);
    assert.deepEqual(f.q, l.q, `frame ${f.seq}: positions`);
  }
  const first = rec.frames[0].seq, last = rec.frames[rec.frames.length - 1].seq;
  const liveInRecording = [...seen.keys()].filter((q) => q >= first && q <= last);
  t.diagnostic(`${rec.frames.length} frames recorded in ${rec.idx.segments.length} segments, ${compared} compared with the live stream, ${rec.wasmSame} decoded alike by the WebAssembly decoder and the oracle, ${n0} -> ${n1} particles`);
  assert.equal(compared, liveInRecording.length, `each of the ${liveInRecording.length} live frames in seq ${first}..${last} was recorded`);
  assert.ok(compared >= 100, `compared ${compared} of ${rec.frames.length}`);
  // the recording tool replays it too
  const tool = spawnSync(FLUID_REC, ['check', join(dir, 'dam')], { encoding: 'utf8' });
  assert.equal(tool.status, 0, tool.stdout + tool.stderr);
  assert.match(tool.stdout, new RegExp(`${rec.frames.length} frames decoded`));
  const out = join(dir, 'vtp');
  const vtp = spawnSync(FLUID_REC, ['vtp', join(dir, 'dam'), out, '50'], { encoding: 'utf8' });
  assert.equal(vtp.status, 0, vtp.stdout + vtp.stderr);
  const pvd = readFileSync(join(out, 'series.pvd'), 'utf8');
  const files = [...pvd.matchAll(/file="([^"]+)"/g)].map((x) => x[1]);
  assert.equal(files.length, Math.ceil(rec.frames.length / 50));
  for (const f of files) assert.match(readFileSync(join(out, f), 'utf8'), /<Piece NumberOfPoints="\d+"/);
  live.close();
  await s.stop();
});

test('a damaged segment replays up to the damage and says where', async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '3000', '--record-dir', dir]);
  assert.equal((await http(s, 'POST', '/api/recordings', { body: { name: 'cut' } })).status, 200);
  await recordUntil(s, 90);
  await stopRecording(s, 'cut');
  const idx = (await get(s, '/api/recordings/cut/index.json')).json;
  const { bytes } = await fetchBytes(s, `/api/recordings/cut/${idx.segments[0].file}`);
  const whole = readSegment(bytes);
  assert.equal(whole.damage, null);
  assert.ok(whole.ended);
  const cut = readSegment(bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  assert.match(cut.damage, /truncated at byte \d+/);
  assert.ok(cut.records.length > 2 && cut.records.length < whole.records.length);
  const flipped = Uint8Array.from(bytes);
  flipped[Math.floor(bytes.length / 2)] ^= 0xff;
  assert.match(readSegment(flipped).damage, /CRC mismatch|bad record/);
  // the tool reports it too
  mkdirSync(join(dir, 'cut2'));
  writeFileSync(join(dir, 'cut2', idx.segments[0].file), bytes.subarray(0, Math.floor(bytes.length * 0.6)));
  const tool = spawnSync(FLUID_REC, ['check', join(dir, 'cut2')], { encoding: 'utf8' });
  assert.equal(tool.status, 1);
  assert.match(tool.stdout, /replayed up to the damage: record truncated at byte/);
  await s.stop();
});

test('a recording stays under its disk bound: the oldest segments go', async (t) => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '5000', '--record-dir', dir]);
  assert.equal((await http(s, 'POST', '/api/recordings', { body: { name: 'capped', max_mb: 0.6 } })).status, 200);
  // until the bound has made it delete a segment
  const st = await recordUntil(s, 0, (x) => x.segments_dropped > 0, ' and drop a segment');
  await stopRecording(s, 'capped');
  const files = readdirSync(join(dir, 'capped')).filter((f) => f.endsWith('.fsrec'));
  const bytes = files.reduce((a, f) => a + statSync(join(dir, 'capped', f)).size, 0);
  t.diagnostic(`${files.length} segments kept, ${bytes} bytes, ${st.segments_dropped} dropped, ${st.frames} frames written`);
  assert.ok(st.segments_dropped > 0, 'old segments were deleted');
  assert.ok(bytes <= 0.6e6, `${bytes} bytes on disk for a 0.6 MB bound`);
  const rec = await replay(s, 'capped');
  assert.deepEqual(rec.damage, []);
  assert.ok(rec.frames[0].key, 'what is kept opens with a keyframe');
  await s.stop();
});

test('recordings: names and paths are checked, and a server without a folder says so', async () => {
  const s = await startServer(['--scene', 'dam_break', '--particles', '1000', '--record-dir', dir]);
  for (const name of ['../x', '.hidden', 'a/b', '', 'x'.repeat(40)]) {
    const r = await http(s, 'POST', '/api/recordings', { body: { name } });
    assert.equal(r.status, 400, `${JSON.stringify(name)}: ${r.status} ${r.text}`);
  }
  assert.equal((await http(s, 'POST', '/api/recordings', { body: { max_mb: -1 } })).status, 400);
  assert.equal((await http(s, 'POST', '/api/recordings', { body: { name: 'twice' } })).status, 200);
  assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
  const again = await http(s, 'POST', '/api/recordings', { body: { name: 'twice' } });
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'conflict');
  assert.match(again.json.error, /exists/);
  for (const path of ['/api/recordings/twice/../../etc/passwd', '/api/recordings/twice/seg-1.fsrec', '/api/recordings/twice/x.json',
    '/api/recordings/..%2F..%2Fetc%2Fpasswd', '/api/recordings/nope/index.json'])
    assert.equal((await fetch(s.base + path)).status, 404, path);
  await s.stop();
  const t2 = await startServer(['--scene', 'dam_break', '--particles', '1000']);
  const r = await http(t2, 'POST', '/api/recordings', { body: {} });
  assert.equal(r.status, 400);
  assert.equal(r.json.code, 'bad_request');
  assert.match(r.json.error, /no recordings folder/);
  assert.equal((await get(t2, '/api/recordings')).json.enabled, false);
  await t2.stop();
});

test('a disk without room for the saves\' reserve refuses a start with its reason, never the world', async (t) => {
  // the recordings folder is a 300 kB tmpfs in the server's own mount
  // namespace: less than the free space the recordings leave (1 MiB at least)
  const probe = spawnSync('unshare', ['-m', 'sh', '-c', 'mount -t tmpfs -o size=64k tmpfs /mnt'], { encoding: 'utf8' });
  if (probe.status !== 0) { t.skip(`cannot make a private mount namespace: ${probe.stderr.trim()}`); return; }
  const disk = join(dir, 'small');
  mkdirSync(disk);
  const wrapper = join(dir, 'in-small-disk.sh');
  writeFileSync(wrapper, '#!/bin/sh\nexec unshare -m sh -c \'d=$0; s=$1; shift; mount -t tmpfs -o size=300k tmpfs "$d" && exec "$s" "$@"\' ' +
    `"${disk}" "${process.env.FLUID_SERVER || join(ROOT, 'build', 'fluid-server')}" "$@"\n`, { mode: 0o755 });
  const s = await startServer(['--scene', 'dam_break', '--particles', '5000', '--record-dir', disk, '--record-total-mb', '100'], { binary: wrapper });
  const r = await http(s, 'POST', '/api/recordings', { body: { name: 'full' } });
  t.diagnostic(`${r.status} ${r.json.error}`);
  assert.equal(r.status, 507);
  assert.equal(r.json.code, 'no_space');
  assert.match(r.json.error, /no room for recordings: the disk is nearly full: 0\.\d MB free, and the world's saves need 1\.0 MB/);
  // the name is free again (no folder was left), the world steps on
  const list = (await get(s, '/api/recordings')).json;
  assert.equal(list.total, 0);
  assert.equal(list.recording.active, false);
  const tick0 = (await get(s, '/api/stats')).json.tick;
  let tick1 = tick0;
  await until(async () => (tick1 = (await get(s, '/api/stats')).json.tick) >= tick0 + 30, () => `the world to step on (${tick0} -> ${tick1})`);
  assert.match(s.stdout + s.stderr, /recording full not started: no room for recordings/);
  await s.stop();
});
