// probes.test.mjs - the world's probes through the server: the spheric2
// scene's twelve (H1-H4 heights, P1-P8 pressures) listed by GET /api/probes
// with their kinds, positions and latest values, which follow the ticks;
// a probe added by POST /api/probes and removed by DELETE; bad definitions
// answered 400 (a taken name 409) with the probes unchanged; a viewer may
// read but not add; the /metrics gauge fluid_probe; a scene load clears
// what a script added; a viewer's frames carry each probe's value (the
// `probes` map), the same as GET /api/probes at the frame's tick, and none
// in a world without probes; a snapshot carries the probes (a restore brings
// back a removed one, with its value, and the frames carry it again).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, get, http, until, metric, connect } from './lib.mjs';

const TOKEN = 'probe-admin';
const ADMIN = { authorization: `Bearer ${TOKEN}` };
let s;
const post = (path, body, headers = ADMIN) => http(s, 'POST', path, { body, headers });
const probes = async () => (await get(s, '/api/probes')).json;

before(async () => {
  s = await startServer(['--particles', '4000', '--token', TOKEN]);
  const r = await post('/api/scene', { name: 'spheric2', particles: 3000, solver: 'clavet' });
  assert.equal(r.status, 200, r.text);
});
after(stopAll);

test('spheric2 defines H1-H4 and P1-P8; their values follow the ticks', async () => {
  const p = await probes();
  assert.deepEqual(p.probes.map((q) => q.name), ['H1', 'H2', 'H3', 'H4', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8']);
  const by = Object.fromEntries(p.probes.map((q) => [q.name, q]));
  assert.equal(by.H4.kind, 'height');
  assert.equal(by.H4.unit, 'm');
  assert.deepEqual(by.H2.pos, [0.992, 0, 0.5]);
  assert.equal(by.P1.kind, 'pressure');
  assert.equal(by.P1.unit, 'Pa');
  assert.deepEqual(by.P1.normal, [1, 0, 0]);
  assert.deepEqual(by.P5.normal, [0, 1, 0]);
  // the column stands at H4 (0.55 m deep), nothing has reached H3 behind the box yet
  assert.ok(Math.abs(by.H4.value - 0.55) < 0.08, `H4 ${by.H4.value}`);
  const t0 = p.tick;
  await until(async () => (await probes()).tick > t0 + 5, 'ticks to pass');
  const q = await probes();
  assert.ok(q.probes.every((x) => x.tick > t0), 'every probe measured again');
  const text = (await get(s, '/metrics')).text;
  assert.ok(Number.isFinite(metric(text, 'fluid_probe{room="default",name="H4",kind="height"}')), 'the gauge');
  assert.ok(Number.isFinite(metric(text, 'fluid_probe{room="default",name="P1",kind="pressure"}')), 'the gauge');
});

test('POST /api/probes adds one, DELETE removes it; bad ones are refused and change nothing', async () => {
  const added = await post('/api/probes', { name: 'mine', kind: 'pressure', pos: [3.22, 0.1, 0.5], normal: [-2, 0, 0], radius: 0.1 });
  assert.equal(added.status, 200, added.text);
  await until(async () => (await probes()).probes.some((q) => q.name === 'mine'), 'the new probe listed');
  const mine = (await probes()).probes.find((q) => q.name === 'mine');
  assert.deepEqual(mine.normal, [-1, 0, 0]);
  assert.equal(mine.radius, 0.1);
  const names = (await probes()).probes.map((q) => q.name);
  const bad = [
    [{ name: 'mine', kind: 'height', pos: [1, 0, 0.5] }, 409, /exists/],
    [{ name: 'x', kind: 'depth', pos: [1, 0, 0.5] }, 400, /kind/],
    [{ name: 'x', kind: 'pressure', pos: [1, 0, 0.5] }, 400, /normal/],
    [{ name: 'x', kind: 'pressure', pos: [1, 0, 0.5], normal: [0, 0, 0] }, 400, /normal/],
    [{ name: 'x', kind: 'height', pos: [9, 0, 0.5] }, 400, /inside the domain/],
    [{ name: 'a b', kind: 'height', pos: [1, 0, 0.5] }, 400, /name/],
    [{ name: 'x', kind: 'height' }, 400, /pos/],
    [{ name: 'x', kind: 'height', pos: [1, 0, 0.5], radius: -1 }, 400, /radius/],
  ];
  for (const [body, status, re] of bad) {
    const r = await post('/api/probes', body);
    assert.equal(r.status, status, `${JSON.stringify(body)}: ${r.text}`);
    assert.match(r.json.error, re);
  }
  assert.deepEqual((await probes()).probes.map((q) => q.name), names, 'nothing changed');
  // the bound: 16
  let ok = 0;
  for (let i = 0; i < 5; i++) ok += (await post('/api/probes', { name: `b${i}`, kind: 'height', pos: [1, 0, 0.5] })).status === 200;
  assert.equal(ok, 3, '16 probes at most');
  assert.equal((await probes()).probes.length, 16);
  assert.equal((await http(s, 'DELETE', '/api/probes/mine', { headers: ADMIN })).status, 200);
  assert.equal((await http(s, 'DELETE', '/api/probes/mine', { headers: ADMIN })).status, 404);
  assert.ok(!(await probes()).probes.some((q) => q.name === 'mine'));
});

test('a viewer reads the probes but may not add or remove one; a scene load clears added ones', async () => {
  const made = await post('/api/rooms', { name: 'pv', scene: 'dam_break', particles: 1000, public_role: 'viewer' });
  assert.equal(made.status, 201, made.text);
  assert.equal((await get(s, '/api/rooms/pv/probes')).status, 200);
  const r = await http(s, 'POST', '/api/rooms/pv/probes', { body: { name: 'v', kind: 'height', pos: [0.1, 0, 0.1] } });
  assert.equal(r.status, 403);
  assert.match(r.json.error, /'POST \/api\/probes' needs the editor role/);
  assert.equal((await http(s, 'DELETE', '/api/rooms/pv/probes/v')).status, 403);
  const a = await post('/api/rooms/pv/probes', { name: 'v', kind: 'height', pos: [0.1, 0, 0.1] });
  assert.equal(a.status, 200, a.text);
  assert.deepEqual((await get(s, '/api/rooms/pv/probes')).json.probes.map((q) => q.name), ['v']);
  assert.equal((await post('/api/rooms/pv/scene', { name: 'dam_break', particles: 1000 })).status, 200);
  assert.deepEqual((await get(s, '/api/rooms/pv/probes')).json.probes, []);
});

test('a viewer\'s frames carry the probes\' values, those of GET /api/probes at the frame\'s tick', async () => {
  const c = await connect(s);
  try {
    const f0 = await c.next((m) => m.type === 'frame');
    assert.ok(f0.probes && typeof f0.probes === 'object', 'a frame of spheric2 has probes');
    // spheric2's twelve, then the ones the tests above left (in the order added)
    assert.deepEqual(Object.keys(f0.probes).slice(0, 12), ['H1', 'H2', 'H3', 'H4', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8']);
    // paused, the values stand still: the REST answer and the frames at its tick must agree
    assert.equal((await post('/api/pause')).status, 200);
    const p = await until(async () => {
      const q = await probes();
      return q.probes.every((x) => x.tick === q.tick) ? q : null;
    }, 'every probe measured at the paused tick');
    const f = await c.next((m) => m.type === 'frame' && m.tick === p.tick);
    assert.deepEqual(Object.keys(f.probes), p.probes.map((q) => q.name));
    for (const q of p.probes) {
      // REST gives 7 significant digits of the float32 the frame carries whole
      assert.equal(Number(f.probes[q.name].toPrecision(7)), q.value, `${q.name}: frame ${f.probes[q.name]}, REST ${q.value}`);
    }
    assert.ok(p.probes.some((q) => q.value > 0), 'the water reads somewhere');
  } finally {
    c.close();
    await post('/api/resume');
  }
  // a world without probes: no `probes` in its frames; one added: its value in the next ones
  const made = await post('/api/rooms', { name: 'pf', scene: 'dam_break', particles: 1000 });
  assert.equal(made.status, 201, made.text);
  const v = await connect(s, { url: `${s.wsUrl}r/pf/` });
  try {
    const g = await v.next((m) => m.type === 'frame');
    assert.equal(g.probes, undefined, 'no probes, no field');
    assert.equal((await post('/api/rooms/pf/probes', { name: 'h', kind: 'height', pos: [0.1, 0, 0.1] })).status, 200);
    const h = await v.next((m) => m.type === 'frame' && m.probes !== undefined);
    assert.deepEqual(Object.keys(h.probes), ['h']);
    assert.ok(Number.isFinite(h.probes.h) && h.probes.h > 0, `the column at (0.1, 0.1): ${h.probes.h}`);
  } finally {
    v.close();
  }
});

test('a snapshot carries the probes: a restore brings back one removed since, with its definition and value', async () => {
  const room = '/api/rooms/pf';
  await post(`${room}/pause`);
  const before = (await get(s, `${room}/probes`)).json;
  assert.deepEqual(before.probes.map((q) => q.name), ['h']);
  const snap = await fetch(`${s.base}${room}/snapshot`, { headers: ADMIN });
  assert.equal(snap.status, 200);
  const doc = Buffer.from(await snap.arrayBuffer());
  assert.equal((await http(s, 'DELETE', `${room}/probes/h`, { headers: ADMIN })).status, 200);
  assert.deepEqual((await get(s, `${room}/probes`)).json.probes, []);
  const back = await fetch(`${s.base}${room}/snapshot`, { method: 'POST', body: doc, headers: { 'content-type': 'application/msgpack', ...ADMIN } });
  assert.equal(back.status, 200, await back.text());
  const after = await until(async () => {
    const q = (await get(s, `${room}/probes`)).json;
    return q.probes.length ? q : null;
  }, 'the restored probe listed');
  assert.deepEqual(after.probes, before.probes, 'the same definition, value and tick');
  const v = await connect(s, { url: `${s.wsUrl}r/pf/` });
  try {
    const f = await v.next((m) => m.type === 'frame' && m.probes !== undefined);
    assert.equal(Number(f.probes.h.toPrecision(7)), before.probes[0].value);
  } finally {
    v.close();
  }
});
