// hardening.test.mjs - the hardening against the real binary (docs/hardening.md
// "The defects reported, and where each is fixed"): snapshots taken on
// trust (a spacing of h/1500 froze the tick, positions and an emitter rate
// of 1e30 were accepted) are refused with a 400 naming the field, the world
// left as it was and still stepping; request bodies are bounded in total and
// refused before they are read when the token is missing.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, get, http, sleep, decode, encode, rawConnect, until, WAIT, agentFrom } from './lib.mjs';

after(async () => { await stopAll(); });

// The core's snapshot layout (server/sim/snapshot.c, version 2).
const DOM = 20, DOM_SIZE = 48, MAT_SIZE = 132, EMITTER_SIZE = 64, EMITTER_RATE = 32;
function layout(world) {
  const dv = new DataView(world.buffer, world.byteOffset, world.byteLength);
  const nmatAt = DOM + DOM_SIZE + 32;
  const countAt = nmatAt + 4 + dv.getUint32(nmatAt, true) * MAT_SIZE;
  const n = dv.getUint32(countAt, true);
  const xAt = countAt + 8;
  let at = xAt + 54 * n;
  at += 4 + 4 * dv.getUint32(at, true); // free slots
  for (let i = 0; i < n; i++) at += 4 + 8 * dv.getUint32(at, true); // springs
  return { dv, h: DOM + 36, spacing: DOM + 40, xAt, n, emitAt: at };
}

// Each snapshot from another loopback address: the server allows one address
// 2 in a row (PROTOCOL.md, "Fair shares"), and these tests take many.
let snapshotsTaken = 0;
async function snapshotDoc(s) {
  const dispatcher = agentFrom(s, `127.0.0.${2 + (snapshotsTaken++ % 200)}`);
  const res = await fetch(`${s.base}/api/snapshot`, { signal: AbortSignal.timeout(WAIT), dispatcher });
  assert.equal(res.status, 200);
  return decode(new Uint8Array(await res.arrayBuffer()));
}

async function postDoc(s, doc) {
  const res = await fetch(`${s.base}/api/snapshot`, {
    method: 'POST', body: encode(doc), headers: { 'content-type': 'application/msgpack' },
    signal: AbortSignal.timeout(WAIT),
  });
  return { status: res.status, json: await res.json() };
}

function damaged(doc, patch) {
  const world = new Uint8Array(doc.world); // a copy
  patch(layout(world));
  return { ...doc, world };
}

async function tick(s) { return (await get(s, '/api/stats')).json.tick; }

test('snapshots out of range are refused with a 400 naming the field; the world is left as it was and keeps stepping', async () => {
  const s = await startServer(['--particles', '3000']);
  const e = await http(s, 'POST', '/api/emitter', { body: { slot: 0, pos: [0.5, 0.8, 0.5], direction: [0, -1, 0], speed: 1, radius: 0.05, rate: 300, material: 'water' } });
  assert.equal(e.status, 200, e.text);
  const slot = e.json.slot;
  const cases = [
    ['spacing h/1500 (froze the tick ~70 s)', (l) => l.dv.setFloat32(l.spacing, l.dv.getFloat32(l.h, true) / 1500, true), /spacing/],
    ['spacing h/20000', (l) => l.dv.setFloat32(l.spacing, l.dv.getFloat32(l.h, true) / 20000, true), /spacing/],
    ['h 1000 spacings', (l) => l.dv.setFloat32(l.h, l.dv.getFloat32(l.spacing, true) * 1000, true), /h \/ spacing/],
    ['a particle at x = 1e30', (l) => l.dv.setFloat32(l.xAt, 1e30, true), /position x = 1e\+30 outside/],
    ['every particle at y = -1e30', (l) => { for (let i = 0; i < l.n; i++) l.dv.setFloat32(l.xAt + 4 * l.n + 4 * i, -1e30, true); }, /position y/],
    ['emitter rate 1e30 (its command caps it at 1e6)', (l) => l.dv.setFloat32(l.emitAt + slot * EMITTER_SIZE + EMITTER_RATE, 1e30, true), /emitter \d: .*rate 0\.\.1e\+06/],
  ];
  // paused, the world's bytes must be identical before and after each refusal
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200);
  const good = await snapshotDoc(s);
  for (const [what, patch, want] of cases) {
    const r = await postDoc(s, damaged(good, patch));
    assert.equal(r.status, 400, `${what}: ${JSON.stringify(r.json)}`);
    assert.match(r.json.error, want, what);
    const now = await snapshotDoc(s);
    assert.deepEqual(Buffer.from(now.world), Buffer.from(good.world), `${what}: the refused snapshot changed the world`);
  }
  // the untouched document is still accepted
  const ok = await postDoc(s, good);
  assert.equal(ok.status, 200, JSON.stringify(ok.json));
  // and the world steps on: ticks advance once resumed
  assert.equal((await http(s, 'POST', '/api/resume')).status, 200);
  const t0 = await tick(s);
  let t1 = t0;
  await until(async () => (t1 = await tick(s)) >= t0 + 10, () => `the world to step after the refusals (tick ${t0} -> ${t1})`);
});

