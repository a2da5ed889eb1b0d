// operate.test.mjs - running the server: snapshots over REST, saving on
// SIGTERM and restoring at start (--data-dir), a corrupt save set aside,
// every WebSocket closed with a reason, /metrics, log lines, the heat tool
// and the solver switch.  Against the real binary.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, writeFileSync, existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, stopAll, tempDir, connect, get, http, decode, metric, until, WAIT } from './lib.mjs';

after(async () => { await stopAll(); });

const tmp = () => tempDir('fluid-data-');

async function particles(s) {
  const r = await get(s, '/api/particles?limit=10000');
  assert.equal(r.status, 200, r.text);
  return r.json;
}

async function postBytes(s, path, bytes) {
  const res = await fetch(s.base + path, {
    method: 'POST', body: bytes, headers: { 'content-type': 'application/msgpack' }, signal: AbortSignal.timeout(WAIT),
  });
  return { status: res.status, json: await res.json() };
}

test('GET /api/snapshot then POST it back: the following steps are bit-identical', async (t) => {
  const s = await startServer(['--particles', '2000', '--scene', 'dam_break']);
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200);
  assert.equal((await http(s, 'POST', '/api/step', { body: { steps: 20 } })).status, 200);
  const res = await fetch(s.base + '/api/snapshot');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /application\/msgpack/);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const doc = decode(bytes);
  assert.equal(doc.type, 'snapshot');
  assert.equal(doc.scene, 'dam_break');
  assert.equal(doc.solver, 'clavet');
  assert.equal(doc.paused, true);
  assert.ok(doc.world instanceof Uint8Array && doc.world.length > doc.particles * 40);
  t.diagnostic(`snapshot of ${doc.particles} particles at tick ${doc.tick}: ${bytes.length} bytes`);
  await http(s, 'POST', '/api/step', { body: { steps: 30 } });
  const a = await particles(s);
  // A different world in between, then the snapshot back.
  assert.equal((await http(s, 'POST', '/api/scene', { body: { name: 'drop', particles: 1000 } })).status, 200);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const r = await postBytes(s, '/api/snapshot', bytes);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.scene, 'dam_break');
  assert.equal(r.json.tick, doc.tick);
  const bc = await c.next((m) => m.type === 'scene');
  assert.equal(bc.scene, 'dam_break', 'clients hear of the restored world');
  c.close();
  await http(s, 'POST', '/api/pause');
  await http(s, 'POST', '/api/step', { body: { steps: 30 } });
  const b = await particles(s);
  assert.equal(b.tick, a.tick);
  assert.deepEqual(b.positions, a.positions, 'positions after 30 steps are identical');
  assert.deepEqual(b.velocities, a.velocities);
  // Damaged documents are refused and change nothing.
  const bad = bytes.slice(0, bytes.length - 100);
  const rb = await postBytes(s, '/api/snapshot', bad);
  assert.equal(rb.status, 400);
  t.diagnostic(`truncated: ${rb.json.error}`);
  const flipped = bytes.slice();
  flipped[flipped.length - 8] ^= 0xff; // inside the core's bytes
  const rf = await postBytes(s, '/api/snapshot', flipped);
  assert.equal(rf.status, 400, JSON.stringify(rf.json));
  const junk = await postBytes(s, '/api/snapshot', new Uint8Array([1, 2, 3]));
  assert.equal(junk.status, 400);
  assert.equal((await get(s, '/api/stats')).json.tick, b.tick, 'refused restores leave the world as it was');
  await s.stop();
});

