// rooms_memory.mjs - benchmark: the memory of many rooms (issue "Rooms and
// roles", bar: a server with 100 rooms, 94 of them evicted, stays under 2x
// the memory of 6 rooms).  Server A: the default room and 5 more, each
// with a viewer of its own, all awake.  Server B: the same 6 awake rooms,
// after 94 rooms were made and left alone until evicted (--room-idle-s 1
// --room-evict-s 1, a --data-dir each).  The resident memory (VmRSS of the
// server's process) of each is read after the rooms settle.  Prints both,
// their ratio, and the rooms' states from /metrics.
// usage: FLUID_SERVER=build/fluid-server node tests/bench/rooms_memory.mjs [PARTICLES] [EVICTED]
import { readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, sleep, get, http } from '../server/lib.mjs';
import { viewer } from './viewer_process.mjs';

const PARTICLES = Number(process.argv[2] || 1000);
const EVICTED = Number(process.argv[3] || 94);
const AWAKE = 6, BAR = 2.0;

const rssMB = (pid) => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))[1]) / 1024;

async function room(s, name) {
  const r = await http(s, 'POST', '/api/rooms', { body: { name, scene: 'dam_break', particles: PARTICLES } });
  if (r.status !== 201) throw new Error(`room ${name}: ${r.status} ${r.text}`);
}

async function states(s) {
  const m = (await get(s, '/metrics')).text;
  const out = {};
  for (const x of m.matchAll(/^fluid_rooms\{state="(\w+)"\} (\d+)/gm)) out[x[1]] = Number(x[2]);
  return out;
}

// The default room and AWAKE - 1 more, each with a viewer; RSS after they settle.
async function awake(s, viewers) {
  for (let i = 1; i < AWAKE; i++) await room(s, `awake-${i}`);
  for (const r of ['default', ...Array.from({ length: AWAKE - 1 }, (_, i) => `awake-${i + 1}`)]) {
    const v = viewer(`${s.wsUrl}${r === 'default' ? '' : `r/${r}/`}`);
    await v.opened;
    viewers.push(v);
  }
  await sleep(5000);
  return rssMB(s.proc.pid);
}

async function serverWith(evicted) {
  const dir = mkdtempSync(join(tmpdir(), 'fluid-rooms-mem-'));
  const s = await startServer(['--particles', String(PARTICLES), '--data-dir', dir, '--room-idle-s', '1', '--room-evict-s', '1'], { env: { FLUID_STEP_BUDGET: '0' } }); // admission off: memory, not CPU, is measured here
  for (let i = 0; i < evicted; i++) await room(s, `idle-${i}`);
  if (evicted) {
    for (let k = 0; k < 120 && (await states(s)).evicted !== evicted; k++) await sleep(500);
  }
  const viewers = [];
  const rss = await awake(s, viewers);
  const st = await states(s);
  for (const v of viewers) v.quit();
  await s.stop();
  rmSync(dir, { recursive: true, force: true });
  return { rss, st };
}

const a = await serverWith(0);
const b = await serverWith(EVICTED);
console.log(`rooms memory bench: rooms of ${PARTICLES} particles (dam_break); bar: ${AWAKE} awake + ${EVICTED} evicted < ${BAR}x ${AWAKE} awake`);
console.log(`  ${AWAKE} awake:                 RSS ${a.rss.toFixed(1)} MB  rooms ${JSON.stringify(a.st)}`);
console.log(`  ${AWAKE} awake + ${EVICTED} evicted:   RSS ${b.rss.toFixed(1)} MB  rooms ${JSON.stringify(b.st)}`);
const ratio = b.rss / a.rss;
console.log(`  ratio ${ratio.toFixed(2)} (${((b.rss - a.rss) / EVICTED * 1024).toFixed(0)} kB an evicted room)  ${ratio < BAR ? 'ok' : 'MISSED'}`);
console.log(`  load average (1 min) ${loadavg()[0].toFixed(2)}`);
await stopAll();
process.exitCode = ratio < BAR ? 0 : 1;
