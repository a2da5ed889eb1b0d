// rooms.test.mjs - many worlds on one server: rooms made, listed, changed and
// deleted over REST; each room's stream at /r/{name}/ and its routes under
// /api/rooms/{name}/; a viewer of one room never receives a byte of another's
// frames or broadcasts; bad names, unknown rooms and the default room's
// protection refused with their codes.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, tempDir, connect, get, http, until, frameArrays, metric } from './lib.mjs';

let s;
before(async () => { s = await startServer(['--particles', '2000']); });
after(async () => { await stopAll(); });

const roomWs = (name) => `${s.wsUrl}r/${name}/`;
const makeRoom = (body, opts = {}) => http(s, 'POST', '/api/rooms', { body, ...opts });

test('POST /api/rooms makes a room with its own scene, listed with its page and stream', async () => {
  const r = await makeRoom({ name: 'lab', scene: 'drop', particles: 3000 });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.name, 'lab');
  assert.equal(r.json.url, '/r/lab/');
  assert.equal(r.json.scene, 'drop');
  assert.equal(r.json.public_role, 'player');
  const list = (await get(s, '/api/rooms')).json;
  assert.deepEqual(list.rooms.map((x) => x.name).sort(), ['default', 'lab']);
  const lab = (await get(s, '/api/rooms/lab')).json;
  assert.equal(lab.scene, 'drop');
  assert.ok(lab.particles > 0);
  // its stats under the prefix, the default room's at the plain route
  const st = (await get(s, '/api/rooms/lab/stats')).json;
  assert.equal(st.room, 'lab');
  assert.equal(st.scene, 'drop');
  assert.equal(st.particles, lab.particles);
  const home = (await get(s, '/api/stats')).json;
  assert.equal(home.room, 'default');
  assert.equal(home.scene, 'dam_break');
  assert.equal(home.particles, 2000);
  // the stream: hello names the room, frames carry its particles
  const c = await connect(s, { url: roomWs('lab') });
  const hello = await c.next((m) => m.type === 'hello');
  assert.equal(hello.room, 'lab');
  assert.equal(hello.scene, 'drop');
  const f = await c.next((m) => m.type === 'frame' && m.ids);
  assert.equal(frameArrays(f).idList.length, lab.particles);
  await until(async () => (await get(s, '/api/rooms/lab')).json.clients === 1, 'the room counts its viewer');
  c.close();
  const d = await connect(s);
  assert.equal((await d.next((m) => m.type === 'hello')).room, 'default');
  d.close();
  // /metrics: each world's samples carry its room
  const text = (await get(s, '/metrics')).text;
  assert.equal(metric(text, 'fluid_particles{room="lab"}'), lab.particles);
  assert.equal(metric(text, 'fluid_particles{room="default"}'), home.particles);
  assert.equal(metric(text, 'fluid_solver_info{room="lab",solver="clavet",scene="drop"}'), 1);
  assert.equal(metric(text, 'fluid_rooms{state="awake"}') + metric(text, 'fluid_rooms{state="asleep"}'), 2);
});

