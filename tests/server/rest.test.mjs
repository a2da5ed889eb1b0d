// rest.test.mjs - the JSON REST API, static files, the token rule and a clean
// shutdown, against the real binary.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, connect, get, http, WebSocket, rawConnect, until, WAIT } from './lib.mjs';

let s;
before(async () => { s = await startServer(['--particles', '2000']); });
after(async () => { await stopAll(); });

// Raw HTTP/1.1 request on a fresh socket (for paths fetch would normalise).
function rawRequest(port, text) {
  return new Promise((resolve, reject) => {
    const sock = rawConnect(port, () => sock.write(text));
    let data = '';
    sock.setTimeout(WAIT, () => { sock.destroy(); resolve(data); });
    sock.on('data', (d) => { data += d; if (/\r\n\r\n/.test(data)) setTimeout(() => sock.destroy(), 100); });
    sock.on('close', () => resolve(data));
    sock.on('error', reject);
  });
}

test('GET /api/health, /api/stats, /api/scenes, /api/materials', async () => {
  assert.deepEqual((await get(s, '/api/health')).json, { ok: true });
  const st = await get(s, '/api/stats');
  assert.equal(st.status, 200);
  assert.match(st.headers.get('content-type'), /application\/json/);
  for (const k of ['tick', 'sim_time', 'particles', 'clients', 'paused', 'solver', 'step_ms', 'realtime_ratio',
    'frames_sent', 'frames_dropped', 'bytes_sent', 'encode_ms', 'frame_bytes', 'cmd_to_frame_ms'])
    assert.ok(k in st.json, k);
  // the world steps: the tick and simulated time advance, and steps took time
  const st2 = await until(async () => { const x = (await get(s, '/api/stats')).json; return x.tick > st.json.tick + 5 && x; },
    `the tick to advance from ${st.json.tick}`);
  assert.ok(st2.sim_time > st.json.sim_time, `sim_time ${st.json.sim_time} -> ${st2.sim_time}`);
  assert.ok(st2.step_ms > 0);
  const sc = (await get(s, '/api/scenes')).json;
  assert.ok(sc.scenes.length >= 1 && sc.scenes.every((x) => x.name && x.default_particles > 0));
  assert.equal(sc.current, st2.scene);
  const m = (await get(s, '/api/materials')).json.materials;
  assert.ok(m.find((x) => x.name === 'water'));
  const stiff = m[0].params.stiffness;
  assert.ok(typeof stiff.value === 'number' && stiff.min <= stiff.max && typeof stiff.unit === 'string');
});

test('POST /api/scene, /api/pause, /api/step, /api/resume, /api/push and GET /api/particles paging', async () => {
  const r = await http(s, 'POST', '/api/scene', { body: { name: 'drop', particles: 1500 } });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.scene, 'drop');
  const st = (await get(s, '/api/stats')).json;
  assert.equal(st.particles, r.json.particles);
  assert.equal((await http(s, 'POST', '/api/pause')).json.paused, true);
  const t0 = (await get(s, '/api/stats')).json.tick;
  const step = await http(s, 'POST', '/api/step', { body: { steps: 7 } });
  assert.equal(step.status, 200, step.text);
  assert.equal(step.json.tick, t0 + 7);
  assert.equal((await get(s, '/api/stats')).json.tick, t0 + 7);
  const page1 = (await get(s, '/api/particles?offset=0&limit=100')).json;
  const page2 = (await get(s, '/api/particles?offset=100&limit=100')).json;
  assert.equal(page1.count, 100);
  assert.equal(page1.total, st.particles);
  assert.equal(page1.ids.length, 100);
  assert.equal(page1.positions[0].length, 3);
  assert.equal(page1.velocities[0].length, 3);
  assert.ok(page2.ids[0] > page1.ids[99]);
  const tail = (await get(s, `/api/particles?offset=${st.particles - 5}&limit=100`)).json;
  assert.equal(tail.count, 5);
  const p = page1.positions[50];
  const push = await http(s, 'POST', '/api/push', { body: { point: p, radius: 0.05, strength: 2, direction: [0, 1, 0] } });
  assert.equal(push.status, 200, push.text);
  assert.ok(push.json.touched >= 1);
  const after = (await get(s, '/api/particles?offset=0&limit=100')).json;
  assert.ok(after.velocities[50][1] > page1.velocities[50][1] + 1, 'the pushed particle moves up');
  assert.equal((await http(s, 'POST', '/api/resume')).json.paused, false);
  assert.equal((await http(s, 'POST', '/api/step', { body: { steps: 1 } })).status, 409);
});

