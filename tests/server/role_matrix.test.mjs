// role_matrix.test.mjs - the role table (protocol/PROTOCOL.md, "Rooms and
// roles") tested whole: each role (viewer, player, editor, owner through
// invites, admin through the token) sends every command kind that gets a
// reply over the WebSocket, and asks for every route of the table over REST,
// on the sim node and again through a relay (a real nats-server on
// loopback), where the node decides every role from the credential the relay
// sends on.  What its role allows is not refused for the role; what it does
// not is answered forbidden with the table's sentence, and those refusals
// leave the paused world as it was (positions, bodies, materials, scene,
// solver).  Through a relay, refused credentials are refused by the node.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { startServer, stopAll, connect, get, http, until, sleep, ROOT } from './lib.mjs';

const haveNats = spawnSync('nats-server', ['--version']).status === 0;
const noNats = haveNats ? false : 'nats-server is not installed (scripts/deps.sh test installs it)';
let broker = null, relay = null, natsUrl = null;

const TOKEN = 'matrix-admin';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
const ROLES = ['viewer', 'player', 'editor', 'owner', 'admin'];
const rank = (r) => ROLES.indexOf(r);
const article = (r) => (/^[aeiou]/.test(r) ? 'an' : 'a');
let s;

// The two tables of PROTOCOL.md.
const md = readFileSync(join(ROOT, 'protocol', 'PROTOCOL.md'), 'utf8');
const block = (name) => md.slice(md.indexOf(`<!-- role-table: ${name} -->`), md.indexOf('<!-- /role-table -->', md.indexOf(`<!-- role-table: ${name} -->`)));
const COMMANDS = Object.fromEntries([...block('commands').matchAll(/^\| `([a-z_]+)` \| ([a-z]+) \|$/gm)].map((m) => [m[1], m[2]]));
const ROUTES = [...block('routes').matchAll(/^\| ([A-Z]+) \| `([^`]+)` \| ([a-z]+) \|$/gm)].map((m) => ({ method: m[1], path: m[2], role: m[3] }));

// A command of each kind that gets a reply (the golden vectors' arguments; a
// body id that does not exist: allowed means "not refused for the role").
const SAMPLE = {
  push: { point: [0.5, 0.25, 0.125], radius: 0.1, strength: 2.5, direction: [0, 1, 0] },
  body_create: { shape: 'box', size: [0.1, 0.05, 0.1], pos: [0.5, 0.6, 0.5] },
  body_destroy: { id: 999999 },
  body_impulse: { id: 999999, point: [0.5, 0.6, 0.5], impulse: [0, 1, 0] },
  body_grab: { id: 999999, point: [0.5, 0.6, 0.5], target: [0.5, 0.8, 0.5] },
  body_release: { id: 999999 },
  heat: { point: [0.5, 0.25, 0.5], radius: 0.2, rate: -40, duration: 0.5 },
  set_param: { material: 'water', param: 'viscosity_linear', value: 0.25 },
  load_scene: { name: 'dam_break', particles: 1000 },
  pause: {},
  resume: {},
  step: { steps: 1 },
  emitter: { slot: 0, enabled: false },
  set_solver: { name: 'clavet' },
  heater: { slot: 0, enabled: false },
  record_start: { name: 'matrix' },
  record_stop: {},
  obstacle_add: { mesh: 999999, pos: [0.5, 0.3, 0.5] },
  obstacle_remove: { id: 999999 },
  probe_add: { name: 'matrix', kind: 'height', pos: [0.5, 0, 0.1] },
  probe_remove: { name: 'none' },
};
// Sent over the WebSocket: every kind of the table that a client sends and
// that gets a reply (cursor, keyframe and pace get none; the get_* kinds and
// restore, mesh_upload are REST's; auth is how a role is had).
const WS_KINDS = Object.keys(COMMANDS).filter((k) => SAMPLE[k]);

const credentials = {};
// A nats-server on a free loopback port: its URL.
async function startBroker() {
  for (let i = 0; ; i++) {
    const port = await new Promise((res) => { const l = createServer().listen(0, '127.0.0.1', () => { const p = l.address().port; l.close(() => res(p)); }); });
    const p = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    let exited = false;
    p.once('exit', () => { exited = true; });
    try {
      await until(() => new Promise((res) => { if (exited) res(false); const c = createServer(); c.once('error', () => res(true)); c.listen(port, '127.0.0.1', () => c.close(() => res(false))); }), `nats-server on ${port}`, { timeoutMs: 10000, everyMs: 100 });
      broker = p;
      return `nats://127.0.0.1:${port}`;
    } catch (e) { p.kill('SIGKILL'); if (i >= 4) throw e; }
  }
}

