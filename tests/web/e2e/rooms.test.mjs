// rooms.test.mjs - a room's page in Chromium: /r/{name}/ connects to that
// room's stream (hello names it, the frames are its world's), says which
// room it is in, and its panel's REST calls go to the room's routes; the
// plain page beside it stays in the default room.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, waitFor, cleanup } from '../lib.mjs';

let server, browser;

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

test('the page at /r/lab/ shows room lab\'s world; the page at / the default room\'s', async () => {
  const made = await fetch(`${server.base}/api/rooms`, {
    method: 'POST', headers: { 'Content-Type': 'application/json' },
    body: JSON.stringify({ name: 'lab', scene: 'drop', particles: 1500 }),
  });
  assert.equal(made.status, 201, await made.text());
  const labN = (await (await fetch(`${server.base}/api/rooms/lab/stats`)).json()).particles;
  const homeN = (await (await fetch(`${server.base}/api/stats`)).json()).particles;
  assert.notEqual(labN, homeN);
  const open = async (path) => {
    const p = await browser.browser.newPage({ viewport: { width: 960, height: 600 } });
    p.errors = [];
    p.on('pageerror', (e) => p.errors.push(String(e)));
    p.api = [];
    p.on('request', (r) => { const u = new URL(r.url()); if (u.pathname.startsWith('/api/')) p.api.push(u.pathname); });
    await p.goto(`${server.base}${path}`);
    await waitFor(p, () => window.__fluid && window.__fluid.connected && window.__fluid.particles > 0);
    return p;
  };
  const lab = await open('/r/lab/');
  const home = await open('/');
  assert.equal(await lab.evaluate(() => window.__fluid.hello.room), 'lab');
  assert.match(await lab.evaluate(() => window.__fluid.wsUrl), /\/r\/lab\/$/);
  assert.equal(await lab.evaluate(() => window.__fluid.particles), labN);
  assert.equal(await lab.textContent('#room-name'), 'lab');
  assert.match(await lab.title(), /lab/);
  assert.equal(await home.evaluate(() => window.__fluid.hello.room), 'default');
  assert.equal(await home.evaluate(() => window.__fluid.particles), homeN);
  assert.equal(await home.textContent('#room-name'), 'default');
  // the HUD's statistics and the panel's lists come from each room's own routes
  await waitFor(lab, () => document.getElementById('hud-rt').textContent !== '–');
  const labApi = lab.api.filter((x) => /stats|scenes|solvers/.test(x));
  assert.ok(labApi.length > 0, 'the room page asked its routes');
  assert.ok(labApi.every((x) => x.startsWith('/api/rooms/lab/')), `the room page asked ${labApi.join(', ')}`);
  assert.ok(home.api.filter((x) => /stats|scenes|solvers/.test(x)).every((x) => !x.startsWith('/api/rooms/')));
  console.log(`room lab (${labN} particles) at /r/lab/ and the default room (${homeN}) at /: pages asked ${labApi.length} routes under /api/rooms/lab/`);
  assert.deepEqual(lab.errors, []);
  assert.deepEqual(home.errors, []);
  await lab.close();
  await home.close();
});