test('bad REST input gets 4xx with a JSON error and the server keeps serving', async () => {
  const cases = [
    ['POST', '/api/scene', '{"name": "drop", ', 400, /not valid JSON/],
    ['POST', '/api/scene', '[1,2]', 400, /JSON object/],
    ['POST', '/api/scene', { name: 'moon' }, 404, /unknown scene/],
    ['POST', '/api/scene', { name: 'drop', particles: -3 }, 400, /particles/],
    ['POST', '/api/scene', { name: 'drop', colour: 'red' }, 400, /unknown field 'colour'/],
    ['POST', '/api/push', { point: [0, 0], radius: 1, strength: 1, direction: [0, 1, 0] }, 400, /'point' must be/],
    ['POST', '/api/push', { point: [0, 0, 0], radius: 1e9, strength: 1, direction: [0, 1, 0] }, 400, /radius/],
    ['POST', '/api/step', { steps: 100000 }, 400, /steps/],
    ['PATCH', '/api/materials/lava', { stiffness: 1 }, 404, /unknown material/],
    ['PATCH', '/api/materials/water', { spiciness: 1 }, 400, /unknown parameter/],
    ['PATCH', '/api/materials/water', { stiffness: -1 }, 400, /outside/],
    ['PATCH', '/api/materials/water', { stiffness: 'hard' }, 400, /must be a number/],
    ['PATCH', '/api/materials/water', {}, 400, /non-empty/],
    ['GET', '/api/particles?limit=abc', undefined, 400, /integers/],
    ['GET', '/api/particles?limit=1000000', undefined, 400, /limit/],
    ['GET', '/api/nothing', undefined, 404, /no such endpoint/],
    ['DELETE', '/api/stats', undefined, 405, /use GET/],
    ['GET', '/api/pause', undefined, 405, /use POST/],
    ['POST', '/api/scene', JSON.stringify({ name: 'x'.repeat(20000) }), 413, /too large/],
  ];
  for (const [method, path, body, status, re] of cases) {
    const r = await http(s, method, path, { body });
    assert.equal(r.status, status, `${method} ${path}: ${r.text}`);
    assert.match(r.json?.error ?? '', re, `${method} ${path}: ${r.text}`);
  }
  assert.equal((await get(s, '/api/health')).status, 200);
  const m = (await get(s, '/api/materials')).json.materials.find((x) => x.name === 'water');
  assert.ok(m.params.stiffness.value >= 0, 'nothing changed');
});

test('PATCH /api/materials/{name} changes several parameters at once, all or nothing', async () => {
  const before = (await get(s, '/api/materials')).json.materials.find((x) => x.name === 'goo').params;
  const bad = await http(s, 'PATCH', '/api/materials/goo', { body: { plasticity: 1, stiffness: 1e9 } });
  assert.equal(bad.status, 400);
  const same = (await get(s, '/api/materials')).json.materials.find((x) => x.name === 'goo').params;
  assert.equal(same.plasticity.value, before.plasticity.value, 'no partial change');
  const ok = await http(s, 'PATCH', '/api/materials/goo', { body: { plasticity: 1, friction: 0.5 } });
  assert.equal(ok.status, 200, ok.text);
  assert.equal(ok.json.params.plasticity, 1);
  assert.equal(ok.json.params.friction, 0.5);
});

