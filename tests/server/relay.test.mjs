// relay.test.mjs - relays on NATS: a sim node and two relays on a
// loopback nats-server.  Clients on relay A and relay B get the same ticks and
// identical frame bytes; a push and a cursor from A reach the world and B; a
// client whose relay dies reconnects to the other; with the broker stopped
// the sim node keeps stepping, the relays tell their viewers, and both resume
// when it returns.  A command retried through the other relay
// (same sid and rid) is applied once.  Bad messages on the bus are refused.
// With docker/nats.conf's per-user permissions a relay speaks only for its
// own clients, and a relay user flooding its subject with scene loads is held
// to a browser's rate limit per client and to its relay's bound as a whole;
// one refused more often than it may send is shed (its subject not read for
// 5 s, another relay read meanwhile); the world's bound on rebuilds holds whatever the relays and REST ask;
// one asking for a keyframe in every wants message gets one coded a second.
// A relay serves the obstacles' meshes it fetched from the sim node (the
// same bytes; 501 for one larger than the broker's max_payload; a forged
// mesh on the bus refused).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, connect as tcp } from 'node:net';
import { startServer, stopAll, connect, get, http, sleep, until, metric, WAIT, forward, frameArrays, BUS_VERSION } from './lib.mjs';

const haveNats = spawnSync('nats-server', ['--version']).status === 0;
const why = haveNats ? false : 'nats-server is not installed (scripts/deps.sh test installs it)';
let broker = null;
after(async () => { await stopAll(); if (broker) broker.kill('SIGKILL'); });

function freePort() {
  return new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
}
// Starts nats-server on the port; resolves once it listens there.
async function startBroker(port, args = [], env = process.env) {
  const p = spawn('nats-server', [...args, '-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore', env });
  let exited = null;
  p.once('exit', (code) => { exited = code; });
  await until(async () => {
    if (exited !== null) throw new Error(`nats-server exited ${exited}`);
    return new Promise((res) => { const s = createServer(); s.once('error', () => res(true)); s.listen(port, '127.0.0.1', () => s.close(() => res(false))); });
  }, `nats-server to listen on ${port}`, { everyMs: 100 }).catch((e) => { p.kill('SIGKILL'); throw e; });
  return p;
}
// A broker on a port that was free a moment ago (another process may take it
// first: then another port): { broker, port }.
async function brokerOnFreePort(args, env) {
  for (let i = 0; ; i++) {
    const port = await freePort();
    try { return { broker: await startBroker(port, args, env), port }; } catch (e) { if (i >= 4) throw e; }
  }
}
const stopBroker = (p) => new Promise((res) => { p.once('exit', res); p.kill('SIGTERM'); });

