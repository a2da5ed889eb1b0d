// obstacle_mesh.test.mjs - the page's obstacle meshes
// (web-client/src/obstacle_mesh.js): the quantized layout of PROTOCOL.md
// ("Obstacles on the page") decoded, 16- and 32-bit indices, the hash
// checked (a changed byte, a short or long buffer, an index past the
// vertices refused), flat triangles with unit face normals, and the cache:
// a mesh fetched once per hash, kept while an obstacle uses it, dropped
// after; an older list ignored; the file types the page sends.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { decodeObstacleMesh, flatTriangles, meshHash, ObstacleMeshes, HEAD, QMAX } from '../../../web-client/src/obstacle_mesh.js';
import { meshType } from '../../../web-client/src/obstacles.js';

// An encoder written from PROTOCOL.md's table (the server's is C; the golden
// files tie the two): V [[x, y, z]], T [[a, b, c]].
function encode(V, T) {
  const lo = [0, 1, 2].map((k) => Math.fround(Math.min(...V.map((v) => v[k]))));
  const hi = [0, 1, 2].map((k) => Math.fround(Math.max(...V.map((v) => v[k]))));
  const wide = V.length > 65536;
  const posEnd = (HEAD + 6 * V.length + 3) & ~3;
  const buf = new ArrayBuffer(posEnd + 3 * T.length * (wide ? 4 : 2));
  const dv = new DataView(buf), u8 = new Uint8Array(buf);
  u8.set([70, 83, 79, 77]);
  dv.setUint16(4, 1, true); dv.setUint16(6, wide ? 1 : 0, true);
  dv.setUint32(8, V.length, true); dv.setUint32(12, T.length, true);
  for (let k = 0; k < 3; k++) { dv.setFloat32(16 + 4 * k, lo[k], true); dv.setFloat32(28 + 4 * k, hi[k], true); }
  V.forEach((v, i) => v.forEach((x, k) => dv.setUint16(HEAD + 6 * i + 2 * k, hi[k] > lo[k] ? Math.round((Math.fround(x) - lo[k]) / (hi[k] - lo[k]) * QMAX) : 0, true)));
  T.flat().forEach((x, i) => (wide ? dv.setUint32(posEnd + 4 * i, x, true) : dv.setUint16(posEnd + 2 * i, x, true)));
  const h = meshHash(u8);
  dv.setUint32(40, parseInt(h.slice(8), 16), true);
  dv.setUint32(44, parseInt(h.slice(0, 8), 16), true);
  return { buf, hash: h };
}

const TET = { V: [[0, 0, 0], [1, 0, 0], [0, 2, 0], [0, 0, 3]], T: [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]] };

test('obstacle mesh: FNV-1a 64 in two halves matches BigInt arithmetic, skipping the hash bytes', () => {
  const bytes = Uint8Array.from({ length: 300 }, (_, i) => (i * 37 + 11) & 255);
  let h = 0xcbf29ce484222325n;
  bytes.forEach((b, i) => { if (i < 40 || i >= 48) h = ((h ^ BigInt(b)) * 0x100000001b3n) & 0xffffffffffffffffn; });
  assert.equal(meshHash(bytes), h.toString(16).padStart(16, '0'));
  assert.equal(meshHash(new Uint8Array(0)), 'cbf29ce484222325', 'the offset basis for no bytes');
  const other = bytes.slice(); other[42] ^= 0xff;
  assert.equal(meshHash(other), meshHash(bytes), 'the hash\'s own bytes do not count');
});

test('obstacle mesh: a tetrahedron decodes to its vertices within a step, its indices, its hash', () => {
  const { buf, hash } = encode(TET.V, TET.T);
  const m = decodeObstacleMesh(buf);
  assert.equal(m.hash, hash);
  assert.deepEqual([m.vertexCount, m.triangleCount], [4, 4]);
  assert.deepEqual([m.lo, m.hi], [[0, 0, 0], [1, 2, 3]]);
  assert.ok(m.indices instanceof Uint16Array);
  assert.deepEqual([...m.indices], TET.T.flat());
  TET.V.flat().forEach((x, i) => assert.ok(Math.abs(m.positions[i] - x) <= m.step[i % 3] / 2 + 1e-7, `coordinate ${i}`));
  assert.deepEqual(m.step.map((s) => s * QMAX), [1, 2, 3]);
});

test('obstacle mesh: past 65,536 vertices the indices are 32-bit', () => {
  const n = 65537 + 2, V = [];
  for (let i = 0; i < n; i++) V.push([i / n, (i % 7) / 7, (i % 3) / 3]);
  const T = [[0, 1, 65537], [65538, 2, 3]];
  const m = decodeObstacleMesh(encode(V, T).buf);
  assert.ok(m.indices instanceof Uint32Array);
  assert.deepEqual([...m.indices], T.flat());
});

