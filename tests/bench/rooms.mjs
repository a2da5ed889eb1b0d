// rooms.mjs - benchmark: rooms sharing the machine (issue "Rooms and roles",
// docs/rooms.md, admission).  A server with the default step budget (70% of
// each tick, all rooms together) and its default room at PARTICLES; then
// rooms of the same scene asked for at PARTICLES each, one after the other,
// until the server refuses one (503) or SIX rooms run; each gets a viewer of
// its own (isolation_viewer.mjs, its own process).  Then every room's
// realtime ratio over SECONDS (simulated seconds per wall second, from its
// /api/rooms/{name}/stats) and its viewer's frames/s; then one room more is
// asked for, and the ratios are read again.  Bars: every room >= 0.98
// realtime, before and after the last ask (which must be refused, or
// admitted at a size that keeps them).  Prints the particles of each room.
// usage: FLUID_SERVER=build/fluid-server node tests/bench/rooms.mjs [SECONDS] [PARTICLES]
import { loadavg } from 'node:os';
import { startServer, stopAll, sleep, get, http } from '../server/lib.mjs';
import { viewer } from './viewer_process.mjs';

const SECONDS = Number(process.argv[2] || 30);
const PARTICLES = Number(process.argv[3] || 4000);
const SIX = 6, BAR = 0.98;

const statsOf = async (s, room) => (await get(s, room === 'default' ? '/api/stats' : `/api/rooms/${room}/stats`)).json;

// Every room's realtime ratio and its viewer's frames/s over SECONDS.
async function measure(s, rooms, viewers) {
  const t0 = {};
  for (const r of rooms) t0[r] = (await statsOf(s, r)).sim_time;
  for (const v of Object.values(viewers)) v.reset();
  const w0 = performance.now();
  await sleep(SECONDS * 1000);
  const wall = (performance.now() - w0) / 1000;
  const out = [];
  for (const r of rooms) {
    const st = await statsOf(s, r);
    const rep = await viewers[r].report();
    out.push({ room: r, particles: st.particles, realtime: (st.sim_time - t0[r]) / wall, fps: rep.frames / wall });
  }
  return out;
}

function print(title, rows) {
  console.log(title);
  for (const x of rows) console.log(`  ${x.room.padEnd(8)} ${String(x.particles).padStart(6)} particles  realtime ${x.realtime.toFixed(3)}  viewer ${x.fps.toFixed(1)} frames/s  ${x.realtime >= BAR ? 'ok' : 'MISSED'}`);
}

const s = await startServer(['--particles', String(PARTICLES)], { env: { FLUID_STEP_BUDGET: '0.7' } });
const rooms = ['default'];
let refused = null;
for (let i = 1; rooms.length < SIX; i++) {
  const r = await http(s, 'POST', '/api/rooms', { body: { name: `b${i}`, scene: 'dam_break', particles: PARTICLES } });
  if (r.status !== 201) { refused = r; break; }
  rooms.push(r.json.name);
  await sleep(2000); // its mean step known before the next is measured
}
const viewers = {};
for (const r of rooms) {
  viewers[r] = viewer(`${s.wsUrl}${r === 'default' ? '' : `r/${r}/`}`);
  await viewers[r].opened;
}
console.log(`rooms bench: ${rooms.length} rooms asked for ${PARTICLES} particles each (dam_break), --step-budget 0.7, ${SECONDS} s; bar: every room >= ${BAR} realtime`);
if (refused) console.log(`  room ${rooms.length + 1} refused: ${refused.status} ${refused.json?.error}`);
const first = await measure(s, rooms, viewers);
print(`with ${rooms.length} rooms:`, first);
let last = first;
if (!refused) {
  const r = await http(s, 'POST', '/api/rooms', { body: { name: 'b7', scene: 'dam_break', particles: PARTICLES } });
  console.log(`  a 7th room: ${r.status} ${r.status === 201 ? `admitted with ${r.json.particles} particles` : r.json?.error}`);
  if (r.status === 201) {
    rooms.push('b7');
    viewers.b7 = viewer(`${s.wsUrl}r/b7/`);
    await viewers.b7.opened;
    last = await measure(s, rooms, viewers);
    print('with the 7th:', last);
  }
}
console.log(`  load average (1 min) ${loadavg()[0].toFixed(2)} (2 cores; the ${rooms.length} viewers share them)`);
for (const v of Object.values(viewers)) v.quit();
await stopAll();
const missed = [...first, ...last].filter((x) => x.realtime < BAR).length;
console.log(missed ? `rooms bench: ${missed} room measurement(s) missed the bar` : 'rooms bench: every room held the bar');
process.exitCode = missed ? 1 : 0;