test('a sim node and two relays: the same frames on both, commands through either, failover, broker outage', { skip: why }, async (t) => {
  let port;
  ({ broker, port } = await brokerOnFreePort());
  const url = `nats://127.0.0.1:${port}`;
  const node = await startServer(['--particles', '3000', '--nats', url, '--world', 'relaytest']);
  const ra = await startServer(['--nats', url, '--world', 'relaytest', '--relay', '1', '--relay-id', '1']);
  const rb = await startServer(['--nats', url, '--world', 'relaytest', '--relay', '1', '--relay-id', '2']);
  const a = await connect(ra), b = await connect(rb);
  t.diagnostic(`node ${node.base}, relay A ${ra.base}, relay B ${rb.base}`);
  // what the clients got and what the servers count, for a failure's message
  const state = async (why) => {
    const kinds = (c) => { const k = {}; for (const m of c.messages) { const t = `${m.type}${m.type === 'frame' ? (m.ids ? '+ids' : '-ids') + (m.key ? ' key' : '') : ''}`; k[t] = (k[t] || 0) + 1; } return JSON.stringify(k); };
    const pick = async (srv) => { const j = (await get(srv, '/api/stats').catch(() => ({}))).json; return JSON.stringify(j && Object.fromEntries(Object.entries(j).filter(([k]) => /key|frame|clients|tick|bus/.test(k)))); };
    return `${why}: A's client got ${kinds(a)}, B's ${kinds(b)}; relay A ${await pick(ra)}; relay B ${await pick(rb)}; ` +
      `relay B clients ${JSON.stringify((await get(rb, '/api/clients').catch(() => ({}))).json)}; node ${await pick(node)}\n` +
      `relay B's log:\n${rb.stderr.slice(-2000)}\nthe node's log:\n${node.stderr.slice(-1500)}`;
  };
  const ha = await a.next((m) => m.type === 'hello'), hb = await b.next((m) => m.type === 'hello');
  assert.notEqual(ha.client_id, hb.client_id, 'client ids are unique across relays');
  assert.equal(ha.scene, 'dam_break');
  assert.equal(ha.capacity, hb.capacity);

  // the same ticks, and identical bytes for the same coding of a frame: until
  // 30 deltas came through both (each compared as it comes)
  const seenA = new Map(), seenB = new Map();
  const coding = (m) => { const dv = new DataView(m.data.buffer, m.data.byteOffset, m.data.byteLength); return `${dv.getUint32(12, true)}/${dv.getUint32(16, true)}`; };
  let same = 0;
  const compare = (mine, other) => (m) => {
    if (m.type !== 'frame') return;
    mine.set(m.seq, m);
    const o = other.get(m.seq);
    if (!o) return;
    assert.equal(m.tick, o.tick, `frame ${m.seq}: tick`);
    if (m.key || o.key || coding(m) !== coding(o)) return; // (a client taking fewer frames gets a delta against an older base)
    assert.deepEqual(new Uint8Array(m._bytes), new Uint8Array(o._bytes), `frame ${m.seq}: bytes`);
    same++;
  };
  a.onMessage = compare(seenA, seenB);
  b.onMessage = compare(seenB, seenA);
  await until(() => same >= 30, () => `30 identical deltas on both relays (${same}; ${seenA.size} and ${seenB.size} frames)`)
    .catch(async (e) => { throw new Error(await state(e.message)); });
  a.onMessage = b.onMessage = null;
  t.diagnostic(`${seenA.size} and ${seenB.size} frames; ${same} identical deltas`);
  assert.equal(a.refused + b.refused, 0, 'every payload decodes on both');

  // a push from A is applied by the sim node (its reply comes back through A);
  // A's cursor is seen by B
  const r = await a.command({ type: 'push', point: [0.3, 0.2, 0.3], radius: 0.3, strength: 3, direction: [0, 1, 0] });
  assert.equal(r.ok, true, JSON.stringify(r));
  assert.ok(r.touched > 0);
  a.send({ type: 'cursor', rid: 0, pos: [0.5, 0.5, 0.5] });
  const withCursor = await b.next((m) => m.type === 'frame' && m.tick >= r.tick && m.cursors.some((c) => c.id === ha.client_id));
  assert.ok(withCursor, "B sees A's cursor");
  // /metrics on every node: the broker's state, and on the sim node each relay's viewers
  const mn = (await get(node, '/metrics')).text, ma = (await get(ra, '/metrics')).text;
  assert.match(mn, /^fluid_bus_connected 1$/m);
  assert.match(ma, /^fluid_bus_connected 1$/m);
  assert.match(mn, /^fluid_relay_viewers\{relay="1"\} 1$/m);
  assert.match(mn, /^fluid_relay_viewers\{relay="2"\} 1$/m);
  // a command retried through the other relay (the page's failover: the same
  // session id and request id) is applied once and answered with the first answer
  const bodies0 = (await get(node, '/api/bodies')).json.bodies.length;
  const create = { type: 'body_create', rid: 777001, sid: 'relaytest-session-1', shape: 'sphere', size: [0.05, 0.05, 0.05], pos: [0.4, 0.5, 0.4] };
  a.send(create);
  const first = await a.next((m) => m.type === 'reply' && m.rid === 777001);
  b.send(create);
  const again = await b.next((m) => m.type === 'reply' && m.rid === 777001);
  assert.equal(first.ok, true, JSON.stringify(first));
  assert.equal(first.duplicate, undefined);
  assert.equal(again.ok, true, JSON.stringify(again));
  assert.equal(again.duplicate, true);
  assert.equal(again.id, first.id, 'the first answer: the same body id');
  assert.equal(again.tick, first.tick);
  assert.equal((await get(node, '/api/bodies')).json.bodies.length, bodies0 + 1, 'one body, not two');
  b.send({ ...create, sid: 'relaytest-session-2' });
  const other = await b.next((m) => m.type === 'reply' && m.rid === 777001);
  assert.equal(other.ok, true, JSON.stringify(other));
  assert.equal(other.duplicate, undefined, 'another session with the same rid is another command');
  assert.equal((await get(node, '/api/bodies')).json.bodies.length, bodies0 + 2);
  assert.match((await get(node, '/metrics')).text, /^fluid_commands_duplicate_total{room="default"} 1$/m);
  const badSid = await a.command({ type: 'pause', sid: 'a b' });
  assert.equal(badSid.ok, false);
  assert.match(badSid.error, /'sid' must be 8 to 31 characters/);

  const bad = await a.command({ type: 'push', point: [0, 0], radius: 1, strength: 1, direction: [0, 1, 0] });
  assert.equal(bad.ok, false);
  const st = (await get(node, '/api/stats')).json;
  assert.ok(st.commands_applied >= 1);

  // REST writes through a relay reach the sim node; data answers stay on it
  const pr = await http(rb, 'POST', '/api/pause');
  assert.equal(pr.status, 200, pr.text);
  assert.equal(pr.json.paused, true);
  // (/api/stats is the sim's last published statistics: it follows)
  const pausedIs = (want) => until(async () => (await get(node, '/api/stats')).json.paused === want, `the sim node's paused to be ${want}`);
  await pausedIs(true);
  assert.equal((await http(ra, 'POST', '/api/resume')).status, 200);
  await pausedIs(false);
  // a refusal crosses the bus with its code: the relay's REST client gets the sim node's status
  const short = await http(ra, 'POST', '/api/push', { body: { point: [0, 0] } });
  assert.deepEqual([short.status, short.json?.code], [400, 'bad_request'], short.text);
  const running = await http(ra, 'POST', '/api/step', { body: { steps: 1 } });
  assert.deepEqual([running.status, running.json?.code], [409, 'conflict'], running.text);
  const lava = await http(rb, 'PATCH', '/api/materials/lava', { body: { stiffness: 1 } });
  assert.deepEqual([lava.status, lava.json?.code], [404, 'not_found'], lava.text);
  const data = await get(ra, '/api/particles');
  assert.deepEqual([data.status, data.json?.code], [501, 'not_implemented'], data.text);
  const wsRunning = await a.command({ type: 'step', steps: 1 });
  assert.deepEqual([wsRunning.ok, wsRunning.code], [false, 'conflict'], wsRunning.error);
  assert.equal((await get(ra, '/api/stats')).json.tick > 0, true, 'read-only views from the sim node');
  // 30 scene loads through relay A's REST at once: the sim node holds a
  // relay's costly commands to one client's share (8 at once at the default
  // rate): the rest are answered 429 "rate limited", code rate_limited
  const loads = await Promise.all(Array.from({ length: 30 }, () => http(ra, 'POST', '/api/scene', { body: { name: 'dam_break', particles: 3000 } })));
  const limited = loads.filter((x) => x.status === 429 && x.json?.code === 'rate_limited' && Number(x.headers.get('retry-after')) >= 1 &&
    /^rate limited: .*clients of relay 1 share/.test(x.json?.error));
  t.diagnostic(`30 scene loads through a relay's REST: ${loads.filter((x) => x.status === 200).length} loaded, ${limited.length} rate limited`);
  assert.ok(limited.length >= 1 && loads.every((x) => x.status === 200 || limited.includes(x)), loads.map((x) => x.status).join(' '));

  // relay A dies: its client sees the close and moves to B (as the page
  // does, from its list), where it gets frames it decodes
  await ra.stop('SIGKILL');
  assert.ok(await a.closedWithin(), "A's client sees its relay go");
  const a2 = await connect(rb);
  const moved = await a2.next((m) => m.type === 'frame' && m.ids);
  assert.equal(a2.refused, 0);
  assert.ok(moved.n > 0, "A's client streams from relay B");

  // the broker stops: the sim node steps on (120 ticks, 2 s of its time), B
  // tells its viewers, both resume when it is back
  const tick0 = (await get(node, '/api/stats')).json.tick;
  await stopBroker(broker);
  const down = await b.next((m) => m.type === 'status' && m.connected === false);
  assert.match(down.text, /lost/);
  let tick1 = tick0;
  await until(async () => (tick1 = (await get(node, '/api/stats')).json.tick) >= tick0 + 120,
    () => `the sim node to keep stepping without the broker (${tick0} -> ${tick1})`);
  assert.match((await get(node, '/metrics')).text, /^fluid_bus_connected 0$/m, 'stepped while the broker was away');
  broker = await startBroker(port);
  await b.next((m) => m.type === 'status' && m.connected === true).catch(async (e) => { throw new Error(await state(e.message)); });
  b.messages.length = 0;
  const after1 = await b.next((m) => m.type === 'frame' && m.ids && m.tick > tick1).catch(async (e) => { throw new Error(await state(e.message)); });
  assert.ok(after1.tick > tick1, 'frames flow again through the relay');
  a2.close(); b.close();
  for (const srv of [rb, node]) await srv.stop('SIGTERM');
});

