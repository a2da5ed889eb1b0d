// bodies.test.mjs - rigid bodies over the WebSocket and REST: create, see in
// frames, impulse, grab/drag/release with one holder at a time, destroy.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, connect, get, http, until } from './lib.mjs';

let s;
before(async () => { s = await startServer(['--particles', '2000']); });
after(async () => { await stopAll(); });

test('a body created over WebSocket appears in every client\'s frames and in GET /api/bodies', async () => {
  const a = await connect(s), b = await connect(s);
  await a.next((m) => m.type === 'hello');
  await b.next((m) => m.type === 'hello');
  // Above the empty right-hand side of the dam-break tank, clear of the water.
  const r = await a.command({ type: 'body_create', shape: 'box', size: [0.05, 0.05, 0.05], pos: [2.0, 1.2, 0.3], density: 500 });
  assert.equal(r.ok, true, r.error);
  assert.ok(Number.isInteger(r.id));
  const f = await b.next((m) => m.type === 'frame' && m.bodies.some((x) => x.id === r.id));
  const body = f.bodies.find((x) => x.id === r.id);
  assert.equal(body.shape, 'box');
  assert.equal(body.rot.length, 4);
  assert.equal(body.grabbed_by, 0);
  const rest = await get(s, '/api/bodies');
  assert.equal(rest.status, 200);
  const rb = rest.json.bodies.find((x) => x.id === r.id);
  assert.ok(rb && rb.mass > 0 && rb.shape === 'box');
  // It falls under gravity (read 10 ticks on, however long they take).
  const tick0 = (await get(s, '/api/stats')).json.tick;
  await until(async () => (await get(s, '/api/stats')).json.tick >= tick0 + 10, 'ten ticks');
  const later = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === r.id);
  assert.ok(later.pos[1] < rb.pos[1], `the box falls (${rb.pos[1]} -> ${later.pos[1]})`);
  a.close(); b.close();
});

test('grab, drag and release: one holder at a time, released when the holder leaves', async () => {
  const a = await connect(s), b = await connect(s);
  const ha = await a.next((m) => m.type === 'hello');
  await b.next((m) => m.type === 'hello');
  const { id } = await a.command({ type: 'body_create', shape: 'sphere', size: [0.05, 0, 0], pos: [0.3, 0.5, 0.3] });
  const g = await a.command({ type: 'body_grab', id, point: [0.3, 0.5, 0.3], target: [0.3, 0.7, 0.3] });
  assert.equal(g.ok, true, g.error);
  const f = await b.next((m) => m.type === 'frame' && m.bodies.some((x) => x.id === id && x.grabbed_by === ha.client_id));
  assert.ok(f);
  const steal = await b.command({ type: 'body_grab', id, point: [0.3, 0.5, 0.3], target: [0, 0, 0] });
  assert.equal(steal.ok, false);
  assert.match(steal.error, /held by client/);
  const drag = await b.command({ type: 'body_release', id });
  assert.equal(drag.ok, false);
  assert.match(drag.error, /not held by you/);
  a.send({ type: 'body_drag', rid: 0, id, target: [0.35, 0.7, 0.3] }); // no reply on success
  // applied, with a few ticks of the spring: a's next command is applied after it
  assert.equal((await a.command({ type: 'body_impulse', id, point: [0.3, 0.5, 0.3], impulse: [0, 0, 0] })).ok, true);
  const tick0 = (await get(s, '/api/stats')).json.tick;
  await until(async () => (await get(s, '/api/stats')).json.tick >= tick0 + 5, 'five ticks');
  const held = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === id);
  assert.equal(held.grabbed_by, ha.client_id, 'still held after a drag (the spring itself is the core\'s to test)');
  a.close(); // leaving releases the grab
  await b.next((m) => m.type === 'frame' && m.bodies.some((x) => x.id === id && x.grabbed_by === 0));
  assert.equal((await b.command({ type: 'body_grab', id, point: held.pos, target: held.pos })).ok, true);
  assert.equal((await b.command({ type: 'body_release', id })).ok, true);
  b.close();
});

