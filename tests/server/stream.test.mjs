// stream.test.mjs - the WebSocket stream against the real binary: hello,
// frames, commands, broadcasts, many clients.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, connect, get, http, frameArrays, dequantize, deadline } from './lib.mjs';

let s;
before(async () => { s = await startServer(['--particles', '3000', '--frame-hz', '30', '--tick-hz', '60']); });
after(async () => { await stopAll(); });

async function resume() { await http(s, 'POST', '/api/resume'); }
async function pause() { await http(s, 'POST', '/api/pause'); }

async function allParticles() {
  const out = { ids: [], positions: [], velocities: [], materials: [] };
  let total = Infinity, tick = null;
  for (let offset = 0; offset < total; offset += 10000) {
    const r = await get(s, `/api/particles?offset=${offset}&limit=10000`);
    assert.equal(r.status, 200);
    total = r.json.total;
    if (tick === null) tick = r.json.tick;
    for (const k of ['ids', 'positions', 'velocities', 'materials']) out[k].push(...r.json[k]);
  }
  return { ...out, tick, total };
}

test('hello arrives first and matches /api/stats and /api/materials', async () => {
  const c = await connect(s);
  const hello = await c.next();
  assert.equal(hello.type, 'hello');
  const stats = (await get(s, '/api/stats')).json;
  const mats = (await get(s, '/api/materials')).json.materials;
  assert.equal(hello.version, 2);
  // the frames' quantization step: at most 1/1024 of the box's longest side and 1/10 of the spacing
  const longest = Math.max(...[0, 1, 2].map((a) => hello.bounds[a + 3] - hello.bounds[a]));
  assert.ok(hello.frame_step > 0 && hello.frame_step <= longest / 1024 * 1.0001 && hello.frame_step <= hello.spacing / 10 * 1.0001,
    `frame_step ${hello.frame_step}`);
  assert.ok(Number.isInteger(hello.client_id) && hello.client_id > 0);
  assert.match(hello.colour, /^#[0-9a-f]{6}$/);
  assert.equal(hello.tick_hz, stats.tick_hz);
  assert.equal(hello.frame_hz, stats.frame_hz);
  assert.equal(hello.particles, stats.particles);
  assert.equal(hello.scene, stats.scene);
  assert.equal(hello.paused, stats.paused);
  assert.equal(hello.solver, stats.solver);
  assert.equal(hello.bounds.length, 6);
  assert.deepEqual(hello.materials.map((m) => m.name), mats.map((m) => m.name));
  for (const m of mats)
    for (const [k, v] of Object.entries(m.params))
      assert.equal(hello.materials[m.index].params[k], v.value, `${m.name}.${k}`);
  assert.equal(hello.params.length, Object.keys(mats[0].params).length);
  c.close();
});

test('frames keep arriving in order, each decodable, the tick advancing, and decode to the particle count /api/stats reports', async () => {
  await resume();
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const first = await c.next((m) => m.type === 'frame');
  // the next 30 frames: seq and tick grow with every frame while the world runs
  let prev = first;
  for (let i = 0; i < 30; i++) {
    const g = await c.next((m) => m.type === 'frame');
    assert.ok(g.ids, `frame ${g.seq} decodes: ${g._refused}`);
    assert.ok(g.seq > prev.seq, `seq grows: ${prev.seq} -> ${g.seq}`);
    assert.ok(g.tick > prev.tick, `the tick advances: ${prev.tick} -> ${g.tick}`);
    prev = g;
  }
  const stats = (await get(s, '/api/stats')).json;
  const f = prev;
  assert.equal(f.n, stats.particles);
  const { posView, idList, mat } = frameArrays(f);
  assert.equal(posView.length, 3 * f.n);
  assert.equal(idList.length, f.n);
  assert.equal(mat.length, f.n);
  assert.ok(f.tick > first.tick, 'ticks advance');
  assert.ok(f.time > first.time, 'simulated time advances');
  for (let i = 1; i < idList.length; i++) assert.ok(idList[i] > idList[i - 1], 'ids increase');
  c.close();
});

test('a paused frame dequantizes to the positions /api/particles reports', async () => {
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const r = await c.command({ type: 'pause' });
  assert.equal(r.ok, true);
  const p = await allParticles();
  const f = await c.next((m) => m.type === 'frame' && m.tick === p.tick && m.paused);
  const { posView, idList, mat, grid } = frameArrays(f);
  assert.deepEqual(idList, p.ids);
  const b = f.bounds;
  let worst = 0;
  for (let k = 0; k < f.n; k++) {
    for (let a = 0; a < 3; a++) {
      const want = Math.min(Math.max(p.positions[k][a], b[a]), b[a + 3]);
      const err = Math.abs(dequantize(posView[3 * k + a], grid, a) - want) / grid.step;
      worst = Math.max(worst, err);
    }
    assert.equal(mat[k], p.materials[k]);
  }
  // within half a quantization step (plus float32 rounding of the REST positions)
  assert.ok(worst <= 0.501, `quantization error ${worst} steps`);
  c.close();
  await resume();
});

test('a WebSocket push changes the velocities of the particles in its radius, and only those', async () => {
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  assert.equal((await c.command({ type: 'pause' })).ok, true);
  const before = await allParticles();
  const centre = before.positions[Math.floor(before.total / 2)];
  const radius = 0.1, strength = 3, dir = [1, 2, 2]; // |dir| = 3
  const r = await c.command({ type: 'push', point: centre, radius, strength, direction: dir });
  assert.equal(r.ok, true, r.error);
  const after = await allParticles();
  assert.equal(after.tick, before.tick, 'paused: no step between');
  let inside = 0, edge = 0;
  for (let k = 0; k < before.total; k++) {
    const d = Math.hypot(...[0, 1, 2].map((a) => before.positions[k][a] - centre[a]));
    const dv = [0, 1, 2].map((a) => after.velocities[k][a] - before.velocities[k][a]);
    if (d < radius * 0.999) {
      inside++;
      const w = strength * (1 - (d / radius) ** 2);
      for (let a = 0; a < 3; a++) assert.ok(Math.abs(dv[a] - (w * dir[a]) / 3) < 1e-3 + 1e-3 * w, `particle ${k}: dv ${dv}`);
    } else if (d > radius * 1.001) {
      assert.deepEqual(dv, [0, 0, 0], `particle ${k} outside the radius moved`);
    } else {
      edge++; // on the rim, within float rounding: either is right
    }
  }
  assert.ok(inside > 0 && r.touched >= inside && r.touched <= inside + edge, `touched ${r.touched}, inside ${inside}, rim ${edge}`);
  c.close();
  await resume();
});

test('a REST parameter change reaches every WebSocket client and changes the behaviour', async () => {
  const clients = await Promise.all([connect(s), connect(s)]);
  for (const c of clients) await c.next((m) => m.type === 'hello');
  const water = (await get(s, '/api/materials')).json.materials.find((m) => m.name === 'water');
  const original = water.params.viscosity_linear.value;
  const run = async (param) => {
    // Same start state, 40 steps, then the particles.
    await http(s, 'POST', '/api/pause');
    assert.equal((await http(s, 'POST', '/api/scene', { body: { name: 'dam_break', particles: 3000 } })).status, 200);
    if (param !== undefined) {
      const r = await http(s, 'PATCH', '/api/materials/water', { body: { viscosity_linear: param } });
      assert.equal(r.status, 200, r.text);
      assert.equal(r.json.params.viscosity_linear, param);
    }
    const st = await http(s, 'POST', '/api/step', { body: { steps: 40 } });
    assert.equal(st.status, 200, st.text);
    return allParticles();
  };
  const a = await run();
  const b = await run();
  assert.deepEqual(a.positions, b.positions, 'the same parameters give the same motion');
  const c = await run(40);
  for (const cl of clients) {
    const m = await cl.next((x) => x.type === 'param' && x.material === 'water' && x.params.viscosity_linear === 40);
    assert.equal(m.by, 0, 'changed over REST');
  }
  const speed = (p) => p.velocities.reduce((acc, v) => acc + Math.hypot(...v), 0) / p.velocities.length;
  assert.notDeepEqual(c.positions, a.positions, 'the change alters the motion');
  assert.ok(speed(c) < speed(a), `more viscosity, slower flow (${speed(c)} vs ${speed(a)})`);
  assert.equal((await http(s, 'PATCH', '/api/materials/water', { body: { viscosity_linear: original } })).status, 200);
  for (const cl of clients)
    await cl.next((x) => x.type === 'param' && x.material === 'water' && x.params.viscosity_linear === original);
  await resume();
  for (const cl of clients) cl.close();
});

test('16 concurrent clients all receive frames and see each other\'s cursors', async () => {
  // one decodes its frames (as every page does); fifteen decoders in this one
  // process would take more CPU than a loaded test machine gives it, and the
  // test would measure this process, not the server
  const cs = await Promise.all(Array.from({ length: 16 }, (_, i) => connect(s, { decodeFrames: i === 7 })));
  const hellos = await Promise.all(cs.map((c) => c.next((m) => m.type === 'hello')));
  assert.equal(new Set(hellos.map((h) => h.client_id)).size, 16);
  cs[3].send({ type: 'cursor', rid: 0, pos: [0.25, 0.5, 0.125] });
  await Promise.all(cs.map(async (c) => {
    for (let i = 0; i < 5; i++) await c.next((m) => m.type === 'frame');
  }));
  const seen = await cs[7].next((m) => m.type === 'frame' && m.cursors.some((k) => k.id === hellos[3].client_id));
  const cur = seen.cursors.find((k) => k.id === hellos[3].client_id);
  assert.deepEqual(cur.pos, [0.25, 0.5, 0.125]);
  assert.equal(cur.colour, hellos[3].colour);
  assert.equal((await get(s, '/api/stats')).json.clients >= 16, true);
  cs[3].close();
  await cs[7].next((m) => m.type === 'frame' && !m.cursors.some((k) => k.id === hellos[3].client_id));
  for (const c of cs) c.close();
});

test('pause, resume, step and load_scene over WebSocket are broadcast to the others', async () => {
  const a = await connect(s), b = await connect(s);
  await a.next((m) => m.type === 'hello');
  const hb = await b.next((m) => m.type === 'hello');
  assert.equal((await a.command({ type: 'pause' })).ok, true);
  assert.equal((await b.next((m) => m.type === 'state')).paused, true);
  const t0 = (await get(s, '/api/stats')).json.tick;
  const st = await a.command({ type: 'step', steps: 5 });
  assert.equal(st.ok, true);
  assert.equal(st.tick, t0 + 5);
  assert.equal((await get(s, '/api/stats')).json.tick, t0 + 5);
  const ls = await a.command({ type: 'load_scene', name: 'drop', particles: 2000 });
  assert.equal(ls.ok, true, ls.error);
  const sc = await b.next((m) => m.type === 'scene');
  assert.equal(sc.scene, 'drop');
  assert.equal(sc.particles, ls.particles);
  const f = await b.next((m) => m.type === 'frame' && m.n === ls.particles);
  assert.equal(f.n, (await get(s, '/api/stats')).json.particles);
  assert.equal((await a.command({ type: 'resume' })).ok, true);
  assert.equal((await b.next((m) => m.type === 'state')).paused, false);
  const bad = await a.command({ type: 'step' });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /pause/);
  assert.ok(hb.scenes.includes('drop'));
  const e = await a.command({ type: 'emitter', slot: 0, pos: [0.5, 0.8, 0.5], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 200, cap: 50, material: 'water' });
  assert.equal(e.ok, true, e.error);
  assert.equal((await a.command({ type: 'emitter', slot: 0, enabled: false })).ok, true);
  a.close(); b.close();
  await http(s, 'POST', '/api/scene', { body: { name: 'dam_break', particles: 3000 } });
});

