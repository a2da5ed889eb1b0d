// decode.test.mjs - the client's decoder (web-client/src/decode.js, which
// uses @msgpack/msgpack as the browser does) on the golden vectors in protocol/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeMessage, expandRuns, runsCount, runsEqual, particlePosition, centroid, PROTOCOL_VERSION } from '../../../web-client/src/decode.js';
import { FrameStream, idRuns, boxPositions } from '../../../web-client/src/stream_v2.js';
import { wasmDecoderFactory } from '../oracle/wasm.mjs';
import { FrameDecoder } from '../oracle/frame_decoder.js';
import { checkHello } from '../../../web-client/src/protocol.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(ROOT, 'protocol', 'golden');
const { vectors, protocol_version: version } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8'));

// As a browser WebSocket delivers it: a fresh ArrayBuffer at offset 0.
function load(file) {
  const b = readFileSync(join(dir, file));
  const ab = new ArrayBuffer(b.length);
  new Uint8Array(ab).set(b);
  return new Uint8Array(ab);
}

test('golden: the client speaks the protocol version of the vectors', () => {
  assert.equal(PROTOCOL_VERSION, version);
});

for (const v of vectors.filter((x) => x.file && x.direction === 'server_to_client')) {
  test(`golden: ${v.file} decodes to its meaning`, () => {
    const bytes = load(v.file);
    const m = decodeMessage(bytes);
    assert.equal(m.type, v.expect.type);
    if (m.type !== 'frame') { assert.deepEqual(m, v.expect); return; }
    assert.equal(m.data.buffer, bytes.buffer, 'the payload is a view into the message');
    const s = new FrameStream(wasmDecoderFactory());
    s.reset(16);
    const { view: f } = s.view(m, 0);
    assert.ok(f, `decodes (${s.lastError})`);
    assert.equal(f.n, v.expect.n);
    assert.equal(f.tick, v.expect.tick);
    assert.equal(f.time, v.expect.time);
    assert.equal(f.paused, v.expect.paused);
    assert.equal(f.key, true);
    assert.deepEqual(f.bounds, v.expect.bounds);
    assert.deepEqual(f.cursors, v.expect.cursors);
    assert.deepEqual(f.bodies, v.expect.bodies || []);
    const want = v.expect.decoded;
    assert.deepEqual([...expandRuns(f.runs)], want.ids);
    assert.equal(runsCount(f.runs), f.n);
    assert.deepEqual([...f.mat], want.mat);
    assert.deepEqual([...f.temp], want.temp);
    assert.deepEqual([f.tempLo, f.tempHi], v.expect.temp_range);
    // Positions inside the box: within half a quantization step of the
    // input, plus the view's 16-bit fraction of the box.
    v.input.particles.forEach((p, i) => {
      const got = particlePosition(f, i);
      for (let a = 0; a < 3; a++) {
        if (p.pos[a] < f.bounds[a] || p.pos[a] > f.bounds[a + 3]) continue;
        const tol = want.grid.step / 2 + (f.bounds[a + 3] - f.bounds[a]) / 65535;
        assert.ok(Math.abs(got[a] - p.pos[a]) <= tol, `particle ${p.id} axis ${a}: ${got[a]} vs ${p.pos[a]}`);
      }
    });
    if (f.n) {
      const c = centroid(f);
      for (let a = 0; a < 3; a++) {
        let sum = 0;
        for (let i = 0; i < f.n; i++) sum += particlePosition(f, i)[a];
        assert.ok(Math.abs(c[a] - sum / f.n) < 1e-9);
      }
    }
  });
}

test('golden: the hello vector passes the client version check; another version is refused clearly', () => {
  const h = decodeMessage(load('s2c_hello.msgpack'));
  assert.equal(checkHello(h), null);
  const msg = checkHello({ ...h, version: 1 });
  assert.match(msg, /protocol version 1/);
  assert.match(msg, /version 2/);
});

test('decode: a message that is not a map is refused', () => {
  assert.throws(() => decodeMessage(new Uint8Array([0x93, 1, 2, 3])), /map with a type/);
});

// A frame message around a golden v2 payload.
function frameMsg(file, key) {
  const data = load(file);
  return { type: 'frame', tick: 1, time: 0, paused: false, n: 0, bounds: [0, 0, 0, 1, 1, 1], cursors: [], bodies: [],
    seq: 0, key, temp_range: [-40, 215], data };
}

