// tsan.test.mjs - the whole server built with ThreadSanitizer
// (build/fluid-server-tsan, FLUID_SERVER_TSAN) driven through every place two
// threads meet: the sim thread's frames, broadcasts, replies and stats read
// by the network thread (stream, REST, commands), snapshot uploads handed to
// the sim thread and snapshots handed back, saves on the sim thread
// (--save-interval and at SIGTERM) and the restore at start, clients that
// come and go or never read, and shutdown with traffic in flight; the world
// steps on a pool of 2 threads (--threads 2) in every solver.  TSan writes
// each report to a file in a temporary directory (log_path); every test
// asserts that directory stays empty and that the server exits 0 (TSan's
// exitcode 66 when it reported anything).  No timing is asserted: TSan makes
// the server 5-15x slower, so every wait is generous.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import net from 'node:net';
import { randomBytes } from 'node:crypto';
import { readdirSync, readFileSync, rmSync, existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import * as lib from './lib.mjs';
import { startServer, stopAll, tempDir, connect, get, http, sleep, decode, ROOT } from './lib.mjs';

// A raw connection: lib's (TLS when the suite runs over TLS) when it has one.
const rawConnect = lib.rawConnect ?? ((port, onConnect) => net.connect(port, '127.0.0.1', onConnect));

const TSAN = process.env.FLUID_SERVER_TSAN ? resolve(ROOT, process.env.FLUID_SERVER_TSAN) : null;
const skip = !TSAN && 'FLUID_SERVER_TSAN not set';
const WAIT = 30000;
after(async () => { await stopAll(); });

// A server under TSan whose reports go to files in its own directory.
async function startTsan(args, logs) {
  return startServer(['--threads', '2', ...args], {
    binary: TSAN, timeoutMs: 60000,
    env: { TSAN_OPTIONS: `log_path=${join(logs, 'tsan')} halt_on_error=0 exitcode=66 second_deadlock_stack=1` },
  });
}

// Every TSan report written so far (one file per process: tsan.<pid>).
function reports(logs) {
  return readdirSync(logs).map((f) => readFileSync(join(logs, f), 'utf8')).filter((t) => t.length).join('\n');
}

async function stopClean(s, logs) {
  const r = await s.stop('SIGTERM', 60000);
  const rep = reports(logs);
  const n = (rep.match(/WARNING: ThreadSanitizer/g) || []).length;
  assert.equal(n, 0, `${n} ThreadSanitizer report(s):\n${rep.slice(0, 12000)}`);
  assert.equal(rep, '', rep.slice(0, 4000));
  assert.deepEqual(r, { code: 0, signal: null }, s.stderr.slice(-4000));
}

// A WebSocket that is upgraded and then never read from (frames pile up, partial writes).
function neverReads(s) {
  return new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error('no upgrade answer')), WAIT);
    const k = rawConnect(s.port, () => {
      k.write(`GET / HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n\r\n`);
      k.once('data', () => { clearTimeout(t); k.pause(); res(k); });
    });
    k.on('error', () => {});
  });
}

const ok = async (p, what) => { const r = await p; assert.equal(r.ok, true, `${what}: ${JSON.stringify(r)}`); return r; };
const status = async (p, code, what) => { const r = await p; assert.equal(r.status, code, `${what}: ${r.text}`); return r; };

