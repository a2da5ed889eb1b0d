// decode.test.mjs - the client's decoder (web-client/src/decode.js, which
// uses @msgpack/msgpack as the browser does) on the golden vectors in protocol/.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeMessage, frameView, expandRuns, runsCount, runsEqual, particlePosition, centroid, PROTOCOL_VERSION } from '../../../web-client/src/decode.js';
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
    const f = frameView(m);
    assert.equal(f.copied, 0, 'positions and ids viewed without copying');
    assert.equal(f.pos.buffer, bytes.buffer, 'pos is a view into the message');
    assert.equal(f.runs.buffer, bytes.buffer, 'ids is a view into the message');
    assert.equal(f.mat.buffer, bytes.buffer, 'mat is a view into the message');
    assert.equal(f.n, v.expect.n);
    assert.equal(f.tick, v.expect.tick);
    assert.equal(f.time, v.expect.time);
    assert.equal(f.paused, v.expect.paused);
    assert.deepEqual(f.bounds, v.expect.bounds);
    assert.deepEqual(f.cursors, v.expect.cursors);
    assert.deepEqual(f.bodies, v.expect.bodies || []);
    assert.deepEqual([...f.pos], v.expect.pos_u16);
    assert.deepEqual([...f.runs], v.expect.ids_u32);
    assert.deepEqual([...f.mat], v.expect.mat_u8);
    assert.deepEqual([...f.temp], v.expect.temp_u8);
    assert.deepEqual([f.tempLo, f.tempHi], v.expect.temp_range);
    assert.equal(runsCount(f.runs), f.n);
    const ids = [...expandRuns(f.runs)];
    assert.deepEqual(ids, v.input.particles.map((p) => p.id));
    // Dequantized positions are the inputs (clamped to the box) within one step.
    v.input.particles.forEach((p, i) => {
      const got = particlePosition(f, i);
      for (let a = 0; a < 3; a++) {
        const want = Math.min(Math.max(p.pos[a], f.bounds[a]), f.bounds[a + 3]);
        assert.ok(Math.abs(got[a] - want) <= (f.bounds[a + 3] - f.bounds[a]) / 65535, `particle ${p.id} axis ${a}`);
      }
    });
    if (f.n) {
      const c = centroid(f);
      for (let a = 0; a < 3; a++) {
        let s = 0;
        for (let i = 0; i < f.n; i++) s += particlePosition(f, i)[a];
        assert.ok(Math.abs(c[a] - s / f.n) < 1e-9);
      }
    }
  });
}

test('golden: the hello vector passes the client version check; another version is refused clearly', () => {
  const h = decodeMessage(load('s2c_hello.msgpack'));
  assert.equal(checkHello(h), null);
  const msg = checkHello({ ...h, version: 2 });
  assert.match(msg, /protocol version 2/);
  assert.match(msg, /version 1/);
});

test('decode: a frame whose sizes disagree with n is refused', () => {
  const m = decodeMessage(load('s2c_frame.msgpack'));
  assert.throws(() => frameView({ ...m, n: m.n + 1 }), /sizes/);
  assert.throws(() => decodeMessage(new Uint8Array([0x93, 1, 2, 3])), /map with a type/);
});

test('decode: misaligned bins are copied rather than misread', () => {
  const m = decodeMessage(load('s2c_frame.msgpack'));
  const shift = (u) => { const b = new Uint8Array(u.byteLength + 1); b.set(u, 1); return b.subarray(1); };
  const f = frameView({ ...m, pos: shift(m.pos), ids: shift(m.ids) });
  assert.equal(f.copied, 2);
  assert.deepEqual([...f.pos], [...frameView(m).pos]);
  assert.deepEqual([...f.runs], [...frameView(m).runs]);
});

test('runs: expansion and equality', () => {
  assert.deepEqual([...expandRuns(new Uint32Array([0, 3, 5, 2, 9, 1]))], [0, 1, 2, 5, 6, 9]);
  assert.deepEqual([...expandRuns(new Uint32Array([]))], []);
  assert.ok(runsEqual(new Uint32Array([1, 2]), new Uint32Array([1, 2])));
  assert.ok(!runsEqual(new Uint32Array([1, 2]), new Uint32Array([1, 3])));
  assert.ok(!runsEqual(null, new Uint32Array([1, 3])));
});
