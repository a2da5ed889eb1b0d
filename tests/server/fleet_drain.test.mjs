// fleet_drain.test.mjs - moving a fleet's rooms on purpose, on a loopback
// nats-server with JetStream (docs/fleet.md, "Draining"): POST
// /api/fleet/nodes/{id}/drain at another node of the fleet (administrator
// only; a bad id 400, an unknown node 404) drains a node: each room it
// holds is saved at a tick boundary, parked there, released, and claimed by
// another node that steps it from exactly that tick (its log, and a relay's
// viewer: every frame of the old holder's epoch at or before that tick,
// every frame of the new one after it); a room paused when it moves is
// paused after; the drained node holds nothing, places nothing on itself,
// and the relay's commands reach the new holder.  The drain cancelled
// (DELETE, at another node): every node lists the node not draining,
// nothing moves back, and the node takes the rooms of the other two,
// drained, and a room placed then.  A room paused before its
// holder is killed comes back paused.  A takeover weighs the room's cost
// against the taker's step budget: a node without room lets a node with
// room take it, and, when no live node has room, takes it past its budget
// and says so (log, GET /api/fleet, /metrics).  Nothing is timed: each state
// is waited for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, get, http, until, metric, connect } from './lib.mjs';
import { noNats, jetStreamBrokers, fleetOf, roomIn, nodeIn, epochOf } from './jetstream.mjs';

// The rooms a node lists as its own (GET /api/rooms): a read of a room it does not hold goes to the
// holder ("REST through the fleet"), so the node's own list is what says where a room is stepped.
const ownRooms = async (s) => (await get(s, '/api/rooms')).json.rooms.map((r) => r.name);

const why = noNats;
const brokers = jetStreamBrokers('fluid-drain-js-');
after(async () => {
  await stopAll();
  brokers.stop();
});

const TOKEN = 'drain-admin';
const admin = { authorization: `Bearer ${TOKEN}` };

