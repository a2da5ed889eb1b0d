// bench_frame_decode.mjs - times v2 frame decoders in node: the page's (the
// server's built to WebAssembly, frame_codec_wasm.js; skipped when make
// web-client-wasm has not built it) and the JavaScript port of its walk that
// the tests use as its oracle (tests/web/oracle/frame_decoder.js), on payloads that bench_codec wrote (BENCH_CODEC_DUMP=DIR): each
// decodes them in order, twice (the first pass warms the JIT), and prints the
// median and 90th percentile of the CPU time per frame of the second.
//   node tests/bench/bench_frame_decode.mjs DIR
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FrameDecoder, readHeader } from '../web/oracle/frame_decoder.js';
import { wasmDecoders } from '../../web-client/src/frame_codec_wasm.js';

const dir = process.argv[2];
const files = readdirSync(dir).filter((f) => f.endsWith('.bin')).sort();
const payloads = files.map((f) => new Uint8Array(readFileSync(join(dir, f))));
let cap = 0;
for (const p of payloads) cap = Math.max(cap, readHeader(p).n);
const WASM = join(resolve(dirname(fileURLToPath(import.meta.url)), '..', '..'), 'web-client', 'vendor', 'fc', 'frame_codec.wasm');
const decoders = [['JavaScript', (c) => new FrameDecoder(c)]];
if (existsSync(WASM)) decoders.push(['WebAssembly', wasmDecoders(new WebAssembly.Module(readFileSync(WASM)))]);
for (const [name, make] of decoders) {
  const times = [];
  for (let pass = 0; pass < 2; pass++) {
    const dec = make(cap);
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
  console.log(`${dir}: ${payloads.length} payloads, ${cap} particles, ${name}: decode median ${med.toFixed(2)} ms, p90 ${p90.toFixed(2)} ms (deltas, CPU time, node ${process.version})`);
}
