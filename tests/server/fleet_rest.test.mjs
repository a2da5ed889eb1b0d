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
  // at once, before the relay's view of the directory lists x1 as held: the room it has just made is served
  const inv0 = await http(relay, 'POST', '/api/rooms/x1/invites', { body: { role: 'viewer', ttl_s: 60 }, headers: admin });
  assert.equal(inv0.status, 201, `an invite of x1 through the relay right after its 201: ${inv0.text}`);
  const read0 = await http(relay, 'GET', '/api/rooms/x1/stats', { headers: admin });
  assert.equal(read0.status, 200, `x1's stats through the relay right after: ${read0.text}`);
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

  // reads: the holder's answer through the other node and through the relay; a paused room, so that each
  // answer is still the holder's when compared
  assert.equal((await http(H, 'POST', '/api/rooms/x1/pause', { headers: admin })).status, 200);
  const atH = async (path, headers = admin) => http(H, 'GET', path, { headers });
  const holderUrl = (await fleetOf(O)).nodes.find((n) => n.id === made.json.node).url;
  assert.ok(holderUrl, 'the holder\'s URL is in the directory');
  const room = await atH('/api/rooms/x1');
  assert.equal(room.status, 200, room.text);
  const st = await atH('/api/rooms/x1/stats');
  assert.equal(st.json.paused, true, st.text);
  for (const [edge, s] of [['relay', relay], ['other node', O]]) {
    const r = await http(s, 'GET', '/api/rooms/x1', { headers: admin });
    assert.equal(r.status, 200, `${edge}: ${r.text}`);
    assert.equal(r.headers.get('content-type'), room.headers.get('content-type'));
    // (its realtime ratio, a rate over the last second, moves between two reads even while paused)
    const steady = ({ realtime_ratio: _, ...rest }) => rest;
    assert.deepEqual(steady(r.json), steady(room.json), `GET /api/rooms/x1 through the ${edge} is the holder's: ${r.text} ${room.text}`);
    const rs = await http(s, 'GET', '/api/rooms/x1/stats', { headers: admin });
    assert.equal(rs.status, 200, `${edge}: ${rs.text}`);
    assert.deepEqual([rs.json.paused, rs.json.tick, rs.json.particles], [true, st.json.tick, st.json.particles], `the holder's stats through the ${edge}: ${rs.text}`);
  }
  for (const path of ['/api/rooms/x1/bodies', '/api/rooms/x1/obstacles', '/api/rooms/x1/particles', '/api/rooms/x1/clients']) {
    const at = await atH(path);
    assert.equal(at.status, 200, `${path} at the holder: ${at.text}`);
    for (const [edge, s] of [['relay', relay], ['other node', O]]) {
      const r = await http(s, 'GET', path, { headers: admin });
      assert.equal(r.status, 200, `${path} through the ${edge}: ${r.text}`);
      assert.equal(r.headers.get('content-type'), 'application/json', path);
      if (path.endsWith('/clients')) assert.equal(r.json.count, at.json.count, `${path} through the ${edge}`);
      else assert.deepEqual(r.json, at.json, `${path} through the ${edge} is the holder's`);
      if (path.endsWith('/particles'))
        assert.deepEqual([r.json.tick, r.json.total, r.json.count], [st.json.tick, st.json.particles, Math.min(1000, st.json.particles)]);
    }
  }
  // roles: the holder's, with the credential carried (a viewer reads the stats, not the clients: an owner's)
  const reads = [['/api/rooms/x1/stats', bearer(inv.json.token)], ['/api/rooms/x1', bearer(inv.json.token)],
    ['/api/rooms/x1/clients', bearer(inv.json.token)], ['/api/rooms/x1/stats', bearer('nope')], ['/api/rooms/x1/bodies', bearer('nope')]];
  const seen = new Set();
  for (const [path, headers] of reads) {
    const at = await atH(path, headers);
    seen.add(at.status);
    for (const [edge, s] of [['relay', relay], ['other node', O]]) {
      const r = await http(s, 'GET', path, { headers });
      assert.deepEqual([r.status, r.json?.code], [at.status, at.json.code], `${headers.authorization}, GET ${path} through the ${edge}: ${r.text}`);
      if (edge === 'other node' && at.status === 200) assert.deepEqual(r.json.tick, at.json.tick, path);
    }
  }
  assert.deepEqual([...seen].sort(), [200, 401, 403], 'a viewer reads the stats, is refused the clients; a bad token 401');
  // a read the bus does not carry whole: 421 misdirected, naming the holder and its URL, never a cut body
  // (the holder counts at most 6 exports and snapshots a minute from one party: 5 are asked of it here)
  for (const [path, headers] of [['/api/rooms/x1/snapshot', admin], ['/api/rooms/x1/particles?format=csv', admin],
    ['/api/rooms/x1/particles', { ...admin, accept: 'text/csv' }]]) {
    if (!headers.accept) assert.equal((await http(H, 'GET', path, { headers, raw: true })).status, 200, `${path} at the holder`);
    for (const [edge, s] of [['relay', relay], ['other node', O]]) {
      const r = await http(s, 'GET', path, { headers });
      assert.equal(r.status, 421, `${path} through the ${edge}: ${r.text}`);
      assert.deepEqual([r.json.code, r.json.node, r.json.url], ['misdirected', made.json.node, holderUrl], r.text);
      assert.ok(r.json.error.includes(holderUrl) && r.json.error.includes(`sim node ${made.json.node}`), r.json.error);
    }
  }
  t.diagnostic(`reads through the relay and the other node answered as at node ${made.json.node}; a snapshot there 421 naming ${holderUrl}`);
  assert.equal((await http(H, 'POST', '/api/rooms/x1/resume', { headers: admin })).status, 200);

  // a room the fleet does not have
  for (const s of [relay, O]) {
    assert.equal((await http(s, 'PATCH', '/api/rooms/nope', { body: { public_role: 'player' }, headers: admin })).status, 404);
    assert.equal((await http(s, 'POST', '/api/rooms/nope/pause', { headers: admin })).status, 404);
    assert.equal((await http(s, 'GET', '/api/rooms/nope/stats', { headers: admin })).status, 404);
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
    // (a read at a node of a room it does not hold goes by the directory: 503 until the name leaves it)
    await until(async () => (await get(holder, `/api/rooms/${name}`)).status === 404, `${name} deleted at its holder through the ${edge}`);
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
