// replay.test.mjs - recordings in the browser (issue 19): the live page's
// Record button records on the server; replay.html lists the recordings and
// plays one in the live page's renderer: play, pause, frame steps, speed,
// scrub, and a link (?rec=NAME&t=...) that opens at that moment.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep, api, artifactsDir } from '../lib.mjs';

const dir = mkdtempSync(join(tmpdir(), 'fluid-replay-'));
let server, browser;
before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '3000', '--quiet', '--record-dir', dir]);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); rmSync(dir, { recursive: true, force: true }); });

test('the Record button records; replay.html lists it and plays it: play, steps, speed, scrub, a shareable link', async () => {
  const live = await openClient(browser, server);
  await waitFor(live, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3);
  await live.click('#record');
  await waitFor(live, () => document.getElementById('record').textContent.includes('Stop'));
  await sleep(6000);
  await live.click('#record');
  await waitFor(live, () => document.getElementById('record').textContent.includes('Record'));
  const list = await api(server, 'GET', '/api/recordings');
  assert.equal(list.recordings.length, 1);
  const name = list.recordings[0].name;
  const frames = list.recordings[0].segments.reduce((s, x) => s + x.frames, 0);
  assert.ok(frames > 100, `${frames} frames recorded in 6 s`);

  const page = await openClient(browser, server, { query: 'replay.html' });
  await waitFor(page, (n) => [...document.querySelectorAll('#list a')].some((a) => a.textContent.startsWith(n)), name);
  await page.click('#list a');
  await waitFor(page, () => window.__replay && window.__replay.frames.length > 10, null, 20000);
  const r0 = await page.evaluate(() => ({ t: window.__replay.t, start: window.__replay.start, end: window.__replay.end, n: window.__replay.frames.length, damage: window.__replay.damage }));
  assert.deepEqual(r0.damage, []);
  assert.ok(r0.end - r0.start > 3, `recording spans ${r0.end - r0.start} s`);
  const png = await page.screenshot({ path: join(artifactsDir(), 'replay.png') });
  assert.ok(png.length > 10000, 'the canvas draws');
  // play at 2x: simulated time advances about twice the wall time
  await page.selectOption('#speed', '2');
  await page.click('#play');
  const rate = await page.evaluate(async () => {
    const p = window.__replay, t0 = p.t, w0 = performance.now();
    await new Promise((r) => setTimeout(r, 1000));
    const t = p.t, w = performance.now();
    return (t - t0) / ((w - w0) / 1000);
  });
  await page.click('#play');
  const t1 = await page.evaluate(() => window.__replay.t);
  assert.ok(rate > 1.5 && rate < 2.5, `played ${rate.toFixed(2)} simulated s per wall s at 2x`);
  // steps: one frame on and back
  await page.click('#fwd');
  const t2 = await page.evaluate(() => window.__replay.t);
  assert.ok(t2 > t1 && t2 - t1 < 0.2, `one frame on: ${t2 - t1} s`);
  await page.click('#back');
  const t3 = await page.evaluate(() => window.__replay.t);
  assert.ok(t3 < t2, 'one frame back');
  // the address bar is a link to this moment; opening it starts there
  const url = page.url();
  assert.match(url, /[?&]t=[\d.]+/);
  const shared = await openClient(browser, server, { query: url.slice(url.indexOf('replay.html')) });
  await waitFor(shared, () => window.__replay && window.__replay.frames.length > 10, null, 20000);
  const ts = await shared.evaluate(() => window.__replay.t);
  assert.ok(Math.abs(ts - t3) < 0.01, `the link opens at ${ts}, shared at ${t3}`);
  // scrub to the end: the segment there loads and plays
  await page.evaluate((e) => { const s = document.getElementById('scrub'); s.value = e - 0.05; s.dispatchEvent(new Event('input')); }, r0.end);
  await waitFor(page, (e) => window.__replay.sample() && window.__replay.sample().b.time > e - 1, r0.end, 10000);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(live.errors, []);
});