test('a relay serves every room: /r/{name}/ streams that room only, its commands reach that room, unknown rooms 4004 and 404, a deleted room closes its viewers', { skip: why }, async (t) => {
  const { broker: b, port } = await brokerOnFreePort();
  try {
    const url = `nats://127.0.0.1:${port}`;
    const node = await startServer(['--particles', '3000', '--nats', url, '--world', 'roomsrelay']);
    const made = await http(node, 'POST', '/api/rooms', { body: { name: 'lab', scene: 'drop', particles: 1200 } });
    assert.equal(made.status, 201, made.text);
    const labN = made.json.particles, homeN = (await get(node, '/api/stats')).json.particles;
    assert.notEqual(labN, homeN, 'two rooms told apart by their particles');
    const relay = await startServer(['--nats', url, '--world', 'roomsrelay', '--relay', '1', '--relay-id', '3']);
    const relayWs = (name) => `${relay.wsUrl}r/${name}/`;
    await until(async () => (await get(relay, '/api/rooms')).json.rooms?.some((r) => r.name === 'lab'), 'the relay to list room lab');
    // a viewer of lab through the relay: lab's hello, and only lab's frames
    const c = await connect(relay, { url: relayWs('lab') });
    const hello = await c.next((m) => m.type === 'hello');
    assert.deepEqual([hello.room, hello.scene, hello.role], ['lab', 'drop', 'admin'], 'the node has no --token: admin');
    const counts = new Set();
    for (let i = 0; i < 20; i++) counts.add(frameArrays(await c.next((m) => m.type === 'frame' && m.ids)).idList.length);
    assert.deepEqual([...counts], [labN], `20 frames, each of lab's ${labN} particles (the default room has ${homeN})`);
    assert.equal(c.refused, 0);
    const st = (await get(relay, '/api/rooms/lab/stats')).json;
    assert.deepEqual([st.room, st.scene, st.particles], ['lab', 'drop', labN], 'the room\'s views through the relay');
    // the default room through the same relay is the default room's
    const d = await connect(relay);
    assert.equal((await d.next((m) => m.type === 'hello')).room, 'default');
    assert.equal(frameArrays(await d.next((m) => m.type === 'frame' && m.ids)).idList.length, homeN);
    // a command through the relay changes its room only
    const paused = await c.command({ type: 'pause' });
    assert.equal(paused.ok, true, JSON.stringify(paused));
    await until(async () => (await get(node, '/api/rooms/lab/stats')).json.paused === true, 'lab paused');
    assert.equal((await get(node, '/api/stats')).json.paused, false, 'the default room runs on');
    const lab0 = (await get(node, '/api/rooms/lab/stats')).json.tick;
    const stepped = await http(relay, 'POST', '/api/rooms/lab/step', { body: { steps: 3 } });
    assert.equal(stepped.status, 200, stepped.text);
    await until(async () => (await get(node, '/api/rooms/lab/stats')).json.tick === lab0 + 3, 'lab stepped 3 ticks through the relay\'s REST');
    assert.equal((await http(relay, 'POST', '/api/rooms/lab/resume')).status, 200);
    await until(async () => (await get(node, '/api/rooms/lab/stats')).json.paused === false, 'lab resumed');
    const push = await c.command({ type: 'push', point: [0.5, 0.3, 0.5], radius: 0.4, strength: 2, direction: [0, 1, 0] });
    assert.equal(push.ok, true, JSON.stringify(push));
    // a room the node does not have
    const u = await connect(relay, { url: relayWs('nosuch') });
    const uc = await u.closedWithin();
    assert.equal(uc.code, 4004);
    assert.match(uc.reason, /no room named 'nosuch'/);
    const un = await get(relay, '/api/rooms/nosuch/stats');
    assert.deepEqual([un.status, un.json?.code], [404, 'not_found'], un.text);
    // lab deleted on the node: its viewer on the relay is closed with the reason, and the relay forgets it
    assert.equal((await http(node, 'DELETE', '/api/rooms/lab')).status, 200);
    const gone = await c.closedWithin();
    assert.equal(gone.code, 4004);
    assert.match(gone.reason, /room 'lab' was deleted/);
    await until(async () => !(await get(relay, '/api/rooms')).json.rooms.some((r) => r.name === 'lab'), 'the relay to drop lab');
    const again = await connect(relay, { url: relayWs('lab') });
    assert.equal((await again.closedWithin()).code, 4004);
    t.diagnostic(`lab: ${labN} particles through the relay; default: ${homeN}`);
    d.close();
    // both end cleanly (under FLUID_SERVER=build/fluid-server-san: no leak, no sanitizer report)
    for (const [who, srv] of [['relay', relay], ['sim node', node]]) {
      const end = await srv.stop('SIGTERM');
      assert.equal(end.code, 0, `${who} exit: ${srv.stderr.slice(-2000)}`);
      assert.doesNotMatch(srv.stderr, /Sanitizer|runtime error/, who);
    }
  } finally {
    b.kill('SIGKILL');
  }
});