test('static files: index.html, MIME types, nothing outside the web root', async () => {
  const idx = await http(s, 'GET', '/', { raw: true });
  assert.equal(idx.status, 200);
  assert.match(idx.headers.get('content-type'), /text\/html/);
  assert.match(idx.text, /fluid test/);
  const js = await http(s, 'GET', '/app.js', { raw: true });
  assert.match(js.headers.get('content-type'), /javascript/);
  assert.match((await http(s, 'GET', '/style.css', { raw: true })).headers.get('content-type'), /text\/css/);
  assert.match((await http(s, 'GET', '/sub/data.json', { raw: true })).headers.get('content-type'), /application\/json/);
  assert.equal((await http(s, 'GET', '/missing.html', { raw: true })).status, 404);
  for (const path of ['/../../../../etc/passwd', '/%2e%2e/%2e%2e/%2e%2e/etc/passwd', '/sub/../../../etc/passwd', '/..%2f..%2f..%2fetc/passwd']) {
    const resp = await rawRequest(s.port, `GET ${path} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`);
    assert.doesNotMatch(resp, /root:/, path);
    assert.doesNotMatch(resp.split('\r\n')[0], / 200 /, `${path}: ${resp.split('\r\n')[0]}`);
  }
});

test('with --token: no credential is the room\'s public role (player), a wrong one 401, the token administers', async () => {
  const t = await startServer(['--particles', '1000', '--token', 's3cret']);
  const paused0 = (await get(t, '/api/stats')).json.paused;
  for (const headers of [{ authorization: 'Bearer wrong' }, { authorization: 's3cret' }, { authorization: 'Bearer s3cret2' }]) {
    const r = await http(t, 'POST', '/api/pause', { headers });
    assert.equal(r.status, 401, JSON.stringify(headers));
    assert.match(r.json.error, /unauthorized/);
  }
  // without a credential: a player, who may push but not pause nor change a material
  const np = await http(t, 'POST', '/api/pause');
  assert.equal(np.status, 403);
  assert.equal(np.json.error, "'POST /api/pause' needs the editor role; this connection is a player.");
  assert.equal((await http(t, 'PATCH', '/api/materials/water', { body: { stiffness: 1 } })).status, 403);
  assert.equal((await http(t, 'POST', '/api/push', { body: { point: [0.5, 0.3, 0.3], radius: 0.2, strength: 1, direction: [0, 1, 0] } })).status, 200);
  assert.equal((await get(t, '/api/stats')).json.paused, paused0, 'nothing an editor does changed');
  assert.notEqual((await get(t, '/api/materials')).json.materials[0].params.stiffness.value, 1);
  assert.equal((await get(t, '/api/stats')).status, 200, 'reads need no token');
  assert.equal((await get(t, '/api/clients')).status, 403, 'the list of clients is the owner\'s');
  const ok = await http(t, 'POST', '/api/pause', { headers: { authorization: 'Bearer s3cret' } });
  assert.equal(ok.status, 200);
  // WebSocket: the public role until a credential; ?token= or an auth command.
  const a = await connect(t);
  const hello = await a.next((m) => m.type === 'hello');
  assert.equal(hello.auth_required, true);
  assert.equal(hello.role, 'player');
  const no = await a.command({ type: 'resume' });
  assert.equal(no.ok, false);
  assert.equal(no.code, 'forbidden');
  assert.match(no.error, /'resume' needs the editor role; this connection is a player/);
  assert.equal((await a.command({ type: 'auth', token: 'nope' })).ok, false);
  assert.equal((await a.command({ type: 'auth', token: 's3cret' })).ok, true);
  assert.equal((await a.command({ type: 'resume' })).ok, true);
  const b = await connect(t, { url: `${t.wsUrl}?token=s3cret` });
  assert.equal((await b.next((m) => m.type === 'hello')).role, 'admin');
  assert.equal((await b.command({ type: 'pause' })).ok, true);
  a.close(); b.close();
  await t.stop();
});

test('a WebSocket upgrade without a subprotocol still gets the stream', async () => {
  const c = await connect(s, { protocol: null });
  assert.equal((await c.next()).type, 'hello');
  await c.next((m) => m.type === 'frame');
  c.close();
});

