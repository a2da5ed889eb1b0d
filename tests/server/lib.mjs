// lib.mjs - helpers for the fluid-server integration tests and benchmark:
// start the real binary on a loopback port, HTTP/JSON and WebSocket clients.
// Every wait is bounded; every server started is killed by stopAll().
//
// Tests never time anything (STYLE.md): a wait's deadline (WAIT, generous)
// only turns a hang into a failure; no test asserts how long something took
// or how often it happened per second.  Benchmarks (tests/bench/) do that.
//
// TLS mode (FLUID_TEST_TLS=1): this process makes its own CA and a server
// certificate for 127.0.0.1 and localhost (openssl), every server started
// gets --tls-cert/--tls-key, base and wsUrl are https:// and wss://, and
// every client here verifies the server against that CA and nothing else:
// fetch (undici's global dispatcher, so tests that call fetch themselves
// too), WebSocket, rawConnect, and the curl/python children (childEnv).
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import net from 'node:net';
import tls from 'node:tls';
import WS from 'ws';
import { Agent, setGlobalDispatcher } from 'undici';
import { decode, encode } from '@msgpack/msgpack';
import { FrameDecoder } from '../web/oracle/frame_decoder.js';

export { decode, encode };

const servers = new Set();
// The deadline of a wait for something that normally takes well under a
// second or two, on a loaded machine too (two busy cores, a sanitizer build).
export const WAIT = 60000;
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SERVER = resolve(ROOT, process.env.FLUID_SERVER || 'build/fluid-server');
export const TLS = process.env.FLUID_TEST_TLS === '1';