test('a protocol v1 client is closed with code 4001 and a reason that says to reload', async () => {
  const c = new (await import('./lib.mjs')).Client(s.wsUrl, { protocol: 'fluid.v1' });
  await c.opened;
  const closed = await c.closedWithin();
  assert.equal(closed?.code, 4001);
  assert.match(closed.reason, /fluid\.v1 is no longer served.*fluid\.v2.*reload/);
});

test('v2 frames: a keyframe first, then deltas; a keyframe request is answered by a keyframe', async () => {
  await resume();
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const first = await c.next((m) => m.type === 'frame');
  assert.equal(first.key, true, 'the first frame is a keyframe');
  assert.ok(first.ids, `decodes: ${first._refused}`);
  // then deltas, every frame decoded; a client that fell a stride behind (a
  // loaded host) is sent a keyframe instead (ws_frames.c, stuck()), so some
  // may be keys: read frames until 5 deltas came (a stream of keyframes only
  // fails at 50 frames)
  const later = [];
  while (later.filter((f) => !f.key).length < 5 && later.length < 50) later.push(await c.next((m) => m.type === 'frame'));
  const deltas = later.filter((f) => !f.key);
  assert.ok(later.every((f) => f.ids), 'then frames, each decoded');
  assert.equal(deltas.length, 5, `then deltas (${deltas.length} of ${later.length} frames)`);
  assert.ok(later.every((f, i) => f.seq > (i ? later[i - 1].seq : first.seq)), 'seq grows');
  const deltaBytes = deltas.reduce((a, f) => a + f.data.length, 0) / deltas.length;
  c.send({ type: 'keyframe', rid: 0 });
  const k = await c.next((m) => m.type === 'frame' && m.key);
  assert.ok(k.ids, 'the keyframe decodes');
  const after = await c.next((m) => m.type === 'frame');
  assert.ok(after.ids && !after.key, `a delta against the keyframe decodes: ${after._refused}`);
  assert.equal(c.refused, 0);
  // a keyframe request with a field it does not take is refused at the edge
  const r = await c.command({ type: 'keyframe', seq: 3 });
  assert.equal(r.ok, false);
  assert.match(r.error, /unknown field 'seq'/);
  assert.ok(deltaBytes < first.data.length * 4, 'deltas are not larger than keyframes');
  c.close();
});