test('under TSan: stream, commands of every kind, REST and snapshots from many clients at once, every solver on 2 threads; no report', { skip }, async () => {
  const logs = tempDir('fluid-tsan-');
  const s = await startTsan(['--particles', '1200', '--scene', 'floating', '--frame-hz', '20', '--tick-hz', '30'], logs);
  const cs = await Promise.all([connect(s), connect(s), connect(s)]);
  for (const c of cs) await c.next((m) => m.type === 'hello', WAIT);
  await cs[0].next((m) => m.type === 'frame', WAIT);
  // The network thread, the sim thread and one pool worker (TSan may add its own).
  assert.equal((await get(s, '/api/stats')).json.threads, 2);
  const tasks = readdirSync(`/proc/${s.proc.pid}/task`).length;
  assert.ok(tasks >= 3, `${tasks} threads`);
  const stuck = await neverReads(s);
  const [a, b, c] = cs;
  // Commands from three clients at once (one in flight per client: Client.next
  // consumes the messages before the reply it waits for), REST reads and writes between.
  await Promise.all([
    ok(a.command({ type: 'push', point: [0.5, 0.3, 0.5], radius: 0.3, strength: 1, direction: [0, 1, 0] }, WAIT), 'push')
      .then(() => ok(a.command({ type: 'heat', point: [0.5, 0.2, 0.5], radius: 0.3, rate: 50, duration: 1 }, WAIT), 'heat')),
    ok(b.command({ type: 'set_param', material: 'water', param: 'viscosity_linear', value: 0.5 }, WAIT), 'set_param')
      .then(() => ok(b.command({ type: 'set_param', material: 'goo', params: { viscosity_linear: 0.4, viscosity_quadratic: 0.1 } }, WAIT), 'set_param params')),
    ok(c.command({ type: 'emitter', slot: 0, pos: [0.5, 0.8, 0.5], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 200, cap: 50, material: 'water' }, WAIT), 'emitter')
      .then(() => ok(c.command({ type: 'emitter', slot: 0, enabled: false }, WAIT), 'emitter off')),
    status(get(s, '/api/stats'), 200, 'stats'),
    status(get(s, '/api/health'), 200, 'health'),
    status(get(s, '/api/materials'), 200, 'materials'),
    status(get(s, '/api/clients'), 200, 'clients'),
    status(get(s, '/metrics'), 200, 'metrics'),
    status(get(s, '/api/particles?limit=300'), 200, 'particles'),
    status(get(s, '/api/bodies'), 200, 'bodies'),
    status(http(s, 'PATCH', '/api/materials/water', { body: { viscosity_linear: 1 } }), 200, 'patch'),
    status(http(s, 'POST', '/api/push', { body: { point: [0.5, 0.3, 0.5], radius: 0.2, strength: 1, direction: [1, 0, 0] } }), 200, 'rest push'),
  ]);
  for (let i = 0; i < 10; i++) c.send({ type: 'cursor', rid: 0, pos: [0.1 * i, 0.2, 0.3] });
  // Bodies: created, grabbed, dragged, released by leaving (an internal command).
  const body = await ok(b.command({ type: 'body_create', shape: 'box', size: [0.05, 0.05, 0.05], pos: [0.5, 0.6, 0.3] }, WAIT), 'body_create');
  await ok(b.command({ type: 'body_grab', id: body.id, point: [0.5, 0.6, 0.3], target: [0.5, 0.7, 0.3] }, WAIT), 'body_grab');
  b.send({ type: 'body_drag', rid: 0, id: body.id, target: [0.6, 0.7, 0.3] });
  await ok(a.command({ type: 'body_impulse', id: body.id, point: [0.5, 0.6, 0.3], impulse: [0, 0.01, 0] }, WAIT), 'body_impulse');
  b.close();
  // Clients that come and go (one of them vanishes without a close) while the others stream.
  for (let i = 0; i < 6; i++) {
    const k = await connect(s);
    await k.next((m) => m.type === 'hello', WAIT);
    if (i % 2) k.terminate(); else k.close();
  }
  // Pause, step, resume: held replies (the step's reply waits for the ticks).
  await ok(a.command({ type: 'pause' }, WAIT), 'pause');
  await ok(a.command({ type: 'step', steps: 3 }, WAIT), 'step');
  await ok(c.command({ type: 'resume' }, WAIT), 'resume');
  // A snapshot out (a reply carrying a buffer) and back in (an upload handed to the sim thread).
  const res = await fetch(s.base + '/api/snapshot', { signal: AbortSignal.timeout(WAIT) });
  assert.equal(res.status, 200);
  const snap = new Uint8Array(await res.arrayBuffer());
  assert.equal(decode(snap).type, 'snapshot');
  // Every solver with the pool: the scene and solver changes are broadcast to the clients.
  for (const [scene, solver] of [['chocolate_bunny', 'unified'], ['mps_dam_break', 'mps'], ['fountain', 'clavet']]) {
    await ok(c.command({ type: 'load_scene', name: scene, particles: 800, solver }, WAIT), `load_scene ${scene}`);
    const m = await a.next((x) => x.type === 'scene' && x.scene === scene, WAIT);
    assert.equal(m.solver, solver);
    await a.next((x) => x.type === 'frame', WAIT);
    await status(get(s, '/api/particles?limit=200'), 200, `particles in ${scene}`);
  }
  await status(http(s, 'POST', '/api/solver', { body: { name: 'unified' } }), 200, 'rest solver');
  await status(http(s, 'POST', '/api/heater', { body: { slot: 0, kind: 'floor', radius: 0.16, rate: 2, temperature: 5 } }), 200, 'heater');
  const back = await fetch(s.base + '/api/snapshot', {
    method: 'POST', body: snap, headers: { 'content-type': 'application/msgpack' }, signal: AbortSignal.timeout(WAIT),
  });
  assert.equal(back.status, 200, await back.text());
  const sc = await a.next((x) => x.type === 'scene' && x.scene === 'floating', WAIT);
  assert.equal(sc.solver, 'clavet');
  await a.next((x) => x.type === 'frame', WAIT);
  // Shutdown with traffic in flight: commands queued, REST requests waiting for the sim thread.
  for (let i = 0; i < 20; i++) a.send({ type: 'push', rid: 100 + i, point: [0.5, 0.3, 0.5], radius: 0.2, strength: 1, direction: [0, 1, 0] });
  const inflight = Array.from({ length: 8 }, () => get(s, '/api/particles?limit=50').catch(() => null));
  await sleep(50);
  await stopClean(s, logs);
  await Promise.all(inflight);
  stuck.destroy();
  for (const k of [a, c]) k.close();
  rmSync(logs, { recursive: true, force: true });
});