test('obstacle mesh: bytes that are not one are refused, saying why', () => {
  const { buf } = encode(TET.V, TET.T);
  const u8 = new Uint8Array(buf);
  const changed = u8.slice(); changed[HEAD + 3] ^= 1;
  assert.throws(() => decodeObstacleMesh(changed), /hash to .* the head says/);
  assert.throws(() => decodeObstacleMesh(u8.slice(0, 20)), /shorter than its 48-byte head/);
  assert.throws(() => decodeObstacleMesh(u8.slice(0, u8.length - 2)), /take/);
  const magic = u8.slice(); magic[0] = 88;
  assert.throws(() => decodeObstacleMesh(magic), /magic/);
  const version = u8.slice(); version[4] = 2;
  assert.throws(() => decodeObstacleMesh(version), /version 2/);
  // an index past the vertices, with a hash that matches it
  const { buf: badIx } = encode(TET.V, [[0, 1, 9]]);
  assert.throws(() => decodeObstacleMesh(badIx), /index 9 of triangle 0 past its 4 vertices/);
});

test('obstacle mesh: flat triangles carry each face\'s unit normal, by the winding', () => {
  const m = decodeObstacleMesh(encode(TET.V, TET.T).buf);
  const f = flatTriangles(m);
  assert.equal(f.length, 4 * 3 * 6);
  const normal = (t) => [...f.slice(18 * t + 3, 18 * t + 6)].map((x) => Math.round(x * 1e4) / 1e4);
  assert.deepEqual(normal(0), [0, 0, -1], 'the z = 0 face, wound to face -z');
  assert.deepEqual(normal(1), [0, -1, 0]);
  assert.deepEqual(normal(3), [-1, 0, 0]);
  const n2 = normal(2);
  assert.ok(Math.abs(Math.hypot(...n2) - 1) < 1e-3 && n2.every((x) => x > 0), `the slanted face looks outwards: ${n2}`);
  for (let v = 0; v < 3; v++) assert.deepEqual(normal(0), [...f.slice(18 * 0 + 6 * v + 3, 18 * 0 + 6 * v + 6)].map((x) => Math.round(x * 1e4) / 1e4));
});

test('obstacle meshes: fetched once per hash, kept while used, dropped after; an older list is ignored', async () => {
  const a = encode(TET.V, TET.T), b = encode(TET.V.map(([x, y, z]) => [x + 1, y, z]), TET.T);
  const byId = { 1: a, 2: a, 3: b };
  const asked = [];
  let changes = 0;
  const errors = [];
  const om = new ObstacleMeshes(async (id) => { asked.push(id); return byId[id].buf; }, { onChange: () => changes++, onError: (e) => errors.push(e.message) });
  const entry = (id) => ({ id, hash: byId[id].hash, bounds: [0, 0, 0, 1, 1, 1], triangles: 4, vertices: 4, closed: true });
  const settle = () => new Promise((r) => setTimeout(r, 0));
  assert.equal(om.apply({ type: 'obstacles', version: 1, obstacles: [entry(1)] }), true);
  await settle();
  assert.deepEqual(asked, [1]);
  assert.deepEqual(om.drawable().map((d) => d.id), [1]);
  assert.equal(om.drawable()[0].flat.length, 4 * 18);
  // a second obstacle of the same mesh: nothing fetched
  om.apply({ type: 'obstacles', version: 2, obstacles: [entry(1), entry(2)] });
  await settle();
  assert.deepEqual(asked, [1]);
  assert.deepEqual(om.drawable().map((d) => d.id), [1, 2]);
  // an older list (sent before a newer one arrived) changes nothing
  assert.equal(om.apply({ type: 'obstacles', version: 1, obstacles: [] }), false);
  assert.equal(om.drawable().length, 2);
  // another mesh: fetched; the first dropped once no obstacle uses it
  om.apply({ type: 'obstacles', version: 3, obstacles: [entry(3)] });
  await settle();
  assert.deepEqual(asked, [1, 3]);
  assert.deepEqual([...om.meshes.keys()], [b.hash]);
  assert.equal(om.fetches, 2);
  // after a hello, any version is taken (a restarted room counts from 1 again)
  om.reset();
  assert.equal(om.apply({ type: 'obstacles', version: 1, obstacles: [] }), true);
  assert.deepEqual(om.drawable(), []);
  assert.equal(om.meshes.size, 0);
  assert.ok(changes >= 5, `${changes} changes told`);
  assert.deepEqual(errors, []);
});

test('obstacle meshes: a mesh whose bytes do not hash as listed is an error, and not drawn', async () => {
  const a = encode(TET.V, TET.T);
  const errors = [];
  const om = new ObstacleMeshes(async () => a.buf, { onError: (e) => errors.push(e.message) });
  om.apply({ version: 1, obstacles: [{ id: 7, hash: '0000000000000000' }] });
  await new Promise((r) => setTimeout(r, 0));
  assert.equal(errors.length, 1);
  assert.match(errors[0], /obstacle 7: its mesh now hashes to [0-9a-f]{16}, the list said 0000000000000000/);
  assert.deepEqual(om.drawable(), []);
});

test('mesh files: the Content-Type the page sends by extension', () => {
  assert.equal(meshType('part.STL'), 'model/stl');
  assert.equal(meshType('a.b.obj'), 'model/obj');
  assert.equal(meshType('scene.glb'), 'model/gltf-binary');
  assert.equal(meshType('model.ply'), null);
  assert.equal(meshType('stl'), null);
});
