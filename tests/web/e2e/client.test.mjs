// client.test.mjs - the web client in headless Chromium (Debian's chromium,
// driven by playwright-core) against the real fluid-server serving
// web-client/.  Screenshots go to build/artifacts/web/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { encode } from '@msgpack/msgpack';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep, api, allParticles, artifactsDir } from '../lib.mjs';

let server, browser, pageA, pageB;
const ART = artifactsDir();

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '3000', '--quiet']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

const connected = (page) => waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3);

// Counts pixels of a PNG screenshot in the page (decoded by the browser):
// how many are "fluid" (blue dominant and bright) and how many distinct colours.
async function pixelStats(page, png) {
  return page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bmp = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const c = new OffscreenCanvas(bmp.width, bmp.height);
    const g = c.getContext('2d');
    g.drawImage(bmp, 0, 0);
    const d = g.getImageData(0, 0, bmp.width, bmp.height).data;
    let fluid = 0, lit = 0;
    const colours = new Set();
    for (let i = 0; i < d.length; i += 4) {
      const r = d[i], gg = d[i + 1], b = d[i + 2];
      if (b > 110 && b > r + 40 && b > gg + 10) fluid++;
      if (r + gg + b > 120) lit++;
      if ((i >> 2) % 7 === 0) colours.add((r >> 3) << 10 | (gg >> 3) << 5 | (b >> 3));
    }
    return { w: bmp.width, h: bmp.height, fluid, lit, colours: colours.size };
  }, png.toString('base64'));
}

// CSS pixel position of a world point in the page's view.
async function screenOf(page, p) {
  return page.evaluate((pt) => {
    const q = window.__fluid.project(pt);
    const c = document.getElementById('view').getBoundingClientRect();
    return { x: c.left + (q[0] + 1) / 2 * c.width, y: c.top + (1 - q[1]) / 2 * c.height };
  }, p);
}

async function fluidCentreOnScreen(page) {
  const snap = await allParticles(server);
  const c = [0, 1, 2].map((a) => snap.positions.reduce((s, p) => s + p[a], 0) / snap.positions.length);
  return screenOf(page, c);
}

test('the page loads, connects and streams frames without errors', async () => {
  pageA = await openClient(browser, server);
  await connected(pageA);
  const st = await pageA.evaluate(() => ({ id: window.__fluid.clientId, conn: document.getElementById('conn').textContent, v: window.__fluid.hello.version }));
  assert.ok(st.id > 0);
  assert.equal(st.conn, 'connected');
  assert.equal(st.v, 2);
  // frames decode in a Web Worker, with the server's decoder as WebAssembly, every payload accepted
  await waitFor(pageA, () => window.__fluid.timings().decode.n > 10, null, 60000);
  const tm = await pageA.evaluate(() => window.__fluid.timings());
  console.log(`decode: worker ${tm.inWorker} (${tm.decoder}), ${tm.decode.n} frames, keyframes ${tm.keyframes}, refused ${tm.refused}`);
  assert.equal(tm.inWorker, true);
  assert.equal(tm.decoder, 'wasm', 'the worker loaded vendor/fc/frame_codec.wasm');
  assert.ok(tm.decode.n > 10);
  assert.equal(tm.refused, 0);
  assert.deepEqual(pageA.errors, []);
});

test('the canvas is not blank: particles and liquid surface (screenshots kept)', async () => {
  await sleep(1500);
  const png = await pageA.screenshot({ path: join(ART, 'particles.png') });
  const s = await pixelStats(pageA, png);
  console.log(`particles.png: ${s.w}x${s.h}, fluid pixels ${s.fluid}, lit ${s.lit}, colours ${s.colours}`);
  assert.ok(s.fluid > 0.01 * s.w * s.h, `too few fluid-coloured pixels: ${s.fluid}`);
  assert.ok(s.colours > 50, `too few colours: ${s.colours}`);
  await pageA.click('input[name=mode][value=surface]');
  await sleep(2500);
  const png2 = await pageA.screenshot({ path: join(ART, 'surface.png') });
  const s2 = await pixelStats(pageA, png2);
  console.log(`surface.png: fluid pixels ${s2.fluid}, colours ${s2.colours}`);
  assert.ok(s2.fluid > 0.01 * s2.w * s2.h, `surface mode: too few fluid-coloured pixels: ${s2.fluid}`);
  await pageA.click('input[name=mode][value=particles]');
  assert.deepEqual(pageA.errors, []);
});

