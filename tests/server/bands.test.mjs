// bands.test.mjs - frames in bands (PROTOCOL.md "Bands (kind 2)") from the
// real binary: with --frame-bands 3 every frame is a container of 3 bands; a
// client decoding whole frames and one decoding each band with a decoder of
// its own (as the page's workers do) see the same frames, which match
// /api/particles within half a step, through a pace change, a keyframe
// request, an emitter adding particles and a scene load (a new split).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, connect, get, http } from './lib.mjs';
import { FrameDecoder, readHeader, readBands } from '../web/oracle/frame_decoder.js';

let s;
before(async () => { s = await startServer(['--scene', 'fountain', '--particles', '3000', '--frame-hz', '30', '--frame-bands', '3']); });
after(async () => { await stopAll(); });

// Decodes each band of every frame with a decoder of its own and joins them.
class BandClient {
  constructor(cap) { this.dec = [0, 1, 2].map(() => new FrameDecoder(cap)); this.refused = 0; }
  decode(data) {
    const { k, lo, parts } = readBands(data);
    const ids = [], q = [];
    for (let i = 0; i < k; i++) {
      const f = this.dec[i].decode(parts[i]);
      ids.push(...f.id.subarray(0, f.n)); q.push(...f.q.subarray(0, 3 * f.n));
    }
    return { k, lo, ids, q };
  }
}

test('every frame is 3 bands; whole and per-band decoders agree through a pace change, a keyframe request and an emitter', async () => {
  const c = await connect(s);
  const hello = await c.next((m) => m.type === 'hello');
  const bands = new BandClient(hello.capacity);
  let frames = 0, keys = 0, grew = false, firstN = 0;
  const check = (f) => {
    assert.ok(f.ids, `whole decode: ${f._refused}`);
    assert.equal(readHeader(f.data).kind, 2, 'a container');
    const b = bands.decode(f.data);
    assert.equal(b.k, 3);
    assert.deepEqual(b.ids, [...f.ids], `frame ${f.seq}: ids`);
    assert.deepEqual(b.q, [...f.q], `frame ${f.seq}: positions`);
    frames++; keys += f.key ? 1 : 0;
    if (!firstN) firstN = f.n;
    grew ||= f.n > firstN;
  };
  for (let i = 0; i < 20; i++) check(await c.next((m) => m.type === 'frame'));
  c.send({ type: 'pace', stride: 2, rid: 0 });
  for (let i = 0; i < 10; i++) check(await c.next((m) => m.type === 'frame'));
  c.send({ type: 'pace', stride: 1, rid: 0 });
  c.send({ type: 'keyframe', rid: 0 });
  check(await c.next((m) => m.type === 'frame' && m.key));
  for (let i = 0; i < 30; i++) check(await c.next((m) => m.type === 'frame'));
  assert.equal(c.refused, 0);
  assert.ok(keys >= 2, `${keys} keyframes`);
  assert.ok(grew, `the fountain's emitter added particles (${firstN} at first)`);
  c.close();
});

test('a paused banded frame dequantizes to /api/particles; a scene load starts a new split with a keyframe', async () => {
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  assert.equal((await c.command({ type: 'load_scene', name: 'dam_break', particles: 2500 })).ok, true);
  const key = await c.next((m) => m.type === 'frame' && m.key && m.n > 2000);
  assert.ok(key.ids, `the scene's keyframe decodes: ${key._refused}`);
  const { lo } = readBands(key.data);
  assert.equal(lo.length, 3);
  assert.equal(await http(s, 'POST', '/api/pause').then((r) => r.status), 200);
  const r = await get(s, '/api/particles?offset=0&limit=10000');
  const f = await c.next((m) => m.type === 'frame' && m.tick === r.json.tick && m.paused);
  assert.deepEqual([...f.ids], r.json.ids);
  let worst = 0;
  for (let k = 0; k < f.n; k++)
    for (let a = 0; a < 3; a++) {
      const want = Math.min(Math.max(r.json.positions[k][a], f.bounds[a]), f.bounds[a + 3]);
      worst = Math.max(worst, Math.abs(f.grid.origin[a] + f.q[3 * k + a] * f.grid.step - want) / f.grid.step);
    }
  assert.ok(worst <= 0.501, `quantization error ${worst} steps`);
  // the split: band k starts at the id of particle floor(k n / 3) of the scene's first frame
  for (let i = 1; i < 3; i++) assert.equal(lo[i], key.ids[Math.floor((i * key.n) / 3)]);
  await http(s, 'POST', '/api/resume');
  c.close();
});
