// bench_decode.mjs - the page's v2 frame decoder (the server's, built to
// WebAssembly) timed in headless Chromium,
// in a module Web Worker as the page runs them, on payloads that bench_codec
// wrote (BENCH_CODEC_DUMP=DIR; `make bench-codec` writes build/rec/dump100k,
// 90 frames of the 100k dam break).  A recording rather than a live stream:
// the server simulating 100k particles on the same 2 cores would time the
// contention, not the decoder.  The server only serves the page's files
// (a 1,000-particle scene, paused).  The decoder decodes the payloads in
// order 5 times (the first pass warms the JIT); per pass the mean over the
// deltas (the page clock is coarse, 0.1 ms without cross-origin isolation,
// so a pass's total is the precise figure), and the median and 90th
// percentile of the per-frame times.  Then the page's own path, timed on its
// main thread from posting a frame to its view (frame_decoder_host.js: the
// copy, the posting, the worker's decode, the view back): DIR's whole frames
// in its one worker, and, given BANDS_DIR (payloads in bands, PROTOCOL.md
// "Bands (kind 2)": BENCH_CODEC_BANDS=2), its bands decoded side by side in
// a worker per core, the split, the copies and the join included.  Prints
// the median pass mean and writes build/artifacts/web/bench_decode.json.
//   node tests/bench/bench_decode.mjs DIR [BANDS_DIR]
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, launchBrowser, api, artifactsDir, cleanup } from '../web/lib.mjs';

const dir = process.argv[2] || 'build/rec/dump100k';
const bandsDir = process.argv[3] || '';
const load = (d) => readdirSync(d).filter((f) => f.endsWith('.bin')).sort().map((f) => readFileSync(join(d, f)).toString('base64'));
const payloads = load(dir);
const bandPayloads = bandsDir ? load(bandsDir) : null;

