// bench_record.mjs - what a recording costs (make bench, or make bench-record):
// the 20k dam break with one reading client, 8 s without a recording and 8 s
// with one; the sim thread's step time in both, and the recording's bytes
// per second against the bytes the client received over the same 8 s.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, loadavg } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, connect, get, http, sleep } from '../server/lib.mjs';

const SECONDS = Number(process.env.BENCH_SECONDS || 8);
const dir = mkdtempSync(join(tmpdir(), 'fluid-bench-rec-'));
const mean = (a) => a.reduce((x, y) => x + y, 0) / a.length;
async function stepMs(s, seconds) {
  const out = [];
  for (let i = 0; i < seconds; i++) { await sleep(1000); out.push((await get(s, '/api/stats')).json.step_ms); }
  return mean(out);
}
const s = await startServer(['--particles', '20000', '--record-dir', dir, '--threads', '1']);
try {
  const c = await connect(s, { decodeFrames: false });
  await c.next((m) => m.type === 'frame');
  await sleep(2000);
  const idle = await stepMs(s, SECONDS);
  c.messages.length = 0;
  const b0 = c.frameBytes;
  await http(s, 'POST', '/api/recordings', { body: { name: 'bench' } });
  const t0 = performance.now();
  const rec = await stepMs(s, SECONDS);
  const st = (await get(s, '/api/recordings')).json.recording;
  const wall = (performance.now() - t0) / 1000;
  const streamBytes = c.frameBytes - b0;
  await http(s, 'POST', '/api/recordings/stop');
  console.log(`recording bench: dam_break 20k particles, 1 sim thread, ${SECONDS} s each, one reading client`);
  console.log(`  step time without a recording   ${idle.toFixed(2)} ms`);
  console.log(`  step time while recording       ${rec.toFixed(2)} ms (${(((rec - idle) / idle) * 100).toFixed(1)} %; bar <= 2 %)`);
  console.log(`  stream received by the client   ${(streamBytes / wall / 1e3).toFixed(1)} kB/s`);
  console.log(`  recording written               ${(st.bytes / wall / 1e3).toFixed(1)} kB/s (${(st.bytes / streamBytes).toFixed(3)} x the stream; bar <= 1.1), ${st.frames} frames, ${st.segments} segments`);
  console.log(`  load average (1 min)            ${loadavg()[0].toFixed(2)}`);
  c.close();
} finally {
  await stopAll();
  rmSync(dir, { recursive: true, force: true });
}