test('a decoder that asks for a slower pace gets every 2nd (4th) frame, each decodable, and more again after a faster pace', async () => {
  await resume();
  const c = await connect(s);
  const hello = await c.next((m) => m.type === 'hello');
  await c.next((m) => m.type === 'frame' && m.ids);
  await c.next((m) => m.type === 'frame' && m.ids);
  const bad = await c.command({ type: 'pace', stride: 3 });
  assert.equal(bad.ok, false);
  assert.match(bad.error, /'stride' must be 1, 2 or 4/);
  const missing = await c.command({ type: 'pace' });
  assert.equal(missing.ok, false);
  assert.match(missing.error, /missing field 'stride'/);
  // A slower pace: after at most a few frames that bring its decoder onto the
  // pace's grid (it holds two frames a pace apart: the codings against the
  // frame 2 (4) back predict from those), only every 2nd (4th) frame, with no
  // keyframe (a keyframe off the grid used to start a keyframe loop)
  const paced = async (stride, count) => {
    c.send({ type: 'pace', stride, rid: 0 });
    let prev = await c.next((m) => m.type === 'frame' && m.ids), climb = 0;
    for (;;) {
      const f = await c.next((m) => m.type === 'frame');
      const gap = f.seq - prev.seq;
      prev = f;
      if (gap >= stride && f.seq % stride === 0) break;
      assert.ok(++climb <= 3, `on the grid of pace ${stride} within 3 frames`);
    }
    const got = [prev];
    for (let i = 1; i < count; i++) got.push(await c.next((m) => m.type === 'frame'));
    assert.ok(got.every((f) => f.ids), `every frame decodes: ${got.map((f) => f._refused).filter(Boolean)}`);
    const gaps = got.slice(1).map((f, i) => f.seq - got[i].seq);
    assert.ok(gaps.every((g) => g >= stride), `every ${stride === 2 ? '2nd' : '4th'} frame at most: seq gaps ${gaps} (${got.map((f) => f.seq + (f.key ? 'K' : ''))})`);
    assert.ok(got.every((f) => !f.key), `no keyframe at pace ${stride}: ${got.map((f) => f.seq + (f.key ? 'K' : ''))}`);
    return got;
  };
  await paced(2, 10);
  const me = (await http(s, 'GET', '/api/clients')).json.clients.find((k) => k.id === hello.client_id);
  assert.equal(me.pace, 2);
  assert.ok(me.stride >= 2, `stride ${me.stride}`);
  // every 4th at once
  await paced(4, 6);
  // faster: the server's judgement of the link brings it (after its 3 s
  // hold), through a bridge, to every 2nd and then every frame (the deadline
  // only ends a wait that would never end)
  for (const [pace, gap] of [[2, 2], [1, 1]]) {
    c.send({ type: 'pace', stride: pace, rid: 0 });
    let prev = null, run = 0;
    const d = deadline();
    while (run < 3 && !d.passed) {
      const f = await c.next((m) => m.type === 'frame');
      assert.ok(f.ids, `decodes: ${f._refused}`);
      run = prev && f.seq - prev.seq === gap ? run + 1 : 0;
      prev = f;
    }
    d.clear();
    assert.equal(run, 3, `3 frames in a row ${gap} apart after pace ${pace} (last seq ${prev?.seq})`);
  }
  assert.equal(c.refused, 0);
  c.close();
});