test('REST: POST /api/bodies, impulse, DELETE, and errors', async () => {
  const c = await http(s, 'POST', '/api/bodies', { body: { shape: 'capsule', size: [0.03, 0.06, 0], pos: [0.6, 0.5, 0.6], rot: [0.7071, 0.7071, 0, 0] } });
  assert.equal(c.status, 200, c.text);
  const id = c.json.id;
  await http(s, 'POST', '/api/pause');
  const v0 = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === id).vel;
  const imp = await http(s, 'POST', `/api/bodies/${id}/impulse`, { body: { point: [0.6, 0.5, 0.6], impulse: [0, 0, 0.05] } });
  assert.equal(imp.status, 200, imp.text);
  const v1 = (await get(s, '/api/bodies')).json.bodies.find((x) => x.id === id).vel;
  assert.ok(v1[2] > v0[2], `the impulse changes the velocity (${v0[2]} -> ${v1[2]})`);
  await http(s, 'POST', '/api/resume');
  assert.equal((await http(s, 'POST', '/api/bodies', { body: { shape: 'cone', size: [1, 1, 1], pos: [0, 0, 0] } })).status, 400);
  assert.equal((await http(s, 'POST', '/api/bodies/999999/impulse', { body: { point: [0, 0, 0], impulse: [0, 1, 0] } })).status, 404);
  assert.equal((await http(s, 'DELETE', `/api/bodies/${id}`)).status, 200);
  assert.equal((await get(s, '/api/bodies')).json.bodies.some((x) => x.id === id), false);
  assert.equal((await http(s, 'DELETE', `/api/bodies/${id}`)).status, 404);
  assert.equal((await http(s, 'GET', '/api/bodies/abc')).status, 404);
});

test('body_create outside the world box is refused with the box in the reason', async () => {
  const r = await http(s, 'POST', '/api/bodies', { body: { shape: 'sphere', size: [0.05, 0, 0], pos: [50, 0.5, 0.3] } });
  assert.equal(r.status, 400);
  assert.match(r.json.error, /outside the world box/);
});

test('a command sent again with the same session id and request id is applied once (WebSocket)', async () => {
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const n0 = (await get(s, '/api/bodies')).json.bodies.length;
  const create = { type: 'body_create', rid: 41, sid: 'bodies-test-sid-1', shape: 'box', size: [0.03, 0.03, 0.03], pos: [0.3, 0.5, 0.3] };
  c.send(create);
  const first = await c.next((m) => m.type === 'reply' && m.rid === 41);
  c.close();
  // the page's retry, on a new connection
  const c2 = await connect(s);
  await c2.next((m) => m.type === 'hello');
  c2.send(create);
  const again = await c2.next((m) => m.type === 'reply' && m.rid === 41);
  assert.equal(first.ok, true, JSON.stringify(first));
  const fields = (m) => ({ rid: m.rid, cmd: m.cmd, ok: m.ok, tick: m.tick, id: m.id });
  assert.deepEqual(fields(again), fields(first), 'the first answer');
  assert.equal(again.duplicate, true);
  assert.equal((await get(s, '/api/bodies')).json.bodies.length, n0 + 1);
  // REST requests carry no request ids
  const r1 = await http(s, 'POST', '/api/bodies', { body: { sid: 'bodies-test-sid-2', shape: 'sphere', size: [0.03, 0.03, 0.03], pos: [0.5, 0.5, 0.5] } });
  assert.equal(r1.status, 400);
  assert.match(r1.json.error, /unknown field 'sid'/);
  // a request id reused without a session id is a new command
  const { sid, ...plainCreate } = create;
  assert.ok(sid);
  c2.send(plainCreate);
  const plain = await c2.next((m) => m.type === 'reply' && m.rid === 41 && m.id !== first.id);
  assert.equal(plain.ok, true, JSON.stringify(plain));
  assert.equal(plain.duplicate, undefined);
  assert.equal((await get(s, '/api/bodies')).json.bodies.length, n0 + 2);
  c2.close();
});