// Sends `count` uploads of `bytes` at once on raw sockets: every request's
// headers first (the server reserves or refuses each on its headers), then,
// once the `refused` refusals expected have arrived, the bodies of the
// others.  Resolves with each one's status (0: no answer) and the server's
// peak RSS growth while they ran.
async function parallelUploads(s, { count, bytes, refused, headers = '' }) {
  const rss0 = s.rssKiB();
  let peak = rss0, sampling = true;
  const sampler = (async () => { while (sampling) { peak = Math.max(peak, s.rssKiB()); await sleep(20); } })();
  const chunk = Buffer.alloc(1 << 20, 0x61);
  let answered = 0;
  const conns = Array.from({ length: count }, () => {
    const c = { answer: '', done: false };
    c.status = new Promise((resolve) => {
      c.finish = () => {
        if (c.done) return;
        c.done = true;
        answered++;
        resolve(Number((/^HTTP\/1\.1 (\d+)/.exec(c.answer) || [0, 0])[1]));
      };
    });
    c.open = new Promise((resolve) => {
      c.sock = rawConnect(s.port, () => {
        c.sock.write(`POST /api/snapshot HTTP/1.1\r\nHost: x\r\nContent-Type: application/msgpack\r\n${headers}Content-Length: ${bytes}\r\n\r\n`);
        resolve();
      });
    });
    c.sock.on('data', (d) => { c.answer += d; if (/\r\n\r\n/.test(c.answer)) { c.finish(); c.sock.destroy(); } });
    c.sock.on('error', () => c.finish());
    c.sock.on('close', () => c.finish());
    return c;
  });
  await Promise.all(conns.map((c) => c.open));
  // the refusals are in (the deadline only ends a wait that would never end:
  // then the statuses say what came); the rest wait for their bodies
  await until(() => answered >= refused, `${refused} refusals`, { everyMs: 20 }).catch(() => {});
  await Promise.all(conns.map(async (c) => {
    for (let sent = 0; sent < bytes && !c.done && !c.sock.destroyed; sent += chunk.length) {
      const piece = sent + chunk.length <= bytes ? chunk : chunk.subarray(0, bytes - sent);
      if (!c.sock.write(piece)) await new Promise((r) => { c.sock.once('drain', r); c.sock.once('close', r); });
    }
  }));
  const statuses = await Promise.all(conns.map((c) => c.status));
  sampling = false;
  await sampler;
  return { statuses: statuses.sort(), growthMB: (peak - rss0) / 1024 };
}

test('parallel snapshot uploads are bounded in total: past 320 MiB in flight the rest get a 503 before their body', async () => {
  const s = await startServer(['--particles', '2000']);
  const { statuses, growthMB } = await parallelUploads(s, { count: 4, bytes: 150e6, refused: 2 });
  console.log(`    4 parallel uploads of 150 MB: statuses ${statuses.join(', ')}; peak RSS growth ${growthMB.toFixed(0)} MB`);
  const busy = statuses.filter((c) => c === 503).length;
  assert.equal(busy, 2, 'two fit in the 320 MiB budget, two are refused');
  assert.equal(statuses.filter((c) => c === 400).length, 2, 'the two received are not snapshot documents: 400');
  assert.ok(growthMB < 320 + 48, `RSS grew by ${growthMB.toFixed(0)} MB (bound: the 320 MiB budget)`);
  assert.equal((await get(s, '/api/health')).status, 200);
});

test('on a --token server, uploads without the token get 403 (a player may not restore), with a wrong one 401, before any of the body is read or set aside', async () => {
  const s = await startServer(['--particles', '2000', '--token', 'sesame']);
  const anon = await parallelUploads(s, { count: 2, bytes: 150e6, refused: 2 });
  const wrong = await parallelUploads(s, { count: 1, bytes: 150e6, refused: 1, headers: 'Authorization: Bearer nope\r\n' });
  console.log(`    2 uploads of 150 MB without a token: statuses ${anon.statuses.join(', ')}; peak RSS growth ${anon.growthMB.toFixed(1)} MB`);
  assert.deepEqual(anon.statuses, [403, 403]);
  assert.deepEqual(wrong.statuses, [401]);
  assert.ok(anon.growthMB < 16 && wrong.growthMB < 16, `RSS grew by ${anon.growthMB.toFixed(1)} / ${wrong.growthMB.toFixed(1)} MB`);
  // with the token, a small body is taken as before
  const ok = await fetch(`${s.base}/api/pause`, { method: 'POST', body: '{}', headers: { authorization: 'Bearer sesame', 'content-type': 'application/json' } });
  assert.equal(ok.status, 200);
  assert.equal((await get(s, '/api/health')).status, 200);
});
