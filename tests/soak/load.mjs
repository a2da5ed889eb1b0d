// load.mjs - the soak's load generator (see soak.mjs), run by soak.mjs as a
// child process at a lower priority (nice 10): the load stands for clients on
// other machines, so it must not take the CPU the server under test needs.
// It counts what it did and what came back (REST answers: status and form);
// soak.mjs checks the counts, and its benchmark mode (bench_bars.mjs) whether
// the load ran at its rates.  The clock here only paces the load.  Every
// connection is to 127.0.0.1.  Messages from the parent: 'stop'; to the
// parent: { started: rates }, then { counts } once everything is closed.
// Usage (by soak.mjs): node load.mjs PORT PARTICLES SEED
import net from 'node:net';
import http from 'node:http';
import { sleep, encode, WebSocket } from '../server/lib.mjs';
import { stopwatch } from './bench_bars.mjs';

const [PORT, PARTICLES, SEED] = process.argv.slice(2).map(Number);
const s = { port: PORT, base: `http://127.0.0.1:${PORT}`, wsUrl: `ws://127.0.0.1:${PORT}/` };
const CHURN_CLIENTS = 40, STUCK_CLIENTS = 2, SLOWLORIS = 50, GARBAGE_HZ = 20, REST_HZ = 20;
// A REST request without an answer within HANG_MS is lost (a deadline that
// only turns a hang into a failure; a busy machine answers within seconds).
const HANG_MS = 60000;
const STUCK_HOLD_S = 40; // a non-reader is replaced after this (the server drops it after 30 s)

// A seeded generator, so a failing run can be replayed with --seed.
let rngState = SEED >>> 0;
function rand() { // mulberry32
  rngState = (rngState + 0x6d2b79f5) >>> 0;
  let t = rngState;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}
const randInt = (lo, hi) => lo + Math.floor(rand() * (hi - lo + 1)); // inclusive
const pick = (a) => a[Math.floor(rand() * a.length)];
const randBytes = (n) => { const b = Buffer.alloc(n); for (let i = 0; i < n; i++) b[i] = Math.floor(rand() * 256); return b; };

const counts = {
  churnConnects: 0, churnFailed: 0, churnBytes: 0, churnRefused: 0,
  stuckConnects: 0, stuckCommands: 0,
  garbageConnects: 0, garbageSent: 0, garbageKinds: {}, garbageReplies: 0, garbageClosed1008: 0, garbageOtherClose: {},
  slowConnects: 0, slowBytes: 0, slowClosedByServer: 0, slowLifeMsMax: 0,
  rest: 0, restValid: 0, restInvalid: 0, restValid2xx: 0, restInvalid4xx: 0, restUnexpected: [], restErrors: 0, restSkipped: 0, restRetried: 0, restMalformed: 0,
};

let running = true;
// Paces an average rate: each call says how many are due now (at most max),
// so a timer that fires late (a busy machine) is made up for by the next ones.
function pacer(hz) {
  const elapsed = stopwatch();
  let done = 0;
  return (max) => {
    const n = Math.max(0, Math.min(max, Math.floor(elapsed() * hz) - done));
    done += n;
    return n;
  };
}
const garbageDue = pacer(GARBAGE_HZ), restDue = pacer(REST_HZ);
const sockets = new Set(); // every raw socket and WebSocket, closed at the end
const track = (x) => { sockets.add(x); return x; };
const untrack = (x) => sockets.delete(x);

