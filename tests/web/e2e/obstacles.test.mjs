// obstacles.test.mjs - mesh obstacles on the page in Chromium: a small STL
// made here is dropped on page A's canvas (a DataTransfer drop), uploaded and
// placed fitted into the box, and page B (another browser context) draws it;
// the same mesh placed again is drawn from what B holds (no second fetch);
// a page opened later draws both from its first messages; bad files are
// refused with the server's reason in the page's messages; Remove all clears
// them for every viewer; and a viewer's page shows the upload locked.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openClient, waitFor, cleanup } from '../lib.mjs';

let server, browser;

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

// A closed cube of half extent 0.5 as binary STL: 12 triangles, wound outwards.
function cubeStl() {
  const V = [];
  for (let k = 0; k < 8; k++) V.push([(k & 1) ? 0.5 : -0.5, (k & 2) ? 0.5 : -0.5, (k & 4) ? 0.5 : -0.5]);
  const T = [];
  for (const [p, q, r, t] of [[0, 4, 6, 2], [1, 3, 7, 5], [0, 1, 5, 4], [2, 6, 7, 3], [0, 2, 3, 1], [4, 5, 7, 6]]) T.push([p, q, r], [p, r, t]);
  const b = Buffer.alloc(84 + 50 * T.length);
  b.writeUInt32LE(T.length, 80);
  T.forEach((t, i) => t.forEach((v, j) => V[v].forEach((x, k) => b.writeFloatLE(x, 84 + 50 * i + 12 + 12 * j + 4 * k))));
  return [...b];
}

// Drops a file of these bytes on the page's canvas, as a user dragging it from a file manager.
function drop(page, bytes, name) {
  return page.evaluate(([b, n]) => {
    const dt = new DataTransfer();
    dt.items.add(new File([new Uint8Array(b)], n));
    const c = document.getElementById('view');
    c.dispatchEvent(new DragEvent('dragover', { dataTransfer: dt, bubbles: true, cancelable: true }));
    c.dispatchEvent(new DragEvent('drop', { dataTransfer: dt, bubbles: true, cancelable: true }));
  }, [bytes, name]);
}

const obstacles = (p) => p.evaluate(() => window.__fluid.obstacles);
const ready = (p) => waitFor(p, () => window.__fluid && window.__fluid.connected && window.__fluid.particles > 0);

test('a mesh dropped on one page is drawn on another viewer\'s; bad files are refused with the reason', async () => {
  const a = await openClient(browser, server);
  const b = await openClient(browser, server); // a browser context of its own
  await ready(a);
  await ready(b);
  assert.deepEqual([(await obstacles(b)).listed, (await obstacles(b)).drawn], [0, 0]);
  await drop(a, cubeStl(), 'cube.stl');
  await waitFor(b, () => window.__fluid.obstacles.drawn === 1);
  const ob = await obstacles(b), oa = await obstacles(a);
  assert.equal(oa.uploads, 1);
  assert.equal(oa.lastError, null);
  const listed = (await (await fetch(`${server.base}/api/obstacles`)).json()).obstacles;
  assert.equal(listed.length, 1);
  assert.equal(listed[0].triangles, 12);
  assert.deepEqual(ob.ids, [listed[0].id]);
  assert.equal(ob.fetches, 1);
  await waitFor(a, () => window.__fluid.obstacles.drawn === 1);
  // fitted into the box: its bounds take half of the box's tightest side
  const hello = await b.evaluate(() => window.__fluid.hello);
  const side = listed[0].bounds.max[0] - listed[0].bounds.min[0];
  const box = hello.bounds;
  assert.ok(Math.abs(side - 0.5 * Math.min(box[3] - box[0], box[4] - box[1], box[5] - box[2])) < 1e-4, `side ${side}`);
  // the same mesh again, fitted the same: the same hash, drawn from what B holds
  await drop(a, cubeStl(), 'cube.stl');
  await waitFor(b, () => window.__fluid.obstacles.drawn === 2);
  assert.equal((await obstacles(b)).fetches, 1, 'the second obstacle of the same mesh was not fetched again');
  assert.equal((await obstacles(b)).held, 1);
  // a page opened now draws them from its first messages
  const c = await openClient(browser, server);
  await ready(c);
  await waitFor(c, () => window.__fluid.obstacles.drawn === 2);
  // bad files: the server's reason (or the page's, for a name it cannot send) in the page's messages
  await drop(a, [...Buffer.from('this is not a mesh at all')], 'broken.stl');
  await waitFor(a, () => window.__fluid.obstacles.lastError);
  const bad = (await obstacles(a)).lastError;
  assert.match(bad, /^broken\.stl: mesh: not model\/stl/);
  assert.match(await a.textContent('#toasts'), /broken\.stl: mesh: not model\/stl/);
  await drop(a, [1, 2, 3], 'notes.txt');
  await waitFor(a, () => /notes\.txt/.test(window.__fluid.obstacles.lastError || ''));
  assert.match((await obstacles(a)).lastError, /not a mesh this page sends/);
  assert.equal((await (await fetch(`${server.base}/api/obstacles`)).json()).obstacles.length, 2, 'the refused files placed nothing');
  // Remove all on page B: every page stops drawing them
  await b.click('#clear-obstacles');
  await waitFor(a, () => window.__fluid.obstacles.listed === 0 && window.__fluid.obstacles.drawn === 0);
  await waitFor(c, () => window.__fluid.obstacles.drawn === 0);
  console.log(`page A dropped cube.stl twice (12 triangles, side ${side.toFixed(3)} m): page B drew 2 obstacles from ${ob.fetches} mesh fetch; a late page drew both; "${bad.slice(0, 60)}…" refused; Remove all cleared them`);
  for (const p of [a, b, c]) assert.deepEqual(p.errors.filter((e) => !/Failed to load resource/.test(e)), []);
  for (const p of [a, b, c]) await p.close();
});

test('a viewer\'s page shows the mesh upload locked and uploads nothing dropped on it', async () => {
  const t = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet', '--token', 'e2e-admin']);
  const admin = { 'Content-Type': 'application/json', Authorization: 'Bearer e2e-admin' };
  const made = await fetch(`${t.base}/api/rooms`, { method: 'POST', headers: admin, body: JSON.stringify({ name: 'obs', public_role: 'viewer' }) });
  assert.equal(made.status, 201, await made.text());
  const v = await browser.browser.newPage({ viewport: { width: 960, height: 600 } });
  v.errors = [];
  v.on('pageerror', (e) => v.errors.push(String(e)));
  await v.goto(`${t.base}/r/obs/`);
  await waitFor(v, () => window.__fluid && window.__fluid.connected && window.__fluid.hello);
  const lock = await v.evaluate(() => ['add-mesh', 'clear-obstacles'].map((id) => [document.getElementById(id).disabled, document.getElementById(id).title]));
  assert.deepEqual(lock, [[true, 'needs the player role; you are a viewer here'], [true, 'needs the player role; you are a viewer here']]);
  await drop(v, cubeStl(), 'cube.stl');
  await waitFor(v, () => window.__fluid.obstacles.lastError);
  assert.match((await obstacles(v)).lastError, /needs the player role; you are a viewer here/);
  assert.equal((await obstacles(v)).uploads, 0);
  assert.deepEqual((await (await fetch(`${t.base}/api/rooms/obs/meshes`, { headers: admin })).json()).meshes, [], 'nothing uploaded');
  assert.deepEqual(v.errors, []);
  await v.close();
});