test('a viewer of one room receives nothing of another room: frames, broadcasts, replies', async () => {
  assert.equal((await makeRoom({ name: 'iso-a', scene: 'drop', particles: 1500 })).status, 201);
  assert.equal((await makeRoom({ name: 'iso-b', scene: 'dam_break', particles: 4000 })).status, 201);
  const na = (await get(s, '/api/rooms/iso-a')).json.particles;
  const nb = (await get(s, '/api/rooms/iso-b')).json.particles;
  assert.notEqual(na, nb);
  const a = await connect(s, { url: roomWs('iso-a') });
  const b = await connect(s, { url: roomWs('iso-b') });
  const seen = [], seenB = [];
  a.onMessage = (m) => seen.push(m);
  b.onMessage = (m) => seenB.push(m);
  await a.next((m) => m.type === 'hello');
  await b.next((m) => m.type === 'hello');
  // room B changes: paused over REST, a material over the WebSocket, a new scene
  assert.equal((await http(s, 'POST', '/api/rooms/iso-b/pause')).status, 200);
  assert.equal((await b.command({ type: 'set_param', material: 'water', params: { viscosity_linear: 0.3 } })).ok, true);
  assert.equal((await http(s, 'POST', '/api/rooms/iso-b/scene', { body: { name: 'drop', particles: 2500 } })).status, 200);
  // B's viewer sees each of them (the broadcasts do go out) ...
  await until(() => ['state', 'param', 'scene'].every((t) => seenB.some((m) => m.type === t)), "room B's broadcasts");
  // ... and A's, after frames of its own room for a while, saw none of them
  const tick0 = (await get(s, '/api/rooms/iso-a/stats')).json.tick;
  await until(async () => (await get(s, '/api/rooms/iso-a/stats')).json.tick >= tick0 + 30, 'thirty ticks of room A');
  await a.next((m) => m.type === 'frame' && m.ids && m.tick >= tick0 + 20);
  a.close();
  b.close();
  const kinds = new Set();
  for (const m of seen) kinds.add(m.type);
  assert.equal(seen.some((m) => m.type === 'state' || m.type === 'param' || m.type === 'scene'), false,
    `room A's viewer got room B's broadcasts: ${[...kinds].join(', ')}`);
  for (const m of seen.filter((x) => x.type === 'frame' && x.ids))
    assert.equal(m.ids.length, na, `a frame of ${m.ids.length} particles in room A (${na}); room B has ${nb}`);
  // the default room went on running, unpaused, through all of it
  const home = (await get(s, '/api/stats')).json;
  assert.equal(home.paused, false);
  assert.equal(home.scene, 'dam_break');
});

test('names, scenes and fields are checked; a name is unique; the default room cannot be deleted', async () => {
  const bad = await makeRoom({ name: 'Lab_1' });
  assert.equal(bad.status, 400);
  assert.equal(bad.json.code, 'bad_request');
  assert.match(bad.json.error, /1 to 31 characters of a-z, 0-9 and '-'/);
  assert.equal((await makeRoom({ name: 'x'.repeat(32) })).status, 400);
  assert.equal((await makeRoom({})).status, 400);
  const scene = await makeRoom({ name: 'nosuch', scene: 'no-such-scene' });
  assert.equal(scene.status, 400);
  assert.match(scene.json.error, /unknown scene/);
  assert.match((await makeRoom({ name: 'f', colour: 'red' })).json.error, /unknown field 'colour'/);
  assert.equal((await makeRoom({ name: 'r1', public_role: 'admin' })).status, 400);
  assert.equal((await makeRoom({ name: 'dup' })).status, 201);
  const dup = await makeRoom({ name: 'dup' });
  assert.equal(dup.status, 409);
  assert.equal(dup.json.code, 'conflict');
  const del = await http(s, 'DELETE', '/api/rooms/default');
  assert.equal(del.status, 409);
  assert.equal((await get(s, '/api/rooms/nosuch')).status, 404);
  const unknown = await get(s, '/api/rooms/nosuch/stats');
  assert.equal(unknown.status, 404);
  assert.equal(unknown.json.code, 'not_found');
  assert.match(unknown.json.error, /no room named 'nosuch'/);
  assert.equal((await get(s, '/api/rooms/Bad/stats')).status, 400);
  assert.equal((await http(s, 'PUT', '/api/rooms')).status, 405);
  // a stream for a room that is not there is closed with the reason
  const c = await connect(s, { url: roomWs('nosuch') });
  const closed = await c.closedWithin();
  assert.equal(closed.code, 4004);
  assert.match(closed.reason, /no room named 'nosuch'/);
});

