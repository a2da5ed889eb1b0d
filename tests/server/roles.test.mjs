// roles.test.mjs - roles in rooms on a server with --token: a connection
// without a credential has its room's public role, an invite its role, the
// token administers; the role is checked where a command is applied, a
// refused command changes nothing and names the role it needs; invites are
// refused when expired, for another room, of another algorithm, too long, or
// after the room's key was rotated; an owner kicks a client.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { createHmac } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, stopAll, tempDir, connect, get, http } from './lib.mjs';

const TOKEN = 'roles-admin';
const SECRET = 'a test secret of well over thirty-two bytes, known to this test';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
let s;

before(async () => {
  const dir = tempDir('fluid-roles-');
  const file = join(dir, 'secret');
  writeFileSync(file, SECRET, { mode: 0o600 });
  s = await startServer(['--particles', '1000', '--token', TOKEN, '--secret-file', file]);
  const made = await http(s, 'POST', '/api/rooms', { body: { name: 'cls', scene: 'dam_break', particles: 1200, public_role: 'viewer' }, headers: ADMIN });
  assert.equal(made.status, 201, made.text);
});
after(async () => { await stopAll(); });

const bearer = (t) => ({ authorization: `Bearer ${t}` });
const invite = async (role, by = ADMIN, room = 'cls', ttl) => {
  const r = await http(s, 'POST', `/api/rooms/${room}/invites`, { body: ttl ? { role, ttl_s: ttl } : { role }, headers: by });
  assert.equal(r.status, 201, r.text);
  assert.equal(r.json.role, role);
  assert.ok(r.json.url.startsWith(`/r/${room}/?invite=`));
  return r.json.token;
};
const roomWs = (room, q = '') => `${s.wsUrl}r/${room}/${q}`;

// A token made here with the room's key as the server makes it (invite.h:
// the secret, then the room's name and its key generation).
const b64 = (x) => Buffer.from(typeof x === 'string' ? x : JSON.stringify(x)).toString('base64url');
function forge(claims, { header = { alg: 'HS256', typ: 'JWT' }, room = 'cls', gen = 0, alg = 'sha256' } = {}) {
  const head = `${b64(header)}.${b64(claims)}`;
  const sig = createHmac(alg, Buffer.concat([Buffer.from(SECRET), Buffer.from(`\n${room}\n${gen}`)])).update(head).digest('base64url');
  return `${head}.${sig}`;
}
const now = () => Math.floor(Date.now() / 1000);

test('no credential: the room\'s public role; a refused command names the role and changes nothing', async () => {
  const v = await connect(s, { url: roomWs('cls') });
  const hello = await v.next((m) => m.type === 'hello');
  assert.equal(hello.role, 'viewer');
  assert.equal((await http(s, 'POST', '/api/rooms/cls/pause', { headers: ADMIN })).status, 200);
  const before = (await get(s, '/api/rooms/cls/particles?offset=0&limit=1200')).json;
  const no = await v.command({ type: 'push', point: [0.3, 0.2, 0.3], radius: 0.3, strength: 5, direction: [1, 0, 0] });
  assert.equal(no.ok, false);
  assert.equal(no.code, 'forbidden');
  assert.equal(no.error, "'push' needs the player role; this connection is a viewer.");
  const rest = await http(s, 'POST', '/api/rooms/cls/push', { body: { point: [0.3, 0.2, 0.3], radius: 0.3, strength: 5, direction: [1, 0, 0] } });
  assert.equal(rest.status, 403);
  assert.equal((await http(s, 'POST', '/api/rooms/cls/step', { body: { steps: 3 } })).status, 403);
  const after = (await get(s, '/api/rooms/cls/particles?offset=0&limit=1200')).json;
  assert.equal(after.tick, before.tick);
  assert.deepEqual(after.positions, before.positions, 'the refused push and step changed nothing');
  assert.ok((await get(s, '/api/rooms/cls/stats')).json.commands_forbidden >= 1);
  // the owner opens the room to players: the same connection may push now
  assert.equal((await http(s, 'PATCH', '/api/rooms/cls', { body: { public_role: 'player' }, headers: ADMIN })).status, 200);
  const yes = await v.command({ type: 'push', point: [0.3, 0.2, 0.3], radius: 0.3, strength: 5, direction: [1, 0, 0] });
  assert.equal(yes.ok, true, yes.error);
  assert.equal((await http(s, 'PATCH', '/api/rooms/cls', { body: { public_role: 'viewer' }, headers: ADMIN })).status, 200);
  v.close();
  assert.equal((await http(s, 'POST', '/api/rooms/cls/resume', { headers: ADMIN })).status, 200);
});