before(async () => {
  natsUrl = haveNats ? await startBroker() : null;
  const nats = haveNats ? ['--nats', natsUrl, '--world', 'matrix'] : [];
  s = await startServer(['--particles', '1000', '--token', TOKEN, ...nats]);
  const made = await http(s, 'POST', '/api/rooms', { body: { name: 'mx', scene: 'dam_break', particles: 1000, public_role: 'viewer' }, headers: ADMIN });
  assert.equal(made.status, 201, made.text);
  credentials.viewer = null;
  for (const role of ['player', 'editor', 'owner']) {
    const r = await http(s, 'POST', '/api/rooms/mx/invites', { body: { role }, headers: ADMIN });
    assert.equal(r.status, 201, r.text);
    credentials[role] = r.json.token;
  }
  credentials.admin = TOKEN;
  if (haveNats) {
    relay = await startServer([...nats, '--relay', '1', '--relay-id', '9']);
    await until(async () => (await get(relay, '/api/rooms')).json.rooms?.some((r) => r.name === 'mx'), 'the relay to mirror room mx');
  }
});
after(async () => { await stopAll(); if (broker) broker.kill('SIGKILL'); });

// What a refusal must leave as it was.
async function state() {
  const p = (await get(s, '/api/rooms/mx/particles?offset=0&limit=2000')).json;
  const st = (await get(s, '/api/rooms/mx/stats')).json;
  const mats = (await get(s, '/api/rooms/mx/materials')).json;
  const bodies = (await get(s, '/api/rooms/mx/bodies')).json;
  const obstacles = (await get(s, '/api/rooms/mx/obstacles')).json.obstacles;
  const meshes = (await get(s, '/api/rooms/mx/meshes')).json.meshes;
  const probes = (await get(s, '/api/rooms/mx/probes')).json.probes.map((q) => q.name);
  return { tick: p.tick, positions: p.positions, scene: st.scene, solver: st.solver, paused: st.paused, bodies: bodies.bodies, mats, obstacles, meshes, probes };
}

test('the tables were read: every command kind and route has its role', () => {
  assert.ok(Object.keys(COMMANDS).length >= 25, `${Object.keys(COMMANDS).length} commands`);
  assert.ok(ROUTES.length >= 35, `${ROUTES.length} routes`);
  assert.ok(WS_KINDS.length >= 17, WS_KINDS.join(' '));
});

// Each role on server (the node, or a relay): every command kind of the table over a WebSocket to room mx.
async function wsMatrix(t, server) {
  let refusedAll = 0, allowedAll = 0;
  for (const role of ROLES) {
    const q = credentials[role] ? (role === 'admin' ? `?token=${TOKEN}` : `?invite=${credentials[role]}`) : '';
    const c = await connect(server, { url: `${server.wsUrl}r/mx/${q}` });
    assert.equal((await c.next((m) => m.type === 'hello')).role, role);
    assert.equal((await http(s, 'POST', '/api/rooms/mx/pause', { headers: ADMIN })).status, 200);
    const refused = WS_KINDS.filter((k) => rank(role) < rank(COMMANDS[k]));
    const allowed = WS_KINDS.filter((k) => rank(role) >= rank(COMMANDS[k]));
    const before0 = await state();
    for (const kind of refused) {
      const r = await c.command({ type: kind, ...SAMPLE[kind] });
      assert.equal(r.ok, false, `${role} ${kind}`);
      assert.equal(r.code, 'forbidden', `${role} ${kind}: ${r.error}`);
      assert.equal(r.error, `'${kind}' needs the ${COMMANDS[kind]} role; this connection is ${article(role)} ${role}.`);
    }
    assert.deepEqual(await state(), before0, `${role}: the refused commands changed nothing`);
    for (const kind of allowed) {
      const r = await c.command({ type: kind, ...SAMPLE[kind] });
      assert.notEqual(r.code, 'forbidden', `${role} ${kind}: ${r.error}`);
      assert.notEqual(r.code, 'rate_limited', `${role} ${kind}: ${r.error}`);
      if (kind === 'resume') assert.equal((await http(s, 'POST', '/api/rooms/mx/pause', { headers: ADMIN })).status, 200);
    }
    refusedAll += refused.length;
    allowedAll += allowed.length;
    c.close();
  }
  t.diagnostic(`${ROLES.length} roles x ${WS_KINDS.length} command kinds: ${allowedAll} allowed, ${refusedAll} refused`);
  assert.equal(refusedAll + allowedAll, ROLES.length * WS_KINDS.length);
}