test('the particle count shown matches /api/stats', async () => {
  const stats = await api(server, 'GET', '/api/stats');
  const handle = await waitFor(pageA, (n) => document.getElementById('hud-particles').textContent === String(n) && document.getElementById('hud-particles').textContent, stats.particles);
  assert.equal(Number(await handle.jsonValue()), stats.particles);
  // received: kbit/s, frames per second received, bits per particle of the
  // last frame (protocol v2).  The two rates are the page's measurements
  // (how fast depends on the machine's load): only their form is tested
  // here; that frames arrive is seen in the page's count of them.
  const kbs = await pageA.evaluate(() => document.getElementById('hud-kbs').textContent);
  const m = /^(\d+) kbit\/s · (\d+)\/s · ([\d.]+) bit\/p$/.exec(kbs);
  assert.ok(m, `HUD received: ${kbs}`);
  console.log(`HUD: ${m[3]} bits per particle in the last frame`);
  assert.ok(Number(m[3]) > 0 && Number(m[3]) < 64, `bits per particle: ${m[3]}`);
  const f0 = await pageA.evaluate(() => window.__fluid.frames);
  assert.ok(f0 > 0, `frames received: ${f0}`);
  await waitFor(pageA, (n) => window.__fluid.frames > n + 3, f0, 60000);
});

test('a drag with the push tool changes the fluid (seen in /api/particles)', async () => {
  await api(server, 'POST', '/api/pause');
  await waitFor(pageA, () => document.getElementById('pause').textContent === 'Resume');
  await sleep(300);
  const before = await allParticles(server);
  const c = await fluidCentreOnScreen(pageA);
  const right = await pageA.evaluate(() => window.__fluid.camera.right);
  await pageA.mouse.move(c.x - 60, c.y);
  await pageA.mouse.down();
  for (let i = 1; i <= 12; i++) { await pageA.mouse.move(c.x - 60 + i * 10, c.y); await sleep(50); }
  await pageA.mouse.up();
  const v0 = new Map(before.ids.map((id, i) => [id, before.velocities[i]]));
  const pushed = (after) => {
    let changed = 0;
    const sum = [0, 0, 0];
    after.ids.forEach((id, i) => {
      const a = v0.get(id), b = after.velocities[i];
      if (!a) return;
      const d = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
      if (Math.hypot(...d) > 1e-3) { changed++; for (let k = 0; k < 3; k++) sum[k] += d[k]; }
    });
    return { changed, along: (sum[0] * right[0] + sum[1] * right[1] + sum[2] * right[2]) / Math.max(1, changed) };
  };
  // The world is paused, so nothing but the drag's push commands changes the
  // velocities: read them until those commands are applied (a deadline only
  // so that a hang fails).
  let after, changed, along;
  for (const until = Date.now() + 30000; ;) {
    after = await allParticles(server);
    ({ changed, along } = pushed(after));
    if ((changed > 20 && along > 0.1) || Date.now() > until) break;
    await sleep(200);
  }
  assert.equal(after.tick, before.tick, 'paused: no steps ran');
  console.log(`push: ${changed} particles changed velocity; mean change along the drag ${along.toFixed(3)} m/s`);
  assert.ok(changed > 20, `only ${changed} particles changed`);
  assert.ok(along > 0.1, 'the fluid moves the way the pointer dragged');
  // The page measured the last command's round trip (for the HUD): a number
  // now, where it was null before any reply.  Its size is not tested.
  const rtt = await pageA.evaluate(() => window.__fluid.lastRtt);
  assert.equal(typeof rtt, 'number', `the round trip of the last command is measured: ${rtt}`);
  await api(server, 'POST', '/api/resume');
});