test('a restore forgets what the old world held: a held step request is answered, grabs are let go', async () => {
  const s = await startServer(['--particles', '1500', '--scene', 'dam_break']);
  const a = await connect(s), b = await connect(s);
  await a.next((m) => m.type === 'hello');
  await b.next((m) => m.type === 'hello');
  const { id } = await a.command({ type: 'body_create', shape: 'sphere', size: [0.05, 0, 0], pos: [0.3, 0.5, 0.3] });
  assert.ok(Number.isInteger(id));
  assert.equal((await a.command({ type: 'body_grab', id, point: [0.3, 0.5, 0.3], target: [0.3, 0.7, 0.3] })).ok, true);
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200);
  const res = await fetch(s.base + '/api/snapshot');
  assert.equal(res.status, 200);
  const bytes = new Uint8Array(await res.arrayBuffer());
  const doc = decode(bytes);
  // 1000 steps at 60 Hz would take ~17 s: its reply is held until they ran (or the world is replaced).
  const step = http(s, 'POST', '/api/step', { body: { steps: 1000 } });
  let tick = doc.tick;
  await until(async () => (tick = (await get(s, '/api/stats')).json.tick) > doc.tick, () => `the requested steps to run (tick ${doc.tick} -> ${tick})`, { everyMs: 20 });
  assert.ok(tick < doc.tick + 1000, `the restore comes while the steps run (tick ${doc.tick} -> ${tick})`);
  const r = await postBytes(s, '/api/snapshot', bytes);
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.tick, doc.tick);
  const st = await step;
  assert.equal(st.status, 200, st.text);
  assert.equal(st.json.tick, doc.tick, 'the held step reply is answered at the restore, at the restored tick');
  // The server forgot who held the body: the old holder's release is refused, another client may grab it.
  const rel = await a.command({ type: 'body_release', id });
  assert.equal(rel.ok, false);
  assert.match(rel.error, /not held by you/);
  assert.equal((await b.command({ type: 'body_grab', id, point: [0.3, 0.5, 0.3], target: [0.3, 0.6, 0.3] })).ok, true);
  a.close(); b.close();
  await s.stop();
});

test('SIGTERM closes every WebSocket with a reason, saves to --data-dir and exits 0; a restart restores it, probes too', async (t) => {
  const dir = tmp();
  const s = await startServer(['--particles', '1500', '--scene', 'drop', '--data-dir', dir, '--capacity', '70000']);
  await http(s, 'POST', '/api/pause');
  assert.equal((await http(s, 'POST', '/api/probes', { body: { name: 'saved', kind: 'height', pos: [0.3, 0, 0.3] } })).status, 200);
  await http(s, 'POST', '/api/step', { body: { steps: 12 } });
  const before = await particles(s);
  const probes = (await get(s, '/api/probes')).json.probes;
  assert.equal(probes.length, 1);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const r = await s.stop('SIGTERM');
  t.diagnostic(`exit ${r.code}; ${readdirSync(dir).join(', ')}`);
  assert.deepEqual(r, { code: 0, signal: null }, 'exits by itself with code 0');
  const closed = await c.closedWithin();
  assert.equal(closed?.code, 1001);
  assert.equal(closed?.reason, 'server shutting down');
  assert.ok(existsSync(join(dir, 'world.snapshot')));
  assert.ok(!existsSync(join(dir, 'world.snapshot.tmp')));
  assert.match(s.stderr, /saved the world/);
  // A crash mid-save leaves a stray temporary file: it must not matter.
  writeFileSync(join(dir, 'world.snapshot.tmp'), 'half a save');
  const s2 = await startServer(['--particles', '500', '--scene', 'dam_break', '--data-dir', dir]);
  const st = (await get(s2, '/api/stats')).json;
  assert.equal(st.scene, 'drop');
  assert.equal(st.scene_particles, 1500, 'the size the scene was loaded with, restored (Load gives the same world)');
  assert.equal(st.tick, before.tick);
  assert.equal(st.paused, true);
  assert.match(s2.stderr, /restored the saved world/);
  assert.match(s2.stderr, /made with --capacity 70000: using it/, 'the world is sized to the save');
  assert.deepEqual((await particles(s2)).positions, before.positions);
  assert.deepEqual((await get(s2, '/api/probes')).json.probes, probes, 'the probe, its value and tick');
  await s2.stop('SIGINT');
});