test('WebSocket: each role x each command kind: allowed, or forbidden with the table\'s sentence and no effect', async (t) => {
  await wsMatrix(t, s);
});

test('WebSocket through a relay: each role x each command kind, the role given by the sim node', { skip: noNats }, async (t) => {
  await wsMatrix(t, relay);
});

// A request of each route of the table in room mx (a path with {room} names
// mx; {id} a client or body that is not there; {name} water or a recording
// that is not there).  Left out: what would end the test's own room or
// invites (DELETE of the room, its key rotation: roles.test.mjs has them).
function request(route) {
  const path = route.path.replace('/api/rooms/{room}', '/api/rooms/mx').replace('{id}', '999999').replace('{name}', route.path.includes('materials') ? 'water' : 'none/index.json');
  const plain = path.startsWith('/api/rooms') || path === '/metrics' ? path : path.replace(/^\/api/, '/api/rooms/mx');
  const bodies = { 'POST /api/rooms': { name: 'mx2' }, 'PATCH /api/rooms/{room}': { public_role: 'viewer' }, 'POST /api/rooms/{room}/invites': { role: 'viewer' } };
  const body = route.method === 'GET' ? undefined : bodies[`${route.method} ${route.path}`] ?? {};
  return { method: route.method, path: plain, body };
}

// What a relay answers 501 itself, for every role: the data routes (the
// world's bytes are the sim node's; a viewer may ask, so every role may).
const RELAY_DATA = new Set(['GET /api/particles', 'GET /api/bodies', 'GET /api/snapshot', 'GET /api/obstacles']);
// The routes only the sim node serves that need more than a viewer: a relay
// asks the node for the role the credential gives (it holds no key), then
// refuses a role below the route's with the table's sentence, and answers
// 501 to the others.  Nothing is changed either way.
const RELAY_CHECKED = new Set(['GET /api/clients', 'PATCH /api/rooms/{room}', 'DELETE /api/rooms/{room}',
  'POST /api/rooms/{room}/invites', 'POST /api/rooms/{room}/rotate-key', 'POST /api/rooms/{room}/clients/{id}/kick',
  'POST /api/rooms', 'POST /api/meshes', 'POST /api/snapshot']);

