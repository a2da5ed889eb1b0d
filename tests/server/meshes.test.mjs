// meshes.test.mjs - meshes and mesh obstacles through the server: POST
// /api/meshes in each format it reads (binary and ASCII STL, OBJ, binary
// glTF, made here), GET /api/meshes; obstacles added, listed and removed over
// REST and the WebSocket; a dam break against a closed cube obstacle with no
// particle inside it; bad files and bad placements answered 400 (or 413)
// with the world unchanged; a snapshot's round trip keeping the obstacle;
// mesh bodies over REST and the WebSocket (listed with their mass, named in
// the frames, an open mesh refused); the roles that may upload and place;
// and the obstacles as viewers are sent them (the `obstacles` list, each
// placed mesh quantized, fetched by hash).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, connect, get, http, until, rawConnect, WAIT } from './lib.mjs';
import { decodeObstacleMesh } from '../../web-client/src/obstacle_mesh.js';

const TOKEN = 'mesh-admin';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
let s;

// ---- meshes made here --------------------------------------------------------
// A closed box of half extent a about the origin: corner k has bit 0, 1, 2
// for +x, +y, +z; each face two triangles, counter-clockwise from outside.
function cube(a = 0.5) {
  const V = [];
  for (let k = 0; k < 8; k++) V.push([(k & 1) ? a : -a, (k & 2) ? a : -a, (k & 4) ? a : -a]);
  const F = [[0, 4, 6, 2], [1, 3, 7, 5], [0, 1, 5, 4], [2, 6, 7, 3], [0, 2, 3, 1], [4, 5, 7, 6]];
  const T = [];
  for (const [p, q, r, t] of F) T.push([p, q, r], [p, r, t]);
  return { V, T };
}

function stlBinary({ V, T }, count = T.length) {
  const b = Buffer.alloc(84 + 50 * T.length);
  b.writeUInt32LE(count, 80);
  T.forEach((t, i) => {
    const at = 84 + 50 * i;
    t.forEach((v, j) => V[v].forEach((x, k) => b.writeFloatLE(x, at + 12 + 12 * j + 4 * k)));
  });
  return b;
}

function stlAscii({ V, T }) {
  const lines = ['solid cube'];
  for (const t of T) {
    lines.push('facet normal 0 0 0', 'outer loop');
    for (const v of t) lines.push(`vertex ${V[v].join(' ')}`);
    lines.push('endloop', 'endfacet');
  }
  lines.push('endsolid cube');
  return Buffer.from(lines.join('\n') + '\n');
}

function obj({ V, T }) {
  return Buffer.from(V.map((v) => `v ${v.join(' ')}`).concat(T.map((t) => `f ${t.map((i) => i + 1).join(' ')}`)).join('\n') + '\n');
}

// Binary glTF 2.0: one mesh of one indexed triangle primitive.
function glb({ V, T }) {
  const pos = Buffer.from(new Float32Array(V.flat()).buffer);
  const idx = Buffer.from(new Uint32Array(T.flat()).buffer);
  const bin = Buffer.concat([pos, idx]);
  const lo = [0, 1, 2].map((k) => Math.min(...V.map((v) => v[k]))), hi = [0, 1, 2].map((k) => Math.max(...V.map((v) => v[k])));
  const doc = {
    asset: { version: '2.0' }, scene: 0, scenes: [{ nodes: [0] }], nodes: [{ mesh: 0 }],
    meshes: [{ primitives: [{ attributes: { POSITION: 0 }, indices: 1, mode: 4 }] }],
    accessors: [
      { bufferView: 0, componentType: 5126, count: V.length, type: 'VEC3', min: lo, max: hi },
      { bufferView: 1, componentType: 5125, count: 3 * T.length, type: 'SCALAR' },
    ],
    bufferViews: [{ buffer: 0, byteOffset: 0, byteLength: pos.length }, { buffer: 0, byteOffset: pos.length, byteLength: idx.length }],
    buffers: [{ byteLength: bin.length }],
  };
  let json = Buffer.from(JSON.stringify(doc));
  json = Buffer.concat([json, Buffer.alloc((4 - (json.length % 4)) % 4, 0x20)]);
  const head = Buffer.alloc(12), jh = Buffer.alloc(8), bh = Buffer.alloc(8);
  head.writeUInt32LE(0x46546c67, 0); head.writeUInt32LE(2, 4); head.writeUInt32LE(12 + 8 + json.length + 8 + bin.length, 8);
  jh.writeUInt32LE(json.length, 0); jh.writeUInt32LE(0x4e4f534a, 4);
  bh.writeUInt32LE(bin.length, 0); bh.writeUInt32LE(0x004e4942, 4);
  return Buffer.concat([head, jh, json, bh, bin]);
}