test('a corrupt save is reported and set aside; the server starts with its default scene', async () => {
  const dir = tmp();
  writeFileSync(join(dir, 'world.snapshot'), Buffer.from([0x82, 0xa4, 0x74, 0x79, 0x70, 0x65]));
  const s = await startServer(['--particles', '800', '--scene', 'dam_break', '--data-dir', dir]);
  const st = (await get(s, '/api/stats')).json;
  assert.equal(st.scene, 'dam_break');
  assert.equal(st.tick >= 0, true);
  assert.match(s.stderr, /error fluid-server: the saved world .* cannot be restored/);
  const files = readdirSync(dir);
  assert.ok(files.some((f) => f.startsWith('world.snapshot.rejected-')), files.join(', '));
  await s.stop();
  // and a truncated real one too
  const dir2 = tmp();
  const a = await startServer(['--particles', '800', '--data-dir', dir2]);
  await a.stop();
  const full = readFileSync(join(dir2, 'world.snapshot'));
  writeFileSync(join(dir2, 'world.snapshot'), full.subarray(0, full.length >> 1));
  const b = await startServer(['--particles', '800', '--scene', 'drop', '--data-dir', dir2]);
  assert.equal((await get(b, '/api/stats')).json.scene, 'drop');
  assert.ok(readdirSync(dir2).some((f) => f.startsWith('world.snapshot.rejected-')));
  await b.stop();
});

test('--save-interval saves while running', async () => {
  const dir = tmp();
  const s = await startServer(['--particles', '600', '--data-dir', dir, '--save-interval', '0.5']);
  let st = null;
  await until(async () => (st = (await get(s, '/api/stats')).json).saves >= 2, () => `2 periodic saves (saves ${st?.saves})`);
  assert.equal(st.save_failures, 0);
  assert.ok(st.tick > 0 && !st.paused, 'saved while running');
  assert.ok(statSync(join(dir, 'world.snapshot')).size > 600 * 40);
  await s.stop();
});

test('GET /metrics: Prometheus text with the step histogram, counts and commands by kind and result', async () => {
  const s = await startServer(['--particles', '1000']);
  // more than 5 steps counted
  await until(async () => (await get(s, '/api/stats')).json.tick > 5, 'the first 5 ticks');
  await http(s, 'POST', '/api/push', { body: { point: [0.2, 0.2, 0.2], radius: 0.3, strength: 1, direction: [1, 0, 0] } });
  await http(s, 'POST', '/api/push', { body: { point: [0.2, 0.2, 0.2], radius: -1, strength: 1, direction: [1, 0, 0] } });
  await http(s, 'POST', '/api/scene', { body: { name: 'no_such_scene' } });
  const c = await connect(s);
  await c.next((m) => m.type === 'frame');
  const res = await fetch(s.base + '/metrics');
  assert.equal(res.status, 200);
  assert.match(res.headers.get('content-type'), /^text\/plain; version=0\.0\.4/);
  const text = await res.text();
  // Every sample line is `name{labels} value` and every family has HELP and TYPE.
  for (const line of text.split('\n').filter((l) => l && !l.startsWith('#')))
    assert.match(line, /^[a-z_]+(\{[a-z_]+="[^"]*"(,[a-z_]+="[^"]*")*\})? -?[0-9.e+-]+$|Inf/, line);
  const types = [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map((m) => m[1]);
  assert.ok(types.length >= 20 && new Set(types).size === types.length);
  const count = metric(text, 'fluid_step_duration_seconds_count{room="default"}');
  assert.ok(count > 5, `steps ${count}`);
  assert.equal(metric(text, 'fluid_step_duration_seconds_bucket{room="default",le="+Inf"}'), count);
  assert.ok(metric(text, 'fluid_step_duration_seconds_bucket{room="default",le="1"}') <= count);
  assert.equal(metric(text, 'fluid_particles{room="default"}'), (await get(s, '/api/stats')).json.particles);
  assert.equal(metric(text, 'fluid_clients'), 1);
  assert.equal(metric(text, 'fluid_commands_total{room="default",kind="push",result="ok"}'), 1);
  assert.equal(metric(text, 'fluid_commands_total{room="default",kind="load_scene",result="failed"}'), 1);
  assert.ok(metric(text, 'fluid_frames_sent_total') >= 1);
  assert.ok(metric(text, 'fluid_bytes_sent_total') > 0);
  assert.ok(metric(text, 'fluid_http_requests_total') >= 4);
  assert.equal(metric(text, 'fluid_solver_info{room="default",solver="clavet",scene="dam_break"}'), 1);
  assert.equal((await http(s, 'POST', '/metrics', { body: {} })).status, 405);
  c.close();
  await s.stop();
});