// A fresh CA and a server certificate it signed, in a temporary directory:
// { dir, ca, cert, key } (PEM paths; ca also as text in caPem).  names: the
// subjectAltName entries.
export function makeCerts(names = ['IP:127.0.0.1', 'DNS:localhost']) {
  const dir = mkdtempSync(join(tmpdir(), 'fluid-tls-'));
  const f = (n) => join(dir, n);
  const ossl = (...a) => execFileSync('openssl', a, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=fluid test CA');
  ossl('req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(f('ext.cnf'), `subjectAltName=${names.join(',')}\nbasicConstraints=CA:FALSE\n` +
    'keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  ossl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-out', f('server.pem'), '-days', '2', '-extfile', f('ext.cnf'));
  return { dir, ca: f('ca.pem'), cert: f('server.pem'), key: f('server.key'), caPem: readFileSync(f('ca.pem'), 'utf8') };
}

export const certs = TLS ? makeCerts() : null;
if (TLS) {
  // Only this CA: the system's roots are not consulted.
  setGlobalDispatcher(new Agent({ connect: { ca: certs.caPem, rejectUnauthorized: true } }));
  process.on('exit', () => rmSync(certs.dir, { recursive: true, force: true }));
}

// Environment for child processes (curl, python) so that they verify the
// server against the test CA (empty without TLS).
export const childEnv = () => (TLS ? { ...process.env, CURL_CA_BUNDLE: certs.ca, SSL_CERT_FILE: certs.ca } : process.env);

// ws's WebSocket, with the test CA in TLS mode (new WebSocket(url[, protocols][, options])).
export class WebSocket extends WS {
  constructor(url, protocols, options) {
    if (protocols && typeof protocols === 'object' && !Array.isArray(protocols)) { options = protocols; protocols = undefined; }
    super(url, protocols, TLS ? { ca: certs.caPem, rejectUnauthorized: true, ...options } : options);
  }
}

// A raw TCP connection to the server (TLS in TLS mode, verified); onConnect
// runs once bytes can be written.
export function rawConnect(port, onConnect) {
  if (TLS) return tls.connect({ host: '127.0.0.1', port, ca: certs.caPem, rejectUnauthorized: true }, onConnect);
  return net.connect(port, '127.0.0.1', onConnect);
}

export function makeWebRoot() {
  const dir = mkdtempSync(join(tmpdir(), 'fluid-web-'));
  writeFileSync(join(dir, 'index.html'), '<!doctype html><title>fluid test</title><p>hello</p>\n');
  writeFileSync(join(dir, 'app.js'), 'console.log("fluid");\n');
  writeFileSync(join(dir, 'style.css'), 'body { margin: 0 }\n');
  mkdirSync(join(dir, 'sub'));
  writeFileSync(join(dir, 'sub', 'data.json'), '{"a":1}\n');
  return dir;
}

// Starts fluid-server on a kernel-chosen loopback port; resolves when it
// prints its "listening on" line.  ca: the PEM text of the CA that http()
// and connect() verify this server against (TLS mode: the test CA).
export async function startServer(args = [], { env = {}, timeoutMs = WAIT, binary = SERVER, ca } = {}) {
  const webRoot = makeWebRoot();
  const tlsArgs = TLS ? ['--tls-cert', certs.cert, '--tls-key', certs.key] : [];
  const proc = spawn(binary, ['--port', '0', '--bind', '127.0.0.1', '--web-root', webRoot, ...tlsArgs, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '', err = '', scheme = 'http';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { err += d; });
  const port = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start: ${out}${err}`)), timeoutMs);
    const check = () => {
      const m = /listening on (https?):\/\/[\d.]+:(\d+)\//.exec(out);
      if (!m) return;
      clearTimeout(t);
      // A server started with a certificate says https (and one without, http).
      const given = args.lastIndexOf('--tls-cert');
      const tlsOn = given >= 0 ? args[given + 1] !== '' : TLS;
      if (m[1] !== (tlsOn ? 'https' : 'http')) reject(new Error(`expected ${tlsOn ? 'https' : 'http'}: ${out}`));
      else resolve(Number(m[2]));
      scheme = m[1];
    };
    proc.stdout.on('data', check);
    proc.on('exit', (code) => { clearTimeout(t); reject(new Error(`server exited ${code}: ${out}${err}`)); });
    proc.on('error', (e) => { clearTimeout(t); reject(e); });
  }).catch((e) => { proc.kill('SIGKILL'); rmSync(webRoot, { recursive: true, force: true }); throw e; });
  const s = {
    proc, port, webRoot,
    ca: ca ?? certs?.caPem,
    dispatcher: ca ? new Agent({ connect: { ca, rejectUnauthorized: true } }) : undefined,
    base: `${scheme}://127.0.0.1:${port}`,
    wsUrl: `${scheme === 'https' ? 'wss' : 'ws'}://127.0.0.1:${port}/`,
    get stdout() { return out; },
    get stderr() { return err; },
    async stop(signal = 'SIGTERM', waitMs = WAIT) {
      servers.delete(s);
      if (proc.exitCode !== null || proc.signalCode !== null) return { code: proc.exitCode, signal: proc.signalCode };
      const done = new Promise((resolve) => proc.once('exit', (code, sig) => resolve({ code, signal: sig })));
      proc.kill(signal);
      const t = setTimeout(() => proc.kill('SIGKILL'), waitMs);
      const r = await done;
      clearTimeout(t);
      rmSync(webRoot, { recursive: true, force: true });
      return r;
    },
    rssKiB() {
      const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${proc.pid}/status`, 'utf8'));
      return m ? Number(m[1]) : NaN;
    },
  };
  servers.add(s);
  return s;
}

export async function stopAll() {
  await Promise.all([...servers].map((s) => s.stop('SIGKILL')));
}

// A fresh directory under the system's temporary one (a data, record or log
// directory for a server), removed when this process exits, after its
// servers: a run leaves no worlds or secret keys behind, whether its tests
// passed or not.
const tempDirs = [];
export function tempDir(prefix) {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  tempDirs.push(dir);
  return dir;
}

process.on('exit', () => {
  for (const s of servers) try { s.proc.kill('SIGKILL'); } catch { /* gone */ }
  for (const d of tempDirs) try { rmSync(d, { recursive: true, force: true }); } catch { /* gone */ }
});

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

// A deadline for a loop that waits on several things: .passed turns true
// after ms (a hang becomes a failure; nothing is timed).
export function deadline(ms = WAIT) {
  const d = { passed: false };
  const t = setTimeout(() => { d.passed = true; }, ms);
  t.unref();
  d.clear = () => clearTimeout(t);
  return d;
}

// Polls check() (async or not) until it returns a truthy value, which it
// returns; throws naming `what` (a string, or a function of the last value)
// if that does not happen before the deadline.  Asserts nothing about time.
export async function until(check, what, { timeoutMs = WAIT, everyMs = 50 } = {}) {
  let expired = false;
  const timer = setTimeout(() => { expired = true; }, timeoutMs);
  try {
    for (;;) {
      const v = await check();
      if (v) return v;
      if (expired) throw new Error(`gave up waiting: ${typeof what === 'function' ? what(v) : what}`);
      await sleep(everyMs);
    }
  } finally { clearTimeout(timer); }
}

// from: a loopback address to send from (127.0.0.2, ...): another party for
// the server's per-address budgets (PROTOCOL.md, "Fair shares").
const fromAgents = new Map();
export function agentFrom(s, from) {
  const key = `${from} ${s.ca ? 'ca' : ''}`;
  if (!fromAgents.has(key)) fromAgents.set(key, new Agent({ localAddress: from, ...(s.ca ? { connect: { ca: s.ca } } : {}) }));
  return fromAgents.get(key);
}

export async function http(s, method, path, { body, headers = {}, raw = false, from } = {}) {
  const init = { method, headers: { ...headers }, signal: AbortSignal.timeout(WAIT), dispatcher: from ? agentFrom(s, from) : s.dispatcher };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  let res;
  try {
    res = await fetch(s.base + path, init);
  } catch (e) {
    // A GET sent on a pooled keep-alive connection the server closed while
    // it was idle (this process too busy to drop it in time) comes back
    // with nothing read; a GET is idempotent, and a browser sends it again
    // on a fresh connection (RFC 9110, 9.2.2): so does this, once.
    const c = e.cause;
    if (method !== 'GET' || c?.code !== 'UND_ERR_SOCKET' || c.socket?.bytesRead !== 0) throw e;
    res = await fetch(s.base + path, init);
  }
  const text = await res.text();
  let json = null;
  if (!raw) { try { json = JSON.parse(text); } catch { json = null; } }
  return { status: res.status, json, text, headers: res.headers };
}

export const get = (s, path) => http(s, 'GET', path);

// The bus messages' format version (PROTOCOL.md, "Relays"; server/wire/bus_codec.c).
export const BUS_VERSION = 3;

// A relay's client message as the bus carries it (PROTOCOL.md, "Relays"):
// what a relay publishes on fluid.<world>.cmd.<relay>.
export function forward(relay, client, message, { room = 'default', cred = '', kind = 0 } = {}) {
  const body = message ? Buffer.from(encode(message)) : Buffer.alloc(0);
  const name = Buffer.from(room, 'latin1'), c = Buffer.from(cred, 'latin1');
  const head = Buffer.alloc(20);
  head.write('FWRD', 0, 'latin1');
  head.writeUInt32LE(BUS_VERSION, 4); head.writeUInt32LE(relay, 8); head.writeUInt32LE(client, 12); head.writeUInt32LE(kind, 16);
  const u32 = (v) => { const b = Buffer.alloc(4); b.writeUInt32LE(v); return b; };
  return Buffer.concat([head, u32(name.length), name, u32(c.length), c, u32(body.length), body]);
}

// The value of one sample of /metrics' Prometheus text (NaN if absent).
export function metric(text, name) {
  const m = new RegExp(`^${name.replace(/[{}"=+.]/g, '\\$&')} (\\S+)$`, 'm').exec(text);
  return m ? Number(m[1]) : NaN;
}

// A WebSocket client that decodes every binary message and keeps them in
// order; next() waits (bounded) for the next message matching a predicate.
export class Client {
  constructor(url, { protocol = 'fluid.v2', headers, ca, decodeFrames = true } = {}) {
    const o = ca ? { headers, ca } : { headers };
    this.ws = protocol ? new WebSocket(url, protocol, o) : new WebSocket(url, o);
    this.ws.binaryType = 'arraybuffer';
    this.messages = [];
    this.waiters = [];
    this.frames = 0;
    this.decodeFrames = decodeFrames;
    this.decoder = null;     // protocol v2 frames (the oracle decoder, tests/web/oracle/frame_decoder.js), sized by hello.capacity
    this.refused = 0;        // payloads the decoder refused
    this.keyframes = 0;
    this.keyAsked = false;
    this.frameBytes = 0;     // bytes of frame messages received
    this.closed = null;
    this.rid = 1;
    this.opened = new Promise((resolve, reject) => {
      this.ws.once('open', resolve);
      this.ws.once('error', reject);
    });
    this.ws.on('error', (e) => { this.error = e; });
    this.ws.on('message', (data, isBinary) => {
      const buf = data instanceof ArrayBuffer ? data : data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength);
      let msg;
      try { msg = decode(new Uint8Array(buf)); } catch (e) { msg = { type: '_undecodable', error: String(e) }; }
      msg._bytes = buf;
      msg._binary = isBinary;
      if (msg.type === 'hello' && this.decodeFrames) this.decoder = new FrameDecoder(Math.max(1, msg.capacity >>> 0));
      if (msg.type === 'frame') {
        this.frames++;
        this.frameBytes += buf.byteLength;
        if (this.decodeFrames) this._decodeFrame(msg);
      }
      if (this.onMessage) this.onMessage(msg);
      this.messages.push(msg);
      this._wake();
    });
    this.ws.on('close', (code, reason) => { this.closed = { code, reason: reason.toString() }; this._wake(); });
  }
  // Decodes a v2 frame's payload in arrival order (as a browser must), copying
  // the result onto the message: ids, q (uint16 x y z), mat, temp, grid; a
  // refused payload asks the server for a keyframe (once until one comes).
  _decodeFrame(msg) {
    if (!this.decoder) { msg._refused = 'no hello'; return; }
    try {
      const f = this.decoder.decode(msg.data);
      msg.ids = Uint32Array.from(f.id.subarray(0, f.n));
      msg.q = Uint16Array.from(f.q.subarray(0, 3 * f.n));
      msg.mat = Uint8Array.from(f.mat.subarray(0, f.n));
      msg.temp = Uint8Array.from(f.temp.subarray(0, f.n));
      msg.grid = { origin: [...f.grid.origin], step: f.grid.step, levels: [...f.grid.levels] };
      if (msg.key) { this.keyframes++; this.keyAsked = false; }
    } catch (e) {
      msg._refused = String(e.message || e);
      this.refused++;
      if (!this.keyAsked) { this.keyAsked = true; this.send({ type: 'keyframe', rid: 0 }); }
    }
  }
  _wake() { const w = this.waiters; this.waiters = []; for (const f of w) f(); }
  // Waits for a message (already received or future) matching pred; removes
  // it and everything before it from the queue.  The deadline only makes a
  // hang a failure.
  async next(pred = () => true, timeoutMs = WAIT) {
    let expired = false;
    const timer = setTimeout(() => { expired = true; this._wake(); }, timeoutMs);
    try {
      for (;;) {
        const i = this.messages.findIndex(pred);
        if (i >= 0) { const m = this.messages[i]; this.messages.splice(0, i + 1); return m; }
        if (this.closed) throw new Error(`closed (${this.closed.code} ${this.closed.reason}) while waiting`);
        if (expired) throw new Error('timed out waiting for a message');
        await new Promise((r) => this.waiters.push(r));
      }
    } finally { clearTimeout(timer); }
  }
  // The close ({code, reason}) once the connection closes; null if it is
  // still open at the deadline.
  async closedWithin(timeoutMs = WAIT) {
    let expired = false;
    const timer = setTimeout(() => { expired = true; this._wake(); }, timeoutMs);
    try {
      while (!this.closed && !expired) await new Promise((r) => this.waiters.push(r));
    } finally { clearTimeout(timer); }
    return this.closed;
  }
  sendRaw(bytes) { this.ws.send(bytes, { binary: true }); }
  send(obj) { this.ws.send(encode(obj)); }
  // Sends a command and waits for the reply with its rid.
  async command(obj, timeoutMs = WAIT) {
    const rid = this.rid++;
    this.send({ ...obj, rid });
    return this.next((m) => m.type === 'reply' && m.rid === rid, timeoutMs);
  }
  close() { try { this.ws.close(); } catch { /* already */ } }
  terminate() { try { this.ws.terminate(); } catch { /* already */ } }
}

export async function connect(s, opts = {}) {
  const c = new Client(opts.url || s.wsUrl, { ca: s.ca, ...opts });
  await c.opened;
  return c;
}

// A decoded v2 frame's arrays (see Client._decodeFrame).
export function frameArrays(f) {
  if (!f.ids) throw new Error(`frame ${f.seq} was not decoded: ${f._refused}`);
  return { posView: f.q, idList: [...f.ids], mat: f.mat, temp: f.temp, grid: f.grid };
}

// A quantized coordinate back to metres on the frame's grid (axis a).
export function dequantize(q, grid, a) { return grid.origin[a] + q * grid.step; }