test("the broker's token: a node with it streams through a relay with it; a relay without it stays unconnected", { skip: why }, async () => {
  const { broker: b, port } = await brokerOnFreePort(['--auth', 's3cret-token']);
  try {
    const url = `nats://127.0.0.1:${port}`;
    const node = await startServer(['--particles', '1000', '--nats', url, '--world', 'authtest', '--nats-token', 's3cret-token']);
    const good = await startServer(['--nats', url, '--world', 'authtest', '--relay', '1', '--relay-id', '5'], { env: { FLUID_NATS_TOKEN: 's3cret-token' } });
    const bad = await startServer(['--nats', url, '--world', 'authtest', '--relay', '1', '--relay-id', '6', '--nats-token', 'wrong']);
    const c = await connect(good);
    const f = await c.next((m) => m.type === 'frame' && m.ids);
    assert.ok(f.n > 0, 'frames through the relay that has the token');
    c.close();
    // the node hears relay 5; relay 6 was refused by the broker (it tried at
    // its start, before relay 5's frames came) and never spoke
    await until(async () => /^fluid_relay_viewers\{relay="5"\} \d+$/m.test((await get(node, '/metrics')).text), 'the node to list relay 5');
    assert.match((await get(bad, '/metrics')).text, /^fluid_bus_connected 0$/m);
    assert.doesNotMatch((await get(node, '/metrics')).text, /relay="6"/);
  } finally {
    b.kill('SIGKILL');
  }
});

