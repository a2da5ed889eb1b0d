// bench.mjs - the web client's measurements in headless Chromium (SwiftShader):
//  1. the live stream's payload decode (in its Web Worker) and the main
//     thread's part of each frame; time to copy one decoded frame and upload it to
//     the GPU (bufferSubData of the positions as received, the temperature
//     and material bytes into R8UI textures), at 20k and 100k particles, on
//     real frames from the server, and the share of the temperatures;
//  2. the JavaScript heap while frames stream for FLUID_BENCH_HEAP_S seconds
//     (default 60; the figure in BENCHMARKS.md was taken with 600).
// Prints a summary and writes build/artifacts/web/bench.json.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep, api, artifactsDir } from '../web/lib.mjs';

const HEAP_S = Number(process.env.FLUID_BENCH_HEAP_S || 60);
const COUNTS = (process.env.FLUID_BENCH_COUNTS ?? '20000,100000').split(',').filter(Boolean).map(Number);
const out = { date: new Date().toISOString(), chromium: null, decodeUpload: [], heap: null };
const f2 = (x) => (x === undefined ? '-' : x.toFixed(3));

try {
  const browser = await launchBrowser();
  out.chromium = browser.browser.version();
  for (const n of COUNTS) {
    const server = await startServer(['--scene', 'dam_break', '--particles', String(n), '--quiet']);
    const page = await openClient(browser, server, { width: 800, height: 500 });
    await waitFor(page, (want) => window.__fluid?.frames > 5 && window.__fluid.particles > 0.9 * want, n, 60000);
    const b0 = await page.evaluate(() => window.__fluid.bytesIn);
    await sleep(5000);                                   // the live path runs for a while
    const live = await page.evaluate(() => ({ ...window.__fluid.timings(), fps: window.__fluid.fps, rates: window.__fluid.rates(), bytesIn: window.__fluid.bytesIn }));
    live.rates.bytesPerS = (live.bytesIn - b0) / 5;
    await api(server, 'POST', '/api/pause');              // quiet server while timing
    await sleep(500);
    const r = await page.evaluate(() => window.__fluid.benchUpload(200));
    Object.assign(r, { live: { decode: live.decode, main: live.main, upload: live.upload, inWorker: live.inWorker, decoder: live.decoder, pace: live.pace, arrivalMs: live.arrivalMs }, fps: live.fps, bytesPerS: live.rates.bytesPerS });
    out.decodeUpload.push(r);
    console.log(`${n} particles, live protocol v2 stream: payload decode ${live.inWorker ? `in a Web Worker (${live.decoder})` : 'on the main thread'} median ` +
      `${f2(live.decode.median)} ms (p95 ${f2(live.decode.p95)}, ${live.decode.n} frames); the main thread's part of a frame median ` +
      `${f2(live.main.median)} ms (p95 ${f2(live.main.p95)}); keyframes ${live.keyframes}, refused ${live.refused}; ` +
      `frames arriving every ${f2(live.arrivalMs)} ms (mean of the last 16), decoder pace: every ${live.pace === 1 ? '' : live.pace === 2 ? '2nd ' : '4th '}frame`);
    console.log(`${r.n} particles (${(r.bytes / 1024).toFixed(0)} KiB/frame), median of 5 batch means (${r.k} frames): decode ${f2(r.decodeMean)} ms + ` +
      `upload ${f2(r.uploadMean)} ms = ${f2(r.totalMean)} ms (p95 ${f2(r.totalP95)}, max ${f2(r.totalMax)}); ` +
      `until the GPU process has it ${f2(r.syncedMean)} ms; headless fps ${r.fps.toFixed(1)}, ${(r.bytesPerS / 1000).toFixed(0)} kB/s received`);
    if (r.temp) {
      console.log(`  temperature attribute (N bytes into an R8UI texture), alternating batches: decode + upload ${f2(r.withTempMean)} ms with it, ` +
        `${f2(r.noTempMean)} ms without (+${f2(r.withTempMean - r.noTempMean)} ms); until the GPU process has it ${f2(r.withTempSyncedMean)} vs ` +
        `${f2(r.noTempSyncedMean)} ms (+${f2(r.withTempSyncedMean - r.noTempSyncedMean)}); its texture upload alone ${f2(r.tempUploadMean)} ms, ` +
        `until the GPU process has it +${f2(r.tempSyncedMean)} ms`);
    }
    await page.close();
    await server.stop();
  }

  // Heap: frames streaming at 20k particles, garbage collected before each sample.
  const server = await startServer(['--scene', 'dam_break', '--particles', '20000', '--quiet']);
  const page = await openClient(browser, server, { width: 800, height: 500 });
  await waitFor(page, () => window.__fluid?.frames > 5, null, 60000);
  const cdp = await page.context().newCDPSession(page);
  const sample = async () => { await cdp.send('HeapProfiler.collectGarbage'); return (await cdp.send('Runtime.getHeapUsage')).usedSize; };
  await sleep(5000);
  const samples = [];
  const t0 = Date.now();
  const step = Math.max(5, Math.min(30, HEAP_S / 10));
  for (;;) {
    const el = (Date.now() - t0) / 1000;
    samples.push({ s: Math.round(el), bytes: await sample(), frames: await page.evaluate(() => window.__fluid.frames) });
    if (el >= HEAP_S) break;
    await sleep(step * 1000);
  }
  const first = samples[0].bytes, last = samples[samples.length - 1].bytes, max = Math.max(...samples.map((x) => x.bytes));
  out.heap = { seconds: HEAP_S, samples, firstMiB: first / 2 ** 20, lastMiB: last / 2 ** 20, maxMiB: max / 2 ** 20,
    frames: samples[samples.length - 1].frames - samples[0].frames };
  console.log(`heap over ${HEAP_S} s (${out.heap.frames} frames of 20k particles): ${out.heap.firstMiB.toFixed(2)} MiB -> ` +
    `${out.heap.lastMiB.toFixed(2)} MiB (max ${out.heap.maxMiB.toFixed(2)} MiB) after GC`);
  writeFileSync(join(artifactsDir(), 'bench.json'), JSON.stringify(out, null, 1));
  console.log(`written ${join(artifactsDir(), 'bench.json')}`);
} catch (e) {
  console.error('bench failed:', e);
  process.exitCode = 1;
} finally {
  await cleanup();
}