// POST of raw bytes with a Content-Type.
async function upload(bytes, type, { room, headers = ADMIN } = {}) {
  const res = await fetch(`${s.base}${room ? `/api/rooms/${room}` : '/api'}/meshes`, {
    method: 'POST', body: bytes, headers: { 'content-type': type, ...headers }, signal: AbortSignal.timeout(WAIT),
  });
  const text = await res.text();
  let json = null;
  try { json = JSON.parse(text); } catch { json = null; }
  return { status: res.status, json, text };
}

const post = (path, body, headers = ADMIN) => http(s, 'POST', path, { body, headers });
const meshes = async () => (await get(s, '/api/meshes')).json.meshes;
const obstacles = async () => (await get(s, '/api/obstacles')).json.obstacles;

before(async () => {
  s = await startServer(['--particles', '3000', '--token', TOKEN]);
  // the test's own world: a dam break of 3000 particles (the mesh tests leave the particles alone)
  const r = await post('/api/scene', { name: 'dam_break', particles: 3000 });
  assert.equal(r.status, 200, r.text);
});
after(async () => { await stopAll(); });

let cubeId = 0;

test('a mesh in each format: binary and ASCII STL, OBJ, binary glTF; GET /api/meshes lists them', async () => {
  const c = cube();
  const ids = [];
  for (const [bytes, type] of [[stlBinary(c), 'model/stl'], [stlAscii(c), 'model/stl'], [obj(c), 'model/obj'], [glb(c), 'model/gltf-binary']]) {
    const r = await upload(bytes, type);
    assert.equal(r.status, 200, `${type}: ${r.text}`);
    assert.deepEqual([r.json.triangles, r.json.vertices, r.json.closed, r.json.format], [12, 8, true, type], r.text);
    assert.deepEqual(r.json.bounds, { min: [-0.5, -0.5, -0.5], max: [0.5, 0.5, 0.5] });
    ids.push(r.json.id);
  }
  assert.equal(new Set(ids).size, 4, 'four ids');
  const listed = await meshes();
  assert.deepEqual(listed.map((m) => m.id), ids);
  cubeId = ids[0];
  // an open mesh (a cube without its top) is held as a thin shell: closed false
  const open = cube();
  open.T = open.T.filter((_, i) => i !== 6 && i !== 7);
  const r = await upload(stlBinary(open), 'model/stl');
  assert.equal(r.status, 200, r.text);
  assert.deepEqual([r.json.triangles, r.json.closed], [10, false]);
});

