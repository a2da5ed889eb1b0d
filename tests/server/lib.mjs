// lib.mjs - helpers for the fluid-server integration tests and benchmark:
// start the real binary on a loopback port, HTTP/JSON and WebSocket clients.
// Every wait is bounded; every server started is killed by stopAll().
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync, readFileSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import WebSocket from 'ws';
import { decode, encode } from '@msgpack/msgpack';

export { decode, encode, WebSocket };

const servers = new Set();
export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SERVER = resolve(ROOT, process.env.FLUID_SERVER || 'build/fluid-server');

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
// prints its "listening on" line.
export async function startServer(args = [], { env = {}, timeoutMs = 15000, binary = SERVER } = {}) {
  const webRoot = makeWebRoot();
  const proc = spawn(binary, ['--port', '0', '--bind', '127.0.0.1', '--web-root', webRoot, ...args], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '', err = '';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { err += d; });
  const port = await new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`server did not start: ${out}${err}`)), timeoutMs);
    const check = () => {
      const m = /listening on http:\/\/[\d.]+:(\d+)\//.exec(out);
      if (m) { clearTimeout(t); resolve(Number(m[1])); }
    };
    proc.stdout.on('data', check);
    proc.on('exit', (code) => { clearTimeout(t); reject(new Error(`server exited ${code}: ${out}${err}`)); });
    proc.on('error', (e) => { clearTimeout(t); reject(e); });
  });
  const s = {
    proc, port, webRoot,
    base: `http://127.0.0.1:${port}`,
    wsUrl: `ws://127.0.0.1:${port}/`,
    get stdout() { return out; },
    get stderr() { return err; },
    async stop(signal = 'SIGTERM', waitMs = 10000) {
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
process.on('exit', () => { for (const s of servers) try { s.proc.kill('SIGKILL'); } catch { /* gone */ } });

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export async function http(s, method, path, { body, headers = {}, raw = false } = {}) {
  const init = { method, headers: { ...headers }, signal: AbortSignal.timeout(10000) };
  if (body !== undefined) {
    init.body = typeof body === 'string' ? body : JSON.stringify(body);
    init.headers['content-type'] = 'application/json';
  }
  const res = await fetch(s.base + path, init);
  const text = await res.text();
  let json = null;
  if (!raw) { try { json = JSON.parse(text); } catch { json = null; } }
  return { status: res.status, json, text, headers: res.headers };
}

export const get = (s, path) => http(s, 'GET', path);

// A WebSocket client that decodes every binary message and keeps them in
// order; next() waits (bounded) for the next message matching a predicate.
export class Client {
  constructor(url, { protocol = 'fluid.v1', headers } = {}) {
    this.ws = protocol ? new WebSocket(url, protocol, { headers }) : new WebSocket(url, { headers });
    this.ws.binaryType = 'arraybuffer';
    this.messages = [];
    this.waiters = [];
    this.frames = 0;
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
      if (msg.type === 'frame') this.frames++;
      this.messages.push(msg);
      this._wake();
    });
    this.ws.on('close', (code, reason) => { this.closed = { code, reason: reason.toString() }; this._wake(); });
  }
  _wake() { const w = this.waiters; this.waiters = []; for (const f of w) f(); }
  // Waits for a message (already received or future) matching pred; removes
  // it and everything before it from the queue.
  async next(pred = () => true, timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const i = this.messages.findIndex(pred);
      if (i >= 0) { const m = this.messages[i]; this.messages.splice(0, i + 1); return m; }
      if (this.closed) throw new Error(`closed (${this.closed.code} ${this.closed.reason}) while waiting`);
      const left = deadline - Date.now();
      if (left <= 0) throw new Error('timed out waiting for a message');
      await new Promise((r) => { const t = setTimeout(r, left); this.waiters.push(() => { clearTimeout(t); r(); }); });
    }
  }
  async closedWithin(timeoutMs = 5000) {
    const deadline = Date.now() + timeoutMs;
    while (!this.closed && Date.now() < deadline)
      await new Promise((r) => { const t = setTimeout(r, 50); this.waiters.push(() => { clearTimeout(t); r(); }); });
    return this.closed;
  }
  sendRaw(bytes) { this.ws.send(bytes, { binary: true }); }
  send(obj) { this.ws.send(encode(obj)); }
  // Sends a command and waits for the reply with its rid.
  async command(obj, timeoutMs = 5000) {
    const rid = this.rid++;
    this.send({ ...obj, rid });
    return this.next((m) => m.type === 'reply' && m.rid === rid, timeoutMs);
  }
  close() { try { this.ws.close(); } catch { /* already */ } }
  terminate() { try { this.ws.terminate(); } catch { /* already */ } }
}

export async function connect(s, opts = {}) {
  const c = new Client(opts.url || s.wsUrl, opts);
  await c.opened;
  return c;
}

// Decodes a frame's binary fields into typed arrays (views where aligned).
export function frameArrays(f) {
  const pos = f.pos, ids = f.ids, mat = f.mat;
  const posView = new Uint16Array(pos.buffer, pos.byteOffset, pos.byteLength / 2);
  const runs = new Uint32Array(ids.buffer, ids.byteOffset, ids.byteLength / 4);
  const idList = [];
  for (let r = 0; r < runs.length; r += 2) for (let k = 0; k < runs[r + 1]; k++) idList.push(runs[r] + k);
  return { posView, runs, idList, mat };
}

export function dequantize(q, lo, hi) { return lo + (q / 65535) * (hi - lo); }