test('SIGTERM and SIGINT stop the server cleanly (exit 0) with clients connected', async () => {
  for (const sig of ['SIGTERM', 'SIGINT']) {
    const t = await startServer(['--particles', '1000']);
    const c = await connect(t);
    await c.next((m) => m.type === 'frame');
    const r = await t.stop(sig);
    assert.deepEqual(r, { code: 0, signal: null }, t.stderr);
    assert.ok(await c.closedWithin());
  }
});

test('options: --help describes every option; bad options are refused', async () => {
  const { spawnSync } = await import('node:child_process');
  const { SERVER } = await import('./lib.mjs');
  const h = spawnSync(SERVER, ['--help'], { encoding: 'utf8', timeout: WAIT });
  assert.equal(h.status, 0);
  for (const o of ['--port', '--scene', '--particles', '--tick-hz', '--frame-hz', '--max-clients', '--web-root', '--token', '--threads'])
    assert.ok(h.stdout.includes(o), o);
  for (const args of [['--port', 'x'], ['--tick-hz', '0'], ['--bogus'], ['--scene', 'moon', '--port', '0']]) {
    const r = spawnSync(SERVER, args, { encoding: 'utf8', timeout: WAIT });
    assert.notEqual(r.status, 0, args.join(' '));
    assert.ok(r.stderr.length > 0);
  }
  const e = await startServer([], { env: { FLUID_PARTICLES: '1200', FLUID_FRAME_HZ: '10' } });
  const st = (await get(e, '/api/stats')).json;
  assert.equal(st.frame_hz, 10);
  assert.ok(Math.abs(st.particles - 1200) < 400, `particles ${st.particles}`);
  await e.stop();
});

test('GET /api lists the endpoints; POST /api/emitter sets and switches an emitter', async () => {
  const idx = await get(s, '/api');
  assert.equal(idx.status, 200);
  assert.ok(idx.json.endpoints.includes('GET /api/stats'));
  await http(s, 'POST', '/api/scene', { body: { name: 'dam_break', particles: 1500 } });
  const n0 = (await get(s, '/api/stats')).json.particles;
  const e = await http(s, 'POST', '/api/emitter', { body: { slot: 1, pos: [0.5, 0.8, 0.5], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 300, material: 'water' } });
  assert.equal(e.status, 200, e.text);
  assert.equal(e.json.slot, 1);
  let n1 = n0;
  await until(async () => (n1 = (await get(s, '/api/stats')).json.particles) >= n0 + 40, () => `the emitter to add 40 particles (${n0} -> ${n1})`);
  assert.equal((await http(s, 'POST', '/api/emitter', { body: { slot: 1, enabled: false } })).status, 200);
  // switched off: once the tick after the change is published, 30 more steps add nothing
  const stats = () => get(s, '/api/stats').then((r) => r.json);
  const off = (await stats()).tick;
  const st2 = await until(async () => { const x = await stats(); return x.tick >= off + 2 && x; }, 'two ticks after switching off');
  const st3 = await until(async () => { const x = await stats(); return x.tick >= st2.tick + 30 && x; }, '30 more ticks');
  assert.equal(st3.particles, st2.particles, `switched off: no more particles (tick ${st2.tick} -> ${st3.tick})`);
  assert.equal((await http(s, 'POST', '/api/emitter', { body: { slot: 1, material: 'lava', pos: [0, 0, 0], direction: [0, 1, 0], speed: 1, radius: 0.1, rate: 1 } })).status, 404);
});

