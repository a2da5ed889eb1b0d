// bands.test.mjs - frames in bands (PROTOCOL.md "Bands (kind 2)") in the
// browser: a server forcing 2 bands on every frame (--frame-bands 2); a page
// on a browser of 2 cores or more decodes each frame's bands side by side in
// 2 Web Workers (frame_decoder_host.js) and draws the joined frame: every
// particle, where the server has it (within the quantization step), and
// exactly as a page of 1 core (whole frames, one decoder) draws it; after a
// scene load (a new epoch, a new split) too.  The pages are told how many
// cores they have, so that the test does not depend on the machine's.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, waitFor, cleanup, sleep, api, allParticles } from '../lib.mjs';

let server, browser, pageA, pageB;

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '3000', '--quiet', '--frame-bands', '2']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

// The positions the page drew last (its renderer's buffer of the current
// frame, 16-bit fractions of the box, in the frame's id order), as metres.
function drawn(page) {
  return page.evaluate(() => {
    const r = window.__fluid.renderer, gl = r.gl, n = r.drawN, b = r.bounds;
    const q = new Uint16Array(3 * n);
    gl.bindBuffer(gl.ARRAY_BUFFER, r.posBuf[r.curSlot]);
    gl.getBufferSubData(gl.ARRAY_BUFFER, 0, q);
    gl.bindBuffer(gl.ARRAY_BUFFER, null);
    return { n, raw: Array.from(q), pos: Array.from(q, (v, i) => b[i % 3] + (v / 65535) * (b[3 + (i % 3)] - b[i % 3])) };
  });
}

const hudTitle = (page) => page.evaluate(() => document.getElementById('hud-kbs').title);

// The client in a page of its own whose browser says it has `cores` cores
// (navigator.hardwareConcurrency: what the page sizes its decoding by), as
// openClient opens it otherwise.
async function openWithCores(cores) {
  const ctx = await browser.browser.newContext({ viewport: { width: 960, height: 600 } });
  await ctx.addInitScript((c) => Object.defineProperty(Navigator.prototype, 'hardwareConcurrency', { get: () => c }), cores);
  const page = await ctx.newPage();
  page.errors = [];
  page.on('pageerror', (e) => page.errors.push(String(e)));
  page.on('console', (m) => { if (m.type() === 'error') page.errors.push(m.text()); });
  page.setDefaultTimeout(60000);
  await page.goto(`${server.base}/`, { timeout: 60000 });
  await waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 5);
  // the full world whatever the link rule makes of a loaded machine (this test is about bands, not tiers)
  await page.check('#full-detail');
  return page;
}

// Waits until the page has drawn frames of the server's count since `after`.
async function settled(page, particles, after) {
  await waitFor(page, ({ p, f }) => window.__fluid.frames > f + 5 && window.__fluid.particles === p, { p: particles, f: after });
}

test('a page of 2 cores decodes the bands in 2 Web Workers: every frame, every particle', async () => {
  // 2 cores whatever the machine has (on 2 or more, the browser's own count gives the same: 2 bands, 2 workers)
  pageA = await openWithCores(2);
  const cores = await pageA.evaluate(() => navigator.hardwareConcurrency);
  await waitFor(pageA, () => window.__fluid.timings().decode.n > 20, null, 60000);
  const tm = await pageA.evaluate(() => window.__fluid.timings());
  const stats = await api(server, 'GET', '/api/stats');
  console.log(`bands: ${cores} cores, ${pageA.workers().length} workers, ${tm.decode.n} frames, keyframes ${tm.keyframes}, refused ${tm.refused}`);
  assert.equal(tm.inWorker, true);
  assert.equal(tm.decoder, 'wasm');
  assert.equal(tm.refused, 0, 'no band refused');
  assert.equal(pageA.workers().length, 2, 'one decode worker per band (2 bands, 2 cores or more)');
  await waitFor(pageA, () => /in 2 workers, in bands/.test(document.getElementById('hud-kbs').title));
  assert.match(await hudTitle(pageA), /frames decoded in 2 workers, in bands \(WebAssembly\); keyframes \d+, refused 0/);
  await settled(pageA, stats.particles, await pageA.evaluate(() => window.__fluid.frames));
  assert.equal(await pageA.evaluate(() => window.__fluid.particles), stats.particles);
  assert.deepEqual(pageA.errors, []);
});

test('paused: the drawn positions are the server\'s within the quantization step, and a 1-core page\'s (whole frames) exactly', async () => {
  await api(server, 'POST', '/api/pause');
  const snap = await allParticles(server);
  const n = snap.total;
  assert.deepEqual(snap.ids, Array.from({ length: n }, (_, i) => i), 'a fresh dam break: ids 0..n-1, the page\'s order');
  const f0 = await pageA.evaluate(() => window.__fluid.frames);
  await settled(pageA, n, f0);
  const a = await drawn(pageA);
  assert.equal(a.n, n);
  const h = await pageA.evaluate(() => window.__fluid.hello);
  const span = Math.max(...[0, 1, 2].map((i) => h.bounds[3 + i] - h.bounds[i]));
  const tol = h.frame_step / 2 + span / 65535 / 2 + 1e-6;
  let worst = 0;
  for (let i = 0; i < n; i++) for (let k = 0; k < 3; k++) worst = Math.max(worst, Math.abs(a.pos[3 * i + k] - snap.positions[i][k]));
  console.log(`${n} particles drawn; worst distance from the server's position ${(worst * 1000).toFixed(3)} mm (step ${(h.frame_step * 1000).toFixed(3)} mm, bound ${(tol * 1000).toFixed(3)} mm)`);
  assert.ok(worst <= tol, `worst ${worst} m, bound ${tol} m`);

  // the same frames decoded whole, by one decoder: a page told it has 1 core
  pageB = await openWithCores(1);
  await settled(pageB, n, 0);
  await waitFor(pageB, () => /frames decoded in a worker/.test(document.getElementById('hud-kbs').title));
  assert.equal(pageB.workers().length, 1, 'one decode worker');
  const b = await drawn(pageB);
  assert.equal(b.n, n);
  let diff = 0;
  for (let i = 0; i < 3 * n; i++) if (a.raw[i] !== b.raw[i]) diff++;
  assert.equal(diff, 0, 'the banded and the whole-frame decode draw the same positions');
  const tb = await pageB.evaluate(() => window.__fluid.timings());
  assert.equal(tb.refused, 0);
  assert.deepEqual(pageB.errors, []);
  await pageB.context().close();
  await api(server, 'POST', '/api/resume');
});

test('a scene load (a new epoch and split) goes on in bands', async () => {
  const f0 = await pageA.evaluate(() => window.__fluid.frames);
  const r = await api(server, 'POST', '/api/scene', { name: 'dam_break', particles: 1500 });
  await settled(pageA, r.particles, f0);
  await sleep(1000);
  const tm = await pageA.evaluate(() => window.__fluid.timings());
  const stats = await api(server, 'GET', '/api/stats');
  assert.equal(await pageA.evaluate(() => window.__fluid.particles), stats.particles);
  assert.equal(tm.refused, 0);
  assert.equal(pageA.workers().length, 2);
  assert.match(await hudTitle(pageA), /in 2 workers, in bands/);
  assert.deepEqual(pageA.errors, []);
});