test('invites: an owner\'s invite makes player and editor invites; each role may what it may, in its room only', async () => {
  const owner = await invite('owner');
  const player = await invite('player', bearer(owner));
  const editor = await invite('editor', bearer(owner));
  // an invite may not be asked for by less than an owner
  const low = await http(s, 'POST', '/api/rooms/cls/invites', { body: { role: 'owner' }, headers: bearer(editor) });
  assert.equal(low.status, 403);
  assert.match(low.json.error, /needs the owner role; this connection is an editor/);
  const p = await connect(s, { url: roomWs('cls', `?invite=${player}`) });
  const ph = await p.next((m) => m.type === 'hello');
  assert.equal(ph.role, 'player');
  assert.equal((await p.command({ type: 'push', point: [0.3, 0.2, 0.3], radius: 0.3, strength: 1, direction: [1, 0, 0] })).ok, true);
  const np = await p.command({ type: 'pause' });
  assert.equal(np.code, 'forbidden');
  assert.match(np.error, /'pause' needs the editor role; this connection is a player/);
  // the editor, over REST: pauses and resumes its room ...
  assert.equal((await http(s, 'POST', '/api/rooms/cls/pause', { headers: bearer(editor) })).status, 200);
  assert.equal((await http(s, 'POST', '/api/rooms/cls/resume', { headers: bearer(editor) })).status, 200);
  // ... and nothing of another room, nor the room itself
  const other = await http(s, 'POST', '/api/pause', { headers: bearer(editor) });
  assert.equal(other.status, 401);
  assert.match(other.json.error, /unauthorized/);
  assert.equal((await http(s, 'DELETE', '/api/rooms/cls', { headers: bearer(editor) })).status, 403);
  assert.equal((await get(s, '/api/rooms/cls/clients')).status, 403);
  const list = await http(s, 'GET', '/api/rooms/cls/clients', { headers: bearer(owner) });
  assert.equal(list.status, 200);
  assert.deepEqual(list.json.clients.map((c) => c.id), [ph.client_id], 'the room lists its own client only');
  // an auth command with an invite raises a connection's role
  const v = await connect(s, { url: roomWs('cls') });
  assert.equal((await v.next((m) => m.type === 'hello')).role, 'viewer');
  assert.equal((await v.command({ type: 'auth', token: editor })).ok, true);
  assert.equal((await v.command({ type: 'pause' })).ok, true);
  assert.equal((await v.command({ type: 'resume' })).ok, true);
  p.close();
  v.close();
});