// Each role on server (the node, or a relay): every route of the table, the refused ones first (they change
// nothing), then the allowed ones.  On the node the routes that would end the test's own room or invites
// (its deletion, its key rotation: roles.test.mjs has them) and a snapshot restore are left out; through a
// relay none is (a relay changes no room, and restores nothing).
async function restMatrix(t, server, viaRelay) {
  const skip = viaRelay ? new Set() : new Set(['DELETE /api/rooms/{room}', 'POST /api/rooms/{room}/rotate-key', 'POST /api/snapshot']);
  let n = 0, refusedAll = 0, data = 0, checked = 0;
  for (const role of ROLES) {
    const headers = credentials[role] ? { authorization: `Bearer ${credentials[role]}` } : {};
    const routes = ROUTES.filter((route) => !skip.has(`${route.method} ${route.path}`)).map((route) => {
      const q = request(route);
      // the server's own routes are in no room: there an invite is no more than no credential (the default
      // room's public role, player), and only the token is more
      const have = q.path === '/metrics' || q.path === '/api/rooms' ? (role === 'admin' ? 'admin' : 'player') : role;
      const key = `${route.method} ${route.path}`;
      const only = viaRelay && RELAY_DATA.has(key), nodes = viaRelay && RELAY_CHECKED.has(key);
      return { route, q, have, only, nodes, refused: !only && rank(have) < rank(route.role) };
    });
    routes.sort((a, b) => b.refused - a.refused);
    const before0 = await state();
    let stateChecked = false;
    for (const { route, q, have, only, nodes, refused } of routes) {
      if (!refused && !stateChecked) {
        assert.deepEqual(await state(), before0, `${role}: the refused requests changed nothing`);
        stateChecked = true;
      }
      const r = await http(server, q.method, q.path, { body: q.body, headers, from: `127.0.0.${2 + rank(role)}` });
      if (only) {
        assert.deepEqual([r.status, r.json?.code], [501, 'not_implemented'], `${role} ${q.method} ${q.path} through a relay: ${r.text}`);
        data++;
      } else if (refused) {
        assert.equal(r.status, 403, `${role} ${q.method} ${q.path}: ${r.status} ${r.text}`);
        assert.equal(r.json.code, 'forbidden');
        assert.match(r.json.error, new RegExp(`needs the ${route.role} role; this connection is ${article(have)} ${have}\\.$`), `${role} ${q.method} ${q.path}`);
        if (nodes) assert.equal(r.json.error, `'${route.method} ${route.path}' needs the ${route.role} role; this connection is ${article(have)} ${have}.`);
        refusedAll++;
      } else if (nodes) {
        assert.deepEqual([r.status, r.json?.code], [501, 'not_implemented'], `${role} ${q.method} ${q.path} through a relay: ${r.text}`);
        assert.equal(r.json.error, `this is a relay: ${route.method} ${route.path} is the sim node's`);
      } else {
        assert.notEqual(r.status, 403, `${role} ${q.method} ${q.path}: ${r.text}`);
        assert.notEqual(r.status, 401, `${role} ${q.method} ${q.path}: ${r.text}`);
        assert.notEqual(r.status, 429, `${role} ${q.method} ${q.path}: ${r.text}`);
      }
      if (nodes) checked++;
      if (route.method === 'POST' && route.path === '/api/rooms' && r.status === 201)
        assert.equal((await http(s, 'DELETE', '/api/rooms/mx2', { headers: ADMIN })).status, 200);
      if (route.path === '/api/resume') await http(s, 'POST', '/api/rooms/mx/pause', { headers: ADMIN });
      n++;
    }
  }
  if (viaRelay) {
    assert.equal(data, ROLES.length * RELAY_DATA.size, 'the data routes, answered 501 for every role');
    assert.equal(checked, ROLES.length * RELAY_CHECKED.size, 'the sim node\'s routes, checked for every role');
  }
  t.diagnostic(`${n} requests: ${ROLES.length} roles x ${n / ROLES.length} routes; ${refusedAll} refused for the role` +
    (viaRelay ? `; ${data} data requests answered 501 by the relay, ${checked} of the sim node's routes checked with the node's role` : ''));
}

test('REST: each role x each route of the table: allowed, or 403 with the table\'s sentence and no effect', async (t) => {
  assert.equal((await http(s, 'POST', '/api/rooms/mx/pause', { headers: ADMIN })).status, 200);
  await restMatrix(t, s, false);
});

test('REST through a relay: each role x each route: the sim node allows, or refuses with the table\'s sentence and no effect', { skip: noNats }, async (t) => {
  assert.equal((await http(s, 'POST', '/api/rooms/mx/pause', { headers: ADMIN })).status, 200);
  await restMatrix(t, relay, true);
});

// base64url of a JSON value.
const b64 = (v) => Buffer.from(JSON.stringify(v)).toString('base64url');