test('a client whose decoder lost its frames asks for a keyframe and recovers', async () => {
  await resume();
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  await c.next((m) => m.type === 'frame' && m.ids);
  c.decoder.reset(); // as if it had missed frames: the next delta is refused
  const refused = await c.next((m) => m.type === 'frame' && m._refused);
  assert.match(refused._refused, /does not hold|follows none/);
  const k = await c.next((m) => m.type === 'frame' && m.key);
  assert.ok(k.ids);
  const d = await c.next((m) => m.type === 'frame' && !m.key);
  assert.ok(d.ids, 'deltas decode again');
  c.close();
});

test('a client asking for a keyframe all the time gets at most one a second, never an older frame, and another viewer keeps its deltas', async (t) => {
  await resume();
  const viewer = await connect(s);
  await viewer.next((m) => m.type === 'hello');
  await viewer.next((m) => m.type === 'frame' && m.ids);
  const clientRow = async (id) => (await get(s, '/api/clients')).json.clients.find((c) => c.id === id);
  const before = (await get(s, '/api/stats')).json;
  const viewerKeys0 = viewer.keyframes;
  const flood = await connect(s);
  const hello = await flood.next((m) => m.type === 'hello');
  // every frame the flooding client is sent, in order (seq grows across streams too)
  const got = [];
  flood.onMessage = (m) => { if (m.type === 'frame') got.push({ seq: m.seq, key: m.key, ok: !!m.ids }); };
  // a keyframe request every 10 ms: 100 a second, under the 120 allowed
  let sent = 0;
  const ask = setInterval(() => { flood.send({ type: 'keyframe', rid: 0 }); sent++; }, 10);
  let deltas = 0, frames = 0;
  try {
    while (deltas < 90 || sent < 300 || flood.keyframes < 3) {
      const f = await viewer.next((m) => m.type === 'frame');
      frames++;
      assert.ok(f.ids, `the viewer decodes every frame: ${f._refused}`);
      if (!f.key) deltas++;
    }
  } finally { clearInterval(ask); }
  const row = await clientRow(hello.client_id);
  const after = (await get(s, '/api/stats')).json;
  const coded = after.keyframes_coded - before.keyframes_coded;
  const viewerKeys = viewer.keyframes - viewerKeys0;
  t.diagnostic(`${sent} requests over ${row.connected_s.toFixed(1)} s of its connection: ${row.keyframes_sent} keyframes sent to it ` +
    `(${row.keyframes_deferred} waits), ${coded} coded; the viewer: ${deltas} deltas of ${frames} frames, ${viewerKeys} keyframes`);
  // one keyframe coded for it a second of its connection at most (its first,
  // then one a second after the last it was sent); it may also take one coded
  // for the viewer (the viewer's first, if still held, or one it needed)
  assert.ok(row.keyframes_sent >= 3 && row.keyframes_sent <= row.connected_s + viewerKeys + 3,
    `keyframes sent to the flooding client: ${row.keyframes_sent} in ${row.connected_s} s`);
  assert.ok(row.keyframes_deferred >= 1, 'its requests waited');
  assert.ok(after.keyframe_requests_merged > before.keyframe_requests_merged, 'requests while one waited cost nothing');
  // the encoder coded its keyframes, and any the viewer needed, no more
  assert.ok(coded <= row.connected_s + viewerKeys + 3, `keyframes coded: ${coded}`);
  assert.ok(deltas > frames / 2, `the viewer is sent deltas: ${deltas} of ${frames}`);
  assert.equal(viewer.refused, 0);
  // the flooding client: each frame decodes, none older than the one before
  assert.equal(flood.refused, 0);
  for (let i = 1; i < got.length; i++) assert.ok(got[i].seq > got[i - 1].seq, `frame ${got[i].seq} after ${got[i - 1].seq}`);
  assert.ok(got.every((f) => f.ok), 'every frame it was sent decodes');
  viewer.close(); flood.close();
});

