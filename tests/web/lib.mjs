// lib.mjs - helpers for the web client's browser tests and benchmark: start
// the real fluid-server (serving web-client/) on a loopback port, launch
// Debian's headless Chromium through playwright-core, bounded waits, and
// cleanup that always kills both.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, mkdirSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = process.env.FLUID_ROOT ? resolve(process.env.FLUID_ROOT) : resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const SERVER = resolve(ROOT, process.env.FLUID_SERVER || 'build/fluid-server');
export const WEB_ROOT = join(ROOT, 'web-client');
export const ARTIFACTS = join(ROOT, 'build', 'artifacts', 'web');
export const CHROMIUM = process.env.CHROMIUM || '/usr/bin/chromium';

const servers = new Set(), browsers = new Set();

export const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

export function artifactsDir() { mkdirSync(ARTIFACTS, { recursive: true }); return ARTIFACTS; }

// Starts fluid-server on a kernel-chosen loopback port serving web-client/.
export async function startServer(args = [], { timeoutMs = 60000, port = 0 } = {}) {
  if (!existsSync(SERVER)) throw new Error(`no server binary at ${SERVER} (run make)`);
  const proc = spawn(SERVER, ['--port', String(port), '--bind', '127.0.0.1', '--web-root', WEB_ROOT, '--threads', '1', ...args],
    { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '', err = '', scheme = 'http';
  proc.stdout.on('data', (d) => { out += d; });
  proc.stderr.on('data', (d) => { err += d; });
  const p = await new Promise((res, rej) => {
    const t = setTimeout(() => rej(new Error(`server did not start: ${out}${err}`)), timeoutMs);
    const check = () => { const m = /listening on (https?):\/\/[\d.]+:(\d+)\//.exec(out); if (m) { clearTimeout(t); scheme = m[1]; res(Number(m[2])); } };
    proc.stdout.on('data', check);
    proc.on('exit', (code) => { clearTimeout(t); rej(new Error(`server exited ${code}: ${out}${err}`)); });
    proc.on('error', (e) => { clearTimeout(t); rej(e); });
  });
  const s = {
    proc, port: p, base: `${scheme}://127.0.0.1:${p}`,
    get log() { return out + err; },
    async stop() {
      servers.delete(s);
      if (proc.exitCode !== null || proc.signalCode !== null) return;
      const done = new Promise((r) => proc.once('exit', r));
      proc.kill('SIGTERM');
      const t = setTimeout(() => proc.kill('SIGKILL'), 5000);
      await done;
      clearTimeout(t);
    },
  };
  servers.add(s);
  return s;
}

export async function api(s, method, path, body) {
  const init = { method, headers: {}, signal: AbortSignal.timeout(30000) };
  if (body !== undefined) { init.body = JSON.stringify(body); init.headers['content-type'] = 'application/json'; }
  const res = await fetch(s.base + path, init);
  const json = await res.json();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
  return json;
}

// Every particle (in pages of 10000).
export async function allParticles(s) {
  const first = await api(s, 'GET', '/api/particles?offset=0&limit=10000');
  const out = { ...first };
  while (out.ids.length < first.total) {
    const p = await api(s, 'GET', `/api/particles?offset=${out.ids.length}&limit=10000`);
    if (!p.count) break;
    out.ids.push(...p.ids); out.positions.push(...p.positions); out.velocities.push(...p.velocities);
    if (out.temperatures && p.temperatures) out.temperatures.push(...p.temperatures);
    if (out.materials && p.materials) out.materials.push(...p.materials);
  }
  return out;
}

// playwright gives every launch a fresh temporary profile (--user-data-dir).
// env: the browser's environment (e.g. a HOME whose NSS database trusts a test CA).
export async function launchBrowser({ env } = {}) {
  const { chromium } = await import('playwright-core');
  const browser = await chromium.launch({
    executablePath: CHROMIUM, headless: true, timeout: 30000, ...(env ? { env } : {}),
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--enable-unsafe-swiftshader',
      '--disable-background-timer-throttling', '--disable-renderer-backgrounding', '--disable-backgrounding-occluded-windows'],
  });
  const b = {
    browser,
    async close() {
      browsers.delete(b);
      try { await Promise.race([browser.close(), sleep(10000)]); } catch { /* gone */ }
    },
  };
  browsers.add(b);
  return b;
}

// Opens the client in a new page; collects console errors and page errors.
export async function openClient(b, s, { width = 960, height = 600, query = '' } = {}) {
  const page = await b.browser.newPage({ viewport: { width, height } });
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.setDefaultTimeout(60000);
  await page.goto(`${s.base}/${query}`, { timeout: 60000 });
  return page;
}

// Waits until fn (run in the page) is truthy; the deadline only turns a hang
// into a failure (tests never time anything).
export async function waitFor(page, fn, arg, timeout = 60000) {
  return page.waitForFunction(fn, arg, { timeout, polling: 100 });
}

export async function cleanup() {
  await Promise.all([...browsers].map((b) => b.close()));
  await Promise.all([...servers].map((s) => s.stop()));
}
process.on('exit', () => { for (const s of servers) try { s.proc.kill('SIGKILL'); } catch { /* gone */ } });