test('bad invites are refused with the reason and no effect, over REST and the WebSocket', async () => {
  const good = { room: 'cls', role: 'editor', exp: now() + 600, iat: now() };
  assert.equal((await http(s, 'POST', '/api/rooms/cls/pause', { headers: bearer(forge(good)) })).status, 200, 'a token made as the server makes them');
  assert.equal((await http(s, 'POST', '/api/rooms/cls/resume', { headers: bearer(forge(good)) })).status, 200);
  const bad = {
    expired: forge({ ...good, exp: now() - 10, iat: now() - 100 }),
    'another room': forge({ ...good, room: 'default' }, { room: 'default' }),
    'signed for another room': forge(good, { room: 'elsewhere' }),
    'alg none': `${b64({ alg: 'none' })}.${b64(good)}.`,
    HS384: forge(good, { header: { alg: 'HS384' }, alg: 'sha384' }),
    'a bad signature': forge(good).slice(0, -2) + 'AA',
    'an admin role': forge({ ...good, role: 'admin' }),
    'over 4 KiB': forge({ ...good, pad: 'x'.repeat(4200) }),
  };
  for (const [why, t] of Object.entries(bad)) {
    const r = await http(s, 'POST', '/api/rooms/cls/pause', { headers: bearer(t) });
    assert.equal(r.status, 401, `${why}: ${r.status} ${r.text}`);
    assert.equal(r.json.code, 'unauthorized', why);
  }
  assert.equal((await get(s, '/api/rooms/cls/stats')).json.paused, false, 'no bad invite paused the room');
  // over the WebSocket: the connection watches with the public role, told why after its hello
  const c = await connect(s, { url: roomWs('cls', `?invite=${bad.expired}`) });
  assert.equal((await c.next((m) => m.type === 'hello')).role, 'viewer');
  const told = await c.next((m) => m.type === 'reply' && m.ok === false);
  assert.equal(told.code, 'unauthorized');
  assert.match(told.error, /expired/);
  const a = await c.command({ type: 'auth', token: bad['alg none'] });
  assert.equal(a.ok, false);
  assert.equal((await c.command({ type: 'pause' })).code, 'forbidden');
  c.close();
});

test('rotating a room\'s key ends its earlier invites; an owner kicks a client with a reason', async () => {
  const owner = await invite('owner');
  const player = await invite('player', bearer(owner));
  const p = await connect(s, { url: roomWs('cls', `?invite=${player}`) });
  const hello = await p.next((m) => m.type === 'hello');
  assert.equal(hello.role, 'player');
  const rot = await http(s, 'POST', '/api/rooms/cls/rotate-key', { headers: bearer(owner) });
  assert.equal(rot.status, 200, rot.text);
  assert.ok(rot.json.generation >= 1);
  // the invites made before are refused now, the owner's own included
  assert.equal((await http(s, 'POST', '/api/rooms/cls/push', { body: { point: [0.3, 0.2, 0.3], radius: 0.3, strength: 1, direction: [1, 0, 0] }, headers: bearer(player) })).status, 401);
  assert.equal((await http(s, 'POST', '/api/rooms/cls/rotate-key', { headers: bearer(owner) })).status, 401);
  const late = await connect(s, { url: roomWs('cls', `?invite=${player}`) });
  assert.equal((await late.next((m) => m.type === 'hello')).role, 'viewer');
  late.close();
  // a new owner's invite (from the administrator) kicks the player still connected
  const owner2 = await invite('owner');
  assert.equal((await http(s, 'POST', `/api/rooms/cls/clients/${hello.client_id}/kick`, { headers: bearer(player) })).status, 401);
  const k = await http(s, 'POST', `/api/rooms/cls/clients/${hello.client_id}/kick`, { headers: bearer(owner2) });
  assert.equal(k.status, 200, k.text);
  const closed = await p.closedWithin();
  assert.equal(closed.code, 4003);
  assert.match(closed.reason, /kicked by the owner of room 'cls'/);
  assert.equal((await http(s, 'POST', `/api/rooms/cls/clients/${hello.client_id}/kick`, { headers: bearer(owner2) })).status, 404);
  assert.equal((await http(s, 'POST', '/api/rooms/cls/clients/0/kick', { headers: bearer(owner2) })).status, 404);
});

test('without --token every caller administers (one person on loopback)', async () => {
  const t = await startServer(['--particles', '1000']);
  const c = await connect(t);
  assert.equal((await c.next((m) => m.type === 'hello')).role, 'admin');
  assert.equal((await c.command({ type: 'pause' })).ok, true);
  assert.equal((await http(t, 'POST', '/api/rooms', { body: { name: 'mine' } })).status, 201);
  const inv = await http(t, 'POST', '/api/rooms/mine/invites', { body: { role: 'viewer', ttl_s: 60 } });
  assert.equal(inv.status, 201, inv.text);
  c.close();
});
