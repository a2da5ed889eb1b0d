// bench_mps.mjs - the MPS solver in the running server (make bench,
// or make bench-mps): fluid-server with the mps_dam_break scene at its
// default size and its default threads, one WebSocket client reading every
// frame (a browser attached); after 3 s, /api/stats once a second for 10 s.
// Prints the realtime ratio (mean, least, most) and the step time.  The
// viewer is a process of its own at nice 19 (viewer_process.mjs), standing in
// for a browser on another machine, as the other benchmarks' viewers do;
// BENCH_MPS_VIEWER=inline reads the frames in this process instead, at the
// server's priority (its figures before that choice).
// FLUID_SERVER picks the binary (the previous commit's, for a same-run ratio);
// BENCH_THREADS sets --threads (default: the server's own, one per core);
// BENCH_PARTICLES the scene's size (--particles; default: the scene's own).
import { loadavg } from 'node:os';
import { startServer, stopAll, connect, get, sleep, SERVER } from '../server/lib.mjs';
import { viewer } from './viewer_process.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS || 10);
const s = await startServer(['--scene', 'mps_dam_break', '--step-budget', '0', ...(process.env.BENCH_THREADS ? ['--threads', process.env.BENCH_THREADS] : []),
  ...(process.env.BENCH_PARTICLES ? ['--particles', process.env.BENCH_PARTICLES] : [])]);
const inline = process.env.BENCH_MPS_VIEWER === 'inline';
let frames = 0, v = null, c = null;
if (inline) {
  c = await connect(s);
  c.onMessage = () => { frames++; };
} else {
  v = viewer(s.wsUrl, 19);
  await v.opened;
}
await sleep(3000);
const ratio = [], step = [];
for (let i = 0; i < SECONDS; i++) {
  await sleep(1000);
  const st = (await get(s, '/api/stats')).json;
  ratio.push(st.realtime_ratio), step.push(st.step_ms);
}
const st = (await get(s, '/api/stats')).json;
if (v) frames = (await v.report()).frames;
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
console.log(`bench_mps: ${SERVER}, ${st.particles} particles, solver ${st.solver}, threads ${st.threads}, load average ${loadavg()[0].toFixed(2)}`);
console.log(`  realtime ratio over ${SECONDS} s: mean ${mean(ratio).toFixed(3)} (${Math.min(...ratio).toFixed(3)}-${Math.max(...ratio).toFixed(3)}); step ${mean(step).toFixed(1)} ms (mean of 1 s means); ${frames} ${inline ? 'messages to the client (in this process)' : 'frames to the viewer (nice 19)'}`);
if (c) c.close();
if (v) v.quit();
await stopAll();
process.exit(0);