test('while paused and unchanged, frames slow to a heartbeat of the same state; a cursor brings a frame with it', async (t) => {
  // A server of its own whose sim thread saves the world every 0.1 s: the
  // saves are the yardstick (the sim thread's own clock, which slows with it
  // on a loaded machine), so nothing here is timed.
  const dir = mkdtempSync(join(tmpdir(), 'fluid-beat-'));
  const h = await startServer(['--particles', '1000', '--data-dir', dir, '--save-interval', '0.1']);
  const stats = async () => (await get(h, '/api/stats')).json;
  const c = await connect(h);
  await c.next((m) => m.type === 'hello');
  assert.equal((await c.command({ type: 'pause' })).ok, true);
  const first = await c.next((m) => m.type === 'frame' && m.paused);
  const st0 = await stats();
  assert.equal(st0.tick, first.tick, 'paused at the tick of the paused frame');
  // three heartbeats: the same tick, the same positions, each decoded
  const beats = [];
  for (let i = 0; i < 3; i++) beats.push(await c.next((m) => m.type === 'frame'));
  const st1 = await stats();
  for (const f of beats) {
    assert.ok(f.ids, `heartbeat ${f.seq} decodes: ${f._refused}`);
    assert.equal(f.paused, true);
    assert.equal(f.tick, first.tick, 'no step while paused');
    assert.ok(f.seq > first.seq);
    assert.deepEqual(f.ids, first.ids);
    assert.deepEqual(f.q, first.q, 'no new state');
  }
  assert.equal(st1.tick, first.tick);
  // Frames the server published against saves made (0.1 s apart) meanwhile:
  // about 10 saves a heartbeat; at the frame rate it would be 3 frames a save.
  const published = st1.frames_published - st0.frames_published, saves = st1.saves - st0.saves;
  t.diagnostic(`paused and idle: ${published} frames published while ${saves} saves ran`);
  assert.ok(published <= 1 + saves / 3, `${published} frames published while ${saves} saves ran (paused, idle)`);
  // a cursor: a frame shows it (the next one, or the one after a heartbeat that crossed it), still at the paused tick
  const last = beats[beats.length - 1];
  c.send({ type: 'cursor', rid: 0, pos: [0.25, 0.5, 0.125] });
  const next = [];
  while (!next.length || !next[next.length - 1].cursors.length) next.push(await c.next((m) => m.type === 'frame'));
  const shown = next[next.length - 1];
  assert.ok(next.length <= 2, `the cursor shows in frame ${next.length} after it was sent`);
  assert.ok(shown.seq > last.seq);
  assert.deepEqual(shown.cursors.map((k) => k.pos), [[0.25, 0.5, 0.125]]);
  assert.equal(shown.tick, first.tick);
  assert.equal((await c.command({ type: 'resume' })).ok, true);
  c.close();
  await h.stop();
  rmSync(dir, { recursive: true, force: true });
});

// openapi.test.mjs checks that the spec and the served routes agree.

test('when a step takes longer than a tick, simulated time slows (no crash, no stall) and /api/stats says so', async () => {
  // 20000 particles cannot be stepped 1000 times a second on this kind of machine.
  const f = await startServer(['--particles', '20000', '--tick-hz', '1000']);
  const stats = async () => (await get(f, '/api/stats')).json;
  let st = null;
  await until(async () => (st = await stats()).slowed === true,
    () => `/api/stats to say slowed (slowed ${st?.slowed}, overruns ${st?.overruns}, tick ${st?.tick}, paused ${st?.paused})`);
  assert.ok(st.overruns > 0, `overruns ${st.overruns}`);
  assert.equal(st.tick_hz, 1000);
  assert.ok(st.step_ms > 0);
  // it goes on: the world steps, frames stream with the tick advancing, REST answers
  const c = await connect(f);
  await c.next((m) => m.type === 'hello');
  let prev = await c.next((m) => m.type === 'frame' && m.ids);
  for (let i = 0; i < 5; i++) {
    const g = await c.next((m) => m.type === 'frame');
    assert.ok(g.ids, `frame ${g.seq} decodes: ${g._refused}`);
    assert.ok(g.seq > prev.seq && g.tick > prev.tick, `frames advance: ${prev.seq}@${prev.tick} -> ${g.seq}@${g.tick}`);
    prev = g;
  }
  const st2 = await stats();
  assert.ok(st2.tick > st.tick && st2.overruns >= st.overruns, `tick ${st.tick} -> ${st2.tick}`);
  assert.equal((await get(f, '/api/health')).status, 200);
  c.close();
  assert.deepEqual(await f.stop(), { code: 0, signal: null });
});

