// params.test.mjs - a parameter set per solver: the page fetches
// GET /api/solvers once after each hello and shows only the running
// solver's material sliders; switching the solver (by anyone) changes which
// rows show.  Needs the server's per-solver `params` in /api/solvers.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openClient, waitFor, cleanup, api } from '../lib.mjs';

let server, browser, page;

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '2000', '--quiet']);
  browser = await launchBrowser();
  page = await openClient(browser, server);
  await waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 1);
});
after(async () => { await cleanup(); });

const row = (param) => `input[data-material=water][data-param=${param}]`;
const visible = (param) => page.isVisible(row(param));

test('after switching to mps, Clavet\'s stiffness slider is hidden and surface_tension shows; back on clavet, the reverse', async () => {
  const doc = await api(server, 'GET', '/api/solvers');
  const sets = new Map(doc.solvers.map((s) => [s.name, s.params]));
  assert.ok(Array.isArray(sets.get('mps')), `GET /api/solvers lists no params for mps: ${JSON.stringify(doc.solvers.find((s) => s.name === 'mps'))}`);
  await page.waitForSelector(row('stiffness'), { state: 'attached' });
  await page.selectOption('#solver', 'mps');
  await waitFor(page, () => window.__fluid.solver.current === 'mps' && window.__fluid.solver.params !== null);
  assert.equal(await visible('stiffness'), false, 'stiffness (Clavet only) is hidden under mps');
  assert.equal(await visible('surface_tension'), true, 'surface_tension (MPS) shows');
  const shown = await page.$$eval('#mat-params .param:not(.hidden)', (rs) => rs.length);
  const all = await page.$$eval('#mat-params .param', (rs) => rs.length);
  console.log(`mps: ${shown} of ${all} parameter rows shown (its set: ${sets.get('mps').length})`);
  assert.equal(shown, sets.get('mps').length);
  // A switch by someone else (REST) moves the rows too.
  await api(server, 'POST', '/api/solver', { name: 'clavet' });
  await waitFor(page, () => window.__fluid.solver.current === 'clavet');
  assert.equal(await visible('stiffness'), true);
  assert.equal(await visible('surface_tension'), false);
  assert.equal(await page.$$eval('#mat-params .param:not(.hidden)', (rs) => rs.length), sets.get('clavet').length);
  assert.deepEqual(page.errors, []);
});

test('without parameter sets (GET /api/solvers fails), every slider shows', async () => {
  const p = await browser.browser.newPage({ viewport: { width: 960, height: 600 } });
  p.errors = [];
  await p.route('**/api/solvers', (route) => route.fulfill({ status: 500, contentType: 'application/json', body: '{"error":"stand-in failure"}' }));
  await p.goto(`${server.base}/`);
  await waitFor(p, () => window.__fluid && window.__fluid.connected);
  await p.selectOption('#solver', 'mps');
  await waitFor(p, () => window.__fluid.solver.current === 'mps');
  const hidden = await p.$$eval('#mat-params .param.hidden', (rs) => rs.length);
  const all = await p.$$eval('#mat-params .param', (rs) => rs.length);
  const params = await p.evaluate(() => window.__fluid.hello.params.length);
  assert.equal(hidden, 0);
  assert.equal(all, params);
  assert.equal(await p.isVisible(row('stiffness')), true);
  await p.close();
});