test('PATCH changes the public role; DELETE closes the room\'s viewers with the reason and frees its name', async () => {
  assert.equal((await makeRoom({ name: 'gone', scene: 'drop', particles: 1000 })).status, 201);
  const p = await http(s, 'PATCH', '/api/rooms/gone', { body: { public_role: 'viewer' } });
  assert.equal(p.status, 200, p.text);
  assert.equal(p.json.public_role, 'viewer');
  assert.equal((await http(s, 'PATCH', '/api/rooms/gone', { body: { public_role: 'boss' } })).status, 400);
  assert.equal((await http(s, 'PATCH', '/api/rooms/gone', { body: { name: 'x' } })).status, 400);
  const c = await connect(s, { url: roomWs('gone') });
  await c.next((m) => m.type === 'frame');
  const d = await http(s, 'DELETE', '/api/rooms/gone');
  assert.equal(d.status, 200, d.text);
  const closed = await c.closedWithin();
  assert.equal(closed.code, 4004);
  assert.match(closed.reason, /room 'gone' was deleted/);
  assert.equal((await get(s, '/api/rooms/gone/stats')).status, 404);
  assert.equal((await http(s, 'DELETE', '/api/rooms/gone')).status, 404);
  assert.equal((await get(s, '/api/rooms')).json.rooms.some((x) => x.name === 'gone'), false);
  // the name is free again, for a new world
  const again = await makeRoom({ name: 'gone', scene: 'dam_break', particles: 1200 });
  assert.equal(again.status, 201, again.text);
  assert.equal(again.json.scene, 'dam_break');
  assert.equal(again.json.tick < 1000, true);
});

test('a room\'s page is /r/{name}/: the web client under the room\'s path', async () => {
  assert.equal((await makeRoom({ name: 'page' })).status, 201);
  // the same files as the server's own page at /
  const page = await fetch(`${s.base}/r/page/`);
  assert.equal(page.status, 200);
  assert.equal(await page.text(), await (await fetch(`${s.base}/`)).text());
  const js = await fetch(`${s.base}/r/page/app.js`);
  assert.equal(js.status, 200);
  assert.match(js.headers.get('content-type'), /javascript/);
  assert.equal(await js.text(), await (await fetch(`${s.base}/app.js`)).text());
  assert.deepEqual(await (await fetch(`${s.base}/r/page/sub/data.json`)).json(), { a: 1 });
  const redirect = await fetch(`${s.base}/r/page`, { redirect: 'manual' });
  assert.equal(redirect.status, 301);
  assert.equal(redirect.headers.get('location'), '/r/page/');
  assert.equal((await fetch(`${s.base}/r/nosuch/`)).status, 404);
  assert.equal((await fetch(`${s.base}/r/page/nosuch.js`)).status, 404);
});

test('with --token, making rooms needs the token; changing and deleting one, its owner', async () => {
  const t = await startServer(['--particles', '1000', '--token', 'rooms-secret']);
  const auth = { authorization: 'Bearer rooms-secret' };
  const no = await http(t, 'POST', '/api/rooms', { body: { name: 'locked' } });
  assert.equal(no.status, 403);
  assert.match(no.json.error, /needs the admin role/);
  assert.equal((await get(t, '/api/rooms')).json.rooms.length, 1);
  const yes = await http(t, 'POST', '/api/rooms', { body: { name: 'locked' }, headers: auth });
  assert.equal(yes.status, 201, yes.text);
  assert.equal((await http(t, 'PATCH', '/api/rooms/locked', { body: { public_role: 'viewer' } })).status, 403);
  assert.equal((await http(t, 'DELETE', '/api/rooms/locked')).status, 403);
  assert.equal((await http(t, 'DELETE', '/api/rooms/locked', { headers: { authorization: 'Bearer wrong' } })).status, 401);
  assert.equal((await http(t, 'DELETE', '/api/rooms/locked', { headers: auth })).status, 200);
});

