// golden.test.mjs - the JavaScript side of protocol/golden: @msgpack/msgpack
// (what the browser uses) decodes every golden vector to its meaning, and the
// binary frame fields can be viewed as typed arrays without copying.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '@msgpack/msgpack';
import { ROOT } from './lib.mjs';
import { FrameDecoder } from '../web/oracle/frame_decoder.js';
import { decodeObstacleMesh } from '../../web-client/src/obstacle_mesh.js';

const dir = join(ROOT, 'protocol', 'golden');
const { vectors, protocol_version: version, obstacle_meshes: obstacleMeshes } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8'));

function load(file) {
  const b = readFileSync(join(dir, file));
  // Copy into a fresh ArrayBuffer at offset 0, as a browser WebSocket delivers it.
  const ab = new ArrayBuffer(b.length);
  new Uint8Array(ab).set(b);
  return new Uint8Array(ab);
}

test('golden: protocol version is 2 and there are vectors for every message kind', () => {
  assert.equal(version, 2);
  const files = vectors.filter((v) => v.file).map((v) => v.file);
  for (const f of ['s2c_hello', 's2c_frame', 's2c_param', 's2c_scene', 's2c_state', 's2c_obstacles', 's2c_reply_push', 's2c_reply_error',
    'c2s_push', 'c2s_set_param', 'c2s_load_scene', 'c2s_pause', 'c2s_resume', 'c2s_step', 'c2s_emitter', 'c2s_cursor'])
    assert.ok(files.includes(`${f}.msgpack`), f);
});

for (const v of vectors.filter((x) => x.file && x.direction === 'client_to_server')) {
  test(`golden: ${v.file} decodes to its meaning`, () => {
    assert.deepEqual(decode(load(v.file)), v.expect);
  });
}

for (const v of vectors.filter((x) => x.file && x.direction === 'server_to_client')) {
  test(`golden: ${v.file} decodes to its meaning`, () => {
    const bytes = load(v.file);
    const m = decode(bytes);
    if (m.type !== 'frame') {
      assert.deepEqual(m, v.expect);
      return;
    }
    const { data, ...rest } = m;
    for (const k of Object.keys(rest)) if (k.startsWith('_')) delete rest[k]; // alignment padding
    const { decoded: want, ...eRest } = v.expect;
    assert.deepEqual(rest, eRest);
    // data is a view into the message (no copy), 4-byte aligned
    assert.equal(data.buffer, bytes.buffer);
    assert.ok(data.byteLength === 0 || data.byteOffset % 4 === 0, 'data payload aligned');
    // ... and the v2 payload decodes to what PROTOCOL.md says the inputs give
    const f = new FrameDecoder(16).decode(data);
    assert.equal(f.n, m.n);
    assert.deepEqual([...f.id.subarray(0, f.n)], want.ids);
    assert.deepEqual([...f.q.subarray(0, 3 * f.n)], want.q);
    assert.deepEqual([...f.mat.subarray(0, f.n)], want.mat);
    assert.deepEqual([...f.temp.subarray(0, f.n)], want.temp);
    assert.deepEqual({ origin: [...f.grid.origin], step: f.grid.step, levels: [...f.grid.levels] }, want.grid);
    // Temperatures decode as T = temp_range[0] + byte, within half a degree inside the range.
    v.input.particles.forEach((p, k) => {
      const w = Math.min(Math.max(p.temp, m.temp_range[0]), m.temp_range[1]);
      assert.ok(Math.abs(m.temp_range[0] + f.temp[k] - w) <= 0.5, `particle ${p.id} temperature`);
    });
    // Positions inside the box decode within half a step (outside it, q is
    // clamped to the grid: checked against `decoded` above).
    const b = m.bounds;
    v.input.particles.forEach((p, k) => {
      for (let a = 0; a < 3; a++) {
        if (p.pos[a] < b[a] || p.pos[a] > b[a + 3]) continue;
        const w = p.pos[a];
        const got = f.grid.origin[a] + f.q[3 * k + a] * f.grid.step;
        assert.ok(Math.abs(got - w) <= f.grid.step / 2 + 1e-6, `particle ${p.id} axis ${a}: ${got} vs ${w}`);
      }
    });
  });
}

// An obstacle's placed mesh (PROTOCOL.md, "Obstacles on the page"): the
// page's decoder reads the bytes gen_vectors.py wrote from the layout.
for (const v of obstacleMeshes) {
  test(`golden: ${v.file} decodes to its meaning (the page's obstacle_mesh.js)`, () => {
    const bytes = load(v.file);
    const m = decodeObstacleMesh(bytes);
    const e = v.expect;
    assert.equal(bytes.length, e.length);
    assert.equal(m.hash, e.hash);
    assert.deepEqual([m.lo, m.hi], [e.lo, e.hi]);
    assert.equal(m.vertexCount, v.input.vertices.length);
    assert.deepEqual([...m.indices], e.indices);
    assert.equal(m.indices instanceof Uint32Array, e.wide);
    for (let i = 0; i < e.positions.length; i++) assert.ok(Math.abs(m.positions[i] - e.positions[i]) < 1e-6, `position ${i}`);
    // and every vertex within a step (half, plus float32 rounding) of the input's
    v.input.vertices.flat().forEach((x, i) => assert.ok(Math.abs(m.positions[i] - x) <= Math.max(m.step[i % 3], 1e-6), `vertex coordinate ${i}: ${m.positions[i]} vs ${x}`));
  });
}