test("the page's WebAssembly decoder (the server's, built by make web-client-wasm) decodes a live stream exactly as its oracle, the JavaScript port", async (t) => {
  const { FrameDecoder } = await import('../web/oracle/frame_decoder.js');
  const { wasmDecoderFactory } = await import('../web/oracle/wasm.mjs');
  const makeWasm = wasmDecoderFactory();
  await resume();
  // every frame from the first (the keyframe) on: the handler is set before the
  // socket opens (the hello and the keyframe may come in the upgrade's read)
  const { Client } = await import('./lib.mjs');
  const c = new Client(s.wsUrl, { ca: s.ca });
  const payloads = [];
  c.onMessage = (m) => { if (m.type === 'frame') payloads.push(m.data.slice()); };
  await c.opened;
  const hello = await c.next((m) => m.type === 'hello');
  // particles added (an emitter) until the frames carry 100 more, then a
  // scene load (a new stream, a keyframe) and 20 frames of it (50 in all at least)
  const n0 = (await c.next((m) => m.type === 'frame')).n;
  assert.equal((await c.command({ type: 'emitter', slot: 1, pos: [0.3, 0.6, 0.3], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 600, cap: 4000, material: 'water' })).ok, true);
  await c.next((m) => m.type === 'frame' && m.n >= n0 + 100);
  assert.equal((await c.command({ type: 'emitter', slot: 1, enabled: false })).ok, true);
  assert.equal((await c.command({ type: 'load_scene', name: 'drop', particles: 2000 })).ok, true);
  await c.next((m) => m.type === 'scene' && m.scene === 'drop');
  for (let i = 0; i < 20 || payloads.length < 50; i++) await c.next((m) => m.type === 'frame');
  c.close();
  await http(s, 'POST', '/api/scene', { body: { name: 'dam_break', particles: 3000 } });
  const js = new FrameDecoder(hello.capacity), wasm = makeWasm(hello.capacity);
  let same = 0, counts = new Set();
  const errs = [];
  for (const p of payloads) {
    let a, b, ea = null, eb = null;
    try { a = js.decode(p); } catch (e) { ea = e.message; }
    try { b = wasm.decode(p); } catch (e) { eb = e.message; }
    assert.equal(eb, ea, 'the same refusals');
    if (ea) { errs.push(`${p.length} B: ${ea}`); continue; }
    assert.equal(b.n, a.n);
    assert.equal(b.seq, a.seq);
    assert.deepEqual(b.grid.levels, a.grid.levels);
    assert.deepEqual(b.grid.origin, a.grid.origin);
    assert.equal(b.grid.step, a.grid.step);
    assert.deepEqual(b.id, a.id.subarray(0, a.n));
    assert.deepEqual(b.q, a.q.subarray(0, 3 * a.n));
    assert.deepEqual(b.mat, a.mat.subarray(0, a.n));
    assert.deepEqual(b.temp, a.temp.subarray(0, a.n));
    counts.add(a.n);
    same++;
  }
  t.diagnostic(`${same} of ${payloads.length} frames identical; ${counts.size} particle counts; the client's own decoder refused ${c.refused}; refusals: ${errs.slice(0, 3).join(' | ')}`);
  assert.ok(same >= 40 && same >= payloads.length - 2, `${same} of ${payloads.length}`);
  assert.ok(counts.size >= 3, 'particles were added and a scene loaded');
});