test('under TSan: periodic saves on the sim thread while clients stream, the save at SIGTERM, the restore at start; no report', { skip }, async () => {
  const logs = tempDir('fluid-tsan-');
  const dir = tempDir('fluid-data-');
  const s = await startTsan(['--particles', '1000', '--scene', 'drop', '--data-dir', dir, '--save-interval', '0.3'], logs);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello', WAIT);
  // Saves happen (counted in /api/stats by the sim thread) while REST and the stream run.
  let saves = 0;
  for (let i = 0; i < 100 && saves < 3; i++) {
    await c.next((m) => m.type === 'frame', WAIT);
    await ok(c.command({ type: 'push', point: [0.5, 0.3, 0.5], radius: 0.2, strength: 1, direction: [0, 1, 0] }, WAIT), 'push');
    await status(get(s, '/metrics'), 200, 'metrics');
    saves = (await status(get(s, '/api/stats'), 200, 'stats')).json.saves;
  }
  assert.ok(saves >= 3, `only ${saves} periodic saves`);
  c.close();
  await stopClean(s, logs);
  assert.ok(existsSync(join(dir, 'world.snapshot')));
  // The restore at start (main thread, before the sim thread), then the world streams.
  const s2 = await startTsan(['--particles', '500', '--scene', 'dam_break', '--data-dir', dir], logs);
  const c2 = await connect(s2);
  const hello = await c2.next((m) => m.type === 'hello', WAIT);
  assert.equal(hello.scene, 'drop', 'the saved world was restored');
  await c2.next((m) => m.type === 'frame', WAIT);
  c2.close();
  await stopClean(s2, logs);
  rmSync(dir, { recursive: true, force: true });
  rmSync(logs, { recursive: true, force: true });
});

test('under TSan: recordings: racing starts and stops, the listing and files read while the encoder writes; no report', { skip }, async () => {
  const logs = tempDir('fluid-tsan-');
  const rec = tempDir('fluid-tsan-rec-');
  const s = await startTsan(['--particles', '800', '--frame-hz', '20', '--tick-hz', '30', '--record-dir', rec], logs);
  let n = 0;
  const client = async (k) => {
    for (let i = 0; i < 6; i++) {
      // each client its own address: its own budget of recording starts
      const r = await http(s, 'POST', '/api/recordings', { body: { name: `t${k}-${i}` }, from: `127.0.0.${k + 2}` });
      assert.equal(r.status, 200, r.text);
      n++;
      if (i % 3 === 2) await status(http(s, 'POST', '/api/recordings/stop'), 200, 'stop');
      await status(get(s, `/api/recordings?offset=${i}&limit=3`), 200, 'the listing');
      await status(get(s, `/api/recordings/t${k}-${i}/index.json`), 200, 'an index');
    }
  };
  await Promise.all([0, 1, 2, 3].map(client));
  assert.equal((await get(s, '/api/recordings')).json.total, n);
  await stopClean(s, logs);
  rmSync(logs, { recursive: true, force: true });
  rmSync(rec, { recursive: true, force: true });
});

test('under TSan: rooms made, streamed, asleep, evicted, restored and deleted while others stream; no report', { skip }, async () => {
  const logs = tempDir('fluid-tsan-');
  const data = tempDir('fluid-tsan-rooms-');
  const s = await startTsan(['--particles', '800', '--frame-hz', '20', '--tick-hz', '30', '--step-budget', '0', '--data-dir', data,
    '--room-idle-s', '1', '--room-evict-s', '1'], logs);
  const home = await connect(s);
  await home.next((m) => m.type === 'hello', WAIT);
  // two rooms made at once (the keeper makes them one after the other, off the network thread)
  const made = await Promise.all(['ta', 'tb'].map((name) => http(s, 'POST', '/api/rooms', { body: { name, scene: 'drop', particles: 800 } })));
  for (const r of made) assert.equal(r.status, 201, r.text);
  const a = await connect(s, { url: `${s.wsUrl}r/ta/` });
  const b = await connect(s, { url: `${s.wsUrl}r/tb/` });
  for (const c of [a, b]) await c.next((m) => m.type === 'frame', WAIT);
  await ok(a.command({ type: 'push', point: [0.3, 0.3, 0.3], radius: 0.3, strength: 2, direction: [1, 0, 0] }), 'push in ta');
  await status(http(s, 'POST', '/api/rooms/tb/pause'), 200, 'pause tb');
  // ta's viewer leaves: it falls asleep, is evicted, and a request restores it
  a.close();
  for (let i = 0; i < 600 && (await get(s, '/api/rooms/ta')).json.state !== 'evicted'; i++) await sleep(100);
  assert.equal((await get(s, '/api/rooms/ta')).json.state, 'evicted');
  await status(http(s, 'GET', '/api/rooms/ta/stats'), 200, 'a request restores ta');
  await status(http(s, 'POST', '/api/rooms/ta/pause'), 200, 'a command in the restored ta');
  // tb is deleted while its viewer streams
  await status(http(s, 'DELETE', '/api/rooms/tb'), 200, 'delete tb');
  const closed = await b.closedWithin(WAIT);
  assert.equal(closed.code, 4004);
  home.close();
  await stopClean(s, logs);
});