// ---------------------------------------------------------------- churn
async function churnLoop(s, i) {
  while (running) {
    const lifeMs = randInt(1000, 10000);
    await new Promise((done) => {
      const ws = track(new WebSocket(s.wsUrl, 'fluid.v2', { perMessageDeflate: false, handshakeTimeout: 10000 }));
      let timer = null, opened = false;
      const finish = () => { clearTimeout(timer); untrack(ws); done(); };
      ws.on('open', () => {
        opened = true;
        counts.churnConnects++;
        if (rand() < 0.5) ws.send(encode({ type: 'cursor', rid: 0, pos: [rand() * 0.5, rand() * 0.5, rand() * 0.5] }));
        timer = setTimeout(() => {
          // Half leave with a close handshake, half just drop the connection.
          if (rand() < 0.5) { ws.close(1000); setTimeout(() => ws.terminate(), 2000); } else ws.terminate();
        }, lifeMs);
      });
      ws.on('message', (d) => { counts.churnBytes += d.byteLength ?? d.length; });
      ws.on('close', (code) => { if (code === 1013) counts.churnRefused++; finish(); });
      ws.on('error', () => { if (!opened) counts.churnFailed++; });
    });
    if (running) await sleep(randInt(0, 300));
  }
}

// ---------------------------------------------------------------- never-reading clients
function wsFrame(payload) { // one masked binary frame, as a client must send
  const mask = randBytes(4);
  const len = payload.length;
  const head = len < 126 ? Buffer.from([0x82, 0x80 | len]) : Buffer.from([0x82, 0x80 | 126, len >> 8, len & 255]);
  const body = Buffer.alloc(len);
  for (let k = 0; k < len; k++) body[k] = payload[k] ^ mask[k & 3];
  return Buffer.concat([head, mask, body]);
}

async function stuckLoop(s, i) {
  while (running) {
    await new Promise((done) => {
      const k = track(net.connect(s.port, '127.0.0.1'));
      let cmdTimer = null;
      const end = setTimeout(() => k.destroy(), STUCK_HOLD_S * 1000);
      k.on('connect', () => {
        k.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
          `Sec-WebSocket-Key: ${randBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: fluid.v2\r\n\r\n`);
      });
      k.once('data', () => {
        counts.stuckConnects++;
        k.pause(); // never read again: the server's sends back up
        if (i === 1) { // ... and this one keeps asking, so its replies back up too
          let rid = 1;
          cmdTimer = setInterval(() => {
            if (k.writableLength > 1 << 20) return; // the server stopped reading us: hold on
            k.write(wsFrame(encode({ type: 'push', rid: rid++, point: [0.3, 0.2, 0.3], radius: 0.1, strength: 0.5, direction: [0, 1, 0] })));
            counts.stuckCommands++;
          }, 100);
        }
      });
      k.on('error', () => {});
      k.on('close', () => { clearTimeout(end); clearInterval(cmdTimer); untrack(k); done(); });
    });
    if (running) await sleep(200);
  }
}