test('a slider change in one page reaches a second page (and the server)', async () => {
  pageB = await openClient(browser, server);
  await connected(pageB);
  const sel = 'input[data-material=water][data-param=viscosity_linear]';
  await pageB.waitForSelector(sel);
  const pos = 600;
  const expected = await pageA.evaluate(({ sel, pos }) => {
    const el = document.querySelector(sel);
    el.value = String(pos);
    el.dispatchEvent(new Event('input', { bubbles: true }));
    el.dispatchEvent(new Event('change', { bubbles: true }));
    return el.parentElement.querySelector('output').textContent;
  }, { sel, pos });
  await waitFor(pageB, ({ sel, pos }) => document.querySelector(sel).value === String(pos), { sel, pos }, 60000);
  const shownB = await pageB.evaluate((sel) => document.querySelector(sel).parentElement.querySelector('output').textContent, sel);
  assert.equal(shownB, expected);
  const m = await api(server, 'GET', '/api/materials');
  const v = m.materials.find((x) => x.name === 'water').params.viscosity_linear.value;
  console.log(`slider: page A set water viscosity_linear to ${expected}; page B shows ${shownB}; server has ${v}`);
  assert.ok(Math.abs(v - Number(expected)) <= 0.05 * Math.abs(v) + 1e-6);
  // And a REST change moves both pages' sliders.
  await api(server, 'PATCH', '/api/materials/water', { viscosity_linear: 0 });
  for (const p of [pageA, pageB]) await waitFor(p, (sel) => document.querySelector(sel).value === '0', sel, 60000);
});

test('two pages see each other\'s cursors, in their colours', async () => {
  const idA = await pageA.evaluate(() => window.__fluid.clientId);
  const idB = await pageB.evaluate(() => window.__fluid.clientId);
  const colA = await pageA.evaluate(() => window.__fluid.hello.colour);
  const cA = await fluidCentreOnScreen(pageA), cB = await fluidCentreOnScreen(pageB);
  await pageA.mouse.move(cA.x, cA.y);
  await pageB.mouse.move(cB.x + 40, cB.y);
  for (let i = 0; i < 3; i++) { await sleep(80); await pageA.mouse.move(cA.x + i, cA.y); await pageB.mouse.move(cB.x + 40 + i, cB.y); }
  await waitFor(pageB, (id) => !!document.querySelector(`.cursor-label[data-id="${id}"]`), idA, 60000);
  await waitFor(pageA, (id) => !!document.querySelector(`.cursor-label[data-id="${id}"]`), idB, 60000);
  const label = await pageB.evaluate((id) => { const el = document.querySelector(`.cursor-label[data-id="${id}"]`); return { text: el.textContent, colour: el.dataset.colour }; }, idA);
  assert.equal(label.colour, colA);
  assert.match(label.text, new RegExp(`${idA}$`));
  await pageB.screenshot({ path: join(ART, 'two-users.png') });
  // Leaving the canvas hides the cursor for the others.
  await pageA.mouse.move(2, 300);
  await pageA.evaluate(() => document.getElementById('view').dispatchEvent(new PointerEvent('pointerleave')));
  await waitFor(pageB, (id) => !document.querySelector(`.cursor-label[data-id="${id}"]`), idA, 60000);
  assert.deepEqual(pageB.errors, []);
});