const WORKER = `
import { readHeader } from '/src/frame_header.js';
import { loadWasmDecoder } from '/src/frame_codec_wasm.js';
onmessage = async (ev) => {
  const payloads = ev.data.map((b) => Uint8Array.from(atob(b), (c) => c.charCodeAt(0)));
  let cap = 0;
  for (const p of payloads) cap = Math.max(cap, readHeader(p).n);
  const out = { particles: cap, frames: payloads.length };
  const wasm = await loadWasmDecoder('/vendor/fc/frame_codec.wasm');
  const decoders = wasm ? [['WebAssembly', wasm]] : [];
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

// In the page: the payloads pushed one at a time through a FrameDecoderHost
// (the page's decoding), each awaited; 5 passes (the first warms the workers
// and the JIT), each from the keyframe.  Per pass the mean over the deltas of
// the time from push to the view, of the part of push on the main thread
// (the split, the copies, the posting; worker 0 joins a frame's bands); per
// frame the median and 90th percentile, and the slowest worker's decode time
// (what the host reports).
async function hostPath({ base, payloads: p }) {
  const { FrameDecoderHost } = await import(`${base}/src/frame_decoder_host.js`);
  const frames = p.map((b64, i) => {
    const data = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const dv = new DataView(data.buffer);
    const o = [0, 1, 2].map((a) => dv.getFloat32(24 + 4 * a, true)), step = dv.getFloat32(36, true);
    const hi = [0, 1, 2].map((a) => o[a] + (dv.getUint16(40 + 2 * a, true) - 1) * step);
    return { type: 'frame', tick: i, time: i / 30, paused: false, seq: dv.getUint32(8, true), key: dv.getUint32(12, true) === 0xffffffff,
      n: dv.getUint32(20, true), bounds: [...o, ...hi], cursors: [], bodies: [], data, kind: data[2] };
  });
  const cap = Math.max(...frames.map((f) => f.n));
  let answer = null;
  const host = new FrameDecoderHost((view, ms) => answer({ view, ms }), () => answer(null));
  const one = (f) => new Promise((resolve) => {
    answer = resolve;
    const t0 = performance.now();
    host.push(f, t0);
    const main = performance.now() - t0;
    answer = (r) => resolve(r && { ...r, t: performance.now() - t0, main });
  });
  const means = [], mains = [], medians = [], p90s = [], decodes = [];
  let workers = 0;
  for (let pass = 0; pass < 5; pass++) {
    host.reset(cap, 1000 / 30);
    const key = await one(frames[0]);
    if (!key) throw new Error(`the keyframe was refused: ${host.lastError}`);
    const t = [], d = [];
    let main = 0;
    const t0 = performance.now();
    for (let i = 1; i < frames.length; i++) {
      const r = await one(frames[i]);
      if (!r) throw new Error(`frame ${i} was refused: ${host.lastError}`);
      if (r.view.n !== frames[i].n) throw new Error(`frame ${i}: ${r.view.n} particles, not ${frames[i].n}`);
      t.push(r.t); d.push(r.ms); main += r.main;
    }
    const total = performance.now() - t0;
    workers = host.bandWorkers;
    if (pass === 0) continue;
    means.push(total / (frames.length - 1));
    mains.push(main / (frames.length - 1));
    t.sort((a, b) => a - b); d.sort((a, b) => a - b);
    medians.push(t[t.length >> 1]);
    p90s.push(t[Math.floor(0.9 * (t.length - 1))]);
    decodes.push(d.reduce((s, x) => s + x, 0) / d.length);
  }
  for (const a of [means, mains, medians, p90s, decodes]) a.sort((x, y) => x - y);
  const mid = (a) => a[a.length >> 1];
  return { particles: cap, frames: frames.length, kind: frames[1]?.kind, bands: frames[1]?.kind === 2 ? new DataView(frames[1].data.buffer).getUint32(56, true) : 1,
    workers, decoder: host.decoder, cores: navigator.hardwareConcurrency,
    passMeans: means, mean: mid(means), median: mid(medians), p90: mid(p90s), decodeMean: mid(decodes), mainMean: mid(mains) };
}

function hostLine(d, h) {
  const what = `${h.decoder === 'wasm' ? 'WebAssembly' : 'no decoder'} in ${h.workers > 1 ? `${h.workers} Web Workers (bands)` : '1 Web Worker (whole frames)'} through the page's FrameDecoderHost`;
  return `${d}: ${h.frames} payloads, ${h.particles} particles${h.bands > 1 ? `, ${h.bands} bands` : ''}, Chromium ${h.chromium}, ${what}: decode ` +
    `${h.mean.toFixed(2)} ms per delta (from posting the frame to its view on the page's main thread, median of 4 passes' means; per frame: ` +
    `median ${h.median.toFixed(2)} ms, 90th percentile ${h.p90.toFixed(2)} ms; the ${h.workers > 1 ? 'slowest band\'s' : "worker's"} decode ${h.decodeMean.toFixed(2)} ms, ` +
    `the main thread's posting ${h.mainMean.toFixed(2)} ms${h.workers > 1 ? '; worker 0 joins the bands' : ''})`;
}

try {
  const browser = await launchBrowser();
  const server = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet']);
  await api(server, 'POST', '/api/pause');
  const page = await browser.browser.newPage();
  await page.goto(server.base + '/src/frame_header.js'); // an origin for the worker, without the client's rendering
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
  for (const name of ['WebAssembly']) {
    if (!r[name]) throw new Error('the WebAssembly decoder did not load in the worker (make web-client-wasm)');
    console.log(`${dir}: ${r.frames} payloads, ${r.particles} particles, Chromium ${r.chromium}, ${name} in a Web Worker: decode ` +
      `${r[name].mean.toFixed(2)} ms per delta (median of 4 passes' means; per frame: median ${r[name].median.toFixed(2)} ms, ` +
      `90th percentile ${r[name].p90.toFixed(2)} ms)`);
  }
  // the page's path: whole frames in its one worker, then bands in a worker per core
  r.host = await page.evaluate(hostPath, { base: server.base, payloads });
  r.host.chromium = r.chromium;
  console.log(hostLine(dir, r.host));
  if (bandPayloads) {
    r.bands = await page.evaluate(hostPath, { base: server.base, payloads: bandPayloads });
    r.bands.chromium = r.chromium;
    r.bands.dir = bandsDir;
    if (r.bands.kind !== 2) throw new Error(`${bandsDir}: its payloads are of kind ${r.bands.kind}, not bands (BENCH_CODEC_BANDS=2)`);
    console.log(hostLine(bandsDir, r.bands));
  }
  writeFileSync(join(artifactsDir(), 'bench_decode.json'), JSON.stringify(r, null, 1));
  await page.close();
} finally {
  await cleanup(); // the browser, then the server (by its process)
}