// A bare NATS client (the protocol is text: CONNECT, PUB, PING): publishes
// one message as `user` and answers with the broker's verdict ('PONG', or
// the -ERR line of a permissions violation).
async function natsPublish(port, user, pass, subject, payload) {
  return new Promise((resolve, reject) => {
    const s = tcp(port, '127.0.0.1');
    let buf = '';
    const timer = setTimeout(() => { s.destroy(); reject(new Error(`no answer from the broker: ${buf}`)); }, WAIT);
    s.on('error', reject);
    s.on('data', (d) => {
      buf += d.toString('latin1');
      if (buf.startsWith('INFO') && buf.includes('\r\n') && !s.sent) {
        s.sent = true;
        s.write(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, user, pass })}\r\nPUB ${subject} ${payload.length}\r\n`);
        s.write(Buffer.from(payload));
        s.write('\r\nPING\r\n');
      }
      const err = buf.match(/-ERR [^\r]*/);
      if (err || buf.includes('PONG')) { clearTimeout(timer); s.destroy(); resolve(err ? err[0] : 'PONG'); }
    });
  });
}

// A broker with docker/nats.conf's users (the sim node's and two relays'),
// each allowed only its own subjects; pass: their passwords.
async function brokerWithUsers() {
  const pass = { FLUID_NATS_SIM_PASS: 'sim-pass-1', FLUID_NATS_RELAY1_PASS: 'relay1-pass', FLUID_NATS_RELAY2_PASS: 'relay2-pass' };
  const conf = new URL('../../docker/nats.conf', import.meta.url).pathname;
  return { ...(await brokerOnFreePort(['-c', conf], { ...process.env, ...pass })), pass };
}

test("the broker's permissions bound what a relay can claim (docker/nats.conf): a relay speaks only for its own clients", { skip: why }, async (t) => {
  const { broker: b, port, pass } = await brokerWithUsers();
  try {
    const url = `nats://127.0.0.1:${port}`;
    const node = await startServer(['--particles', '1000', '--nats', url, '--nats-user', 'sim', '--nats-pass', pass.FLUID_NATS_SIM_PASS]);
    const r1 = await startServer(['--nats', url, '--relay', '1', '--relay-id', '1', '--nats-user', 'relay1', '--nats-pass', pass.FLUID_NATS_RELAY1_PASS]);
    // relay1's user, but claiming to be relay 2
    const fake = await startServer(['--nats', url, '--relay', '1', '--relay-id', '2', '--nats-user', 'relay1', '--nats-pass', pass.FLUID_NATS_RELAY1_PASS]);
    const c = await connect(r1);
    await c.next((m) => m.type === 'frame' && m.ids);
    const ok = await c.command({ type: 'push', point: [0.3, 0.2, 0.3], radius: 0.3, strength: 3, direction: [0, 1, 0] });
    assert.equal(ok.ok, true, 'relay 1, on its own subjects, is heard: ' + JSON.stringify(ok));

    // the impostor streams (it may subscribe to frames) but is not heard: the
    // broker refuses its publishes on relay 2's subjects
    const cf = await connect(fake);
    // its own keyframe requests do not reach the node (the broker refuses its wants), so it has a
    // keyframe only when relay 1's client asks for one (the node codes none unasked): asked until it has
    await until(async () => {
      c.send({ type: 'keyframe', rid: 0 });
      return cf.next((m) => m.type === 'frame' && m.ids, 1000).then(() => true, () => false);
    }, "the impostor's viewer to get a keyframe relay 1's client asked for");
    cf.send({ type: 'pause', rid: 4242 });
    await sleep(1500); // a wait for something that must not happen (a longer one only checks more)
    assert.equal((await get(node, '/api/stats')).json.paused, false, "a relay on another relay's subject is not heard");
    assert.doesNotMatch((await get(node, '/metrics')).text, /relay="2"/, 'nor are its wants');

    // relay 1's user, on its own subject, claiming relay 2's client: the broker
    // lets it through, the sim node refuses and counts it
    const refused = () => get(node, '/metrics').then((m) => Number(m.text.match(/^fluid_bus_messages_total\{what="refused"\} (\d+)$/m)[1]));
    const before = await refused();
    assert.equal(await natsPublish(port, 'relay1', pass.FLUID_NATS_RELAY1_PASS, 'fluid.default.cmd.1', forward(2, (2 << 20) | 1, { type: 'pause', rid: 1 })), 'PONG');
    // and relay 1 is refused another relay's subject by the broker itself
    assert.match(await natsPublish(port, 'relay1', pass.FLUID_NATS_RELAY1_PASS, 'fluid.default.cmd.2', forward(2, (2 << 20) | 1, { type: 'pause', rid: 1 })), /Permissions Violation/);
    // its own client, on its own subject: heard
    assert.equal(await natsPublish(port, 'relay1', pass.FLUID_NATS_RELAY1_PASS, 'fluid.default.cmd.1', forward(1, (1 << 20) | 999, { type: 'pause', rid: 2 })), 'PONG');
    await until(async () => (await get(node, '/api/stats')).json.paused === true, "relay 1's own client's pause to be applied");
    // the bus thread hands its counters to /metrics on its own beat: wait for the count, then check it
    await until(async () => (await refused()) >= before + 1, 'the forged claim counted');
    assert.equal(await refused(), before + 1, 'the forged claim is refused and counted, once');
    t.diagnostic('impostor unheard; forged claim refused; own claim applied');
    c.close(); cf.close();
  } finally {
    b.kill('SIGKILL');
  }
});

// A bare NATS session as `user`: subscribes to `subject` and collects every
// message's payload in `got`; publish() sends, flush() resolves at the
// broker's next PONG (everything published before it has been taken).
async function natsSession(port, user, pass, subject) {
  const s = tcp(port, '127.0.0.1');
  const session = { got: [], error: null, pongs: [], wake: null };
  let buf = Buffer.alloc(0), ready;
  const up = new Promise((res) => { ready = res; });
  s.on('error', (e) => { session.error = e; });
  s.on('data', (d) => {
    buf = Buffer.concat([buf, d]);
    for (;;) {
      const eol = buf.indexOf('\r\n');
      if (eol < 0) return;
      const line = buf.subarray(0, eol).toString('latin1');
      if (line.startsWith('MSG ')) {
        const size = Number(line.split(' ').at(-1));
        if (buf.length < eol + 2 + size + 2) return; // the payload is not all here yet
        session.got.push(buf.subarray(eol + 2, eol + 2 + size));
        buf = buf.subarray(eol + 2 + size + 2);
        if (session.wake) session.wake();
        continue;
      }
      buf = buf.subarray(eol + 2);
      if (line.startsWith('INFO')) {
        s.write(`CONNECT ${JSON.stringify({ verbose: false, pedantic: false, user, pass })}\r\nSUB ${subject} 1\r\nPING\r\n`);
      } else if (line === 'PING') {
        s.write('PONG\r\n');
      } else if (line === 'PONG') {
        if (ready) { ready(); ready = null; } else session.pongs.shift()?.();
      } else if (line.startsWith('-ERR')) {
        session.error = new Error(line);
      }
    }
  });
  session.publish = (subj, payload) => { s.write(`PUB ${subj} ${payload.length}\r\n`); s.write(payload); s.write('\r\n'); };
  session.flush = () => new Promise((res) => { session.pongs.push(res); s.write('PING\r\n'); });
  // Resolves once `count` messages that pred accepts came (the deadline turns a hang into a failure).
  session.waitFor = async (count, pred = () => true) => {
    const end = Date.now() + WAIT;
    while (session.got.filter(pred).length < count) {
      if (session.error) throw session.error;
      if (Date.now() > end) throw new Error(`${session.got.filter(pred).length} of ${count} messages came`);
      await new Promise((res) => { session.wake = res; setTimeout(res, 200); });
    }
  };
  session.close = () => s.destroy();
  await up;
  return session;
}
// A reply as the bus carries it (RPLY: client, rid, kind, flags, tick, value, error text, name).
// (code: the flags' bits 8-15, the row of PROTOCOL.md's Reply codes table counted from 1)
const RATE_LIMITED = 10;
function readReply(b) {
  assert.equal(b.subarray(0, 4).toString('latin1'), 'RPLY');
  const err = b.subarray(40);
  const flags = b.readUInt32LE(20);
  return { client: b.readUInt32LE(8), rid: b.readUInt32LE(12), ok: (flags & 1) === 1, code: flags >>> 8, error: err.subarray(0, err.indexOf(0)).toString() };
}

// A sim node on the broker of users (with extra options) and a raw NATS
// session as relay 1's user, once the node answers relay 1: { node, raw,
// loads() (the node's applied scene loads), from(lo, hi) (a reply to
// clients lo..hi of relay 1) }.
async function nodeAndRelayOne(port, pass, extra) {
  const node = await startServer(['--particles', '1000', '--nats', `nats://127.0.0.1:${port}`, '--nats-user', 'sim', '--nats-pass', pass.FLUID_NATS_SIM_PASS, ...extra]);
  await until(async () => /^fluid_bus_connected 1$/m.test((await get(node, '/metrics')).text), 'the node to connect to the broker');
  const loads = async () => metric((await get(node, '/metrics')).text, 'fluid_commands_total{room="default",kind="load_scene",result="ok"}');
  const raw = await natsSession(port, 'relay1', pass.FLUID_NATS_RELAY1_PASS, 'fluid.default.reply.1');
  // the node subscribes once connected: a first command answered says it
  // hears (probes from client 500, each its own, until one is answered)
  await until(async () => {
    raw.publish('fluid.default.cmd.1', forward(1, (1 << 20) | 500, { type: 'resume', rid: 1 }));
    await raw.flush();
    await sleep(200);
    return raw.got.length > 0;
  }, 'the sim node to answer relay 1');
  const from = (lo, hi) => (m) => { const c = m.readUInt32LE(8) & 0xfffff; return c >= lo && c <= hi; };
  return { node, raw, loads, from };
}

test("a relay user flooding its subject with scene loads is held to a browser's limit per client and to its relay's as a whole", { skip: why }, async (t) => {
  const { broker: b, port, pass } = await brokerWithUsers();
  let raw = null;
  try {
    // a client's limit of 1 command a second, burst 60: two scene loads
    // (30 each) at once, then one every 30 s; a relay's share of costly
    // commands is one client's
    let node, loads, from;
    ({ node, raw, loads, from } = await nodeAndRelayOne(port, pass, ['--rate', '1', '--burst', '60']));
    const loads0 = await loads();
    // one client, 100 scene loads at once
    const client = (1 << 20) | 1;
    for (let rid = 1; rid <= 100; rid++) raw.publish('fluid.default.cmd.1', forward(1, client, { type: 'load_scene', name: 'dam_break', particles: 500, rid }));
    await raw.flush();
    await raw.waitFor(100, from(1, 1));
    const one = raw.got.filter(from(1, 1)).map(readReply);
    const ok1 = one.filter((r) => r.ok), limited1 = one.filter((r) => /^rate limited: /.test(r.error) && r.code === RATE_LIMITED);
    t.diagnostic(`one client: ${ok1.length} loaded, ${limited1.length} rate limited (${limited1[0]?.error})`);
    assert.equal(one.length, 100, 'one answer to each');
    // its burst pays for 2; a minute (the longest this can take) refills 2 more
    assert.ok(ok1.length >= 1 && ok1.length <= 4, `scene loads applied for one client: ${ok1.length}`);
    assert.equal(ok1.length + limited1.length, 100, 'the rest are refused as rate limited');
    // 50 more client ids of the same relay, 4 scene loads each: the relay's
    // share of costly commands is spent
    for (let c = 2; c <= 51; c++)
      for (let k = 0; k < 4; k++) raw.publish('fluid.default.cmd.1', forward(1, (1 << 20) | c, { type: 'load_scene', name: 'dam_break', particles: 500, rid: c * 10 + k }));
    await raw.flush();
    await raw.waitFor(200, from(2, 51));
    const many = raw.got.filter(from(2, 51)).map(readReply);
    const ok2 = many.filter((r) => r.ok), relayLimited = many.filter((r) => /clients of relay 1 share/.test(r.error) && r.code === RATE_LIMITED);
    t.diagnostic(`50 more clients: ${ok2.length} loaded, ${relayLimited.length} refused for the relay's share`);
    assert.ok(ok2.length <= 2, `scene loads applied for 50 more clients of the relay: ${ok2.length}`);
    assert.ok(relayLimited.length >= 190, `refused for the relay's bound: ${relayLimited.length}`);
    // what the world did: the scene loads answered ok, and no more
    await until(async () => (await loads()) - loads0 === ok1.length + ok2.length, 'the applied scene loads in /metrics');
    const m = (await get(node, '/metrics')).text;
    assert.ok(metric(m, 'fluid_bus_messages_total{what="rate_limited"}') >= 290, 'counted as rate limited');
  } finally {
    if (raw) raw.close();
    b.kill('SIGKILL');
  }
});

test('a relay refused more often than it may send is shed: the broker stops delivering it, another relay is read by name meanwhile, no message of it lost or doubled, and the shed relay is read again after', { skip: why }, async (t) => {
  const { broker: b, port, pass } = await brokerWithUsers();
  let raw = null, raw2 = null, ticking = false, ticker = null;
  try {
    // a client's limit 1 a second, burst 10: relay 1's answers to refusals
    // are 16 a second, burst 160; refused more often than that, it floods
    let node;
    ({ node, raw } = await nodeAndRelayOne(port, pass, ['--rate', '1', '--burst', '10']));
    raw2 = await natsSession(port, 'relay2', pass.FLUID_NATS_RELAY2_PASS, 'fluid.default.reply.2');
    const of2 = (m) => (m.readUInt32LE(8) >>> 20) === 2;
    // relay 2 is heard (a command answered) before relay 1 floods
    raw2.publish('fluid.default.cmd.2', forward(2, (2 << 20) | 99, { type: 'resume', rid: 1 }));
    await raw2.flush();
    await raw2.waitFor(1, of2);
    // then relay 2 sends one command every 50 ms (20 clients in turn, well within their limits)
    // through the switch to its own subscription and back: each must be answered once
    let sent2 = 0;
    ticking = true;
    ticker = (async () => {
      while (ticking) {
        sent2++;
        raw2.publish('fluid.default.cmd.2', forward(2, (2 << 20) | (1 + (sent2 % 20)), { type: 'resume', rid: 1000 + sent2 }));
        await sleep(50);
      }
    })();
    const metrics = async () => (await get(node, '/metrics')).text;
    // relay 1 floods: 400 cheap commands from one client (about 170 shed it: its client's burst of
    // 10, then 160 refusals answered; what was delivered before the shed is still taken, refused)
    for (let rid = 1; rid <= 400; rid++) raw.publish('fluid.default.cmd.1', forward(1, (1 << 20) | 2, { type: 'resume', rid }));
    await raw.flush();
    await until(async () => metric(await metrics(), 'fluid_bus_relays_shed_total') >= 1, 'relay 1 shed');
    await until(() => raw.got.map(readReply).some((r) => /relay 1 .*not read for 5 s/.test(r.error) && r.code === RATE_LIMITED), 'relay 1 told it is shed');
    assert.match(node.stderr, /bus: rate limited: the clients of relay 1 together are refused more than they may send; its messages are not read for 5 s/);
    // while shed: 2,000 more of relay 1's are not delivered (relay 2's are)
    const r0 = metric(await metrics(), 'fluid_bus_messages_total{what="received"}');
    for (let rid = 3001; rid <= 5000; rid++) raw.publish('fluid.default.cmd.1', forward(1, (1 << 20) | 3, { type: 'resume', rid }));
    await raw.flush();
    const at = sent2;
    await raw2.waitFor(at, (m) => of2(m) && m.readUInt32LE(12) > 1000);
    const r1 = metric(await metrics(), 'fluid_bus_messages_total{what="received"}');
    t.diagnostic(`relay 1 shed: ${r1 - r0} messages received while it published 2,000 more and relay 2 sent on`);
    assert.ok(r1 - r0 < 1000, `the shed relay's messages are not delivered: ${r1 - r0} received`);
    assert.equal(raw.got.map(readReply).filter((r) => (r.client & 0xfffff) === 3).length, 0, 'none of them answered');
    // after the shed (5 s) relay 1 is read again: a new client's command is answered
    let rid = 9000;
    await until(async () => {
      raw.publish('fluid.default.cmd.1', forward(1, (1 << 20) | 4, { type: 'resume', rid: ++rid }));
      await raw.flush();
      await sleep(200);
      return raw.got.map(readReply).some((r) => (r.client & 0xfffff) === 4 && r.ok);
    }, 'relay 1 read again after its shed');
    // relay 2's commands, through both switches: each answered exactly once
    const past = sent2 + 10;
    await until(() => sent2 >= past, 'relay 2 to send on past the switch back');
    ticking = false;
    await ticker;
    await raw2.flush();
    await raw2.waitFor(sent2, (m) => of2(m) && m.readUInt32LE(12) > 1000);
    raw2.publish('fluid.default.cmd.2', forward(2, (2 << 20) | 99, { type: 'resume', rid: 2 }));
    await raw2.flush();
    await raw2.waitFor(1, (m) => of2(m) && m.readUInt32LE(12) === 2);
    const rids = raw2.got.filter((m) => of2(m) && m.readUInt32LE(12) > 1000).map((m) => m.readUInt32LE(12));
    t.diagnostic(`relay 2: ${sent2} commands across the shed and back, ${rids.length} answers, ${new Set(rids).size} distinct`);
    assert.equal(rids.length, sent2, 'one answer to each of relay 2\'s commands');
    assert.equal(new Set(rids).size, sent2, 'none doubled');
    assert.doesNotMatch(node.stderr, /Sanitizer|runtime error/);
  } finally {
    ticking = false;
    if (ticker) await ticker;
    if (raw) raw.close();
    if (raw2) raw2.close();
    b.kill('SIGKILL');
  }
});

test("a relay's clients' scene loads and a REST client's share the world's bound on rebuilds (--rebuilds-per-min): at most the bound applies", { skip: why }, async (t) => {
  const { broker: b, port, pass } = await brokerWithUsers();
  let raw = null;
  try {
    // one rebuild a minute, one at once: of all below, at most 2 apply (the
    // first, and one more if a minute, the longest this can take, passes)
    let node, loads, from;
    ({ node, raw, loads, from } = await nodeAndRelayOne(port, pass, ['--rebuilds-per-min', '1']));
    const loads0 = await loads();
    // 10 clients of the relay, 2 scene loads each (each within its own limit,
    // the relay within its share of costly commands), and a REST client's 4
    for (let c = 1; c <= 10; c++)
      for (let k = 0; k < 2; k++) raw.publish('fluid.default.cmd.1', forward(1, (1 << 20) | c, { type: 'load_scene', name: 'dam_break', particles: 500, rid: c * 10 + k }));
    const rest = Promise.all(Array.from({ length: 4 }, () => http(node, 'POST', '/api/scene', { body: { name: 'dam_break', particles: 600 } })));
    await raw.flush();
    await raw.waitFor(20, from(1, 10));
    const relayed = raw.got.filter(from(1, 10)).map(readReply), restAnswers = await rest;
    const relayOk = relayed.filter((r) => r.ok).length, restOk = restAnswers.filter((r) => r.status === 200).length;
    const world = relayed.filter((r) => r.code === RATE_LIMITED && /this world applies at most 1 scene loads/.test(r.error));
    t.diagnostic(`relay: ${relayOk} of 20 loaded, ${world.length} refused for the world's bound, ${20 - relayOk - world.length} for the relay's; REST: ${restOk} of 4`);
    assert.equal(relayed.length, 20, 'one answer to each');
    assert.ok(relayOk + restOk >= 1 && relayOk + restOk <= 2, `applied: ${relayOk} through the relay, ${restOk} over REST`);
    assert.ok(world.length >= 1, 'the relay\'s loads that reached the world past its bound are refused for it');
    assert.ok(relayed.every((r) => r.ok || r.code === RATE_LIMITED), 'the rest refused as rate limited');
    assert.ok(restAnswers.every((r) => r.status === 200 || (r.status === 429 && r.json.code === 'rate_limited')), restAnswers.map((r) => r.status).join(' '));
    await until(async () => (await loads()) - loads0 === relayOk + restOk, 'the applied scene loads in /metrics');
    const m = (await get(node, '/metrics')).text;
    assert.equal(metric(m, 'fluid_rebuilds_refused_total{room="default"}'), world.length + restAnswers.filter((r) => r.status === 429).length,
      'each refusal for the world\'s bound counted');
  } finally {
    if (raw) raw.close();
    b.kill('SIGKILL');
  }
});

// A relay's frame wants as the bus carries them (WANT: relay, rooms, then each room's name, clients,
// keyframe requests, flags, then the same for tiers 1 and 2): here the default room's, all at tier 0.
function wants(relay, clients, keys) {
  const b = Buffer.alloc(16 + 4 + 7 + 12 + 24);
  b.write('WANT', 0, 'latin1');
  b.writeUInt32LE(BUS_VERSION, 4); b.writeUInt32LE(relay, 8); b.writeUInt32LE(1, 12);
  b.writeUInt32LE(7, 16); b.write('default', 20, 'latin1');
  b.writeUInt32LE(clients, 27); b.writeUInt32LE(keys, 31); b.writeUInt32LE(0, 35);
  return b;
}

test("a relay user asking for a keyframe in every wants message gets at most one coded a second", { skip: why }, async (t) => {
  const { broker: b, port, pass } = await brokerWithUsers();
  let raw = null;
  try {
    const url = `nats://127.0.0.1:${port}`;
    const node = await startServer(['--particles', '1000', '--nats', url, '--nats-user', 'sim', '--nats-pass', pass.FLUID_NATS_SIM_PASS]);
    // a viewer of the sim node: its deltas, and its connection's seconds (the server's count) bound the keyframes
    const viewer = await connect(node);
    const hello = await viewer.next((m) => m.type === 'hello');
    await viewer.next((m) => m.type === 'frame' && m.ids);
    const row = async () => (await get(node, '/api/clients')).json.clients.find((c) => c.id === hello.client_id);
    raw = await natsSession(port, 'relay1', pass.FLUID_NATS_RELAY1_PASS, 'fluid.default.reply.1');
    // the node hears relay 1's wants once subscribed: it lists relay 1's viewer
    let keys = 0;
    await until(async () => {
      raw.publish('fluid.default.wants.1', wants(1, 1, ++keys));
      await raw.flush();
      return /^fluid_relay_viewers\{relay="1"\} 1$/m.test((await get(node, '/metrics')).text);
    }, 'the node to hear relay 1');
    const before = (await get(node, '/api/stats')).json, since = (await row()).connected_s, viewerKeys0 = viewer.keyframes;
    // a new keyframe request every 10 ms, until the viewer had 90 deltas and 300 were asked
    const ask = setInterval(() => raw.publish('fluid.default.wants.1', wants(1, 1, ++keys)), 10);
    let deltas = 0, frames = 0, asked = 0;
    try {
      for (const k0 = keys; deltas < 90 || keys - k0 < 300; asked = keys - k0) {
        const f = await viewer.next((m) => m.type === 'frame');
        frames++;
        assert.ok(f.ids, `the viewer decodes every frame: ${f._refused}`);
        if (!f.key) deltas++;
      }
    } finally { clearInterval(ask); }
    await raw.flush();
    const after = (await get(node, '/api/stats')).json, seconds = (await row()).connected_s - since;
    const coded = after.keyframes_coded - before.keyframes_coded, viewerKeys = viewer.keyframes - viewerKeys0;
    t.diagnostic(`${asked} requests from relay 1 over ${seconds.toFixed(1)} s of the viewer's connection: ${coded} keyframes coded ` +
      `(${after.relay_keyframes_deferred - before.relay_keyframes_deferred} waits); the viewer: ${deltas} deltas of ${frames} frames`);
    assert.ok(coded <= seconds + viewerKeys + 2, `keyframes coded for relay 1's requests: ${coded} in ${seconds} s`);
    assert.ok(after.relay_keyframes_deferred > before.relay_keyframes_deferred, "the relay's requests waited");
    assert.equal(viewer.refused, 0);
    viewer.close();
  } finally {
    if (raw) raw.close();
    b.kill('SIGKILL');
  }
});

// An OBJ of a grid of n x n vertices on z = 0 (an open sheet): 2 (n - 1)^2 triangles.
function sheetObj(n) {
  const lines = [];
  for (let j = 0; j < n; j++) for (let i = 0; i < n; i++) lines.push(`v ${i / (n - 1)} ${j / (n - 1)} 0`);
  for (let j = 0; j + 1 < n; j++) {
    for (let i = 0; i + 1 < n; i++) {
      const a = j * n + i + 1, b = a + 1, c = a + n, d = c + 1;
      lines.push(`f ${a} ${b} ${d}`, `f ${a} ${d} ${c}`);
    }
  }
  return lines.join('\n') + '\n';
}
const CUBE_OBJ = 'v 0 0 0\nv 1 0 0\nv 0 1 0\nv 1 1 0\nv 0 0 1\nv 1 0 1\nv 0 1 1\nv 1 1 1\n' +
  'f 1 5 7 3\nf 2 4 8 6\nf 1 2 6 5\nf 3 7 8 4\nf 1 3 4 2\nf 5 6 8 7\n';

test("a relay serves obstacles' meshes: fetched from the sim node over the bus once, checked by hash, listed after a hello; one larger than the bus carries is 501; a forged mesh on the bus is refused", { skip: why }, async (t) => {
  const { broker: b, port } = await brokerOnFreePort();
  try {
    const url = `nats://127.0.0.1:${port}`;
    const node = await startServer(['--particles', '2000', '--nats', url, '--world', 'omesh']);
    const relay = await startServer(['--nats', url, '--world', 'omesh', '--relay', '1', '--relay-id', '4']);
    const place = async (text, body) => {
      const up = await fetch(`${node.base}/api/meshes`, { method: 'POST', headers: { 'Content-Type': 'model/obj' }, body: text, signal: AbortSignal.timeout(WAIT) })
        .catch((e) => { throw new Error(`POST ${node.base}/api/meshes (${text.length} bytes): ${e.message} ${e.cause?.code}\n${node.stderr.slice(-1500)}`); });
      const m = await up.json();
      assert.equal(up.status, 200, JSON.stringify(m));
      const o = await http(node, 'POST', '/api/obstacles', { body: { mesh: m.id, ...body } });
      assert.equal(o.status, 200, o.text);
      return o.json.id;
    };
    const meshOf = async (srv, id) => {
      const r = await fetch(`${srv.base}/api/obstacles/${id}/mesh`, { signal: AbortSignal.timeout(WAIT) });
      return { status: r.status, bytes: Buffer.from(await r.arrayBuffer()) };
    };
    const cubeId = await place(CUBE_OBJ, { pos: [0.5, 0.3, 0.5], scale: 0.2 });
    const want = await meshOf(node, cubeId);
    assert.equal(want.status, 200);
    // a viewer on the relay gets the list after its hello, then the relay serves the mesh (busy while it comes)
    const c = await connect(relay);
    await c.next((m) => m.type === 'hello');
    const list = await c.next((m) => m.type === 'obstacles' && m.obstacles.length === 1);
    assert.equal(list.obstacles[0].id, cubeId);
    let got, busy = 0;
    await until(async () => { got = await meshOf(relay, cubeId); busy += got.status === 503; return got.status !== 503; }, 'the relay to have the cube mesh');
    assert.equal(got.status, 200, got.bytes.toString());
    assert.deepEqual(got.bytes, want.bytes, "the relay's mesh is the node's, byte for byte");
    assert.equal((await meshOf(relay, 999)).status, 404, 'an obstacle the room does not have');
    // a sheet of 65,536 vertices and 130,050 triangles: 1,173,564 bytes encoded, above the broker's 1 MB max_payload
    const sheetId = await place(sheetObj(256), { fit: true });
    const big = await meshOf(node, sheetId);
    assert.equal(big.status, 200);
    await until(async () => (await c.next((m) => m.type === 'obstacles')).obstacles.length === 2, 'the list of two');
    let sheet;
    await until(async () => { sheet = await http(relay, 'GET', `/api/obstacles/${sheetId}/mesh`); return sheet.status !== 404; }, 'the relay to list the sheet');
    assert.equal(sheet.status, 501, sheet.text);
    assert.match(sheet.json.error, /larger than the message bus carries/);
    assert.equal((await meshOf(relay, cubeId)).status, 200, 'the cube is still served');
    // a forged mesh on the relay's subject: refused (its hash does not match), the relay's copy stays
    const refused = async () => metric((await get(relay, '/metrics')).text, 'fluid_bus_messages_total{what="refused"}');
    const before = await refused();
    const forged = Buffer.from(want.bytes);
    forged[want.bytes.length - 1] ^= 1;
    const head = Buffer.alloc(16);
    head.write('OMSH', 0, 'latin1'); head.writeUInt32LE(BUS_VERSION, 4); head.writeUInt32LE(cubeId, 8); head.writeUInt32LE(forged.length, 12);
    assert.equal(await natsPublish(port, undefined, undefined, 'fluid.omesh.r.default.omesh', Buffer.concat([head, forged])), 'PONG');
    await until(async () => (await refused()) > before, 'the relay to refuse the forged mesh');
    assert.deepEqual((await meshOf(relay, cubeId)).bytes, want.bytes);
    t.diagnostic(`cube mesh ${want.bytes.length} bytes through the relay (${busy} busy answers first); sheet ${big.bytes.length} bytes: 501`);
    c.close();
    for (const [who, srv] of [['relay', relay], ['sim node', node]]) {
      const end = await srv.stop('SIGTERM');
      assert.equal(end.code, 0, `${who} exit: ${srv.stderr.slice(-2000)}`);
      assert.doesNotMatch(srv.stderr, /Sanitizer|runtime error/, who);
    }
  } finally {
    b.kill('SIGKILL');
  }
});