// ---------------------------------------------------------------- garbage
const CMD_FIELDS = {
  push: ['point', 'radius', 'strength', 'direction'],
  set_param: ['material', 'param', 'value', 'params'],
  load_scene: ['name', 'particles', 'solver'],
  set_solver: ['name'],
  heater: ['slot', 'enabled', 'kind', 'point', 'radius', 'rate', 'temperature'],
  heat: ['point', 'radius', 'rate', 'duration'],
  pause: [], resume: [], step: ['steps'],
  emitter: ['slot', 'enabled', 'pos', 'direction', 'speed', 'radius', 'rate', 'cap', 'material'],
  cursor: ['pos', 'visible'], auth: ['token'],
  body_create: ['shape', 'size', 'pos', 'rot', 'vel', 'ang_vel', 'density', 'friction', 'static'],
  body_destroy: ['id'], body_impulse: ['id', 'point', 'impulse'], body_grab: ['id', 'point', 'target'],
  body_drag: ['id', 'target'], body_release: ['id'],
};
const PARAM_NAMES = ['stiffness', 'near_stiffness', 'rest_density', 'viscosity_linear', 'viscosity_quadratic', 'spring_stiffness', 'p00', 'bogus'];
function randValue(depth = 0) {
  switch (randInt(0, depth > 2 ? 8 : 11)) {
    case 0: return randInt(-5, 5);
    case 1: return pick([0, -1, 2 ** 31, 2 ** 32 + 1, -(2 ** 53), Number.MAX_SAFE_INTEGER]);
    case 2: return pick([NaN, Infinity, -Infinity, 1e300, -1e-300, 1e30]);
    case 3: return rand() * 200 - 100;
    case 4: return pick(['', 'water', 'dam_break', 'x'.repeat(randInt(1, 200)), '\u00ff\u0000']);
    case 5: return pick([true, false]);
    case 6: return null;
    case 7: return randBytes(randInt(0, 64));
    case 8: return -rand();
    case 9: return Array.from({ length: randInt(0, 6) }, () => randValue(depth + 1));
    case 10: { const o = {}; for (let k = randInt(0, 6); k > 0; k--) o[pick(PARAM_NAMES)] = randValue(depth + 1); return o; }
    default: return [rand(), rand(), rand()];
  }
}
function validCommand(rid) {
  switch (randInt(0, 2)) {
    case 0: return { type: 'push', rid, point: [rand() * 0.5, rand() * 0.5, rand() * 0.5], radius: 0.1, strength: rand() * 2 - 1, direction: [0, 1, 0] };
    case 1: return { type: 'set_param', rid, material: 'water', params: { viscosity_linear: rand() * 2, viscosity_quadratic: rand() * 2 } };
    default: return { type: 'cursor', rid: 0, pos: [rand(), rand(), rand()] };
  }
}
// A msgpack map written pair by pair, so keys can repeat.
function mapWithPairs(pairs) {
  const n = pairs.length;
  const head = n < 16 ? Buffer.from([0x80 | n]) : Buffer.from([0xde, n >> 8, n & 255]);
  return Buffer.concat([head, ...pairs.flatMap(([k, v]) => [Buffer.from(encode(k)), Buffer.from(encode(v))])]);
}
const GARBAGE = {
  random_bytes: () => randBytes(randInt(1, 600)),
  truncated: () => { const b = Buffer.from(encode(validCommand(randInt(1, 1e6)))); return b.subarray(0, randInt(1, b.length - 1)); },
  wrong_types: () => {
    const type = pick(Object.keys(CMD_FIELDS));
    const o = { type: rand() < 0.9 ? type : randValue(), rid: rand() < 0.8 ? randInt(0, 2 ** 32 - 1) : randValue() };
    for (const f of CMD_FIELDS[type]) if (rand() < 0.7) o[f] = randValue();
    // Last, a key no command has: however the values above came out, this
    // is never a command that changes the world (a 'pause' would stop the
    // frames the bars are about).
    o[pick(['zzz', 'typ', 'rid2', 'Type'])] = randValue();
    return Buffer.from(encode(o));
  },
  duplicate_keys: () => {
    const pairs = [['type', pick(['set_param', 'push', 'emitter', 'body_create'])], ['rid', randInt(1, 1e6)]];
    if (rand() < 0.5) pairs.push(['material', 'water']);
    for (let k = randInt(1, 4); k > 0; k--) {
      if (rand() < 0.5) {
        const params = {};
        for (let j = randInt(1, 30); j > 0; j--) params[`p${String(j).padStart(2, '0')}`] = 1.0;
        pairs.push(['params', params]);
      } else {
        pairs.push([pick(['type', 'rid', 'point', 'radius', 'material', 'param', 'value']), randValue()]);
      }
    }
    return mapWithPairs(pairs);
  },
  false_lengths: () => Buffer.concat([pick([
    Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff]), Buffer.from([0xde, 0xff, 0xff]), Buffer.from([0xdd, 0x7f, 0xff, 0xff, 0xff]),
    Buffer.from([0x81, 0xdb, 0xff, 0xff, 0xff, 0xff]), Buffer.from([0x82, 0xa4, 0x74, 0x79, 0x70, 0x65, 0xc6, 0x10, 0, 0, 0]),
    Buffer.from([0x81, 0xa4, 0x74, 0x79, 0x70, 0x65, 0xd9, 0xff]),
  ]), randBytes(randInt(0, 20))]),
  deep_nesting: () => Buffer.concat([Buffer.from([0x82, 0xa4, 0x74, 0x79, 0x70, 0x65, 0xa4, 0x70, 0x75, 0x73, 0x68, 0xa5, 0x70, 0x6f, 0x69, 0x6e, 0x74]),
    Buffer.alloc(randInt(2, 2000), pick([0x91, 0x81])), Buffer.from([0xc0])]),
  oversized: () => rand() < 0.5 ? randBytes(randInt(4097, 70000))
    : Buffer.from(encode({ type: 'load_scene', rid: 7, name: 'x'.repeat(randInt(4097, 70000)) })),
  text: () => pick(['{"type":"pause","rid":1}', '', 'x'.repeat(randInt(1, 5000))]),
  valid: () => Buffer.from(encode(validCommand(randInt(1, 1e6)))),
};
const GARBAGE_WEIGHTS = [['random_bytes', 3], ['truncated', 2], ['wrong_types', 4], ['duplicate_keys', 2], ['false_lengths', 1],
  ['deep_nesting', 1], ['oversized', 1], ['text', 1], ['valid', 1]];
