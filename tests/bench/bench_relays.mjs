// bench_relays.mjs - viewers spread over two relays (make bench, or
// make bench-relays): a loopback nats-server, a sim node with the 5k dam
// break, two relays; 2 viewers (one per relay) and then 128 (64 per relay),
// each reading every message, in nice-19 processes standing in for browsers
// elsewhere.  Prints each phase's frames per second per viewer (the slowest),
// the sim node's and the relays' CPU, and the relay CPU per viewer.
import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { setPriority, loadavg } from 'node:os';
import { fileURLToPath } from 'node:url';
import { startServer, stopAll, get, sleep } from '../server/lib.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const VIEWERS = Number(process.env.BENCH_VIEWERS || 128);
if (spawnSync('nats-server', ['--version']).status !== 0) { console.log('bench_relays: nats-server not installed; skipped'); process.exit(0); }

const cpu = (pid) => { const f = readFileSync(`/proc/${pid}/stat`, 'utf8').slice(readFileSync(`/proc/${pid}/stat`, 'utf8').lastIndexOf(')') + 2).split(' '); return (Number(f[11]) + Number(f[12])) / 100; };
const freePort = () => new Promise((res) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });

function clients(url, n) {
  const p = spawn(process.execPath, [fileURLToPath(new URL('./bench_clients.mjs', import.meta.url)), url, String(n)], { stdio: ['pipe', 'pipe', 'inherit'] });
  try { setPriority(p.pid, 19); } catch { /* not permitted */ }
  let buf = '';
  const waiters = [];
  p.stdout.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, i); buf = buf.slice(i + 1); const w = waiters.shift(); if (w) w(l); } });
  const line = () => new Promise((res, rej) => { const t = setTimeout(() => rej(new Error('clients timed out')), 30000); waiters.push((l) => { clearTimeout(t); res(l); }); });
  return { opened: line(), reset() { p.stdin.write('reset\n'); }, async report() { p.stdin.write('report\n'); return JSON.parse(await line()); }, quit() { p.stdin.write('quit\n'); setTimeout(() => p.kill('SIGKILL'), 2000).unref(); } };
}

async function phase(node, relays, perRelay) {
  const cl = relays.map((r) => clients(r.wsUrl, perRelay));
  await Promise.all(cl.map((c) => c.opened));
  await sleep(2000);
  cl.forEach((c) => c.reset());
  const c0 = [node, ...relays].map((s) => cpu(s.proc.pid)), t0 = performance.now();
  await sleep(SECONDS * 1000);
  const c1 = [node, ...relays].map((s) => cpu(s.proc.pid)), wall = (performance.now() - t0) / 1000;
  const reps = await Promise.all(cl.map((c) => c.report()));
  cl.forEach((c) => c.quit());
  const fps = reps.flatMap((r) => r.counts).map((k) => k / wall);
  const pct = c1.map((x, i) => ((x - c0[i]) / wall) * 100);
  await sleep(1500);
  return { viewers: perRelay * relays.length, minFps: Math.min(...fps), meanFps: fps.reduce((a, b) => a + b, 0) / fps.length, node: pct[0], relays: pct.slice(1) };
}

const port = await freePort();
const broker = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
try {
  await sleep(500);
  const url = `nats://127.0.0.1:${port}`;
  const node = await startServer(['--particles', '5000', '--nats', url, '--world', 'bench', '--threads', '1']);
  const relays = [];
  for (const id of [1, 2]) relays.push(await startServer(['--nats', url, '--world', 'bench', '--relay', '1', '--relay-id', String(id), '--max-clients', String(VIEWERS)]));
  const st = (await get(node, '/api/stats')).json;
  console.log(`relay bench: dam_break ${st.particles} particles, a sim node and 2 relays on one loopback nats-server, ${SECONDS} s per phase`);
  const small = await phase(node, relays, 1);
  const big = await phase(node, relays, VIEWERS / 2);
  for (const p of [small, big])
    console.log(`  ${String(p.viewers).padStart(4)} viewers: frames/s per viewer min ${p.minFps.toFixed(1)}, mean ${p.meanFps.toFixed(1)}; CPU: sim node ${p.node.toFixed(0)} %, relays ${p.relays.map((x) => x.toFixed(0) + ' %').join(', ')}`);
  const perViewer = (big.relays.reduce((a, b) => a + b, 0) - small.relays.reduce((a, b) => a + b, 0)) / (big.viewers - small.viewers);
  console.log(`  sim node CPU, ${small.viewers} -> ${big.viewers} viewers: ${small.node.toFixed(0)} % -> ${big.node.toFixed(0)} % of a core`);
  console.log(`  relay CPU per viewer: ${perViewer.toFixed(2)} % of a core at ${big.meanFps.toFixed(1)} frames/s -> about ${Math.floor(100 / Math.max(perViewer, 1e-3))} viewers per relay core`);
  console.log(`  load average (1 min): ${loadavg()[0].toFixed(2)} (the viewers' processes share these 2 cores)`);
} finally {
  await stopAll();
  broker.kill('SIGTERM');
}
