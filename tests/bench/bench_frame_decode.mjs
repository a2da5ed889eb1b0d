// bench_frame_decode.mjs - times the JavaScript v2 frame decoder
// (web-client/src/frame_codec.js) in node on payloads that bench_codec wrote
// (BENCH_CODEC_DUMP=DIR): decodes them in order, twice (the first pass warms
// the JIT), and prints the median and 90th percentile of the CPU time per
// frame of the second.
//   node tests/bench/bench_frame_decode.mjs DIR
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { FrameDecoder, readHeader } from '../../web-client/src/frame_codec.js';

const dir = process.argv[2];
const files = readdirSync(dir).filter((f) => f.endsWith('.bin')).sort();
const payloads = files.map((f) => new Uint8Array(readFileSync(join(dir, f))));
let cap = 0;
for (const p of payloads) cap = Math.max(cap, readHeader(p).n);
const times = [];
for (let pass = 0; pass < 2; pass++) {
  const dec = new FrameDecoder(cap);
  for (let i = 0; i < payloads.length; i++) {
    // CPU time, not wall time: the machine is shared and wall time counts other processes' turns
    const c0 = process.cpuUsage();
    dec.decode(payloads[i]);
    const c = process.cpuUsage(c0);
    if (pass === 1 && i > 0) times.push((c.user + c.system) / 1e3);
  }
}
times.sort((a, b) => a - b);
const med = times[Math.floor(times.length / 2)], p90 = times[Math.floor(0.9 * (times.length - 1))];
console.log(`${dir}: ${payloads.length} payloads, ${cap} particles: decode median ${med.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms (deltas, CPU time, node ${process.version})`);