test('with --data-dir every room survives a restart: its world at the tick it was saved, its role, its invites', async () => {
  const { existsSync, readdirSync } = await import('node:fs');
  const { join } = await import('node:path');
  const dir = tempDir('fluid-rooms-');
  const args = ['--particles', '1000', '--data-dir', dir, '--token', 'keep-admin'];
  const admin = { authorization: 'Bearer keep-admin' };
  let t = await startServer(args);
  assert.equal((await http(t, 'POST', '/api/rooms', { body: { name: 'kept', scene: 'drop', particles: 1500, public_role: 'viewer' }, headers: admin })).status, 201);
  assert.equal((await http(t, 'POST', '/api/rooms', { body: { name: 'dropped' }, headers: admin })).status, 201);
  assert.equal((await http(t, 'POST', '/api/rooms/kept/rotate-key', { headers: admin })).status, 200);
  const inv = (await http(t, 'POST', '/api/rooms/kept/invites', { body: { role: 'editor' }, headers: admin })).json.token;
  assert.equal((await http(t, 'POST', '/api/rooms/kept/pause', { headers: { authorization: `Bearer ${inv}` } })).status, 200);
  const before = (await get(t, '/api/rooms/kept/particles?offset=0&limit=1500')).json;
  assert.equal((await http(t, 'DELETE', '/api/rooms/dropped', { headers: admin })).status, 200);
  await t.stop(); // SIGTERM: every room saves
  assert.ok(existsSync(join(dir, 'rooms', 'kept', 'world.snapshot')));
  assert.ok(readdirSync(join(dir, 'rooms')).some((f) => f.startsWith('.deleted-dropped-')), 'a deleted room\'s folder is set aside');
  t = await startServer(args);
  const rooms = (await get(t, '/api/rooms')).json.rooms;
  assert.deepEqual(rooms.map((r) => r.name).sort(), ['default', 'kept']);
  const kept = rooms.find((r) => r.name === 'kept');
  assert.equal(kept.public_role, 'viewer');
  assert.equal(kept.scene, 'drop');
  assert.equal(kept.paused, true);
  const after = (await get(t, '/api/rooms/kept/particles?offset=0&limit=1500')).json;
  assert.equal(after.tick, before.tick, 'at the tick it was saved');
  assert.deepEqual(after.positions, before.positions);
  // the invite made after the rotation is still good; the key generation was kept
  assert.equal((await http(t, 'POST', '/api/rooms/kept/resume', { headers: { authorization: `Bearer ${inv}` } })).status, 200);
  await t.stop();
});

test('a server recording into one folder (--record-dir) holds its default room only, saying why', async () => {
  const t = await startServer(['--particles', '1000', '--record-dir', tempDir('fluid-rooms-rec-')]);
  const r = await http(t, 'POST', '/api/rooms', { body: { name: 'other' } });
  assert.equal(r.status, 409);
  assert.match(r.json.error, /--record-dir/);
  assert.equal((await get(t, '/api/rooms')).json.rooms.length, 1);
});

test('admission: with a step budget, a room that does not fit is sized down, and one past the budget refused with how full', async () => {
  const t = await startServer(['--particles', '1000', '--step-budget', '0.7'], { env: { FLUID_STEP_BUDGET: '0.7' } });
  const want = 60000; // a tick of 60k particles takes far more than 70% of 16.7 ms on any machine of this kind
  const made = [];
  let full = null;
  for (let i = 0; i < 8 && !full; i++) {
    const r = await http(t, 'POST', '/api/rooms', { body: { name: `adm-${i}`, scene: 'dam_break', particles: want } });
    if (r.status === 201) made.push(r.json);
    else full = r;
  }
  assert.ok(full, `no room was refused: ${made.map((m) => m.particles).join(', ')}`);
  assert.equal(full.status, 503, full.text);
  assert.equal(full.json.code, 'busy');
  assert.match(full.json.error, /the server is full: its rooms take [\d.]+ of the [\d.]+ core-ms of each tick they may \(--step-budget 70% of 16.7 ms on \d+ threads?\)/);
  for (const m of made) {
    assert.ok(m.particles < want && m.particles >= 1000, `room ${m.name} admitted with ${m.particles}`);
    assert.equal((await get(t, `/api/rooms/${m.name}/stats`)).json.particles, m.particles, 'the answer says the size it was admitted at');
  }
  const listed = (await get(t, '/api/rooms')).json.rooms.map((x) => x.name);
  assert.equal(listed.includes(`adm-${made.length}`), false, 'the refused room is not listed');
  await t.stop();
});

test('admission: a room that fits starts as the world it was asked for (its scene loaded again at the size asked, not the count it gave)', async () => {
  // mps_dam_break sizes its tank by the volume asked for: 3000 particles give 2,783, whose own tank is smaller
  const t = await startServer(['--scene', 'mps_dam_break', '--particles', '3000', '--step-budget', '0.7'], { env: { FLUID_STEP_BUDGET: '0.7' } });
  const r = await http(t, 'POST', '/api/rooms', { body: { name: 'same', scene: 'mps_dam_break', particles: 3000 } });
  assert.equal(r.status, 201, r.text);
  const bounds = async (url) => {
    const c = await connect(t, url ? { url } : {});
    const h = await c.next((m) => m.type === 'hello');
    c.close();
    return { bounds: h.bounds, particles: h.particles };
  };
  const home = await bounds(null), room = await bounds(`${t.wsUrl}r/same/`);
  assert.equal(room.particles, home.particles);
  assert.deepEqual(room.bounds, home.bounds, 'the admitted room\'s tank is the one the default room got for the same request');
  await t.stop();
});

