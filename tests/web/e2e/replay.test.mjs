// replay.test.mjs - recordings in the browser: the live page's
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
  // Recording until it holds more than 100 frames and 4 simulated seconds
  // (a deadline only so that a hang fails).
  for (const until = Date.now() + 120000; ;) {
    const r = (await api(server, 'GET', '/api/recordings')).recording;
    if (r.active && r.frames > 100 && r.seconds >= 4) break;
    if (Date.now() > until) throw new Error(`recording: ${JSON.stringify(r)}`);
    await sleep(250);
  }
  await live.click('#record');
  await waitFor(live, () => document.getElementById('record').textContent.includes('Record'));
  const list = await api(server, 'GET', '/api/recordings');
  assert.equal(list.recordings.length, 1);
  const name = list.recordings[0].name;
  const frames = list.recordings[0].frames;
  assert.ok(frames > 100, `${frames} frames recorded`);

  const page = await openClient(browser, server, { query: 'replay.html' });
  await waitFor(page, (n) => [...document.querySelectorAll('#list a')].some((a) => a.textContent.startsWith(n)), name);
  await page.click('#list a');
  await waitFor(page, () => window.__replay && window.__replay.frames.length > 10, null, 60000);
  const r0 = await page.evaluate(() => ({ t: window.__replay.t, start: window.__replay.start, end: window.__replay.end, n: window.__replay.frames.length, damage: window.__replay.damage }));
  assert.deepEqual(r0.damage, []);
  assert.ok(r0.end - r0.start > 3, `recording spans ${r0.end - r0.start} s`);
  const png = await page.screenshot({ path: join(artifactsDir(), 'replay.png') });
  assert.ok(png.length > 10000, 'the canvas draws');
  // Play at 1x, then at 2x, each from the start.  The page advances the
  // player by the time between its animation frames (replay_app.js:
  // p.tick(dt)); a watch on p.tick records, for each call while playing, the
  // dt asked and how far the playhead moved, and pauses the player after ten
  // such calls or half a simulated second (so a slow machine's long frames do
  // not run it to the end).  At 2x the playhead moves twice as far per second
  // asked as at 1x, whatever the machine's load makes of the frames' timing.
  await page.evaluate(() => {
    const p = window.__replay, tick = p.tick.bind(p);
    window.__ticks = [];
    p.tick = (dt) => {
      const t0 = p.t, playing = p.playing;
      tick(dt);
      if (!playing || !(dt > 0)) return;
      if (p.t < p.end) window.__ticks.push({ dt, moved: p.t - t0 });
      if (window.__ticks.length >= 10 || p.t - window.__from >= 0.5) p.playing = false;
    };
  });
  const played = async (speed) => {
    await page.selectOption('#speed', String(speed));
    const from = await page.evaluate(() => { const p = window.__replay; p.seek(p.start); window.__ticks = []; window.__from = p.t; return p.t; });
    await page.click('#play');
    await waitFor(page, () => !window.__replay.playing, null, 60000);
    const r = await page.evaluate(() => ({ ticks: window.__ticks, speed: window.__replay.speed, t: window.__replay.t }));
    assert.ok(r.ticks.length > 0 && r.t > from, `played from ${from} to ${r.t}`);
    const asked = r.ticks.reduce((a, x) => a + x.dt, 0), moved = r.ticks.reduce((a, x) => a + x.moved, 0);
    return { speed: r.speed, perAsked: moved / asked, from, to: r.t };
  };
  const x1 = await played(1);
  const x2 = await played(2);
  const t1 = x2.to;
  console.log(`replay: 1x moved ${x1.perAsked.toFixed(3)}, 2x ${x2.perAsked.toFixed(3)} simulated s per s asked (${x1.from.toFixed(2)} -> ${x1.to.toFixed(2)}; ${x2.from.toFixed(2)} -> ${x2.to.toFixed(2)})`);
  assert.equal(x1.speed, 1);
  assert.equal(x2.speed, 2);
  assert.ok(Math.abs(x1.perAsked - 1) < 1e-6, `at 1x: ${x1.perAsked} simulated s per s asked`);
  assert.ok(Math.abs(x2.perAsked / x1.perAsked - 2) < 1e-6, `2x plays ${x2.perAsked / x1.perAsked} times as far as 1x per s asked`);
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
  await waitFor(shared, () => window.__replay && window.__replay.frames.length > 10, null, 60000);
  const ts = await shared.evaluate(() => window.__replay.t);
  assert.ok(Math.abs(ts - t3) < 0.01, `the link opens at ${ts}, shared at ${t3}`);
  // scrub to the end: the segment there loads and plays
  await page.evaluate((e) => { const s = document.getElementById('scrub'); s.value = e - 0.05; s.dispatchEvent(new Event('input')); }, r0.end);
  await waitFor(page, (e) => window.__replay.sample() && window.__replay.sample().b.time > e - 1, r0.end, 60000);
  assert.deepEqual(page.errors, []);
  assert.deepEqual(live.errors, []);
});