test('bad files: 400 with the reason (413 past --mesh-max-mb), and nothing stored', async () => {
  const before0 = await meshes();
  const c = cube();
  const nan = cube();
  nan.V[3] = [NaN, 0.5, -0.5];
  const flat = cube();
  flat.T[0] = [0, 0, 4];
  const many = { V: c.V, T: Array.from({ length: 200001 }, (_, i) => c.T[i % 12]) };
  const cases = [
    ['truncated binary STL', stlBinary(c).subarray(0, 84 + 50 * 5 + 20), 'model/stl', /mesh/],
    ['a NaN vertex', stlBinary(nan), 'model/stl', /mesh|finite|nan/i],
    ['a zero-area triangle', stlAscii(flat), 'model/stl', /degenerate|zero|area|mesh/i],
    ['200001 triangles', stlBinary(many), 'model/stl', /200000|triangles/],
    ['not a mesh (text as STL)', Buffer.from('hello, world\n'), 'model/stl', /mesh/],
    ['not a mesh (bytes as glTF)', Buffer.from('glTF but not really, just bytes'), 'model/gltf-binary', /mesh/],
    ['a truncated glTF', glb(c).subarray(0, 100), 'model/gltf-binary', /mesh/],
    ['PLY', Buffer.from('ply\nformat ascii 1.0\nelement vertex 0\nend_header\n'), 'application/ply', /PLY is off/],
    ['JSON', Buffer.from('{}'), 'application/json', /not a mesh this server reads/],
  ];
  for (const [what, bytes, type, why] of cases) {
    const r = await upload(bytes, type);
    assert.equal(r.status, 400, `${what}: ${r.status} ${r.text}`);
    assert.equal(r.json.code, 'bad_request', what);
    assert.match(r.json.error, why, what);
    t_note(what, r.json.error);
  }
  // past --mesh-max-mb: answered on the headers, before any of the body is read
  const big = await new Promise((resolve, reject) => {
    let got = '';
    const sock = rawConnect(s.port, () => sock.write(`POST /api/meshes HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: model/stl\r\n` +
      `Authorization: Bearer ${TOKEN}\r\nContent-Length: ${(16 << 20) + 1}\r\n\r\n`));
    sock.setTimeout(WAIT, () => { sock.destroy(); reject(new Error(`no answer: ${got}`)); });
    sock.on('data', (d) => { got += d; if (/\r\n\r\n[\s\S]*\}/.test(got)) { sock.destroy(); resolve(got); } });
    sock.on('error', reject);
    sock.on('close', () => resolve(got));
  });
  assert.match(big, /^HTTP\/1\.1 413/, big);
  assert.match(big, /too large/);
  assert.deepEqual(await meshes(), before0, 'the store is as it was');
});
function t_note(what, why) { process.stdout.write(`# ${what.padEnd(28)} -> ${why.slice(0, 110)}\n`); }

test('obstacles: add, list, remove over REST; bad placements are 400 and change nothing', async () => {
  const r = await post('/api/obstacles', { mesh: cubeId, pos: [1.5, 0.3, 0.3], scale: 0.2 });
  assert.equal(r.status, 200, r.text);
  const id = r.json.id;
  let list = await obstacles();
  assert.equal(list.length, 1);
  const o = list[0];
  assert.deepEqual([o.id, o.closed, o.triangles, o.scale.toFixed(3)], [id, true, 12, '0.200']);
  assert.ok(Math.abs(o.bounds.min[0] - 1.4) < 1e-5 && Math.abs(o.bounds.max[1] - 0.4) < 1e-5, JSON.stringify(o.bounds));
  const bad = [
    [{ mesh: 999999, pos: [1, 0.3, 0.3] }, 404, /unknown mesh/],
    [{ mesh: cubeId, pos: [1, 0.3, 0.3], scale: 0 }, 400, /scale/],
    [{ mesh: cubeId, pos: [1, 0.3, 0.3], rot: [0, 0, 0, 0] }, 400, /rot/],
    [{ mesh: cubeId, pos: [500, 500, 500], scale: 0.2 }, 400, /outside the domain/],
    [{ mesh: cubeId, fit: true, scale: 2 }, 400, /not both/],
    [{ mesh: cubeId }, 400, /missing field 'pos'/],
    [{ mesh: cubeId, pos: [1, 'x', 0.3] }, 400, /pos/],
    [{ mesh: cubeId, pos: [1, 0.3, 0.3], colour: 'red' }, 400, /unknown field/],
  ];
  for (const [body, status, why] of bad) {
    const b = await post('/api/obstacles', body);
    assert.equal(b.status, status, `${JSON.stringify(body)}: ${b.text}`);
    assert.match(b.json.error, why, JSON.stringify(body));
  }
  assert.deepEqual(await obstacles(), list, 'the refused placements changed nothing');
  // fit: the mesh takes half of the box on its tightest axis, centred in the box
  const f = await post('/api/obstacles', { mesh: cubeId, fit: true });
  assert.equal(f.status, 200, f.text);
  list = await obstacles();
  const fitted = list.find((x) => x.id === f.json.id);
  const c = new Client0();
  const hello = await c.hello();
  const [lx, ly, lz, hx, hy, hz] = hello.bounds;
  const half = 0.5 * Math.min(hx - lx, hy - ly, hz - lz);
  const side = fitted.bounds.max.map((x, k) => x - fitted.bounds.min[k]);
  for (const k of [0, 1, 2]) {
    assert.ok(Math.abs(side[k] - half) < 1e-4, `fitted side ${side[k]} vs ${half}`);
    assert.ok(Math.abs(0.5 * (fitted.bounds.max[k] + fitted.bounds.min[k]) - 0.5 * ([lx, ly, lz][k] + [hx, hy, hz][k])) < 1e-4, 'centred');
  }
  c.close();
  for (const x of [id, f.json.id]) {
    const d = await http(s, 'DELETE', `/api/obstacles/${x}`, { headers: ADMIN });
    assert.equal(d.status, 200, d.text);
    assert.equal(d.json.id, x);
  }
  const again = await http(s, 'DELETE', `/api/obstacles/${id}`, { headers: ADMIN });
  assert.equal(again.status, 404);
  assert.deepEqual(await obstacles(), []);
});

