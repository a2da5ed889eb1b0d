// worker.mjs - the soak's two observers, each in its own worker thread so
// that the load the main thread generates cannot delay their reads:
//   role 'good':   one well-behaved WebSocket client that reads and decodes
//                  every message and counts the frames;
//   role 'health': GET /api/health on a fresh connection every 250 ms,
//                  recording each answer's latency.
// The main thread sends 'stop' and receives one result message.
import { parentPort, workerData } from 'node:worker_threads';
import http from 'node:http';
import { performance } from 'node:perf_hooks';
import { WebSocket, decode } from '../server/lib.mjs';

const { role, port } = workerData;
let stopping = false;
const stopped = new Promise((resolve) => parentPort.on('message', (m) => { if (m === 'stop') { stopping = true; resolve(); } }));

if (role === 'good') {
  const r = { frames: 0, hello: 0, other: 0, undecodable: 0, clientId: 0, firstFrameMs: 0, lastFrameMs: 0, maxGapMs: 0, maxGapAt: '', closed: null, error: null };
  const ws = new WebSocket(`ws://127.0.0.1:${port}/`, 'fluid.v2', { perMessageDeflate: false });
  ws.binaryType = 'arraybuffer';
  ws.on('message', (data) => {
    let m;
    try { m = decode(new Uint8Array(data)); } catch { r.undecodable++; return; }
    if (m.type === 'frame') {
      const t = performance.now();
      if (r.frames === 0) {
        r.firstFrameMs = t;
        parentPort.postMessage({ event: 'first-frame' });
      } else {
        if (t - r.lastFrameMs > r.maxGapMs) { r.maxGapMs = t - r.lastFrameMs; r.maxGapAt = new Date().toISOString(); }
      }
      r.lastFrameMs = t;
      r.frames++;
    } else if (m.type === 'hello') {
      r.hello++;
      r.clientId = m.client_id;
      if (r.hello === 1) parentPort.postMessage({ event: 'hello', clientId: m.client_id });
    } else {
      r.other++;
    }
  });
  ws.on('error', (e) => { r.error = String(e); });
  ws.on('close', (code, reason) => { if (!stopping) r.closed = { code, reason: reason.toString() }; });
  await stopped;
  r.stopMs = performance.now();
  ws.terminate();
  parentPort.postMessage({ event: 'result', result: r });
} else if (role === 'health') {
  const r = { probes: 0, ok: 0, failures: [], maxMs: 0, maxAt: '', over1s: 0, latencies: [] };
  const probe = () => new Promise((resolve) => {
    const t0 = performance.now();
    let answered = false;
    const done = (err, status, body) => {
      if (answered) return;
      answered = true;
      const ms = performance.now() - t0;
      r.probes++;
      r.latencies.push(ms);
      if (ms > r.maxMs) { r.maxMs = ms; r.maxAt = new Date().toISOString(); }
      if (ms > 1000) r.over1s++;
      if (!err && status === 200 && /"ok"\s*:\s*true/.test(body)) r.ok++;
      else if (r.failures.length < 20) r.failures.push(err ? String(err) : `status ${status}: ${body.slice(0, 80)}`);
      resolve();
    };
    const req = http.get({ host: '127.0.0.1', port, path: '/api/health', agent: false, timeout: 5000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (d) => { body += d; });
      res.on('end', () => done(null, res.statusCode, body));
      res.on('error', (e) => done(e));
    });
    req.on('timeout', () => req.destroy(new Error('no answer within 5 s')));
    req.on('error', (e) => done(e));
  });
  // A witness: this thread's own 20 ms timer.  When it is late by as much
  // as a slow answer took, the whole machine stalled, not only the server.
  r.timerLateMaxMs = 0; r.timerLateAt = '';
  let expectAt = performance.now() + 20;
  const witness = setInterval(() => {
    const late = performance.now() - expectAt;
    if (late > r.timerLateMaxMs) { r.timerLateMaxMs = late; r.timerLateAt = new Date().toISOString(); }
    expectAt = performance.now() + 20;
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