test('GET /api/clients lists the WebSocket clients with their own counters', async () => {
  const a = await connect(s), b = await connect(s);
  const ha = await a.next((m) => m.type === 'hello');
  await b.next((m) => m.type === 'hello');
  for (let i = 0; i < 3; i++) await a.next((m) => m.type === 'frame');
  a.sendRaw(Buffer.from([0xc1]));
  await a.next((m) => m.type === 'reply');
  const j = (await get(s, '/api/clients')).json;
  assert.ok(j.count >= 2 && j.clients.length === j.count);
  const me = j.clients.find((c) => c.id === ha.client_id);
  assert.ok(me, 'listed');
  assert.equal(me.peer, '127.0.0.1');
  assert.equal(me.colour, ha.colour);
  assert.ok(me.frames_sent >= 3 && me.bytes_sent > 0 && me.bad_messages === 1);
  a.close(); b.close();
});

test('pages from other sites may watch nothing and change nothing unless --allow-origin names them', async () => {
  const evil = { origin: 'http://evil.example' };
  // WebSocket: an upgrade from another site's page is refused; same-origin and non-browser clients pass.
  const bad = new WebSocket(s.wsUrl, 'fluid.v2', { headers: evil });
  const outcome = await new Promise((res) => { bad.on('open', () => res('open')); bad.on('error', (e) => res(`error ${e.message}`)); bad.on('unexpected-response', (_q, r) => res(`http ${r.statusCode}`)); });
  assert.notEqual(outcome, 'open', 'refused');
  try { bad.terminate(); } catch { /* closed */ }
  const same = await connect(s, { headers: { origin: s.base } });
  assert.equal((await same.next()).type, 'hello');
  same.close();
  // REST: reads are fine, changes are 403.
  assert.equal((await http(s, 'GET', '/api/stats', { headers: evil })).status, 200);
  const r = await http(s, 'POST', '/api/pause', { headers: evil });
  assert.equal(r.status, 403);
  assert.match(r.json.error, /another site/);
  assert.equal((await get(s, '/api/stats')).json.paused, false, 'nothing changed');
  assert.equal((await http(s, 'POST', '/api/resume', { headers: { origin: s.base } })).status, 200);
  // Named origins are allowed.
  const t = await startServer(['--particles', '500', '--allow-origin', 'http://other.example, http://evil.example']);
  const ok = await connect(t, { headers: evil });
  assert.equal((await ok.next()).type, 'hello');
  ok.close();
  assert.equal((await http(t, 'POST', '/api/pause', { headers: evil })).status, 200);
  await t.stop();
});

test('GET /api/solvers names the parameters each solver reads', async () => {
  const sv = (await get(s, '/api/solvers')).json;
  const params = Object.fromEntries(sv.solvers.map((x) => [x.name, x.params]));
  for (const x of sv.solvers) assert.ok(Array.isArray(x.params) && x.params.length > 0, `${x.name}: ${x.params}`);
  assert.ok(params.clavet.includes('stiffness'), `clavet: ${params.clavet}`);
  assert.ok(!params.clavet.includes('surface_tension'), `clavet: ${params.clavet}`);
  assert.ok(params.mps.includes('surface_tension'), `mps: ${params.mps}`);
  assert.ok(!params.mps.includes('stiffness'), `mps: ${params.mps}`);
  assert.ok(params.unified.includes('young_modulus'), `unified: ${params.unified}`);
  // every name is a material parameter GET /api/materials describes
  const known = Object.keys((await get(s, '/api/materials')).json.materials[0].params);
  for (const x of sv.solvers) for (const p of x.params) assert.ok(known.includes(p), `${x.name}: ${p}`);
});