// A WebSocket client on the default room with the token (its hello has the box).
class Client0 {
  async hello() {
    this.c = await connect(s, { url: `${s.wsUrl}?token=${TOKEN}` });
    return this.c.next((m) => m.type === 'hello');
  }
  close() { this.c.close(); }
}

test('obstacles over the WebSocket: obstacle_add and obstacle_remove', async () => {
  const c = await connect(s, { url: `${s.wsUrl}?token=${TOKEN}` });
  await c.next((m) => m.type === 'hello');
  const r = await c.command({ type: 'obstacle_add', mesh: cubeId, pos: [1.5, 0.3, 0.3], rot: [1, 0, 0, 0], scale: 0.1 });
  assert.equal(r.ok, true, r.error);
  assert.ok(Number.isInteger(r.id));
  assert.deepEqual((await obstacles()).map((o) => o.id), [r.id]);
  const bad = await c.command({ type: 'obstacle_add', mesh: cubeId, pos: [1.5, 0.3, 0.3], scale: -1 });
  assert.equal(bad.ok, false);
  assert.equal(bad.code, 'bad_request');
  const rm = await c.command({ type: 'obstacle_remove', id: r.id });
  assert.equal(rm.ok, true, rm.error);
  assert.deepEqual(await obstacles(), []);
  const list = await c.command({ type: 'get_obstacles' });
  assert.equal(list.ok, false);
  assert.match(list.error, /REST only/);
  c.close();
});

// The placed cube's corners: pos + rot (scale v), rot a unit quaternion (w, x, y, z).
function placed(V, pos, [w, x, y, z], scale) {
  return V.map((v) => {
    const p = v.map((c) => c * scale);
    const t = [2 * (y * p[2] - z * p[1]), 2 * (z * p[0] - x * p[2]), 2 * (x * p[1] - y * p[0])];
    const r = [p[0] + w * t[0] + (y * t[2] - z * t[1]), p[1] + w * t[1] + (z * t[0] - x * t[2]), p[2] + w * t[2] + (x * t[1] - y * t[0])];
    return r.map((c, k) => c + pos[k]);
  });
}