const GARBAGE_TOTAL = GARBAGE_WEIGHTS.reduce((a, [, w]) => a + w, 0);
function garbageKind() { let x = rand() * GARBAGE_TOTAL; for (const [k, w] of GARBAGE_WEIGHTS) if ((x -= w) < 0) return k; return 'random_bytes'; }

async function garbageLoop(s) {
  while (running) {
    await new Promise((done) => {
      const ws = track(new WebSocket(s.wsUrl, 'fluid.v2', { perMessageDeflate: false, handshakeTimeout: 10000, maxPayload: 16 << 20 }));
      let timer = null;
      ws.on('open', () => {
        counts.garbageConnects++;
        timer = setInterval(() => {
          if (ws.readyState !== WebSocket.OPEN || ws.bufferedAmount > 1 << 20) return;
          for (let n = garbageDue(5); n > 0; n--) {
            const kind = garbageKind();
            ws.send(GARBAGE[kind](), { binary: kind !== 'text' });
            counts.garbageSent++;
            counts.garbageKinds[kind] = (counts.garbageKinds[kind] || 0) + 1;
          }
        }, 1000 / GARBAGE_HZ);
      });
      ws.on('message', () => { counts.garbageReplies++; });
      ws.on('close', (code) => {
        if (code === 1008) counts.garbageClosed1008++;
        else counts.garbageOtherClose[code] = (counts.garbageOtherClose[code] || 0) + 1;
        clearInterval(timer); untrack(ws); done();
      });
      ws.on('error', () => {});
    });
    if (running) await sleep(50);
  }
}

// ---------------------------------------------------------------- slowloris
const SLOW_REQUEST = 'GET /api/stats HTTP/1.1\r\nHost: 127.0.0.1\r\nUser-Agent: slowloris\r\nX-Slow: ';
async function slowLoop(s, i) {
  await sleep(i * 20);
  while (running) {
    await new Promise((done) => {
      const k = track(net.connect(s.port, '127.0.0.1'));
      let pos = 0, timer = null, life = null;
      k.on('connect', () => {
        counts.slowConnects++;
        life = stopwatch();
        timer = setInterval(() => { // one byte at a time, never finishing the header
          k.write(pos < SLOW_REQUEST.length ? SLOW_REQUEST[pos] : 'a');
          pos++;
          counts.slowBytes++;
        }, 500);
      });
      k.on('data', () => {});
      k.on('error', () => {});
      k.on('close', () => {
        clearInterval(timer); untrack(k);
        if (running && life) { counts.slowClosedByServer++; counts.slowLifeMsMax = Math.max(counts.slowLifeMsMax, life() * 1000); }
        done();
      });
    });
    if (running) await sleep(100);
  }
}

