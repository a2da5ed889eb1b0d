// bench_decode.mjs - the page's v2 frame decoders timed in headless Chromium,
// in a module Web Worker as the page runs them, on payloads that bench_codec
// wrote (BENCH_CODEC_DUMP=DIR; `make bench-codec` writes build/rec/dump100k,
// 90 frames of the 100k dam break).  A recording rather than a live stream:
// the server simulating 100k particles on the same 2 cores would time the
// contention, not the decoder.  The server only serves the page's files
// (a 1,000-particle scene, paused).  Each decoder decodes the payloads in
// order 5 times (the first pass warms the JIT); per pass the mean over the
// deltas (the page clock is coarse, 0.1 ms without cross-origin isolation,
// so a pass's total is the precise figure), and the median and 90th
// percentile of the per-frame times.  Prints the median pass mean and writes
// build/artifacts/web/bench_decode.json.
//   node tests/web/bench_decode.mjs DIR
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, launchBrowser, api, artifactsDir, cleanup } from './lib.mjs';

const dir = process.argv[2] || 'build/rec/dump100k';
const files = readdirSync(dir).filter((f) => f.endsWith('.bin')).sort();
const payloads = files.map((f) => readFileSync(join(dir, f)).toString('base64'));

const WORKER = `
import { FrameDecoder, readHeader } from '/src/frame_codec.js';
import { loadWasmDecoder } from '/src/frame_codec_wasm.js';
onmessage = async (ev) => {
  const payloads = ev.data.map((b) => Uint8Array.from(atob(b), (c) => c.charCodeAt(0)));
  let cap = 0;
  for (const p of payloads) cap = Math.max(cap, readHeader(p).n);
  const out = { particles: cap, frames: payloads.length };
  const wasm = await loadWasmDecoder('/vendor/fc/frame_codec.wasm');
  const decoders = [['JavaScript', (c) => new FrameDecoder(c)]];
  if (wasm) decoders.push(['WebAssembly', wasm]);
  for (const [name, make] of decoders) {
    const means = [], medians = [], p90s = [];
    for (let pass = 0; pass < 5; pass++) {
      const dec = make(cap), t = [];
      dec.decode(payloads[0]);
      const t0 = performance.now();
      for (let i = 1; i < payloads.length; i++) { const a = performance.now(); dec.decode(payloads[i]); t.push(performance.now() - a); }
      const total = performance.now() - t0;
      if (pass === 0) continue;
      means.push(total / (payloads.length - 1));
      t.sort((a, b) => a - b);
      medians.push(t[t.length >> 1]);
      p90s.push(t[Math.floor(0.9 * (t.length - 1))]);
    }
    for (const a of [means, medians, p90s]) a.sort((x, y) => x - y);
    out[name] = { passMeans: means, mean: means[means.length >> 1], median: medians[medians.length >> 1], p90: p90s[p90s.length >> 1] };
  }
  postMessage(out);
};`;

try {
  const browser = await launchBrowser();
  const server = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet']);
  await api(server, 'POST', '/api/pause');
  const page = await browser.browser.newPage();
  await page.goto(server.base + '/src/frame_codec.js'); // an origin for the worker, without the client's rendering
  const r = await page.evaluate(async ({ code, payloads: p }) => {
    const url = URL.createObjectURL(new Blob([code], { type: 'text/javascript' }));
    const w = new Worker(url, { type: 'module' });
    const res = await new Promise((resolve, reject) => { w.onmessage = (e) => resolve(e.data); w.onerror = (e) => reject(new Error(e.message)); w.postMessage(p); });
    w.terminate();
    return res;
  }, { code: WORKER.replaceAll("'/", `'${server.base}/`), payloads });
  r.chromium = browser.browser.version();
  r.dir = dir;
  r.date = new Date().toISOString();
  for (const name of ['JavaScript', 'WebAssembly']) {
    if (!r[name]) continue;
    console.log(`${dir}: ${r.frames} payloads, ${r.particles} particles, Chromium ${r.chromium}, ${name} in a Web Worker: decode ` +
      `${r[name].mean.toFixed(2)} ms per delta (median of 4 passes' means; per frame: median ${r[name].median.toFixed(2)} ms, ` +
      `90th percentile ${r[name].p90.toFixed(2)} ms)`);
  }
  writeFileSync(join(artifactsDir(), 'bench_decode.json'), JSON.stringify(r, null, 1));
  await page.close();
} finally {
  await cleanup(); // the browser, then the server (by its process)
}