test('viewers are sent the obstacles: the list after hello, after an add and a remove; the mesh by its hash', async () => {
  const viewer = await connect(s); // no credential: the public role, which may watch
  await viewer.next((m) => m.type === 'hello');
  const first = await viewer.next((m) => m.type === 'obstacles');
  assert.deepEqual(first.obstacles, [], 'no obstacles yet');
  const rot = [Math.cos(Math.PI / 8), 0, Math.sin(Math.PI / 8), 0]; // 45 degrees about y
  const body = { mesh: cubeId, pos: [1.2, 0.35, 0.3], rot, scale: 0.2 };
  const r = await post('/api/obstacles', body);
  assert.equal(r.status, 200, r.text);
  const added = await viewer.next((m) => m.type === 'obstacles');
  assert.ok(added.version > first.version, `version ${added.version} after ${first.version}`);
  assert.equal(added.by, 0, 'a REST request');
  assert.equal(added.obstacles.length, 1);
  const o = added.obstacles[0];
  const listed = (await obstacles())[0];
  assert.deepEqual([o.id, o.triangles, o.vertices, o.closed], [r.json.id, 12, 8, true]);
  assert.match(o.hash, /^[0-9a-f]{16}$/);
  assert.deepEqual(o.bounds.map((x) => x.toFixed(5)), [...listed.bounds.min, ...listed.bounds.max].map((x) => x.toFixed(5)));
  // the mesh: quantized over its bounds, its hash the list's, every corner within a step of the placed cube's
  const res = await fetch(`${s.base}/api/obstacles/${o.id}/mesh`, { signal: AbortSignal.timeout(WAIT) });
  assert.equal(res.status, 200);
  assert.equal(res.headers.get('content-type'), 'application/x-fluid-mesh');
  const bytes = new Uint8Array(await res.arrayBuffer());
  const m = decodeObstacleMesh(bytes);
  assert.equal(m.hash, o.hash);
  assert.equal(bytes.length, ((48 + 6 * 8 + 3) & ~3) + 2 * 36, 'the layout: head, 16-bit positions, 16-bit indices');
  const want = placed(cube().V, body.pos, rot, body.scale);
  let worst = 0;
  for (let i = 0; i < m.vertexCount; i++) {
    const p = [0, 1, 2].map((k) => m.positions[3 * i + k]);
    const d = Math.min(...want.map((w) => Math.max(...[0, 1, 2].map((k) => Math.abs(w[k] - p[k]) / m.step[k]))));
    worst = Math.max(worst, d);
  }
  process.stdout.write(`# mesh of obstacle ${o.id}: ${bytes.length} bytes, step ${m.step.map((x) => x.toExponential(2))}, worst corner ${worst.toFixed(3)} steps off\n`);
  assert.ok(worst <= 1, `every corner within a quantization step (worst ${worst} steps)`);
  const flipped = bytes.slice(); flipped[60] ^= 1;
  assert.throws(() => decodeObstacleMesh(flipped), /hash/, 'a changed byte fails the hash');
  // the same placement again: the same bytes, the same hash (a page holding it fetches nothing)
  const r2 = await post('/api/obstacles', body);
  assert.equal(r2.status, 200, r2.text);
  const two = await viewer.next((x) => x.type === 'obstacles');
  assert.deepEqual(two.obstacles.map((x) => x.hash), [o.hash, o.hash]);
  // a viewer that comes now is sent the list right after its hello
  const late = await connect(s);
  await late.next((x) => x.type === 'hello');
  const lateList = await late.next((x) => x.type !== 'frame');
  assert.equal(lateList.type, 'obstacles', 'the first message after hello (frames aside)');
  assert.deepEqual(lateList.obstacles.map((x) => x.id), [r.json.id, r2.json.id]);
  late.close();
  // removed: the list without it, and its mesh is gone
  for (const id of [r.json.id, r2.json.id]) assert.equal((await http(s, 'DELETE', `/api/obstacles/${id}`, { headers: ADMIN })).status, 200);
  const one = await viewer.next((x) => x.type === 'obstacles');
  assert.deepEqual(one.obstacles.map((x) => x.id), [r2.json.id]);
  const none = await viewer.next((x) => x.type === 'obstacles');
  assert.deepEqual(none.obstacles, []);
  const gone = await get(s, `/api/obstacles/${r.json.id}/mesh`);
  assert.equal(gone.status, 404);
  assert.match(gone.json.error, /unknown obstacle/);
  // a scene load clears them: the list says so
  const r3 = await post('/api/obstacles', { mesh: cubeId, fit: true });
  assert.equal(r3.status, 200, r3.text);
  assert.equal((await viewer.next((x) => x.type === 'obstacles')).obstacles.length, 1);
  assert.equal((await post('/api/scene', { name: 'dam_break', particles: 3000 })).status, 200);
  const cleared = await viewer.next((x) => x.type === 'obstacles');
  assert.deepEqual(cleared.obstacles, []);
  viewer.close();
});

