// fleet_rest.test.mjs - the REST routes of the rooms through any relay or
// node of a fleet (docs/fleet.md, "REST through the fleet"), on a loopback
// nats-server with JetStream: POST /api/rooms at a relay makes the room on a
// node (201, the node's answer; 409 for a name taken); a pause, a step, a
// PATCH, an invite and a DELETE sent to the relay and to the node that does
// not hold the room are applied at the holder (its paused flag, its ticks,
// its public role, the invite verifying there, the room gone); the roles are
// the holder's, answered alike at every edge (a viewer's invite 403, a bad
// credential 401, no credential the public role's answer); a room the fleet
// does not have 404; a room whose holder stopped answering (no node holds
// it) 503 with Retry-After at once.  Nothing is timed: each state is waited
// for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, get, http, until } from './lib.mjs';
import { noNats, jetStreamBrokers, fleetOf, roomIn } from './jetstream.mjs';

const brokers = jetStreamBrokers('fluid-rest-js-');
after(async () => {
  await stopAll();
  brokers.stop();
});

const TOKEN = 'rest-admin';
const admin = { authorization: `Bearer ${TOKEN}` };
const bearer = (t) => ({ authorization: `Bearer ${t}` });

test('rooms through a relay and a node that does not hold them: made, changed, stepped, deleted at the holder; roles; 503 between holders', { skip: noNats }, async (t) => {
  const b = await brokers.start();
  const url = `nats://127.0.0.1:${b.port}`;
  const args = (id) => ['--particles', '1500', '--threads', '1', '--nats', url, '--fleet', 'frest', '--node-id', String(id),
    '--fleet-save-s', '1', '--step-budget', '0', '--token', TOKEN];
  const byId = new Map([[1, await startServer(args(1))], [2, await startServer(args(2))]]);
  const relay = await startServer(['--nats', url, '--fleet', 'frest', '--relay', '1', '--relay-id', '6', '--token', TOKEN]);
  await until(async () => (await fleetOf(byId.get(1))).nodes.filter((n) => n.live).length === 2, 'two live nodes');
  await until(async () => (await fleetOf(relay)).nodes.filter((n) => n.live).length === 2, 'the relay reads the directory');

  // POST /api/rooms at the relay: one node places it, as its own POST does
  const none = await http(relay, 'POST', '/api/rooms', { body: { name: 'x1', particles: 1000 } });
  const noneAtNode = await http(byId.get(1), 'POST', '/api/rooms', { body: { name: 'x1', particles: 1000 } });
  assert.deepEqual([none.status, none.json], [noneAtNode.status, noneAtNode.json], 'no credential: the node\'s answer');
  assert.equal(none.status, 403, none.text);
  const made = await http(relay, 'POST', '/api/rooms', { body: { name: 'x1', particles: 1000, public_role: 'viewer' }, headers: admin });
  assert.equal(made.status, 201, made.text);
  assert.equal(made.json.name, 'x1');
  assert.ok([1, 2].includes(made.json.node), made.text);
  const H = byId.get(made.json.node), O = byId.get(3 - made.json.node);
  t.diagnostic(`x1 made through the relay on node ${made.json.node}: ${made.text}`);
  const again = await http(relay, 'POST', '/api/rooms', { body: { name: 'x1' }, headers: admin });
  assert.equal(again.status, 409, again.text);
  assert.equal(again.json.code, 'conflict');
  assert.equal((await get(H, '/api/rooms/x1')).json.public_role, 'viewer', 'made at the holder with its settings');
  await until(async () => roomIn(await fleetOf(relay), 'x1')?.claim === 1 && roomIn(await fleetOf(O), 'x1')?.claim === 1, 'the relay and the other node see x1 held');
  const stats = async () => (await get(H, '/api/rooms/x1/stats')).json;

  // pause, step, resume through the relay and through the node that does not hold it
  for (const [edge, s] of [['relay', relay], ['other node', O]]) {
    const p = await http(s, 'POST', '/api/rooms/x1/pause', { headers: admin });
    assert.equal(p.status, 200, `${edge}: ${p.text}`);
    assert.deepEqual([p.json.ok, p.json.paused], [true, true], p.text);
    assert.equal((await stats()).paused, true, `paused at the holder through the ${edge}`);
    const t0 = (await stats()).tick;
    const st = await http(s, 'POST', '/api/rooms/x1/step', { body: { steps: 5 }, headers: admin });
    assert.equal(st.status, 200, `${edge}: ${st.text}`);
    assert.deepEqual([st.json.steps, st.json.tick], [5, t0 + 5], st.text);
    assert.equal((await stats()).tick, t0 + 5, `five ticks stepped at the holder through the ${edge}`);
    const running = await http(s, 'POST', '/api/rooms/x1/resume', { headers: admin });
    assert.equal(running.status, 200, running.text);
    assert.equal((await stats()).paused, false, `resumed at the holder through the ${edge}`);
    const late = await http(s, 'POST', '/api/rooms/x1/step', { body: { steps: 1 }, headers: admin });
    assert.equal(late.status, 409, `a step while running, the holder's refusal: ${late.text}`);
    t.diagnostic(`${edge}: paused, stepped ${t0} -> ${st.json.tick}, resumed at the holder`);
  }

  // PATCH through both; an invite made through the relay verifies at the holder
  for (const [edge, s, role] of [['relay', relay, 'player'], ['other node', O, 'viewer']]) {
    const r = await http(s, 'PATCH', '/api/rooms/x1', { body: { public_role: role }, headers: admin });
    assert.equal(r.status, 200, `${edge}: ${r.text}`);
    assert.deepEqual([r.json.name, r.json.public_role], ['x1', role], r.text);
    assert.equal((await get(H, '/api/rooms/x1')).json.public_role, role, `PATCH through the ${edge} applied at the holder`);
  }
  const inv = await http(relay, 'POST', '/api/rooms/x1/invites', { body: { role: 'viewer' }, headers: admin });
  assert.equal(inv.status, 201, inv.text);
  assert.equal(inv.json.room, 'x1');
  const ed = await http(O, 'POST', '/api/rooms/x1/invites', { body: { role: 'editor' }, headers: admin });
  assert.equal(ed.status, 201, ed.text);
  const byEditor = await http(H, 'POST', '/api/rooms/x1/pause', { headers: bearer(ed.json.token) });
  assert.equal(byEditor.status, 200, `an invite made through the other node is the holder's: ${byEditor.text}`);
  await http(H, 'POST', '/api/rooms/x1/resume', { headers: admin });

  // roles: the holder's answer at every edge
  const asks = [['POST', '/api/rooms/x1/pause', undefined], ['PATCH', '/api/rooms/x1', { public_role: 'player' }],
    ['DELETE', '/api/rooms/x1', undefined], ['POST', '/api/rooms/x1/rotate-key', undefined]];
  for (const [cred, headers, status] of [['a viewer\'s invite', bearer(inv.json.token), 403], ['a wrong token', bearer('nope'), 401], ['none', {}, 403]]) {
    for (const [method, path, body] of asks) {
      const at = await http(H, method, path, { body, headers });
      assert.equal(at.status, status, `${cred}, ${method} ${path} at the holder: ${at.text}`);
      for (const [edge, s] of [['relay', relay], ['other node', O]]) {
        const r = await http(s, method, path, { body, headers });
        assert.deepEqual([r.status, r.json?.code], [at.status, at.json.code], `${cred}, ${method} ${path} through the ${edge}: ${r.text}`);
        if (status === 403) assert.equal(r.json.error, at.json.error, 'the same sentence');
      }
    }
  }
  const s1 = await stats();
  assert.equal(s1.paused, false, 'nothing refused was applied');
  assert.equal((await get(H, '/api/rooms/x1')).json.public_role, 'viewer', 'the public role unchanged by the refusals');

  // a room the fleet does not have
  for (const s of [relay, O]) {
    assert.equal((await http(s, 'PATCH', '/api/rooms/nope', { body: { public_role: 'player' }, headers: admin })).status, 404);
    assert.equal((await http(s, 'POST', '/api/rooms/nope/pause', { headers: admin })).status, 404);
  }

  // DELETE through the other node and through the relay
  const x2 = await http(O, 'POST', '/api/rooms', { body: { name: 'x2', particles: 1000 }, headers: admin });
  assert.equal(x2.status, 201, x2.text);
  await until(async () => roomIn(await fleetOf(relay), 'x2')?.claim === 1, 'the relay sees x2 held');
  for (const [edge, s, name] of [['other node', O, 'x1'], ['relay', relay, 'x2']]) {
    const holder = byId.get(roomIn(await fleetOf(relay), name).node);
    const d = await http(s, 'DELETE', `/api/rooms/${name}`, { headers: admin });
    assert.equal(d.status, 200, `${edge}: ${d.text}`);
    assert.deepEqual([d.json.ok, d.json.name], [true, name], d.text);
    assert.equal((await get(holder, `/api/rooms/${name}`)).status, 404, `${name} deleted at its holder through the ${edge}`);
    await until(async () => !roomIn(await fleetOf(relay), name), `${name} gone from the directory`);
  }

  // a room whose holder stops answering: 503 with Retry-After at once, never a wait
  const x3 = await http(relay, 'POST', '/api/rooms', { body: { name: 'x3', particles: 1000 }, headers: admin });
  assert.equal(x3.status, 201, x3.text);
  const H3 = byId.get(x3.json.node), O3 = byId.get(3 - x3.json.node);
  await until(async () => roomIn(await fleetOf(relay), 'x3')?.claim === 1, 'the relay sees x3 held');
  await O3.stop();
  await until(async () => (await fleetOf(relay)).nodes.filter((n) => n.live).length === 1, 'one live node');
  H3.proc.kill('SIGSTOP');
  try {
    await until(async () => roomIn(await fleetOf(relay), 'x3')?.orphaned, 'x3 orphaned at the relay');
    for (const [method, path, body] of [['POST', '/api/rooms/x3/pause', undefined], ['PATCH', '/api/rooms/x3', { public_role: 'editor' }], ['POST', '/api/rooms/x3/step', { steps: 1 }]]) {
      const r = await http(relay, method, path, { body, headers: admin });
      assert.equal(r.status, 503, `${method} ${path}: ${r.text}`);
      assert.equal(r.json.code, 'busy');
      assert.match(r.json.error, /between sim nodes/);
      assert.equal(r.headers.get('retry-after'), '2');
    }
  } finally {
    H3.proc.kill('SIGCONT');
  }
});