test('the particle budget: without --particles the first scene is sized to the machine, said in the log; --particles and a zero budget keep the size', async () => {
  // 2% of a 60 Hz tick (0.33 ms): no machine steps 20k particles that fast
  const small = await startServer([], { env: { FLUID_STEP_BUDGET: '0.02' } });
  const st = (await get(small, '/api/stats')).json;
  const log = small.stdout + small.stderr;
  assert.match(log, /particle budget: a tick of 'dam_break' with 20812 particles took [0-9.]+ ms on \d threads?; the tick is 16\.7 ms/);
  const said = Number(/starting with (\d+) particles/.exec(log)[1]);
  assert.equal(st.particles, said);
  assert.ok(st.particles >= 1000 && st.particles < 20812 / 2, `${st.particles} particles`);
  assert.equal(st.scene, 'dam_break');
  await small.stop();
  assert.ok(st.step_threads === 1 || st.step_threads === st.threads, `a step on ${st.step_threads} of ${st.threads} threads`);
  const chosen = await startServer(['--particles', '3000'], { env: { FLUID_STEP_BUDGET: '0.02' } });
  assert.equal((await get(chosen, '/api/stats')).json.particles > 2500, true);
  assert.doesNotMatch(chosen.stdout + chosen.stderr, /particle budget/);
  await chosen.stop();
  const off = await startServer([], { env: { FLUID_STEP_BUDGET: '0' } });
  assert.equal((await get(off, '/api/stats')).json.particles, 20812);
  await off.stop();
  // a scene that fits starts at its own size: mps_dam_break sizes its tank by the volume asked for, and its count
  // (2,783 of 3,000) asked for again would give a smaller world (2,662)
  const own = await startServer(['--scene', 'mps_dam_break'], { env: { FLUID_STEP_BUDGET: '0' } });
  const ownN = (await get(own, '/api/stats')).json.particles;
  await own.stop();
  const fits = await startServer(['--scene', 'mps_dam_break'], { env: { FLUID_STEP_BUDGET: '1' } });
  const fitsLog = fits.stdout + fits.stderr;
  assert.match(fitsLog, /particle budget: a tick of 'mps_dam_break'/);
  assert.equal((await get(fits, '/api/stats')).json.particles, ownN, `a whole tick's budget keeps the scene's own size (${fitsLog.match(/particle budget: [^\n]*/)})`);
  await fits.stop();
});

test('scene_particles: the size a scene was loaded with (hello, the scene broadcast, /api/stats); loading again with it gives the same world', async () => {
  // mps_dam_break sizes its tank by the volume asked for: 3000 give 2,783 particles, and 2,783 asked for a smaller world
  const t = await startServer(['--scene', 'mps_dam_break', '--particles', '3000']);
  const c = await connect(t);
  const h = await c.next((m) => m.type === 'hello');
  assert.equal(h.scene_particles, 3000);
  assert.ok(h.particles < 3000, `${h.particles} particles`);
  assert.equal((await get(t, '/api/stats')).json.scene_particles, 3000);
  // the scene's default when none is asked for; then the same again with what it says
  const fountain = (await get(t, '/api/scenes')).json.scenes.find((x) => x.name === 'fountain');
  assert.equal((await http(t, 'POST', '/api/scene', { body: { name: 'fountain' } })).status, 200);
  const first = await c.next((m) => m.type === 'scene');
  assert.equal(first.scene_particles, fountain.default_particles);
  assert.ok(first.particles < first.scene_particles, 'a fountain starts low (its jet fills it)');
  for (const particles of [first.scene_particles, first.particles]) {
    assert.equal((await http(t, 'POST', '/api/scene', { body: { name: 'fountain', particles } })).status, 200);
    const again = await c.next((m) => m.type === 'scene');
    const same = again.particles === first.particles && JSON.stringify(again.bounds) === JSON.stringify(first.bounds);
    // asked for its scene_particles: the same world; asked for its count: another (why the field exists)
    assert.equal(same, particles === first.scene_particles, `asked ${particles}: ${again.particles} particles, bounds ${again.bounds}`);
  }
  c.close();
  await t.stop();
});