test('a dam break against a closed cube obstacle: no particle inside it; a snapshot brings it back', async () => {
  assert.equal((await post('/api/scene', { name: 'dam_break', particles: 3000 })).status, 200);
  const c = new Client0();
  const hello = await c.hello();
  c.close();
  const [lx, ly, lz, hx, , hz] = hello.bounds;
  const side = 0.3 * Math.min(hx - lx, hz - lz);
  const centre = [lx + 0.6 * (hx - lx), ly + side / 2, (lz + hz) / 2];
  const r = await post('/api/obstacles', { mesh: cubeId, pos: centre, scale: side });
  assert.equal(r.status, 200, r.text);
  const tol = 0.25 * hello.spacing; // the distance field's sampling; a particle that crossed the wall is deeper
  const inside = (p) => [0, 1, 2].every((k) => Math.abs(p[k] - centre[k]) < side / 2 - tol);
  const t0 = (await get(s, '/api/stats')).json;
  let checks = 0, reached = 0, lastTick = -1;
  await until(async () => {
    const page = (await get(s, '/api/particles?offset=0&limit=10000')).json;
    if (page.tick >= lastTick + 10) { // every 10 ticks at most
      lastTick = page.tick;
      checks++;
      let near = 0;
      for (let i = 0; i < page.count; i++) {
        const p = page.positions[i];
        assert.ok(!inside(p), `particle ${page.ids[i]} inside the cube at tick ${page.tick}: ${p}`);
        if ([0, 1, 2].every((k) => Math.abs(p[k] - centre[k]) < side / 2 + 2 * hello.spacing)) near++;
      }
      reached = Math.max(reached, near);
    }
    return (await get(s, '/api/stats')).json.sim_time >= t0.sim_time + 3;
  }, 'three simulated seconds', { everyMs: 20 });
  process.stdout.write(`# ${checks} checks of 3000 particles over 3 s: none inside; up to ${reached} against the cube\n`);
  assert.ok(checks >= 5, `${checks} checks`);
  assert.ok(reached > 20, `the water reached the cube (${reached} particles against it)`);
  // the snapshot carries it: removed, then restored
  const snap = await fetch(`${s.base}/api/snapshot`, { headers: ADMIN });
  const doc = Buffer.from(await snap.arrayBuffer());
  assert.equal(snap.status, 200);
  const before0 = await obstacles();
  const viewer = await connect(s);
  await viewer.next((m) => m.type === 'obstacles');
  assert.equal((await http(s, 'DELETE', `/api/obstacles/${r.json.id}`, { headers: ADMIN })).status, 200);
  assert.deepEqual(await obstacles(), []);
  assert.deepEqual((await viewer.next((m) => m.type === 'obstacles')).obstacles, []);
  const back = await fetch(`${s.base}/api/snapshot`, { method: 'POST', body: doc, headers: { 'content-type': 'application/msgpack', ...ADMIN } });
  assert.equal(back.status, 200, await back.text());
  // viewers are told: the restored obstacle, its mesh served again
  const restored = await viewer.next((m) => m.type === 'obstacles');
  viewer.close();
  assert.deepEqual(restored.obstacles.map((o) => o.id), [r.json.id]);
  const again = await fetch(`${s.base}/api/obstacles/${r.json.id}/mesh`);
  assert.equal(decodeObstacleMesh(new Uint8Array(await again.arrayBuffer())).hash, restored.obstacles[0].hash);
  const after0 = await obstacles();
  assert.deepEqual(after0.map(({ id, pos, rot, scale, bounds, grid, cell }) => ({ id, pos, rot, scale, bounds, grid, cell })),
    before0.map(({ id, pos, rot, scale, bounds, grid, cell }) => ({ id, pos, rot, scale, bounds, grid, cell })));
});