test('an idle room sleeps (no step) and wakes at the tick where it stopped, for a viewer or a request', async () => {
  const t = await startServer(['--particles', '1000', '--room-idle-s', '1']);
  assert.equal((await http(t, 'POST', '/api/rooms', { body: { name: 'nap', scene: 'drop', particles: 1000 } })).status, 201);
  // GET /api/rooms/{name} reads the room without keeping it awake
  await until(async () => (await get(t, '/api/rooms/nap')).json.state === 'asleep', 'the room falls asleep');
  const t1 = (await get(t, '/api/rooms/nap')).json.tick;
  const home0 = (await get(t, '/api/stats')).json.tick;
  await until(async () => (await get(t, '/api/stats')).json.tick >= home0 + 120, 'the default room steps 120 ticks meanwhile');
  const asleep = (await get(t, '/api/rooms/nap')).json;
  assert.equal(asleep.state, 'asleep');
  assert.equal(asleep.tick, t1, 'no step while asleep');
  assert.equal((await get(t, '/api/stats')).json.paused, false, 'the default room never sleeps');
  // a viewer wakes it: it steps on from where it stopped
  const c = await connect(t, { url: `${t.wsUrl}r/nap/` });
  await c.next((m) => m.type === 'hello');
  await until(async () => (await get(t, '/api/rooms/nap')).json.tick > t1 + 10, 'the room steps again for its viewer');
  const awake = (await get(t, '/api/rooms/nap')).json;
  assert.equal(awake.state, 'running');
  const f = await c.next((m) => m.type === 'frame' && m.ids);
  assert.ok(f.tick > t1, `frames go on from tick ${t1} (${f.tick})`);
  c.close();
  await until(async () => (await get(t, '/api/rooms/nap')).json.state === 'asleep', 'asleep again once its viewer left');
  // a request for the room wakes it too
  const t2 = (await get(t, '/api/rooms/nap')).json.tick;
  assert.equal((await get(t, '/api/rooms/nap/stats')).status, 200);
  await until(async () => (await get(t, '/api/rooms/nap/stats')).json.tick > t2 + 10, 'the room steps again for a script');
  await t.stop();
});

test('an asleep room with a folder is evicted (its world freed) and restored at the same tick when opened again', async () => {
  const t = await startServer(['--particles', '1000', '--data-dir', tempDir('fluid-evict-'), '--room-idle-s', '1', '--room-evict-s', '1']);
  assert.equal((await http(t, 'POST', '/api/rooms', { body: { name: 'ev', scene: 'drop', particles: 1200 } })).status, 201);
  assert.equal((await http(t, 'POST', '/api/rooms/ev/pause')).status, 200);
  const before = (await get(t, '/api/rooms/ev/particles?offset=0&limit=1200')).json;
  await until(async () => (await get(t, '/api/rooms/ev')).json.state === 'evicted', 'the room is evicted');
  const m = (await get(t, '/metrics')).text;
  assert.equal(metric(m, 'fluid_rooms{state="evicted"}'), 1);
  // a request under the room brings it back from its save, at the tick it was saved
  const after = (await get(t, '/api/rooms/ev/particles?offset=0&limit=1200')).json;
  assert.equal(after.tick, before.tick);
  assert.deepEqual(after.positions, before.positions);
  assert.notEqual((await get(t, '/api/rooms/ev')).json.state, 'evicted');
  // and a viewer does too, after it is evicted again
  await until(async () => (await get(t, '/api/rooms/ev')).json.state === 'evicted', 'evicted again');
  const c = await connect(t, { url: `${t.wsUrl}r/ev/` });
  const hello = await c.next((m2) => m2.type === 'hello');
  assert.equal(hello.room, 'ev');
  const f = await c.next((m2) => m2.type === 'frame' && m2.ids);
  assert.equal(f.ids.length, before.total);
  assert.equal(f.tick, before.tick, 'paused at the tick it was saved');
  c.close();
  await t.stop();
});
