// sanitized.test.mjs - the whole server built with ASan + UBSan + LSan
// (build/fluid-server-san) driven through streaming, commands, bad input, a
// non-reading client and a REST round trip, then stopped with SIGTERM: it must
// exit 0 with no sanitizer report (no leak, no overflow, no UB).
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { startServer, stopAll, connect, get, http, ROOT, rawConnect } from './lib.mjs';

const SAN = process.env.FLUID_SERVER_SAN ? resolve(ROOT, process.env.FLUID_SERVER_SAN) : null;
after(async () => { await stopAll(); });

test('under ASan/UBSan/LSan: a busy session ends with exit 0 and no sanitizer report', { skip: !SAN && 'FLUID_SERVER_SAN not set' }, async () => {
  const s = await startServer(['--particles', '1500', '--frame-hz', '20'], {
    binary: SAN,
    env: { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:exitcode=23', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
  });
  const cs = await Promise.all([connect(s), connect(s), connect(s)]);
  for (const c of cs) await c.next((m) => m.type === 'hello');
  await cs[0].next((m) => m.type === 'frame');
  // A client that never reads (partial writes, frames held).
  const stuck = await new Promise((res) => {
    const k = rawConnect(s.port, () => {
      k.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      k.once('data', () => { k.pause(); res(k); });
    });
    k.on('error', () => {});
  });
  assert.equal((await cs[0].command({ type: 'push', point: [0.5, 0.1, 0.5], radius: 0.2, strength: 1, direction: [0, 1, 0] })).ok, true);
  cs[1].send({ type: 'cursor', rid: 0, pos: [0.1, 0.2, 0.3] });
  for (const b of [[0xc1], [0xdf, 0xff, 0xff, 0xff, 0xff], [0x81, 0xdb, 0xff, 0xff, 0xff, 0xff]]) cs[2].sendRaw(Buffer.from(b));
  for (let i = 0; i < 20; i++) cs[2].sendRaw(randomBytes(50 + i));
  assert.equal((await http(s, 'PATCH', '/api/materials/water', { body: { viscosity_linear: 1 } })).status, 200);
  // Bodies: created, grabbed, dragged, listed, released by leaving, destroyed.
  const b = await cs[1].command({ type: 'body_create', shape: 'box', size: [0.05, 0.05, 0.05], pos: [2.0, 1.0, 0.3] });
  assert.equal(b.ok, true, b.error);
  assert.equal((await cs[1].command({ type: 'body_grab', id: b.id, point: [2.0, 1.0, 0.3], target: [2.0, 1.2, 0.3] })).ok, true);
  cs[1].send({ type: 'body_drag', rid: 0, id: b.id, target: [9, 9, 9] });
  assert.equal((await http(s, 'POST', '/api/bodies', { body: { shape: 'capsule', size: [0.03, 0.05, 0], pos: [1.8, 1.0, 0.3] } })).status, 200);
  assert.equal((await get(s, '/api/bodies')).json.bodies.length, 2);
  await cs[0].next((m) => m.type === 'frame' && m.bodies.length === 2);
  cs[1].close(); // leaving releases its grab
  await cs[0].next((m) => m.type === 'frame' && m.bodies.some((x) => x.id === b.id && x.grabbed_by === 0));
  assert.equal((await http(s, 'DELETE', `/api/bodies/${b.id}`)).status, 200);
  assert.equal((await get(s, '/api/particles?limit=500')).json.count, 500);
  assert.equal((await http(s, 'POST', '/api/scene', { body: { name: 'drop', particles: 1200 } })).status, 200);
  assert.equal((await http(s, 'POST', '/api/scene', { body: '{"broken' })).status, 400);
  // the new scene streams a while (20 frames of it)
  await cs[0].next((m) => m.type === 'scene' && m.scene === 'drop');
  for (let i = 0; i < 20; i++) await cs[0].next((m) => m.type === 'frame');
  cs[0].close();
  const r = await s.stop('SIGTERM');
  stuck.destroy();
  const report = s.stderr.split('\n').filter((l) => /Sanitizer|runtime error|SUMMARY/.test(l));
  assert.deepEqual(report, [], s.stderr.slice(-4000));
  assert.deepEqual(r, { code: 0, signal: null }, s.stderr.slice(-4000));
});

test('under ASan/UBSan/LSan: recordings (racing starts, refusals, the listing, files, a stop) end with exit 0 and no report', { skip: !SAN && 'FLUID_SERVER_SAN not set' }, async () => {
  const dir = mkdtempSync(join(tmpdir(), 'fluid-san-rec-'));
  const s = await startServer(['--particles', '1000', '--frame-hz', '20', '--record-dir', dir, '--record-total-mb', '50'], {
    binary: SAN,
    env: { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:exitcode=23', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
  });
  // 12 starts at once from two addresses (each address may start 10 in a row)
  const starts = await Promise.all([...Array(12).keys()].map((i) => http(s, 'POST', '/api/recordings', { body: { name: `r${i}` }, from: `127.0.0.${2 + (i % 2)}` })));
  assert.ok(starts.every((r) => r.status === 200), starts.map((r) => r.status).join());
  for (const body of ['{"name":"a\\u0000b"}', '{"max_mb":1e-7}', '{"max_mb":60}'])
    assert.equal((await http(s, 'POST', '/api/recordings', { body })).status, 400, body);
  const list = (await get(s, '/api/recordings?offset=3&limit=5')).json;
  assert.equal(list.total, 12);
  assert.deepEqual(list.recordings.map((x) => x.name), ['r11', 'r2', 'r3', 'r4', 'r5']);
  assert.equal((await get(s, '/api/recordings/r0/index.json')).status, 200);
  assert.equal((await get(s, '/api/recordings/r0/seg-000001.fsrec')).status, 200);
  assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
  const r = await s.stop('SIGTERM');
  rmSync(dir, { recursive: true, force: true });
  const report = s.stderr.split('\n').filter((l) => /Sanitizer|runtime error|SUMMARY/.test(l));
  assert.deepEqual(report, [], s.stderr.slice(-4000));
  assert.deepEqual(r, { code: 0, signal: null }, s.stderr.slice(-4000));
});

test('under ASan/UBSan/LSan: rooms (made, invited, streamed, evicted, restored, deleted) and a restart that restores them end with exit 0 and no report', { skip: !SAN && 'FLUID_SERVER_SAN not set' }, async () => {
  const data = mkdtempSync(join(tmpdir(), 'fluid-san-rooms-'));
  const args = ['--particles', '1000', '--frame-hz', '20', '--step-budget', '0', '--data-dir', data, '--token', 'san-admin',
    '--room-idle-s', '1', '--room-evict-s', '1'];
  const opts = { binary: SAN, env: { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:exitcode=23', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' } };
  const admin = { authorization: 'Bearer san-admin' };
  const clean = (r, s) => {
    const report = s.stderr.split('\n').filter((l) => /Sanitizer|runtime error|SUMMARY/.test(l));
    assert.deepEqual(report, [], s.stderr.slice(-4000));
    assert.deepEqual(r, { code: 0, signal: null }, s.stderr.slice(-4000));
  };
  let s = await startServer(args, opts);
  for (const name of ['sa', 'sb']) assert.equal((await http(s, 'POST', '/api/rooms', { body: { name, scene: 'drop', particles: 900 }, headers: admin })).status, 201);
  const inv = (await http(s, 'POST', '/api/rooms/sa/invites', { body: { role: 'editor' }, headers: admin })).json.token;
  const c = await connect(s, { url: `${s.wsUrl}r/sa/?invite=${inv}` });
  assert.equal((await c.next((m) => m.type === 'hello')).role, 'editor');
  await c.next((m) => m.type === 'frame');
  assert.equal((await c.command({ type: 'pause' })).ok, true);
  assert.equal((await http(s, 'POST', '/api/rooms/sa/invites', { body: { role: 'nobody' }, headers: admin })).status, 400);
  assert.equal((await http(s, 'POST', '/api/rooms/sa/pause', { headers: { authorization: `Bearer ${inv}x` } })).status, 401);
  c.close();
  // sb sleeps and is evicted, then a request restores it; sa is deleted
  for (let i = 0; i < 600 && (await get(s, '/api/rooms/sb')).json.state !== 'evicted'; i++) await new Promise((r) => setTimeout(r, 100));
  assert.equal((await get(s, '/api/rooms/sb')).json.state, 'evicted');
  assert.equal((await get(s, '/api/rooms/sb/stats')).status, 200);
  assert.equal((await http(s, 'DELETE', '/api/rooms/sa', { headers: admin })).status, 200);
  clean(await s.stop('SIGTERM'), s);
  // the restart opens sb again from its folder
  s = await startServer(args, opts);
  assert.deepEqual((await get(s, '/api/rooms')).json.rooms.map((r) => r.name).sort(), ['default', 'sb']);
  clean(await s.stop('SIGTERM'), s);
  rmSync(data, { recursive: true, force: true });
});