test('rigid bodies are drawn as meshes, and a drag carries one (grabbed_by in /api/bodies)', async () => {
  const idA = await pageA.evaluate(() => window.__fluid.clientId);
  const b = (await pageA.evaluate(() => window.__fluid.hello.bounds));
  const pos = [b[0] + 0.7 * (b[3] - b[0]), b[1] + 0.6 * (b[4] - b[1]), (b[2] + b[5]) / 2];
  const made = await api(server, 'POST', '/api/bodies', { shape: 'box', size: [0.22, 0.15, 0.22], pos, density: 400 });
  await waitFor(pageA, (id) => window.__fluid.bodies.some((x) => x.id === id), made.id, 60000);
  // Let it settle on the water (bounded), so the page and the server agree where it is.
  for (let i = 0; i < 40; i++) {
    const bd = (await api(server, 'GET', '/api/bodies')).bodies.find((x) => x.id === made.id);
    if (i >= 5 && Math.hypot(...bd.vel) < 0.15) break;
    await sleep(200);
  }
  await sleep(500);
  const png = await pageA.screenshot({ path: join(ART, 'bodies.png') });
  const wood = await pageA.evaluate(async (b64) => {
    const bmp = await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: 'image/png' }));
    const c = new OffscreenCanvas(bmp.width, bmp.height); const g = c.getContext('2d'); g.drawImage(bmp, 0, 0);
    const d = g.getImageData(0, 0, bmp.width, bmp.height).data;
    let n = 0;
    for (let i = 0; i < d.length; i += 4) if (d[i] > 120 && d[i] > d[i + 1] + 25 && d[i + 1] > d[i + 2] + 15) n++;
    return n;
  }, png.toString('base64'));
  console.log(`bodies.png: ${wood} body-coloured pixels`);
  assert.ok(wood > 200, `the box is not drawn (${wood} body-coloured pixels)`);
  // The page's body_grab commands and their replies (grab.js sends one when a drag starts on a body).
  await pageA.evaluate(() => {
    const conn = window.__fluid.conn, send = conn.send.bind(conn);
    window.__grabs = [];
    conn.send = (c) => {
      const r = send(c);
      if (c.type === 'body_grab') { const e = { reply: null }; window.__grabs.push(e); r.then((x) => { e.reply = x; }); }
      return r;
    };
  });
  let held = null, before;
  for (let attempt = 0; attempt < 3 && !held; attempt++) {
    before = (await api(server, 'GET', '/api/bodies')).bodies.find((x) => x.id === made.id);
    const p = await screenOf(pageA, before.pos);
    await pageA.mouse.move(p.x, p.y);
    await sleep(200);
    const k = await pageA.evaluate(() => window.__grabs.length);
    await pageA.mouse.down();
    for (let i = 1; i <= 12; i++) { await pageA.mouse.move(p.x, p.y - i * 8); await sleep(60); }
    // A drag that started on the body sent body_grab: held once it is answered
    // (a deadline only so that a hang fails); one that missed it tries again.
    if (await pageA.evaluate((n) => window.__grabs.length > n, k)) {
      await waitFor(pageA, (n) => window.__grabs[n].reply !== null, k, 60000);
      const r = await pageA.evaluate((n) => window.__grabs[n].reply, k);
      const now = (await api(server, 'GET', '/api/bodies')).bodies.find((x) => x.id === made.id);
      if (r.ok && now.grabbed_by) held = now;
    }
    if (!held) { await pageA.mouse.up(); await sleep(1000); }
  }
  assert.ok(held, 'the body was never held');
  assert.equal(held.grabbed_by, idA);
  await pageA.mouse.up();
  // Released on pointer up: read until the release is applied (a deadline only so that a hang fails).
  let after;
  for (const until = Date.now() + 30000; ;) {
    after = (await api(server, 'GET', '/api/bodies')).bodies.find((x) => x.id === made.id);
    if (after.grabbed_by === 0 || Date.now() > until) break;
    await sleep(200);
  }
  console.log(`grab: body ${made.id} held by ${held.grabbed_by}, y ${before.pos[1].toFixed(2)} -> ${held.pos[1].toFixed(2)}; released: grabbed_by ${after.grabbed_by}`);
  assert.equal(after.grabbed_by, 0, 'released on pointer up');
  await api(server, 'DELETE', `/api/bodies/${made.id}`);
  await waitFor(pageA, (id) => !window.__fluid.bodies.some((x) => x.id === id), made.id, 60000);
});