test('log lines carry a UTC timestamp and a level; --log-level filters them', async () => {
  const s = await startServer(['--particles', '500', '--data-dir', tmp()]);
  await s.stop();
  const lines = s.stderr.trim().split('\n');
  assert.ok(lines.length >= 2);
  for (const l of lines) assert.match(l, /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z (error|warn |info |debug) fluid-server: /, l);
  const q = await startServer(['--particles', '500', '--log-level', 'error', '--data-dir', tmp()]);
  await q.stop();
  assert.equal(q.stderr.trim(), '', 'nothing below error');
  const bad = await startServer(['--log-level', 'loud']).catch((e) => e);
  assert.match(String(bad), /--log-level wants error, warn, info or debug/);
});

test('heat tool over REST and WebSocket warms particles near the point and cools with a negative rate', async () => {
  const s = await startServer(['--particles', '2000', '--scene', 'dam_break']);
  await http(s, 'POST', '/api/pause');
  const p0 = await particles(s);
  // the middle of the column
  const n = p0.positions.length;
  const c = p0.positions.reduce((a, p) => [a[0] + p[0] / n, a[1] + p[1] / n, a[2] + p[2] / n], [0, 0, 0]);
  const dist = (p) => Math.hypot(p[0] - c[0], p[1] - c[1], p[2] - c[2]);
  // the particles near the point and far from it at the start, followed by id as they move
  const nearIds = new Set(p0.ids.filter((id, i) => dist(p0.positions[i]) < 0.15));
  const farIds = new Set(p0.ids.filter((id, i) => dist(p0.positions[i]) > 0.6));
  assert.ok(nearIds.size > 5 && farIds.size > 5, `${nearIds.size} near, ${farIds.size} far`);
  const near = nearIds, far = farIds;
  const mean = (snap, set) => { let s2 = 0, k = 0; snap.ids.forEach((id, i) => { if (set.has(id)) { s2 += snap.temperatures[i]; k++; } }); return s2 / k; };
  assert.ok(Math.abs(mean(p0, near) - 20) < 0.01);
  let r = await http(s, 'POST', '/api/heat', { body: { point: c, radius: 0.3, rate: 200, duration: 1 } });
  assert.equal(r.status, 200, r.text);
  await http(s, 'POST', '/api/step', { body: { steps: 30 } }); // 0.5 s of heating
  const p1 = await particles(s);
  const warm = Math.max(...p1.temperatures);
  assert.ok(warm > 40 && mean(p1, near) > 25, `near the point: ${mean(p1, near).toFixed(1)} C, hottest ${warm.toFixed(1)} C`);
  // far away it warms far less (only by diffusion and by particles flowing through the tool)
  assert.ok(mean(p1, far) - 20 < 0.25 * (mean(p1, near) - 20), `far away: ${mean(p1, far).toFixed(2)} C`);
  // The tool stops on its own after its duration.
  await http(s, 'POST', '/api/step', { body: { steps: 60 } });
  const p2 = await particles(s);
  await http(s, 'POST', '/api/step', { body: { steps: 30 } });
  const p3 = await particles(s);
  const total = (snap) => snap.temperatures.reduce((a, b) => a + b, 0);
  assert.ok(Math.abs(total(p3) - total(p2)) < 1e-2 * total(p2), 'no heat added after the duration');
  // WebSocket: cooling.
  const ws = await connect(s);
  await ws.next((m) => m.type === 'hello');
  // where the fluid is now (the column has collapsed)
  const c3 = p3.positions.reduce((a, p) => [a[0] + p[0] / n, a[1] + p[1] / n, a[2] + p[2] / n], [0, 0, 0]);
  const rep = await ws.command({ type: 'heat', point: c3, radius: 0.3, rate: -300, duration: 2 });
  assert.equal(rep.ok, true, JSON.stringify(rep));
  await ws.command({ type: 'step', steps: 30 });
  const p4 = await particles(s);
  const coldest = (snap) => Math.min(...snap.temperatures);
  assert.ok(coldest(p4) < coldest(p3) - 20, `cooled: coldest ${coldest(p3).toFixed(1)} -> ${coldest(p4).toFixed(1)} C`);
  // Frames carry the temperatures: the world is paused at p4's tick, so the
  // frames from the step's last one on (and the heartbeats) are of that tick.
  assert.equal(p4.total, p4.count, 'p4 holds every particle');
  assert.equal((await get(s, '/api/stats')).json.tick, p4.tick, 'still paused at p4');
  const f = await ws.next((m) => m.type === 'frame' && m.tick === p4.tick);
  assert.ok(f.ids, `the frame decodes: ${f._refused}`);
  assert.equal(f.paused, true);
  assert.deepEqual(f.temp_range, [-40, 215]);
  assert.equal(f.temp.length, f.n);
  assert.equal(f.n, p4.count, 'the frame holds as many particles as /api/particles');
  const byId = new Map(p4.ids.map((id, i) => [id, p4.temperatures[i]]));
  let maxErr = 0, matched = 0;
  for (let k = 0; k < f.n; k++) {
    const T = byId.get(f.ids[k]);
    if (T === undefined) continue;
    matched++;
    maxErr = Math.max(maxErr, Math.abs(-40 + f.temp[k] - Math.min(Math.max(T, -40), 215)));
  }
  assert.equal(matched, f.n, 'every particle of the frame is one of /api/particles');
  assert.ok(maxErr <= 0.5, `frame temperature error ${maxErr}`);
  // Bad heat commands are refused at the edge.
  for (const bad of [{ radius: 0 }, { radius: 11 }, { rate: 5000 }, { duration: 0 }, { point: [0, 0] }]) {
    const rr = await http(s, 'POST', '/api/heat', { body: { point: c, radius: 0.3, rate: 10, ...bad } });
    assert.equal(rr.status, 400, JSON.stringify(bad));
  }
  ws.close();
  await s.stop();
});

