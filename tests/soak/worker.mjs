// worker.mjs - the soak's two observers, each in its own worker thread so
// that the load the main thread generates cannot delay their reads:
//   role 'good':   one well-behaved WebSocket client that reads every message,
//                  decodes every frame's payload in arrival order (as a page
//                  must; with the page decoder's oracle,
//                  tests/web/oracle/frame_decoder.js) and counts the frames,
//                  the payloads refused, frames out of order and changes of the
//                  particle set; it also notes when each frame came (for the
//                  benchmark's frame rate, tests/soak/bench_bars.mjs);
//   role 'health': GET /api/health on a fresh connection every 250 ms,
//                  recording each answer and its latency (the latency only
//                  for the benchmark: an answer is a failure only when it is
//                  not 200 {"ok": true}, or none came within HANG_MS, the
//                  bound that turns a hung server into a failure).
// The main thread sends 'stop' and receives one result message.
import { parentPort, workerData } from 'node:worker_threads';
import http from 'node:http';
import { WebSocket, decode, encode } from '../server/lib.mjs';
import { FrameDecoder } from '../web/oracle/frame_decoder.js';
import { stopwatch } from './bench_bars.mjs';

const { role, port } = workerData;
// A deadline that only turns a hang into a failure (generous: a busy machine
// and a sanitizer build answer within a second or two); nothing is timed by it.
const HANG_MS = 60000;
let stopping = false;
const stopped = new Promise((resolve) => parentPort.on('message', (m) => { if (m === 'stop') { stopping = true; resolve(); } }));

if (role === 'good') {
  const r = {
    frames: 0, hello: 0, other: 0, undecodable: 0, clientId: 0, spanS: 0, maxGapMs: 0, maxGapAt: '', closed: null, error: null,
    decoded: 0, keyframes: 0, refused: 0, refusals: [], outOfOrder: 0, outOfOrderAt: [], lastSeq: -1, firstN: -1, nMin: Infinity, nMax: -Infinity, setChanged: 0,
  };
  let decoder = null, keyAsked = false, firstIds = null;
  let sinceFirst = null, sinceLast = null; // clocks for the benchmark's figures
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, 'fluid.v2', { perMessageDeflate: false });
  ws.binaryType = 'arraybuffer';
  // A frame's payload through the decoder: a refusal is counted and a
  // keyframe asked for (once until one comes), as the page does.  The set of
  // particles is compared with the first frame's: nothing in the soak's load
  // adds or removes particles.
  const decodeFrame = (m) => {
    if (!decoder) { r.refused++; if (r.refusals.length < 5) r.refusals.push(`seq ${m.seq}: frame before hello`); return; }
    try {
      const f = decoder.decode(m.data);
      r.decoded++;
      if (m.key) { r.keyframes++; keyAsked = false; }
      r.nMin = Math.min(r.nMin, f.n); r.nMax = Math.max(r.nMax, f.n);
      if (!firstIds) { r.firstN = f.n; firstIds = Uint32Array.from(f.id.subarray(0, f.n)); }
      else if (f.n !== firstIds.length || f.id.subarray(0, f.n).some((id, k) => id !== firstIds[k])) r.setChanged++;
    } catch (e) {
      r.refused++;
      if (r.refusals.length < 5) r.refusals.push(`seq ${m.seq}: ${e.message || e}`);
      if (!keyAsked) { keyAsked = true; ws.send(encode({ type: 'keyframe', rid: 0 })); }
    }
  };
  ws.on('message', (data) => {
    let m;
    try { m = decode(new Uint8Array(data)); } catch { r.undecodable++; return; }
    if (m.type === 'frame') {
      if (r.frames === 0) {
        sinceFirst = stopwatch();
        parentPort.postMessage({ event: 'first-frame' });
      } else {
        const gapMs = sinceLast() * 1000;
        if (gapMs > r.maxGapMs) { r.maxGapMs = gapMs; r.maxGapAt = new Date().toISOString(); }
      }
      sinceLast = stopwatch();
      r.spanS = sinceFirst(); // from the first frame to this one
      r.frames++;
      if (!(m.seq > r.lastSeq)) { r.outOfOrder++; if (r.outOfOrderAt.length < 5) r.outOfOrderAt.push(`${r.lastSeq} then ${m.seq}`); }
      r.lastSeq = m.seq;
      decodeFrame(m);
    } else if (m.type === 'hello') {
      r.hello++;
      r.clientId = m.client_id;
      decoder = new FrameDecoder(Math.max(1, m.capacity >>> 0)); // a new decoder at every hello
      keyAsked = false; r.lastSeq = -1;
      if (r.hello === 1) parentPort.postMessage({ event: 'hello', clientId: m.client_id });
      // the full world whatever the link rule makes of the loaded server: this client checks that every
      // frame decodes to the same particles, not the tiers (PROTOCOL.md, "Tiers of detail")
      ws.send(encode({ type: 'detail', full: true, rid: 0 }));
    } else {
      r.other++;
    }
  });
  ws.on('error', (e) => { r.error = String(e); });
  ws.on('close', (code, reason) => { if (!stopping) r.closed = { code, reason: reason.toString() }; });
  await stopped;
  ws.terminate();
  parentPort.postMessage({ event: 'result', result: r });
} else if (role === 'health') {
  const r = { probes: 0, ok: 0, failures: [], maxMs: 0, maxAt: '', latencies: [] };
  const probe = () => new Promise((resolve) => {
    const latency = stopwatch();
    let answered = false;
    const done = (err, status, body) => {
      if (answered) return;
      answered = true;
      const ms = latency() * 1000;
      r.probes++;
      r.latencies.push(ms);
      if (ms > r.maxMs) { r.maxMs = ms; r.maxAt = new Date().toISOString(); }
      if (!err && status === 200 && /"ok"\s*:\s*true/.test(body)) r.ok++;
      else if (r.failures.length < 20) r.failures.push(err ? String(err) : `status ${status}: ${body.slice(0, 80)}`);
      resolve();
    };
    const req = http.get({ host: '127.0.0.1', port, path: '/api/health', agent: false, timeout: HANG_MS }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => done(null, res.statusCode, body));
      res.on('error', (e) => done(e));
    });
    req.on('timeout', () => req.destroy(new Error(`no answer within ${HANG_MS / 1000} s`)));
    req.on('error', (e) => done(e));
  });
  // A witness: this thread's own 20 ms timer.  When it is late by as much
  // as a slow answer took, the whole machine stalled, not only the server.
  r.timerLateMaxMs = 0; r.timerLateAt = '';
  let sinceTick = stopwatch();
  const witness = setInterval(() => {
    const late = sinceTick() * 1000 - 20;
    if (late > r.timerLateMaxMs) { r.timerLateMaxMs = late; r.timerLateAt = new Date().toISOString(); }
    sinceTick = stopwatch();
  }, 20);
  stopped.then(() => clearInterval(witness));
  while (!stopping) {
    await probe();
    await Promise.race([new Promise((res) => setTimeout(res, 250)), stopped]);
  }
  r.latencies.sort((a, b) => a - b);
  r.p99Ms = r.latencies.length ? r.latencies[Math.floor(0.99 * (r.latencies.length - 1))] : 0;
  r.medianMs = r.latencies.length ? r.latencies[Math.floor(0.5 * (r.latencies.length - 1))] : 0;
  delete r.latencies;
  parentPort.postMessage({ event: 'result', result: r });
}