// ---------------------------------------------------------------- REST
function restRequest() {
  const point = () => [rand() * 0.6, rand() * 0.4, rand() * 0.6];
  const reqs = [
    // [method, path, body (object or raw string), valid?]
    () => ['GET', '/api/stats', undefined, true],
    () => ['GET', '/api/scenes', undefined, true],
    () => ['GET', '/api/materials', undefined, true],
    () => ['GET', '/api/bodies', undefined, true],
    () => ['GET', '/api/clients', undefined, true],
    () => ['GET', '/metrics', undefined, true],
    () => ['GET', `/api/particles?offset=${randInt(0, PARTICLES)}&limit=${randInt(1, 10000)}`, undefined, true],
    () => ['GET', `/api/particles?offset=${pick(['-1', 'abc', '99999999999999999999'])}&limit=${pick(['0', '10001', 'x', ''])}`, undefined, false],
    () => ['GET', pick(['/api/nope', '/api/particles/1', '/api/materials/water/x']), undefined, false],
    () => ['POST', '/api/push', { point: point(), radius: 0.1 + rand() * 0.3, strength: rand() * 4 - 2, direction: [rand() - 0.5, 1, rand() - 0.5] }, true],
    () => ['POST', '/api/push', pick([
      { point: 'here', radius: 1, strength: 1, direction: [0, 1, 0] }, { point: [0, 0, 0], radius: 500, strength: 1, direction: [0, 1, 0] },
      { point: [0, 0, 0], radius: 1, strength: 1 }, { point: [0, 0, 0], radius: 1, strength: 1, direction: [0, 0, 0] },
      { point: [0, 0, 0], radius: 1, strength: 1, direction: [0, 1, 0], extra: 1 }, '{"broken', '[1,2,3]', '"push"', 'null',
      { point: [1e309, 0, 0], radius: 1, strength: 1, direction: [0, 1, 0] }]), false],
    () => ['POST', '/api/step', pick([{ steps: 1 }, {}]), false], // running: 409
    () => ['POST', '/api/step', pick([{ steps: 0 }, { steps: 100000 }, { steps: 'many' }, '{']), false],
    () => ['PATCH', '/api/materials/water', { viscosity_linear: rand() * 2, viscosity_quadratic: rand() * 2 }, true],
    () => ['PATCH', pick(['/api/materials/water', '/api/materials/goo']), pick([
      { viscosity_linear: -5 }, { viscosity_linear: 'thick' }, { bogus: 1 }, { stiffness: 1e9 }, {}, '[]', '{"viscosity_linear":',
      { viscosity_linear: 1, bogus: 2 }]), false],
    () => ['PATCH', '/api/materials/lava', { viscosity_linear: 1 }, false],
    () => ['POST', '/api/push', 'x'.repeat(20000), false], // over the 16 KiB body limit: 413
  ];
  return pick(reqs)();
}

