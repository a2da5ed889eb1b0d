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
  // the Rooms section lists both rooms; its form makes one and goes there
  await waitFor(home, () => document.getElementById('room-list').options.length >= 2);
  const listed = await home.evaluate(() => [...document.getElementById('room-list').options].map((o) => o.textContent));
  assert.ok(listed.some((x) => x.startsWith('lab · 1 viewer')), listed.join(' | '));
  assert.ok(listed.some((x) => x.startsWith('default · 1 viewer')), listed.join(' | '));
  await home.fill('#room-name-new', 'made-here');
  await home.click('#room-create');
  await home.waitForURL(/\/r\/made-here\/$/);
  await waitFor(home, () => window.__fluid && window.__fluid.connected && window.__fluid.hello && window.__fluid.hello.room === 'made-here');
  console.log(`room lab (${labN} particles) at /r/lab/ and the default room (${homeN}) at /: pages asked ${labApi.length} routes under /api/rooms/lab/; the form made room made-here and went there`);
  assert.deepEqual(lab.errors, []);
  assert.deepEqual(home.errors, []);
  await lab.close();
  await home.close();
});

test('a viewer\'s page locks what a viewer may not do, saying which role it needs; an editor\'s invite unlocks it', async () => {
  const t = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet', '--token', 'e2e-admin']);
  const admin = { 'Content-Type': 'application/json', Authorization: 'Bearer e2e-admin' };
  const made = await fetch(`${t.base}/api/rooms`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'cls', public_role: 'viewer' }) });
  assert.equal(made.status, 201, await made.text());
  const inv = await (await fetch(`${t.base}/api/rooms/cls/invites`, { method: 'POST', headers: admin, body: JSON.stringify({ role: 'editor' }) })).json();
  const open = async (path) => {
    const p = await browser.browser.newPage({ viewport: { width: 960, height: 600 } });
    p.errors = [];
    p.on('pageerror', (e) => p.errors.push(String(e)));
    await p.goto(`${t.base}${path}`);
    await waitFor(p, () => window.__fluid && window.__fluid.connected && window.__fluid.hello);
    return p;
  };
  const v = await open('/r/cls/');
  assert.equal(await v.evaluate(() => window.__fluid.hello.role), 'viewer');
  assert.equal(await v.textContent('#role-name'), 'viewer');
  const state = (p) => p.evaluate(() => ({
    pause: document.getElementById('pause').disabled,
    pauseTitle: document.getElementById('pause').title,
    push: document.querySelector('input[name=tool][value=push]').disabled,
    addBox: document.getElementById('add-box').disabled,
    tool: document.querySelector('input[name=tool]:checked')?.value,
  }));
  const vs = await state(v);
  assert.equal(vs.pause, true);
  assert.equal(vs.pauseTitle, 'needs the editor role; you are a viewer here');
  assert.equal(vs.push, true);
  assert.equal(vs.addBox, true);
  assert.equal(vs.tool, 'orbit', 'a viewer\'s tool is the camera');
  assert.equal(await v.evaluate(() => document.getElementById('room-create').disabled), true);
  assert.equal(await v.getAttribute('#room-create', 'title'), 'needs the admin role; you are a viewer here');
  const e = await open(inv.url);
  assert.equal(await e.evaluate(() => window.__fluid.hello.role), 'editor');
  const es = await state(e);
  assert.equal(es.pause, false);
  assert.equal(es.push, false);
  assert.equal(es.addBox, false);
  // the editor's pause goes through: the viewer's page sees the room paused
  await e.click('#pause');
  await waitFor(v, () => document.getElementById('hud-scene').textContent.includes('paused'));
  console.log(`room cls, public role viewer: pause, push and add-box locked ("${vs.pauseTitle}"); an editor's invite link unlocks them`);
  assert.deepEqual(v.errors, []);
  assert.deepEqual(e.errors, []);
  await v.close();
  await e.close();
});