test('v2 stream: deltas before the first keyframe wait for it; a refused delta asks for one keyframe; a keyframe recovers', () => {
  const s = new FrameStream(wasmDecoderFactory());
  s.reset(64);
  const key = frameMsg('frame_v2_key.bin', true), delta = frameMsg('frame_v2_delta.bin', false);
  const later = frameMsg('frame_v2_add_remove.bin', false);
  const r0 = s.view(delta, 1000);
  assert.equal(r0.view, undefined, 'a delta before any keyframe is skipped');
  assert.equal(r0.ask, true, 'and a keyframe asked for');
  assert.equal(s.view(delta, 1100).ask, false, 'not again within half a second');
  assert.equal(s.refused, 0, 'skipped, not refused');
  const k = s.view(key, 1200);
  assert.ok(k.view && k.view.key, 'the keyframe decodes');
  // the next delta names a base this decoder does not hold: refused, one keyframe request
  const r1 = s.view(later, 1800);
  assert.equal(r1.view, undefined);
  assert.equal(r1.ask, true);
  assert.match(s.lastError, /does not hold/);
  assert.equal(s.view(delta, 1850).ask, false, 'deltas wait for the keyframe without asking again');
  assert.equal(s.refused, 1);
  const k2 = s.view(key, 1900);
  assert.ok(k2.view, 'a keyframe recovers');
  const d = s.view(delta, 1930);
  assert.ok(d.view, `the delta against it decodes: ${s.lastError}`);
  assert.equal(s.keys, 2);
  assert.ok(d.view.bits > 0 && d.view.bits < k.view.bits, `bits per particle: delta ${d.view.bits}, key ${k.view.bits}`);
});

test('v2 stream: id runs from sorted ids', () => {
  assert.deepEqual([...idRuns(new Uint32Array([0, 1, 2, 5, 6, 9]), 6)], [0, 3, 5, 2, 9, 1]);
  assert.deepEqual([...idRuns(new Uint32Array([]), 0)], []);
});

// The view's positions as the loop with Math.round computed them before the tables.
function boxRef(q, n, g, b) {
  const pos = new Uint16Array(3 * n);
  for (let a = 0; a < 3; a++) {
    const span = b[a + 3] - b[a], scale = span > 0 ? 65535 / span : 0, off = g.origin[a] - b[a], st = g.step;
    for (let k = 0; k < n; k++) {
      const v = Math.round((off + q[3 * k + a] * st) * scale);
      pos[3 * k + a] = v < 0 ? 0 : v > 65535 ? 65535 : v;
    }
  }
  return pos;
}

test('v2 stream: box positions by table equal the direct formula (grids wider and narrower than the box, ties, a flat axis)', () => {
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 4294967296);
  for (let t = 0; t < 40; t++) {
    const levels = [1 + Math.floor(rnd() * 3000), 1 + Math.floor(rnd() * 1500), 1 + Math.floor(rnd() * 800)];
    const g = { origin: [rnd() - 0.5, -rnd(), 0], step: Math.fround(0.001 + rnd() * 0.01), levels };
    const b = [0, 0, 0, 1 + rnd() * 10, 0.5 + rnd() * 5, t % 5 === 0 ? 0 : 0.2 + rnd() * 3]; // t % 5: a flat z (span 0)
    if (t % 7 === 0) { g.step = Math.fround(b[3] / 65535); g.origin = [0, 0, 0]; } // one level a 16-bit step: ties
    const n = 5000, q = new Uint16Array(3 * n);
    for (let i = 0; i < 3 * n; i++) q[i] = Math.floor(rnd() * levels[i % 3]);
    assert.deepEqual(boxPositions(q, n, g, b, new Uint16Array(3 * n)), boxRef(q, n, g, b), `case ${t}`);
  }
});

test('v2 stream: the WebAssembly decoder gives the views the oracle gives through the JavaScript view code (positions, id runs) on the golden payloads', () => {
  const js = new FrameStream((cap) => new FrameDecoder(cap)), wasm = new FrameStream(wasmDecoderFactory());
  js.reset(64); wasm.reset(64);
  const b = [-0.1, 0.05, 0, 1.7, 0.9, 0.45]; // a box narrower than the grid: clamping on both sides
  ['frame_v2_key', 'frame_v2_delta', 'frame_v2_add_remove'].forEach((name, i) => {
    const m = { tick: i, time: 0, n: 0, bounds: b, data: load(`${name}.bin`), key: i === 0, seq: 10 + i };
    const a = js.view(m, 0).view, w = wasm.view(m, 0).view;
    assert.ok(a && w, `${name} decodes (${js.lastError} ${wasm.lastError})`);
    assert.deepEqual([...w.pos], [...a.pos], `${name}: positions`);
    assert.deepEqual([...w.runs], [...a.runs], `${name}: id runs`);
    if (name === 'frame_v2_add_remove') assert.ok(a.runs.length >= 4, `${name}: gaps in the ids`);
  });
});

test('runs: expansion and equality', () => {
  assert.deepEqual([...expandRuns(new Uint32Array([0, 3, 5, 2, 9, 1]))], [0, 1, 2, 5, 6, 9]);
  assert.deepEqual([...expandRuns(new Uint32Array([]))], []);
  assert.ok(runsEqual(new Uint32Array([1, 2]), new Uint32Array([1, 2])));
  assert.ok(!runsEqual(new Uint32Array([1, 2]), new Uint32Array([1, 3])));
  assert.ok(!runsEqual(null, new Uint32Array([1, 3])));
});