test('solvers: GET /api/solvers, POST /api/solver switches and broadcasts, unknown names are refused', async () => {
  const s = await startServer(['--particles', '1000']);
  const sv = (await get(s, '/api/solvers')).json;
  assert.equal(sv.solver, 'clavet');
  assert.ok(sv.solvers.some((x) => x.name === 'clavet' && x.doc));
  const c = await connect(s);
  const hello = await c.next((m) => m.type === 'hello');
  assert.equal(hello.solver, 'clavet');
  assert.deepEqual(hello.solvers, sv.solvers.map((x) => x.name));
  const n0 = (await get(s, '/api/stats')).json.particles;
  assert.ok(n0 > 0);
  for (const name of hello.solvers) {
    const r = await http(s, 'POST', '/api/solver', { body: { name } });
    assert.equal(r.status, 200, r.text);
    assert.equal(r.json.solver, name);
    const b = await c.next((m) => m.type === 'solver');
    assert.equal(b.solver, name);
    assert.equal((await get(s, '/api/stats')).json.solver, name);
    // it steps: simulated time moves on (10 ticks), and it keeps its particles
    const st0 = (await get(s, '/api/stats')).json;
    const st = await until(async () => { const x = (await get(s, '/api/stats')).json; return x.tick >= st0.tick + 10 && x; },
      `${name}: 10 ticks from ${st0.tick}`);
    assert.equal(st.solver, name);
    assert.ok(st.sim_time > st0.sim_time, `${name}: sim_time ${st0.sim_time} -> ${st.sim_time}`);
    assert.equal(st.particles, n0, `${name}: particles`);
  }
  assert.equal((await http(s, 'POST', '/api/solver', { body: { name: 'navier' } })).status, 400);
  const r = await c.command({ type: 'load_scene', name: 'drop', particles: 800, solver: 'clavet' });
  assert.equal(r.ok, true);
  const sc = await c.next((m) => m.type === 'scene');
  assert.equal(sc.solver, 'clavet');
  const scenes = (await get(s, '/api/scenes')).json.scenes;
  assert.ok(scenes.every((x) => hello.solvers.includes(x.solver)), 'every scene names a solver this server has');
  c.close();
  await s.stop();
});