test('mesh bodies: a closed cube body over REST and the WebSocket, listed with its mass, falling; an open mesh refused', async () => {
  assert.equal((await post('/api/scene', { name: 'dam_break', particles: 3000 })).status, 200);
  const c = await connect(s, { url: `${s.wsUrl}?token=${TOKEN}` });
  const hello = await c.next((m) => m.type === 'hello');
  const [lx, ly, lz, hx, hy, hz] = hello.bounds;
  // a cube of side 0.1 m (the unit-cube mesh scaled by 0.1) high over the dry end of the tank
  const at = [lx + 0.85 * (hx - lx), ly + 0.8 * (hy - ly), (lz + hz) / 2];
  const r = await post('/api/bodies', { shape: 'mesh', mesh: cubeId, pos: at, scale: 0.1, density: 500 });
  assert.equal(r.status, 200, r.text);
  const id = r.json.id;
  let b = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === id);
  assert.equal(b.shape, 'mesh');
  // mass = density x volume: 500 kg/m^3 x (0.1 m)^3
  assert.ok(Math.abs(b.mass - 0.5) < 1e-4, `mass ${b.mass}`);
  assert.equal(b.density, 500);
  for (const k of [0, 1, 2]) assert.ok(Math.abs(b.size[k] - 0.05) < 1e-5, `half extents ${b.size}`);
  process.stdout.write(`# mesh body ${id}: mass ${b.mass} kg, half extents ${b.size}, at ${b.pos}\n`);
  // the frames name its shape
  const f = await c.next((m) => m.type === 'frame' && m.bodies.some((x) => x.id === id));
  assert.equal(f.bodies.find((x) => x.id === id).shape, 'mesh');
  // it falls (gravity) and stays in the tank
  const y0 = b.pos[1];
  await until(async () => {
    b = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === id);
    return b.pos[1] < y0 - 0.2;
  }, 'the mesh body falls');
  assert.ok(b.pos.every((x, k) => x >= hello.bounds[k] - 1e-3 && x <= hello.bounds[k + 3] + 1e-3), `in the box: ${b.pos}`);
  // the same over the WebSocket: body_create with shape mesh, a rotation and a scale
  const w = await c.command({ type: 'body_create', shape: 'mesh', mesh: cubeId, pos: [at[0] - 0.3, at[1], at[2]], rot: [0.9239, 0.3827, 0, 0], scale: 0.08, density: 800 });
  assert.equal(w.ok, true, w.error);
  const wb = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === w.id);
  assert.equal(wb.shape, 'mesh');
  assert.ok(Math.abs(wb.mass - 800 * 0.08 ** 3) < 1e-4, `mass ${wb.mass}`);
  // refusals: an open mesh (what is open named), an unknown mesh, size with a mesh, mesh with another shape
  const open = cube();
  open.T = open.T.filter((_, i) => i !== 6 && i !== 7);
  const openId = (await upload(stlBinary(open), 'model/stl')).json.id;
  const before0 = (await get(s, '/api/bodies')).json.bodies.map((x) => x.id);
  const bad = [
    [{ shape: 'mesh', mesh: openId, pos: at, scale: 0.1 }, 400, /not closed: edge \d+-\d+ at \(.*\) of triangle \d+ borders no other triangle/],
    [{ shape: 'mesh', mesh: 999999, pos: at }, 404, /unknown mesh 999999/],
    [{ shape: 'mesh', pos: at }, 400, /missing field 'mesh'/],
    [{ shape: 'mesh', mesh: cubeId, size: [0.1, 0.1, 0.1], pos: at }, 400, /takes no 'size'/],
    [{ shape: 'box', mesh: cubeId, size: [0.1, 0.1, 0.1], pos: at }, 400, /'mesh' and 'scale' are a mesh body's/],
    [{ shape: 'box', pos: at }, 400, /missing field 'size'/],
    [{ shape: 'mesh', mesh: cubeId, pos: at, scale: 0 }, 400, /'scale' must be in/],
    [{ shape: 'mesh', mesh: cubeId, pos: at, scale: 100 }, 400, /half extents/],
  ];
  for (const [body, status, why] of bad) {
    const x = await post('/api/bodies', body);
    assert.equal(x.status, status, `${JSON.stringify(body)}: ${x.text}`);
    assert.match(x.json.error, why, JSON.stringify(body));
    t_note(JSON.stringify(body).slice(0, 28), x.json.error);
  }
  const ws = await c.command({ type: 'body_create', shape: 'mesh', mesh: openId, pos: at });
  assert.equal(ws.ok, false);
  assert.equal(ws.code, 'bad_request');
  assert.match(ws.error, /not closed/);
  assert.deepEqual((await get(s, '/api/bodies')).json.bodies.map((x) => x.id), before0, 'the refusals added no body');
  // a snapshot carries the mesh bodies: removed, then restored with their shape, mass and size
  assert.equal((await post('/api/pause', {})).status, 200);
  const kept = (await get(s, '/api/bodies')).json.bodies;
  const snap = await fetch(`${s.base}/api/snapshot`, { headers: ADMIN });
  assert.equal(snap.status, 200);
  const doc = Buffer.from(await snap.arrayBuffer());
  for (const x of kept) assert.equal((await http(s, 'DELETE', `/api/bodies/${x.id}`, { headers: ADMIN })).status, 200);
  const back = await fetch(`${s.base}/api/snapshot`, { method: 'POST', body: doc, headers: { 'content-type': 'application/msgpack', ...ADMIN } });
  assert.equal(back.status, 200, await back.text());
  const pick = ({ id, shape, mass, size, pos, rot }) => ({ id, shape, mass, size, pos, rot });
  assert.deepEqual((await get(s, '/api/bodies')).json.bodies.map(pick), kept.map(pick));
  assert.equal((await post('/api/resume', {})).status, 200);
  c.close();
});