test('refused credentials through a relay: refused by the sim node (REST 401; WebSocket: the public role and an unauthorized reply)', { skip: noNats }, async (t) => {
  const now = Math.floor(Date.now() / 1000);
  const other = await http(s, 'POST', '/api/rooms/default/invites', { body: { role: 'owner' }, headers: ADMIN });
  assert.equal(other.status, 201, other.text);
  const short = await http(s, 'POST', '/api/rooms/mx/invites', { body: { role: 'editor', ttl_s: 1 }, headers: ADMIN });
  assert.equal(short.status, 201, short.text);
  const [h, c, sig] = credentials.owner.split('.');
  const bad = {
    'another room': [other.json.token, /for room 'default'|another room|room/],
    'a bad signature': [`${h}.${c}.${sig.slice(0, -2)}${sig.endsWith('AA') ? 'BB' : 'AA'}`, /signature/],
    'alg none': [`${b64({ alg: 'none' })}.${b64({ room: 'mx', role: 'owner', exp: now + 3600, iat: now })}.`, /alg|algorithm|HS256/],
    'a wrong token': ['not-the-token', /wrong token/],
  };
  await sleep(2100); // the 1 s invite expires (a wait for something that must happen; a longer one only checks more)
  bad.expired = [short.json.token, /expired/];
  assert.equal((await http(s, 'POST', '/api/rooms/mx/pause', { headers: ADMIN })).status, 200);
  const before0 = await state();
  for (const [what, [cred, why]] of Object.entries(bad)) {
    const r = await http(relay, 'POST', '/api/rooms/mx/step', { body: { steps: 1 }, headers: { authorization: `Bearer ${cred}` } });
    assert.deepEqual([r.status, r.json?.code], [401, 'unauthorized'], `REST, ${what}: ${r.text}`);
    assert.match(r.json.error, why, `REST, ${what}`);
    // a route only the node serves: the relay asks the node for the credential's role, and it refuses it
    const owners = await http(relay, 'GET', '/api/rooms/mx/clients', { headers: { authorization: `Bearer ${cred}` } });
    assert.deepEqual([owners.status, owners.json?.code], [401, 'unauthorized'], `REST, the node's route, ${what}: ${owners.text}`);
    assert.match(owners.json.error, why, `REST, the node's route, ${what}`);
    const ws = await connect(relay, { url: `${relay.wsUrl}r/mx/?invite=${encodeURIComponent(cred)}` });
    assert.equal((await ws.next((m) => m.type === 'hello')).role, 'viewer', `WebSocket, ${what}: the public role`);
    const refusal = await ws.next((m) => m.type === 'reply' && m.ok === false);
    assert.equal(refusal.code, 'unauthorized', `WebSocket, ${what}: ${refusal.error}`);
    const step = await ws.command({ type: 'step', steps: 1 });
    assert.equal(step.code, 'forbidden', `WebSocket, ${what}: ${step.error}`);
    // and as an auth command: answered by the sim node
    const auth = await ws.command({ type: 'auth', token: cred.slice(0, 500) });
    assert.equal(auth.code, 'unauthorized', `auth command, ${what}: ${auth.error}`);
    ws.close();
  }
  assert.deepEqual(await state(), before0, 'the refused credentials changed nothing');
  // an accepted auth command through the relay gives its role from then on
  const ws = await connect(relay, { url: `${relay.wsUrl}r/mx/` });
  assert.equal((await ws.next((m) => m.type === 'hello')).role, 'viewer');
  assert.equal((await ws.command({ type: 'step', steps: 1 })).code, 'forbidden');
  const ok = await ws.command({ type: 'auth', token: credentials.editor });
  assert.equal(ok.ok, true, JSON.stringify(ok));
  const step = await ws.command({ type: 'step', steps: 1 });
  assert.equal(step.ok, true, JSON.stringify(step));
  ws.close();
  t.diagnostic(`${Object.keys(bad).length} refused credentials over REST, the upgrade and the auth command, through a relay`);
});

test('a relay whose sim node does not answer: a route only the node serves is answered 503 busy, nothing waits unbounded', { skip: noNats }, async (t) => {
  // a relay of a world no sim node serves: its credential checks go unanswered
  const lone = await startServer(['--nats', natsUrl, '--world', 'nobody', '--relay', '1', '--relay-id', '10']);
  const asked = [['GET', '/api/clients', undefined], ['PATCH', '/api/rooms/default', { public_role: 'viewer' }], ['POST', '/api/rooms', { name: 'lone' }]];
  for (const [method, path, body] of asked) {
    const r = await http(lone, method, path, { body, headers: ADMIN });
    assert.deepEqual([r.status, r.json?.code], [503, 'busy'], `${method} ${path}: ${r.text}`);
    assert.match(r.json.error, /^busy: the sim node did not answer within \d+ s/, `${method} ${path}`);
    assert.ok(Number(r.headers.get('retry-after')) >= 1, `${method} ${path}: Retry-After`);
  }
  // and what the relay answers itself is answered still
  assert.equal((await get(lone, '/api/health')).status, 200);
  // it ends cleanly (under FLUID_SERVER=build/fluid-server-san: no leak of the unanswered checks, no report)
  const end = await lone.stop('SIGTERM');
  assert.equal(end.code, 0, `the relay's exit: ${lone.stderr.slice(-2000)}`);
  assert.doesNotMatch(lone.stderr, /Sanitizer|runtime error/);
  t.diagnostic(`${asked.length} requests for the sim node's routes through a relay without a node: 503 busy`);
});

test('the relay and the sim node end cleanly after the matrices (under FLUID_SERVER=build/fluid-server-san: no leak, no report)', { skip: noNats }, async () => {
  for (const [who, srv] of [['relay', relay], ['sim node', s]]) {
    const end = await srv.stop('SIGTERM');
    assert.equal(end.code, 0, `${who} exit: ${srv.stderr.slice(-2000)}`);
    assert.doesNotMatch(srv.stderr, /Sanitizer|runtime error/, who);
  }
});