test('the page reconnects by itself when the server comes back', async () => {
  await pageB.close(); pageB = null;
  const port = server.port;
  await server.stop();
  await waitFor(pageA, () => !window.__fluid.connected && !document.getElementById('banner').classList.contains('hidden'), null, 60000);
  const text = await pageA.evaluate(() => document.getElementById('banner').textContent);
  assert.match(text, /reconnect/);
  server = await startServer(['--scene', 'dam_break', '--particles', '3000', '--quiet'], { port });
  // Backoff: the next attempt may come up to ~10 s after the server is back.
  await waitFor(pageA, () => window.__fluid.connected && document.getElementById('banner').classList.contains('hidden'), null, 60000);
  // Failed connection attempts while the server was down are logged by the browser; expected here.
  pageA.errors = pageA.errors.filter((e) => !/ERR_CONNECTION_REFUSED|WebSocket connection/.test(e));
});

test('a server speaking another protocol version is reported, not retried', async () => {
  const page = await browser.browser.newPage();
  page.errors = [];
  await page.routeWebSocket(/.*/, (ws) => {
    ws.send(Buffer.from(encode({ type: 'hello', version: 3, client_id: 1, colour: '#ff0000', bounds: [0, 0, 0, 1, 1, 1] })));
  });
  await page.goto(`${server.base}/`);
  await waitFor(page, () => document.getElementById('banner').classList.contains('fatal'), null, 60000);
  const text = await page.evaluate(() => document.getElementById('banner').textContent);
  assert.match(text, /protocol version 3/);
  await sleep(1500);
  assert.equal(await page.evaluate(() => window.__fluid.connected), false);
  await page.close();
});

test('touch: two fingers pinch to zoom and move to orbit', async () => {
  const page = pageA;
  const r = await page.evaluate(async () => {
    const c = document.getElementById('view'), cam = window.__fluid.camera;
    const fire = (type, id, x, y) => c.dispatchEvent(new PointerEvent(type, { pointerId: id, pointerType: 'touch', isPrimary: id === 11,
      clientX: x, clientY: y, button: type === 'pointermove' ? -1 : 0, buttons: type === 'pointerup' ? 0 : 1, bubbles: true, cancelable: true }));
    const d0 = cam.distance, y0 = cam.yaw;
    fire('pointerdown', 11, 300, 300); fire('pointerdown', 12, 400, 300);
    for (let i = 1; i <= 10; i++) { fire('pointermove', 11, 300 - 10 * i, 300); fire('pointermove', 12, 400 + 10 * i, 300); }
    const d1 = cam.distance;
    for (let i = 1; i <= 10; i++) { fire('pointermove', 11, 200 + 10 * i, 300); fire('pointermove', 12, 500 + 10 * i, 300); }
    const y1 = cam.yaw;
    fire('pointerup', 11, 300, 300); fire('pointerup', 12, 600, 300);
    return { d0, d1, y0, y1 };
  });
  console.log(`pinch: distance ${r.d0.toFixed(2)} -> ${r.d1.toFixed(2)} m; two-finger move: yaw ${r.y0.toFixed(2)} -> ${r.y1.toFixed(2)}`);
  assert.ok(r.d1 < 0.6 * r.d0, 'spreading two fingers zooms in');
  assert.ok(Math.abs(r.y1 - r.y0) > 0.3, 'moving two fingers orbits');
  await page.evaluate(() => window.__fluid.panel.app.resetView());
});