test('drain: every room moves at a tick boundary, none lost or stepped twice, paused stays paused', { skip: why }, async (t) => {
  const b = await brokers.start();
  const url = `nats://127.0.0.1:${b.port}`;
  // (admission off: a sanitized build's ticks are slow, and this test is not about the budget)
  const args = (id) => ['--particles', '1500', '--threads', '1', '--nats', url, '--fleet', 'fdrain', '--node-id', String(id),
    '--fleet-save-s', '1', '--step-budget', '0', '--token', TOKEN];
  const byId = new Map([[1, await startServer(args(1))]]);
  const n1 = byId.get(1);
  const relay = await startServer(['--nats', url, '--fleet', 'fdrain', '--relay', '1', '--relay-id', '5']);
  await until(async () => (await fleetOf(n1)).nodes.some((n) => n.id === 1 && n.live), 'node 1 live');
  // two rooms, both on node 1 (the only node yet); d1's viewers may pause it
  for (const name of ['d1', 'd2']) {
    const r = await http(n1, 'POST', '/api/rooms', { body: { name, particles: 1000, public_role: name === 'd1' ? 'editor' : 'player' }, headers: admin });
    assert.equal(r.status, 201, `${name}: ${r.text}`);
    assert.equal(r.json.node, 1);
  }
  for (const id of [2, 3]) byId.set(id, await startServer(args(id)));
  const n2 = byId.get(2);
  await until(async () => (await fleetOf(n2)).nodes.filter((n) => n.live).length === 3, 'three live nodes');
  // d2 paused (at its holder); d1 watched through the relay
  const p = await http(n1, 'POST', '/api/rooms/d2/pause', { headers: admin });
  assert.equal(p.status, 200, p.text);
  await until(async () => { const e = roomIn(await fleetOf(relay), 'd1'); return e && e.claim === 1; }, 'the relay sees d1');
  const v = await connect(relay, { url: `${relay.wsUrl}r/d1/` });
  const f0 = await v.next((m) => m.type === 'frame');
  const epoch1 = epochOf(f0);
  assert.equal(epoch1 >>> 16, 1, 'frames of claim 1 through the relay');
  const frames = [];
  v.onMessage = (m) => { if (m.type === 'frame') frames.push({ epoch: epochOf(m), tick: m.tick, key: m.key }); };
  await until(() => frames.length >= 3, 'frames of d1 through the relay');

  // the route: administrator only, a node's id, a node of the fleet
  const drainPath = (id) => `/api/fleet/nodes/${id}/drain`;
  const noCred = await http(n2, 'POST', drainPath(1), { body: {} });
  assert.equal(noCred.status, 403, `no credential: the public role: ${noCred.text}`);
  assert.match(noCred.json.error, /admin/);
  for (const bad of ['0', '65536', '4000000000']) {
    const r = await http(n2, 'POST', drainPath(bad), { headers: admin, body: {} });
    assert.equal(r.status, 400, `${bad}: ${r.text}`);
  }
  assert.equal((await http(n2, 'POST', drainPath(9), { headers: admin, body: {} })).status, 404, 'a node not in the fleet');
  assert.equal((await http(n2, 'GET', drainPath(1), { headers: admin })).status, 405, 'a POST');
  assert.equal((await http(n2, 'POST', drainPath(1), { headers: admin, body: { now: true } })).status, 400, 'no body');
  assert.equal((await http(relay, 'POST', drainPath(1), { headers: admin, body: {} })).status, 501, 'a relay never writes the directory');

  // drain node 1, asked at node 2
  const d = await http(n2, 'POST', drainPath(1), { headers: admin, body: {} });
  assert.equal(d.status, 202, d.text);
  assert.deepEqual([d.json.node, d.json.draining, d.json.rooms], [1, true, 2], d.text);
  const fin = await until(async () => {
    const f = await fleetOf(n2);
    const ok = ['d1', 'd2'].every((n) => { const e = roomIn(f, n); return e && [2, 3].includes(e.node) && e.claim === 2 && !e.orphaned; });
    return ok && nodeIn(f, 1)?.draining && f;
  }, () => `every room of node 1 claimed elsewhere\nnode 1: ${n1.stderr.slice(-1500)}`);
  await until(async () => metric((await get(n1, '/metrics')).text, 'fluid_fleet_rooms_held') === 0, 'node 1 holds no room');
  const m1 = (await get(n1, '/metrics')).text;
  assert.equal(metric(m1, 'fluid_fleet_draining'), 1);
  assert.equal(metric(m1, 'fluid_fleet_rooms_released_total'), 2);
  assert.equal(metric(m1, 'fluid_fleet_rooms_lost_total'), 0, 'no room lost: each released');
  assert.equal((await fleetOf(n1)).draining, true);

  // each room resumed at exactly the tick it was parked and released at
  const at = {};
  for (const n of ['d1', 'd2']) {
    const h = byId.get(roomIn(fin, n).node);
    const parked = new RegExp(`room '${n}' parked at tick (\\d+)`).exec(n1.stderr);
    const released = new RegExp(`room '${n}' released at tick (\\d+) \\(save (\\d+)\\)`).exec(n1.stderr);
    assert.ok(parked && released, `node 1 parks and releases ${n}: ${n1.stderr.slice(-1500)}`);
    assert.equal(released[1], parked[1], `${n} released at the tick it was parked at`);
    const resumed = await until(() => new RegExp(`room '${n}' taken over \\(claim 2\\): stepping from tick (\\d+) \\(simulated time ([\\d.]+) s\\)`).exec(h.stderr),
      `${n} resumed on node ${roomIn(fin, n).node}`);
    assert.match(h.stderr, new RegExp(`room '${n}' released by its holder: taken over here \\(claim 2\\) from save ${released[2]} \\(tick ${released[1]},`));
    assert.equal(resumed[1], released[1], `${n} steps on from the tick it was released at (nothing lost, nothing repeated)`);
    at[n] = { tick: Number(released[1]), h };
    t.diagnostic(`${n}: parked and released by node 1 at tick ${released[1]} (save ${released[2]}), stepping on node ${roomIn(fin, n).node} from tick ${resumed[1]}`);
  }
  // the relay's viewer: the old epoch up to that tick, the new one after it, on the same connection
  const T = at.d1.tick;
  await until(() => frames.some((f) => f.epoch >>> 16 === 2 && f.tick > T + 3), 'frames of the new holder through the relay');
  const old = frames.filter((f) => f.epoch >>> 16 === 1), neu = frames.filter((f) => f.epoch >>> 16 === 2);
  assert.equal(old.length + neu.length, frames.length, `only the two claims' epochs: ${frames.map((f) => f.epoch >>> 16)}`);
  assert.ok(old.every((f) => f.tick <= T), `no frame of node 1 past the tick it parked at (${T}): ${old.map((f) => f.tick).slice(-5)}`);
  assert.ok(neu.every((f) => f.tick > T), `no frame of the new holder at or before it: ${neu.map((f) => f.tick).slice(0, 5)}`);
  assert.ok(neu[0].key, 'the new holder starts at a keyframe');
  const firstNew = frames.findIndex((f) => f.epoch >>> 16 === 2);
  assert.ok(frames.slice(firstNew).every((f) => f.epoch >>> 16 === 2), 'no frame of node 1 after the new holder\'s first');
  t.diagnostic(`relay's viewer of d1: last frame of node 1 at tick ${old.at(-1).tick}, first of the new holder at tick ${neu[0].tick} (released at ${T})`);
  assert.equal(v.closed, null, 'the same connection');

  // the paused room is paused there, at the tick it was released at
  const h2 = at.d2.h;
  const s2 = (await get(h2, '/api/rooms/d2/stats')).json;
  assert.equal(s2.paused, true, 'd2 still paused after its move');
  assert.equal(s2.tick, at.d2.tick, 'd2 at the tick it was released at');
  const more = frames.length;
  await until(() => frames.length >= more + 5, 'more frames of d1');
  assert.equal((await get(h2, '/api/rooms/d2/stats')).json.tick, at.d2.tick, 'd2 does not step while paused');

  // a command through the relay reaches the new holder
  const h1 = at.d1.h;
  const pz = await v.command({ type: 'pause' });
  assert.equal(pz.ok, true, JSON.stringify(pz));
  assert.equal((await get(h1, '/api/rooms/d1/stats')).json.paused, true, 'paused on the new holder through the relay');
  v.close();

  // the drained node places no room on itself
  const r3 = await http(n1, 'POST', '/api/rooms', { body: { name: 'd3', particles: 1000 }, headers: admin });
  assert.equal(r3.status, 201, r3.text);
  assert.ok([2, 3].includes(r3.json.node), `d3 placed on node 2 or 3, not the drained node: ${r3.text}`);
  assert.ok(!(await ownRooms(n1)).includes('d1'), 'd1 is no longer on node 1');

  // the drain cancelled: administrator only, at any node, 404 when the node is not draining, 501 at a relay
  const n3 = byId.get(3);
  const noCred2 = await http(n3, 'DELETE', drainPath(1));
  assert.equal(noCred2.status, 403, `no credential: ${noCred2.text}`);
  for (const [id, why] of [[2, 'node 2 is not draining'], [9, 'no node 9 in the fleet']]) {
    const r = await http(n3, 'DELETE', drainPath(id), { headers: admin });
    assert.equal(r.status, 404, `${why}: ${r.text}`);
    assert.equal(r.json.code, 'not_found', r.text);
  }
  assert.equal((await http(relay, 'DELETE', drainPath(1), { headers: admin })).status, 501, 'a relay never writes the directory');
  const c = await http(n3, 'DELETE', drainPath(1), { headers: admin });
  assert.equal(c.status, 202, c.text);
  assert.deepEqual([c.json.node, c.json.draining], [1, false], c.text);
  for (const [id, n] of byId) {
    await until(async () => { const e = nodeIn(await fleetOf(n), 1); return e && e.live && e.draining === false; },
      () => `node ${id} sees node 1 no longer draining`);
  }
  assert.equal((await fleetOf(n1)).draining, false, 'node 1 says it is not draining');
  assert.equal(metric((await get(n1, '/metrics')).text, 'fluid_fleet_draining'), 0);
  assert.match(n3.stderr, /node 1's drain cancelled \(drain\.1 deleted\)/);
  assert.match(n1.stderr, /node 1 is no longer draining/);
  // nothing moves back: each room where it was, at the same claim
  const fc = await fleetOf(n1);
  for (const [n, node, claim] of [['d1', roomIn(fin, 'd1').node, 2], ['d2', roomIn(fin, 'd2').node, 2], ['d3', r3.json.node, 1]])
    assert.deepEqual([roomIn(fc, n)?.node, roomIn(fc, n)?.claim], [node, claim], `${n} stays where it is`);
  const again = await http(n2, 'DELETE', drainPath(1), { headers: admin });
  assert.equal(again.status, 404, `a cancelled drain is not there to cancel again: ${again.text}`);

  // node 1 takes rooms again: nodes 2 and 3 drained, every room moves to node 1, and a new room is placed there
  for (const id of [3, 2]) {
    const r = await http(n1, 'POST', drainPath(id), { headers: admin, body: {} });
    assert.equal(r.status, 202, r.text);
  }
  await until(async () => {
    const f = await fleetOf(n1);
    return ['d1', 'd2', 'd3'].every((n) => { const e = roomIn(f, n); return e && e.node === 1 && e.claim > roomIn(fc, n).claim && !e.orphaned; });
  }, () => `every room taken by node 1\nnode 1: ${n1.stderr.slice(-1500)}`);
  for (const n of ['d1', 'd2', 'd3']) {
    const st = await until(async () => { const q = await get(n1, `/api/rooms/${n}/stats`); return q.status === 200 && q.json; }, `${n} steps on node 1`);
    assert.ok(st.tick > 0, `${n} on node 1: ${JSON.stringify(st)}`);
  }
  const r4 = await http(n2, 'POST', '/api/rooms', { body: { name: 'd4', particles: 1000 }, headers: admin });
  assert.equal(r4.status, 201, r4.text);
  assert.equal(r4.json.node, 1, `d4 placed on node 1, the only node not draining: ${r4.text}`);
  assert.equal((await get(n1, '/api/rooms/d4')).status, 200, 'd4 is on node 1');
  t.diagnostic(`node 1 drained, cancelled, then took d1, d2, d3 from the drained nodes 2 and 3, and d4 was placed on it`);
  assert.doesNotMatch(n1.stderr + n2.stderr + n3.stderr, /Sanitizer|runtime error/);
});

test('a room paused before its holder is killed comes back paused', { skip: why }, async () => {
  const b = await brokers.start();
  const url = `nats://127.0.0.1:${b.port}`;
  const args = (id) => ['--particles', '1500', '--threads', '1', '--nats', url, '--fleet', 'fpause', '--node-id', String(id),
    '--fleet-save-s', '1', '--step-budget', '0'];
  const n1 = await startServer(args(1));
  await until(async () => (await fleetOf(n1)).nodes.some((n) => n.live), 'node 1 live');
  assert.equal((await http(n1, 'POST', '/api/rooms', { body: { name: 'p1', particles: 1000 } })).status, 201);
  await until(async () => (await get(n1, '/api/rooms/p1/stats')).json?.tick > 10, 'p1 steps');
  const p = await http(n1, 'POST', '/api/rooms/p1/pause');
  assert.equal(p.status, 200, p.text);
  const pausedAt = (await get(n1, '/api/rooms/p1/stats')).json.tick;
  // two saves after the pause's answer: the later was taken after the pause (the first may have been on its way).
  // The directory lists p1 once node 1's watch has seen its record, which a loaded broker can deliver after the
  // room has stepped and paused: wait for the listing, do not assume it.
  const s0 = (await until(async () => roomIn(await fleetOf(n1), 'p1')?.snap, 'p1 in node 1\'s directory')).save;
  const e = await until(async () => { const x = roomIn(await fleetOf(n1), 'p1'); return x && x.snap.save >= s0 + 2 && x; }, 'p1 saved paused');
  assert.equal(e.snap.tick, pausedAt, 'the save is of the paused world');
  const n2 = await startServer(args(2));
  await until(async () => (await fleetOf(n2)).nodes.filter((n) => n.live).length === 2, 'two live nodes');
  await n1.stop('SIGKILL');
  await until(async () => { const x = roomIn(await fleetOf(n2), 'p1'); return x && x.node === 2 && x.claim === 2; }, 'p1 taken over by node 2');
  const st = await until(async () => { const q = await get(n2, '/api/rooms/p1/stats'); return q.status === 200 && q.json; }, 'p1 on node 2');
  // what each node said of p1, for a failure to say why
  const told = () => [['node 1', n1], ['node 2', n2]].map(([who, s]) =>
    `${who}:\n${s.stderr.split('\n').filter((l) => /'p1'|fleet:/.test(l)).slice(-40).join('\n')}`).join('\n');
  assert.equal(st.paused, true, `p1 comes back paused (tick ${st.tick}, paused at ${pausedAt}, save ${e.snap.save})\n${told()}`);
  assert.equal(st.tick, pausedAt, `at the tick it was paused at\n${told()}`);
  // it stays there: the next saves of node 2 (paused: by wall time) are of the same tick
  const s1 = (await until(async () => roomIn(await fleetOf(n2), 'p1')?.snap, 'p1 in node 2\'s directory')).save;
  await until(async () => roomIn(await fleetOf(n2), 'p1')?.snap.save >= s1 + 2, 'p1 saved twice by node 2');
  const again = (await get(n2, '/api/rooms/p1/stats')).json;
  assert.deepEqual([again.paused, again.tick], [true, pausedAt], 'not stepped on node 2');
});

test('a takeover weighs the room against the step budget; past it only when no node has room, and says so', { skip: why }, async (t) => {
  const b = await brokers.start();
  const url = `nats://127.0.0.1:${b.port}`;
  // nodes 1 and 3 with admission off (every room fits); node 2 with a budget its default room alone overruns
  const args = (id, budget) => ['--particles', '1500', '--threads', '1', '--nats', url, '--fleet', 'fbudget', '--node-id', String(id),
    '--fleet-save-s', '1', '--step-budget', String(budget)];
  const byId = new Map([[1, await startServer(args(1, 0))], [3, await startServer(args(3, 0))]]);
  const n1 = byId.get(1);
  await until(async () => (await fleetOf(n1)).nodes.filter((n) => n.live).length === 2, 'nodes 1 and 3 live');
  for (const name of ['b1', 'b2', 'b3']) assert.equal((await http(n1, 'POST', '/api/rooms', { body: { name, particles: 1000 } })).status, 201);
  byId.set(2, await startServer(args(2, 0.01)));
  const n2 = byId.get(2);
  // every room's key says what it costs its holder; node 2 has no room for one
  const f0 = await until(async () => {
    const f = await fleetOf(n2);
    return f.nodes.filter((n) => n.live).length === 3 && ['b1', 'b2', 'b3'].every((n) => roomIn(f, n)?.ms > 0) && f;
  }, 'node 2 sees three live nodes and the rooms\' costs');
  const nb2 = nodeIn(f0, 2);
  assert.ok(nb2.free_ms < Math.min(...['b1', 'b2', 'b3'].map((n) => roomIn(f0, n).ms)), `node 2 has no room: ${JSON.stringify(nb2)}`);

  // the holder of b1 killed: its rooms go to the other node with room, never to node 2
  const xId = roomIn(f0, 'b1').node, zId = xId === 1 ? 3 : 1;
  const xRooms = ['b1', 'b2', 'b3'].filter((n) => roomIn(f0, n).node === xId);
  await byId.get(xId).stop('SIGKILL');
  byId.delete(xId);
  let seen = null;
  await until(async () => {
    const f = seen = await fleetOf(n2);
    return xRooms.every((n) => roomIn(f, n).node === zId && roomIn(f, n).claim === 2 && !roomIn(f, n).orphaned);
  }, () => `node ${xId}'s rooms taken over by node ${zId}: ${JSON.stringify(seen?.rooms)}\nnode ${zId}: ${byId.get(zId).stderr.slice(-1500)}\nnode 2: ${n2.stderr.slice(-1000)}`);
  const m2 = (await get(n2, '/metrics')).text;
  assert.equal(metric(m2, 'fluid_fleet_takeovers_total'), 0, 'node 2, without room, took none');
  assert.equal(metric(m2, 'fluid_fleet_takeovers_over_budget_total'), 0);

  // node 3's last: no live node has room but node 2, which takes every room past its budget and says so
  await byId.get(zId).stop('SIGKILL');
  byId.delete(zId);
  const f2 = await until(async () => {
    const f = await fleetOf(n2);
    return ['b1', 'b2', 'b3'].every((n) => roomIn(f, n).node === 2 && roomIn(f, n).here) && f;
  }, () => `every room taken over by node 2\n${n2.stderr.slice(-1500)}`);
  for (const n of ['b1', 'b2', 'b3']) {
    assert.equal(roomIn(f2, n).over_budget, true, `${n} held past node 2's budget: ${JSON.stringify(roomIn(f2, n))}`);
    assert.match(n2.stderr, new RegExp(`room '${n}' \\([\\d.]+ core-ms a tick\\) taken over here past this node's step budget`));
    const s = (await get(n2, `/api/rooms/${n}/stats`)).json;
    await until(async () => (await get(n2, `/api/rooms/${n}/stats`)).json.tick > s.tick, `${n} steps on node 2`);
  }
  await until(async () => metric((await get(n2, '/metrics')).text, 'fluid_fleet_takeovers_over_budget_total') === 3, 'three counted');
  await until(async () => nodeIn(await fleetOf(n2), 2).over_budget, 'node 2 shown past its budget (its record: used_ms > budget_ms)');
  t.diagnostic(`node ${xId} killed: ${xRooms.join(', ')} to node ${zId} (room in its budget); node ${zId} killed: all to node 2, past its budget`);
});
