// detail.test.mjs - the tier of detail on the page, in headless Chromium
// against the real fluid-server: the HUD's detail row names what the stream
// gives (on loopback every particle, the stream's step in mm, and the rate
// received), and the "full detail" box sends the detail command: GET
// /api/clients shows full_detail true for that client once ticked, false
// once unticked (PROTOCOL.md, "Tiers of detail").
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openClient, waitFor, cleanup, api, sleep } from '../lib.mjs';

let server, browser;

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '3000', '--quiet']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

// The server's view of the page's client (the only one), once pred holds;
// the deadline only turns a hang into a failure.
async function clientWhen(pred) {
  for (const until = Date.now() + 60000; Date.now() < until; await sleep(100)) {
    const r = await api(server, 'GET', '/api/clients');
    const c = (r.clients || [])[0];
    if (c && pred(c)) return c;
  }
  assert.fail('the client never showed the expected detail');
}

test('the HUD shows the tier row; the full-detail box pins the full world on the server and unpins it', async () => {
  const p = await openClient(browser, server);
  await waitFor(p, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3);
  // the HUD redraws twice a second: its first row may predate the first decoded frame ("– · N kbit/s")
  await waitFor(p, () => /^(every particle|1 in \d+ particles).* kbit\/s$/.test(document.getElementById('hud-detail').textContent));
  const row = await p.evaluate(() => document.getElementById('hud-detail').textContent);
  const step = await p.evaluate(() => window.__fluid.hello?.frame_step ?? null);
  console.log(`    HUD detail row: "${row}"`);
  assert.match(row, /^every particle, [\d.]+ mm steps · [\d.,]+ kbit\/s$/, 'loopback gets every particle');
  if (step) assert.ok(row.includes(`${(step * 1000).toFixed(step < 0.01 ? 1 : 0)} mm`), `the stream's step ${step}`);
  const before = await clientWhen(() => true);
  assert.equal(before.full_detail, false, 'not pinned before the box is ticked');
  assert.equal(before.tier, 0);
  await p.check('#full-detail');
  const pinned = await clientWhen((c) => c.full_detail === true);
  assert.equal(pinned.tier, 0);
  await p.uncheck('#full-detail');
  const unpinned = await clientWhen((c) => c.full_detail === false);
  console.log(`    /api/clients: full_detail ${before.full_detail} -> ${pinned.full_detail} -> ${unpinned.full_detail}`);
  assert.deepEqual(p.errors, []);
  await p.close();
});