test('roles: uploading, placing and removing need a player; a viewer may list', async () => {
  assert.equal((await post('/api/rooms', { name: 'mr', scene: 'dam_break', particles: 1000, public_role: 'viewer' })).status, 201);
  const inv = {};
  for (const role of ['player', 'editor']) inv[role] = { authorization: `Bearer ${(await post('/api/rooms/mr/invites', { role })).json.token}` };
  const stl = stlBinary(cube());
  const v = await upload(stl, 'model/stl', { room: 'mr', headers: {} });
  assert.equal(v.status, 403, v.text);
  assert.match(v.json.error, /'POST \/api\/meshes' needs the player role; this connection is a viewer/);
  assert.deepEqual((await get(s, '/api/rooms/mr/meshes')).json.meshes, [], 'the refused upload stored nothing');
  const e = await upload(stl, 'model/stl', { room: 'mr', headers: inv.player });
  assert.equal(e.status, 200, e.text);
  assert.deepEqual((await get(s, '/api/meshes')).json.meshes.some((m) => m.id === e.json.id && m.triangles === 12), true,
    'the default room has meshes of its own (ids count per room)');
  const place = { mesh: e.json.id, pos: [0.5, 0.3, 0.3], scale: 0.1 };
  const pv = await http(s, 'POST', '/api/rooms/mr/obstacles', { body: place });
  assert.equal(pv.status, 403, pv.text);
  assert.match(pv.json.error, /needs the player role; this connection is a viewer/);
  assert.deepEqual((await get(s, '/api/rooms/mr/obstacles')).json.obstacles, []);
  const pp = await http(s, 'POST', '/api/rooms/mr/obstacles', { body: place, headers: inv.player });
  assert.equal(pp.status, 200, pp.text);
  const dv = await http(s, 'DELETE', `/api/rooms/mr/obstacles/${pp.json.id}`);
  assert.equal(dv.status, 403, dv.text);
  assert.equal((await get(s, '/api/rooms/mr/obstacles')).json.obstacles.length, 1);
  const dp = await http(s, 'DELETE', `/api/rooms/mr/obstacles/${pp.json.id}`, { headers: inv.player });
  assert.equal(dp.status, 200, dp.text);
  const body = { shape: 'mesh', mesh: e.json.id, pos: [0.5, 0.5, 0.3], scale: 0.1 };
  const bv = await http(s, 'POST', '/api/rooms/mr/bodies', { body });
  assert.equal(bv.status, 403, bv.text);
  assert.match(bv.json.error, /needs the player role; this connection is a viewer/);
  assert.deepEqual((await get(s, '/api/rooms/mr/bodies')).json.bodies, []);
  const bp = await http(s, 'POST', '/api/rooms/mr/bodies', { body, headers: inv.player });
  assert.equal(bp.status, 200, bp.text);
  assert.deepEqual((await get(s, '/api/rooms/mr/bodies')).json.bodies.map((x) => x.shape), ['mesh']);
  // the default room's mesh ids are not the room's: an id from another room is unknown here
  const other = await http(s, 'POST', '/api/rooms/mr/obstacles', { body: { ...place, mesh: 999 }, headers: inv.player });
  assert.equal(other.status, 404, other.text);
});