// Keep-alive connections, as a script's HTTP client would use them.  The
// server closes a connection idle for 5 s (libwebsockets' default); a request
// sent on a pooled connection at that moment fails before any answer.  Node
// marks such a request (reusedSocket) and its documentation's answer is to
// send it again: those are counted apart (restRetried), and a request that
// fails on a new connection, or twice, is an error.
const agent = new http.Agent({ keepAlive: true, maxSockets: 32 });
function httpRequest(method, path, body, fresh) {
  return new Promise((resolve, reject) => {
    const headers = {};
    let data = null;
    if (body !== undefined) {
      data = Buffer.from(typeof body === 'string' ? body : JSON.stringify(body));
      headers['content-type'] = 'application/json';
      headers['content-length'] = data.length;
    }
    const req = http.request({ host: '127.0.0.1', port: PORT, method, path, headers, agent: fresh ? false : agent, timeout: HANG_MS }, (res) => {
      const chunks = [];
      res.on('data', (d) => chunks.push(d));
      res.on('end', () => resolve({ status: res.statusCode, type: res.headers['content-type'] || '', body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${HANG_MS / 1000} s`)));
    req.on('error', (e) => { e.reused = req.reusedSocket; reject(e); });
    req.end(data);
  });
}

// An answer is well-formed when it is what the API says: JSON (an object or
// an array) for /api/* with 2xx, an object with an "error" string for a 4xx,
// and Prometheus' text format for /metrics.  Returns what is wrong, or ''.
const PROM_LINE = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eEInfNa]+( [0-9]+)?$/;
function malformed(path, { status, type, body }) {
  if (path === '/metrics' && status < 300) {
    if (!type.startsWith('text/plain')) return `content-type ${type}`;
    const bad = body.split('\n').find((l) => l !== '' && !l.startsWith('#') && !PROM_LINE.test(l));
    return bad !== undefined ? `metrics line ${JSON.stringify(bad.slice(0, 80))}` : body.includes('\n') ? '' : 'empty metrics';
  }
  if (!type.startsWith('application/json')) return `content-type ${type}`;
  let j;
  try { j = JSON.parse(body); } catch (e) { return `not JSON (${e.message}): ${body.slice(0, 60)}`; }
  if (status < 300) return j !== null && typeof j === 'object' ? '' : `JSON ${typeof j}`;
  return j && typeof j.error === 'string' && j.error !== '' ? '' : `error answer without "error": ${body.slice(0, 60)}`;
}

let restInFlight = 0;
async function restOne() {
  if (restInFlight >= 32) { counts.restSkipped++; return; }
  const [method, path, body, valid] = restRequest();
  counts.rest++;
  if (valid) counts.restValid++; else counts.restInvalid++;
  restInFlight++;
  const what = `${method} ${path} ${typeof body === 'string' ? body.slice(0, 40) : JSON.stringify(body)?.slice(0, 60) ?? ''}`;
  try {
    let answer;
    try {
      answer = await httpRequest(method, path, body, false);
    } catch (e) {
      if (!e.reused || !['ECONNRESET', 'EPIPE'].includes(e.code)) throw e;
      counts.restRetried++;
      answer = await httpRequest(method, path, body, true);
    }
    const { status } = answer;
    const ok = valid ? status >= 200 && status < 300 : status >= 400 && status < 500;
    if (ok) { if (valid) counts.restValid2xx++; else counts.restInvalid4xx++; }
    else if (counts.restUnexpected.length < 20) counts.restUnexpected.push(`${what} -> ${status}`);
    const wrong = malformed(path, answer);
    if (wrong) {
      counts.restMalformed++;
      if (counts.restUnexpected.length < 20) counts.restUnexpected.push(`${what} -> ${status}, ${wrong}`);
    }
  } catch (e) {
    // A 413 is answered before the body is read, and the server may close
    // while the client is still sending: the request then fails on our side.
    if (!valid && body && body.length > 16384 && ['ECONNRESET', 'EPIPE'].includes(e.code)) counts.restInvalid4xx++;
    else {
      counts.restErrors++;
      if (counts.restUnexpected.length < 20) counts.restUnexpected.push(`${what} -> ${e.code || e.name}: ${e.message}`);
    }
  } finally {
    restInFlight--;
  }
}

// ---------------------------------------------------------------- run
const loops = [];
for (let i = 0; i < CHURN_CLIENTS; i++) loops.push(churnLoop(s, i));
for (let i = 0; i < STUCK_CLIENTS; i++) loops.push(stuckLoop(s, i));
loops.push(garbageLoop(s));
for (let i = 0; i < SLOWLORIS; i++) loops.push(slowLoop(s, i));
const restTimer = setInterval(() => { for (let n = restDue(5); n > 0; n--) restOne(); }, 1000 / REST_HZ);
process.send({ started: { CHURN_CLIENTS, STUCK_CLIENTS, SLOWLORIS, GARBAGE_HZ, REST_HZ } });
process.on('message', async (m) => {
  if (m !== 'stop') return;
  running = false;
  clearInterval(restTimer);
  for (const x of sockets) { try { if (x.terminate) x.terminate(); else x.destroy(); } catch { /* gone */ } }
  await Promise.race([Promise.all(loops), sleep(15000)]);
  // The REST requests still in flight finish first (each has its HANG_MS
  // deadline): agent.destroy() also destroys the sockets in use, and a request
  // cut that way failed as if the server had reset it.
  while (restInFlight > 0) await sleep(50);
  agent.destroy();
  process.send({ counts }, () => process.exit(0));
});
process.on('disconnect', () => process.exit(0)); // the parent is gone