test('the simulation controls: pause, single step, resume, scene and count, emitter', async () => {
  const stats = () => api(server, 'GET', '/api/stats');
  // Polls /api/stats until pred holds; the deadline only makes a hang fail.
  const until = async (pred, what, ms = 60000) => {
    const end = Date.now() + ms;
    for (;;) { const st = await stats(); if (pred(st)) return st; if (Date.now() > end) throw new Error(`timed out: ${what} (${JSON.stringify(st)})`); await sleep(150); }
  };
  await connected(pageA);
  if ((await stats()).paused) await api(server, 'POST', '/api/resume');
  await waitFor(pageA, () => document.getElementById('pause').textContent === 'Pause');
  await pageA.click('#pause');
  const p = await until((st) => st.paused, 'paused');
  await waitFor(pageA, () => !document.getElementById('step').disabled);
  await pageA.click('#step');
  await until((st) => st.tick === p.tick + 1, 'one step');
  await pageA.click('#step', { modifiers: ['Shift'] });
  await until((st) => st.tick === p.tick + 11, 'ten steps');
  await pageA.click('#pause');
  await until((st) => !st.paused, 'resumed');
  await pageA.fill('#count', '2500');
  await pageA.selectOption('#scene', 'drop');
  // /api/stats can name the new scene a moment before its particle count follows.
  const d = await until((st) => st.scene === 'drop' && Math.abs(st.particles - 2500) < 250, 'scene drop with about 2500 particles');
  console.log(`scene picker: ${d.scene} with ${d.particles} particles (asked 2500)`);
  assert.ok(Math.abs(d.particles - 2500) < 250);
  await waitFor(pageA, (n) => document.getElementById('hud-particles').textContent === String(n), d.particles, 60000);
  await pageA.click('#emitter');
  const e = await until((st) => st.particles > d.particles + 30, 'the emitter adds particles');
  await pageA.click('#emitter');
  console.log(`emitter: ${d.particles} -> ${e.particles} particles`);
  assert.ok(!(await pageA.isChecked('#emitter')));
  // a scene loaded by another party (REST) fills the count box with the size it was loaded with (the scene
  // broadcast's scene_particles), not its particles: Load then gives the same world again, not one sized by its count
  await pageA.focus('#pause'); // (the box is not refilled while it has the focus)
  await api(server, 'POST', '/api/scene', { name: 'drop', particles: 3000 });
  const other = await until((st) => st.scene === 'drop' && st.scene_particles === 3000 && st.tick >= 60, 'drop loaded over REST, a second on');
  await waitFor(pageA, () => document.getElementById('count').value === '3000', undefined, 30000);
  await pageA.click('#load');
  const again = await until((st) => st.scene === 'drop' && st.tick < 60 && st.scene_particles === 3000, 'drop loaded again');
  assert.equal(again.particles, other.particles, 'the same world: the same count');
  // the box now holds drop's size as the page filled it in: picking another scene loads that one at its own
  // default size (GET /api/scenes), not at drop's 3000
  await waitFor(pageA, () => document.getElementById('count').value === '3000', undefined, 30000);
  const def = (await api(server, 'GET', '/api/scenes')).scenes.find((sc) => sc.name === 'mps_obstacle').default_particles;
  assert.notEqual(def, 3000);
  await pageA.selectOption('#scene', 'mps_obstacle');
  // the scene broadcast names the scene and its size together (/api/stats may name the scene a moment before
  // its size follows): the page's box then shows the size it was loaded with, its default, not drop's 3000
  await waitFor(pageA, (n) => document.getElementById('scene').value === 'mps_obstacle' &&
    document.getElementById('count').value === String(n), def, 30000);
  await until((st) => st.scene === 'mps_obstacle' && st.scene_particles === def, 'mps_obstacle at its own size in /api/stats');
  await api(server, 'POST', '/api/scene', { name: 'drop', particles: 3000 }); // the next tests look at drop
  await until((st) => st.scene === 'drop', 'drop again');
  assert.deepEqual(pageA.errors, []);
});

test('a lost WebGL context is rebuilt when the browser restores it', async () => {
  await pageA.evaluate(() => { window.__lose = window.__fluid.renderer.gl.getExtension('WEBGL_lose_context'); window.__lose.loseContext(); });
  await waitFor(pageA, () => !document.getElementById('banner').classList.contains('hidden'));
  await pageA.evaluate(() => window.__lose.restoreContext());
  await waitFor(pageA, () => document.getElementById('banner').classList.contains('hidden') && !window.__fluid.renderer.gl.isContextLost());
  await sleep(1500);
  const png = await pageA.screenshot({ path: join(ART, 'after-context-loss.png') });
  const s = await pixelStats(pageA, png);
  assert.ok(s.fluid > 0.005 * s.w * s.h, `blank after the context came back (${s.fluid} fluid pixels)`);
  assert.deepEqual(pageA.errors, []);
});