test('heater: the merge scene\'s hot plate (slot 0) is set cold over REST, and the bottom cools', async (t) => {
  const s = await startServer(['--particles', '1500', '--scene', 'merge']);
  const st = (await get(s, '/api/stats')).json;
  assert.equal(st.solver, 'unified');
  await http(s, 'POST', '/api/pause');
  await http(s, 'POST', '/api/step', { body: { steps: 60 } }); // the plate at 45 C warms the bottom layers
  const bottom = (snap) => {
    const ys = snap.positions.map((p) => p[1]), lo = Math.min(...ys);
    const T = snap.temperatures.filter((_, i) => ys[i] < lo + 0.1);
    return T.reduce((a, b) => a + b, 0) / T.length;
  };
  const warm = bottom(await particles(s));
  let r = await http(s, 'POST', '/api/heater', { body: { slot: 0, kind: 'floor', radius: 0.16, rate: 2, temperature: 5 } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.slot, 0);
  await http(s, 'POST', '/api/step', { body: { steps: 90 } });
  const cold = bottom(await particles(s));
  t.diagnostic(`bottom layer: ${warm.toFixed(1)} C on the hot plate, ${cold.toFixed(1)} C 90 steps (1.5 s simulated) after it was set to 5 C`);
  assert.ok(warm > 25 && cold < warm - 10, `${warm} -> ${cold}`);
  // switched off, then on again without a definition
  assert.equal((await http(s, 'POST', '/api/heater', { body: { slot: 0, enabled: false } })).status, 200);
  assert.equal((await http(s, 'POST', '/api/heater', { body: { slot: 0, enabled: true } })).status, 200);
  // refused: an empty slot without a definition, slots kept for the heat tools, bad kinds and ranges
  r = await http(s, 'POST', '/api/heater', { body: { slot: 3, enabled: true } });
  assert.equal(r.status, 400);
  assert.match(r.json.error, /slot 3 is empty/);
  for (const bad of [{ slot: 4, enabled: true }, { slot: 0, kind: 'cube', radius: 1, rate: 1, temperature: 1 },
    { slot: 0, kind: 'floor', radius: 0.1, rate: 1 }, { slot: 0, kind: 'floor', radius: 0.1, rate: 1, temperature: 5000 },
    { slot: 0, kind: 'sphere', radius: 0.1, rate: 1 }])
    assert.equal((await http(s, 'POST', '/api/heater', { body: bad })).status, 400, JSON.stringify(bad));
  await s.stop();
});

test('threads are named for the operator\'s tools: sim and enc per room, the keeper', async () => {
  const s = await startServer(['--particles', '1000']);
  assert.equal((await http(s, 'POST', '/api/rooms', { body: { name: 'lab-2', particles: 1000 } })).status, 201);
  const names = () => readdirSync(`/proc/${s.proc.pid}/task`).map((t) => {
    try { return readFileSync(`/proc/${s.proc.pid}/task/${t}/comm`, 'utf8').trim(); } catch { return ''; }
  });
  await until(() => names().includes('sim:lab-2'), 'the new room\'s sim thread');
  const got = names();
  for (const n of ['sim:default', 'enc:default', 'sim:lab-2', 'enc:lab-2', 'keeper']) assert.ok(got.includes(n), `${n} in ${got.join(', ')}`);
  await s.stop();
});
