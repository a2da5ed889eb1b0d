// heat.test.mjs - temperature, solvers and the heat tool in headless Chromium
// against the real fluid-server: the solver selector and HUD (a set_solver
// round trip, another client's switch, and a stand-in server with several
// solvers), the heat / cool tool warming and cooling the particles under the
// pointer (GET /api/particles `temperatures`), the Temperature colouring
// (pixels differ from material colours once heated; particles and liquid
// surface), and the Young's modulus number box.  Screenshots go to
// build/artifacts/web/.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { encode, decode } from '@msgpack/msgpack';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep, api, allParticles, artifactsDir, ROOT } from '../lib.mjs';
import { HEAT_DEFAULTS } from '../../../web-client/src/tools/heat.js';

let server, browser, page;
const ART = artifactsDir();

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '3000', '--quiet']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

const connected = (p) => waitFor(p, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3);

// Pixels of a PNG screenshot (decoded by the page): "warm" ones (red clearly
// above blue, as the hot end of the ramp; water's material colour is blue),
// "cold" ones (blue dominant), and how many differ from another screenshot.
async function pixels(p, png, other = null) {
  return p.evaluate(async ([a, b]) => {
    const read = async (b64) => {
      const bmp = await createImageBitmap(new Blob([Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))], { type: 'image/png' }));
      const c = new OffscreenCanvas(bmp.width, bmp.height);
      const g = c.getContext('2d');
      g.drawImage(bmp, 0, 0);
      return { w: bmp.width, h: bmp.height, d: g.getImageData(0, 0, bmp.width, bmp.height).data };
    };
    const A = await read(a), B = b ? await read(b) : null;
    let warm = 0, cold = 0, differ = 0;
    for (let i = 0; i < A.d.length; i += 4) {
      const r = A.d[i], gg = A.d[i + 1], bl = A.d[i + 2];
      if (r > 150 && r > bl + 60) warm++;
      if (bl > 110 && bl > r + 40) cold++;
      if (B && Math.abs(r - B.d[i]) + Math.abs(gg - B.d[i + 1]) + Math.abs(bl - B.d[i + 2]) > 60) differ++;
    }
    return { w: A.w, h: A.h, warm, cold, differ };
  }, [png.toString('base64'), other ? other.toString('base64') : null]);
}

async function screenOf(p, pt) {
  return p.evaluate((q0) => {
    const q = window.__fluid.project(q0);
    const c = document.getElementById('view').getBoundingClientRect();
    return { x: c.left + (q[0] + 1) / 2 * c.width, y: c.top + (1 - q[1]) / 2 * c.height };
  }, pt);
}
const centroid = (snap) => [0, 1, 2].map((a) => snap.positions.reduce((s, q) => s + q[a], 0) / snap.positions.length);
const hud = (p, id) => p.evaluate((x) => document.getElementById(x).textContent, id);

// Watches the heat tool in the page (window.__heatWatch): how many times its
// timer has fired (the setInterval of HEAT_DEFAULTS.intervalMs the tool runs
// while held: heat.js), and every heat command the page sends, with the
// number of timer ticks before it and its reply once it comes.
async function watchHeat(p) {
  await p.evaluate((intervalMs) => {
    if (window.__heatWatch) return;
    const w = window.__heatWatch = { ticks: 0, cmds: [] };
    const si = window.setInterval.bind(window);
    window.setInterval = (fn, ms, ...a) => (ms === intervalMs && typeof fn === 'function'
      ? si(() => { w.ticks++; fn(); }, ms, ...a) : si(fn, ms, ...a));
    const conn = window.__fluid.conn, send = conn.send.bind(conn);
    conn.send = (c) => {
      const r = send(c);
      if (c.type === 'heat') {
        const e = { rate: c.rate, ticks: w.ticks, reply: null };
        w.cmds.push(e);
        r.then((x) => { e.reply = x; });
      }
      return r;
    };
  }, HEAT_DEFAULTS.intervalMs);
}

// Holds the pointer down at pt with the current heat / cool tool (moving it
// by a pixel or three, as a hand does) until the page has sent `n` heat
// commands and the world has stepped `steps` ticks since the first of them
// (so the heating lasted that much simulated time however slowly the machine
// runs), then lets go and waits for the stop's reply.  Deadlines only so
// that a hang fails.  Returns the page's heat state while held and what the
// watch saw.
async function holdHeat(p, pt, n, steps) {
  await watchHeat(p);
  await p.mouse.move(pt.x, pt.y);
  await sleep(200);
  await p.evaluate(() => { window.__heatWatch.ticks = 0; window.__heatWatch.cmds = []; });
  await p.mouse.down();
  await waitFor(p, () => window.__heatWatch.cmds.length > 0 && window.__fluid.tick !== null, null, 60000);
  const tick0 = await p.evaluate(() => window.__fluid.tick);
  const until = Date.now() + 60000;
  for (let i = 0; ; i++) {
    const st = await p.evaluate(() => ({ n: window.__heatWatch.cmds.length, tick: window.__fluid.tick }));
    if (st.n >= n && st.tick >= tick0 + steps) break;
    if (Date.now() > until) throw new Error(`holding the heat tool: ${st.n} commands sent, ${st.tick - tick0} ticks stepped; waited for ${n} and ${steps}`);
    await p.mouse.move(pt.x + (i % 2) * 3, pt.y);
    await sleep(100);
  }
  const held = await p.evaluate(() => ({ ...window.__fluid.heat, ticks: window.__heatWatch.ticks, cmds: window.__heatWatch.cmds.map((c) => ({ ...c })) }));
  await p.mouse.up();
  await waitFor(p, (k) => { const c = window.__heatWatch.cmds; return c.length > k && c[c.length - 1].rate === 0 && c[c.length - 1].reply !== null; }, held.cmds.length, 60000);
  const after = await p.evaluate(() => ({ ...window.__fluid.heat, ticks: window.__heatWatch.ticks, cmds: window.__heatWatch.cmds.map((c) => ({ ...c })) }));
  return { held, after, tick0 };
}

// What the page's limiter allows (heat.js): one command on pointer down, then
// at most one per timer tick, each with the tool's rate and sign; on release
// one zero-rate command that stops the heating, and nothing more: the timer
// stops with it (checked over the next frames the page receives).
async function checkHeatCommands(p, { held, after }, sign) {
  const rate = sign * await p.evaluate(() => Number(window.__fluid.panel.heatRate));
  assert.ok(held.active, 'active while held');
  assert.equal(held.sign, sign);
  assert.equal(after.active, false, 'inactive once released');
  const stop = after.cmds[after.cmds.length - 1], whileHeld = after.cmds.slice(0, -1);
  assert.ok(whileHeld.length >= held.cmds.length, `${whileHeld.length} heat commands while held`);
  whileHeld.forEach((c, i) => {
    assert.ok(c.ticks >= i, `heat command ${i + 1} sent after ${c.ticks} timer ticks: more than one command per tick`);
    assert.equal(c.rate, rate, `heat command ${i + 1}'s rate`);
  });
  assert.ok(whileHeld.length <= after.ticks + 1, `${whileHeld.length} heat commands in ${after.ticks} timer ticks`);
  assert.ok(held.lastReply?.ok, `heat refused: ${JSON.stringify(held.lastReply)}`);
  assert.equal(stop.rate, 0, 'the command on release stops the heating (rate 0)');
  assert.ok(stop.reply?.ok, `stop refused: ${JSON.stringify(stop.reply)}`);
  const f = await p.evaluate(() => window.__fluid.frames);
  await waitFor(p, (k) => window.__fluid.frames > k + 15, f, 60000);
  const later = await p.evaluate(() => ({ ticks: window.__heatWatch.ticks, n: window.__heatWatch.cmds.length }));
  assert.deepEqual(later, { ticks: after.ticks, n: after.cmds.length }, 'no timer ticks and no heat commands after the release');
  return whileHeld.length;
}

test('the solver selector and the HUD show the server\'s solver; set_solver round-trips; others\' switches show', async () => {
  page = await openClient(browser, server);
  await connected(page);
  const h = await page.evaluate(() => ({ solver: window.__fluid.hello.solver, solvers: window.__fluid.hello.solvers, id: window.__fluid.clientId }));
  const st = await api(server, 'GET', '/api/solvers');
  assert.equal(h.solver, st.solver);
  assert.equal(h.solver, 'clavet');
  const options = await page.$$eval('#solver option', (os) => os.map((o) => o.value));
  assert.deepEqual(options, h.solvers, 'the selector lists hello.solvers');
  assert.deepEqual(options, st.solvers.map((x) => x.name));
  assert.equal(await page.inputValue('#solver'), 'clavet');
  await waitFor(page, () => document.getElementById('hud-solver').textContent === 'clavet');
  // Selecting clavet again (the only built-in solver) sends set_solver; the reply and our own broadcast come back.
  await page.evaluate(() => { const s = document.getElementById('solver'); s.value = 'clavet'; s.dispatchEvent(new Event('change', { bubbles: true })); });
  await waitFor(page, () => window.__fluid.solver.lastReply !== null);
  const mine = await page.evaluate(() => window.__fluid.solver);
  assert.deepEqual(mine.lastReply, { name: 'clavet', ok: true, error: null });
  await waitFor(page, (id) => window.__fluid.solver.by === id, h.id);
  console.log(`set_solver clavet: reply ok, broadcast by ${h.id} (this page)`);
  // Another client switches: this page hears who did it.
  const other = await openClient(browser, server);
  await connected(other);
  const idB = await other.evaluate(() => window.__fluid.clientId);
  const r = await other.evaluate(() => window.__fluid.conn.send({ type: 'set_solver', name: 'clavet' }));
  assert.equal(r.ok, true);
  await waitFor(page, (id) => window.__fluid.solver.by === id, idB);
  // (this page's own "you switched ..." toast may still be up: look for the other client's)
  await waitFor(page, (id) => [...document.querySelectorAll('.toast')].some((t) => t.textContent.includes(`${id} switched the solver`)), idB);
  const toastText = await page.evaluate((id) => [...document.querySelectorAll('.toast')].map((t) => t.textContent).find((t) => t.includes(`${id} switched the solver`)), idB);
  assert.match(toastText, new RegExp(`${idB} switched the solver to clavet`));
  // And a REST switch (by 0).
  await api(server, 'POST', '/api/solver', { name: 'clavet' });
  await waitFor(page, () => window.__fluid.solver.by === 0);
  assert.equal(await page.inputValue('#solver'), 'clavet');
  // A name the server does not have is refused with a reason.
  const bad = await page.evaluate(() => window.__fluid.conn.send({ type: 'set_solver', name: 'no_such_solver' }));
  assert.equal(bad.ok, false);
  console.log(`another client (${idB}) and REST switched: this page saw by=${idB}, then by=0; unknown name refused: ${bad.error}`);
  await page.screenshot({ path: join(ART, 'solver.png'), clip: { x: 600, y: 0, width: 360, height: 600 } });
  await other.close();
  assert.deepEqual(page.errors, []);
});

test('with several solvers (a stand-in server), the selector lists them, follows broadcasts and sends set_solver', async () => {
  const hello = readFileSync(join(ROOT, 'protocol', 'golden', 's2c_hello.msgpack'));     // solvers: clavet, unified, mps
  const solverBcast = readFileSync(join(ROOT, 'protocol', 'golden', 's2c_solver.msgpack')); // mps, by 3
  const p = await browser.browser.newPage({ viewport: { width: 960, height: 600 } });
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(String(e)));
  const sent = [];
  let socket = null;
  await p.routeWebSocket(/.*/, (ws) => {
    socket = ws;
    ws.onMessage((m) => {
      const c = decode(typeof m === 'string' ? Buffer.from(m) : m);
      sent.push(c);
      if (c.type === 'set_solver') {
        ws.send(Buffer.from(encode({ type: 'reply', rid: c.rid, cmd: 'set_solver', ok: true, tick: 12 })));
        ws.send(Buffer.from(encode({ type: 'solver', solver: c.name, by: 5, tick: 12 })));
      }
    });
    ws.send(hello);
  });
  await p.goto(`${server.base}/`);
  await waitFor(p, () => window.__fluid && window.__fluid.connected);
  assert.deepEqual(await p.$$eval('#solver option', (os) => os.map((o) => o.value)), ['clavet', 'unified', 'mps']);
  assert.equal(await p.inputValue('#solver'), 'clavet');
  await waitFor(p, () => document.getElementById('hud-solver').textContent === 'clavet');
  socket.send(solverBcast);
  await waitFor(p, () => document.getElementById('solver').value === 'mps' && document.getElementById('hud-solver').textContent === 'mps');
  await p.selectOption('#solver', 'unified');
  await waitFor(p, () => window.__fluid.solver.lastReply?.ok === true);
  await waitFor(p, () => document.getElementById('hud-solver').textContent === 'unified');
  const req = sent.find((c) => c.type === 'set_solver');
  // rid numbers the page's commands; sid names the page across reconnects (net.js)
  assert.deepEqual({ ...req, rid: 0, sid: '' }, { type: 'set_solver', name: 'unified', rid: 0, sid: '' });
  assert.ok(req.rid > 0);
  assert.ok(typeof req.sid === 'string' && req.sid.length > 0, `set_solver carries the page's session id: ${JSON.stringify(req)}`);
  assert.equal(await p.inputValue('#solver'), 'unified');
  console.log(`stand-in server: selector ${['clavet', 'unified', 'mps'].join('/')}, broadcast mps -> shown; picked unified -> sent ${JSON.stringify(req)}`);
  await p.close();
});

test('the heat tool held on the fluid sends heat and warms the particles under it; cool cools (GET /api/particles)', async () => {
  const base = await allParticles(server);
  assert.equal(base.temperatures?.length, base.ids.length, 'the REST answer carries temperatures');
  const t0 = new Map(base.ids.map((id, i) => [id, base.temperatures[i]]));
  const maxBase = Math.max(...base.temperatures), minBase = Math.min(...base.temperatures);
  await page.click('input[name=tool][value=heat]');
  assert.equal(await page.isVisible('#heat-rate'), true, 'the heat controls show');
  assert.equal(await page.isVisible('#push-strength'), false);
  assert.equal(await page.evaluate(() => window.__fluid.colour), 'temperature', 'the heat tool shows temperature colours');
  const c = await screenOf(page, centroid(base));
  // Held until 8 commands went and the world stepped 1.5 simulated s under the tool.
  const tickHz = await page.evaluate(() => window.__fluid.hello.tick_hz);
  const heating = await holdHeat(page, c, 8, Math.round(1.5 * tickHz));
  const hot = await allParticles(server);
  const sent = await checkHeatCommands(page, heating, 1);
  let warmed = 0, maxRise = 0;
  hot.ids.forEach((id, i) => { const d = hot.temperatures[i] - (t0.get(id) ?? hot.temperatures[i]); if (d > 5) warmed++; maxRise = Math.max(maxRise, d); });
  // Where the warmed particles are: nearer the point the tool was held at
  // than the fluid as a whole (the dam break still flows, carrying them off).
  const p = heating.held.lastPoint;
  const median = (a) => a.sort((x, y) => x - y)[a.length >> 1];
  const dist = (i) => Math.hypot(...[0, 1, 2].map((a) => hot.positions[i][a] - p[a]));
  const medWarm = median(hot.ids.map((id, i) => i).filter((i) => hot.temperatures[i] - (t0.get(hot.ids[i]) ?? Infinity) > 5).map(dist));
  const medAll = median(hot.ids.map((id, i) => dist(i)));
  console.log(`heat tool: ${sent} commands in ${heating.after.ticks} page timer ticks held; ${warmed} of ${hot.ids.length} particles warmed by > 5 °C, ` +
    `max rise ${maxRise.toFixed(1)} °C (all were ${minBase.toFixed(1)}..${maxBase.toFixed(1)} °C); median distance from the heat point: warmed ${medWarm.toFixed(2)} m, all ${medAll.toFixed(2)} m`);
  assert.ok(warmed >= 10, `only ${warmed} particles warmed`);
  assert.ok(maxRise > 20, `max rise only ${maxRise}`);
  assert.ok(medWarm < 0.6 * medAll, `the warmed particles are not under the tool (median ${medWarm} m away; the fluid's ${medAll} m)`);
  assert.ok(warmed < 0.8 * hot.ids.length, 'not the whole fluid');
  await page.screenshot({ path: join(ART, 'heat-tool.png') });
  // The Cool tool: the same with the sign flipped.
  await page.click('input[name=tool][value=cool]');
  const c2 = await screenOf(page, centroid(hot));
  const cooling = await holdHeat(page, c2, 8, Math.round(1.2 * tickHz));
  const cold = await allParticles(server);
  await checkHeatCommands(page, cooling, -1);
  const cooled = cold.ids.filter((id, i) => cold.temperatures[i] < (t0.get(id) ?? Infinity) - 5).length;
  console.log(`cool tool: ${cooled} particles now > 5 °C below where they started (min ${Math.min(...cold.temperatures).toFixed(1)} °C)`);
  assert.ok(cooled >= 5, `only ${cooled} particles cooled`);
  await page.click('input[name=tool][value=push]');
  assert.equal(await page.evaluate(() => window.__fluid.colour), 'material', 'and the push tool material colours again');
  assert.deepEqual(page.errors, []);
});

test('temperature colouring renders the heated fluid unlike the material colours (particles and surface; screenshots)', async () => {
  // Heat a large patch hard through the page's own connection, then hold the world still.
  const snap = await allParticles(server);
  const at = centroid(snap);
  await page.evaluate(async (pt) => {
    for (let i = 0; i < 12; i++) {
      const r = await window.__fluid.conn.send({ type: 'heat', point: pt, radius: 0.6, rate: 1000, duration: 0.3 });
      if (!r.ok) throw new Error(r.error);
      await new Promise((res) => setTimeout(res, 125));
    }
  }, at);
  await sleep(300);
  await api(server, 'POST', '/api/pause');
  await waitFor(page, () => document.getElementById('pause').textContent === 'Resume');
  // No cursor marker in the pictures.
  await page.mouse.move(5, 300);
  await page.evaluate(() => document.getElementById('view').dispatchEvent(new PointerEvent('pointerleave')));
  await sleep(1500);
  const temps = await page.evaluate(() => window.__fluid.temperatures());
  const hotN = temps.filter((t) => t > 60).length;
  console.log(`page's newest frame: ${temps.length} temperatures, ${hotN} above 60 °C, max ${Math.max(...temps)} °C`);
  assert.ok(hotN > 50, `only ${hotN} particles above 60 °C in the frame`);
  await page.click('input[name=colour][value=material]');
  await sleep(1000);
  const matPng = await page.screenshot({ path: join(ART, 'material.png') });
  await page.click('input[name=colour][value=temperature]');
  assert.equal(await page.evaluate(() => window.__fluid.colour), 'temperature');
  await sleep(1500);
  const tempPng = await page.screenshot({ path: join(ART, 'temperature.png') });
  const m = await pixels(page, matPng), t = await pixels(page, tempPng, matPng);
  console.log(`material.png: warm ${m.warm}, cold ${m.cold}; temperature.png: warm ${t.warm}, cold ${t.cold}, ${t.differ} pixels differ (${(100 * t.differ / (t.w * t.h)).toFixed(1)} %)`);
  assert.ok(t.warm > 500 && t.warm > 5 * (m.warm + 20), `the heated fluid is not drawn hot (${t.warm} warm pixels vs ${m.warm})`);
  assert.ok(t.differ > 0.01 * t.w * t.h, `temperature colours barely differ from material colours (${t.differ})`);
  // The legend shows, with the frame's range.
  assert.equal(await page.isVisible('#temp-legend'), true);
  await waitFor(page, () => document.getElementById('temp-span').style.display === 'block');
  assert.match(await hud(page, 'hud-temp'), /^-?\d+ to \d+ °C$/);
  // The liquid surface is tinted by temperature too.
  await page.click('input[name=mode][value=surface]');
  await sleep(2500);
  const surfPng = await page.screenshot({ path: join(ART, 'temperature-surface.png') });
  const s = await pixels(page, surfPng);
  console.log(`temperature-surface.png: warm ${s.warm}, cold ${s.cold}; HUD ${await hud(page, 'hud-temp')}`);
  assert.ok(s.warm > 300, `the surface is not tinted hot (${s.warm} warm pixels)`);
  await page.click('input[name=mode][value=particles]');
  assert.deepEqual(page.errors, []);
});

// Waits for the page's colouring; a timeout says what the page held.
async function colourIs(p, c) {
  await waitFor(p, (x) => window.__fluid.colour === x, c).catch(async (e) => {
    const st = await p.evaluate(() => {
      const t = window.__fluid.temperatures();
      return { colour: window.__fluid.colour, frames: window.__fluid.frames, n: window.__fluid.particles,
        temps: t && t.length ? [Math.min(...t), Math.max(...t)] : null };
    });
    throw new Error(`${e.message}; waiting for ${c} colours, the page: ${JSON.stringify(st)}`);
  });
}

test('a page that joins a world with hot and cold parts colours by temperature; a uniform scene goes back to material', async () => {
  const p = await openClient(browser, server);
  await connected(p);
  await colourIs(p, 'temperature');
  assert.equal(await p.isChecked('input[name=colour][value=temperature]'), true);
  assert.equal(await p.isVisible('#temp-legend'), true);
  await api(server, 'POST', '/api/scene', { name: 'dam_break', particles: 3000 });
  await colourIs(p, 'material');
  assert.equal(await p.isVisible('#temp-legend'), false);
  // The first page chose temperature itself and keeps it.
  assert.equal(await page.evaluate(() => window.__fluid.colour), 'temperature');
  // load_scene from the page is sent without a solver (the scene brings its own).
  await p.evaluate(() => {
    const c = window.__fluid.conn, raw = c._raw.bind(c);
    window.__sent = [];
    c._raw = (o) => { window.__sent.push(o); raw(o); };
  });
  await p.selectOption('#scene', 'drop');
  for (const until = Date.now() + 60000; (await api(server, 'GET', '/api/stats')).scene !== 'drop';) {
    if (Date.now() > until) throw new Error('the scene picker did not load drop');
    await sleep(100);
  }
  await waitFor(p, () => window.__fluid.solver.tick !== null && window.__fluid.particles > 0);
  const sent = await p.evaluate(() => window.__sent);
  const load = sent.find((c) => c.type === 'load_scene');
  assert.ok(load, 'load_scene sent');
  assert.equal('solver' in load, false, `load_scene carried a solver: ${JSON.stringify(load)}`);
  const scenes = await api(server, 'GET', '/api/scenes');
  assert.equal(await p.inputValue('#solver'), scenes.scenes.find((x) => x.name === 'drop').solver);
  console.log(`joining a heated world: temperature colours; after a uniform scene: material; load_scene sent ${JSON.stringify(load)}`);
  await p.close();
  await page.click('input[name=colour][value=material]');
  await api(server, 'POST', '/api/resume');
});

test('the material panel copes with every parameter: Young\'s modulus gets a log slider and a number box', async () => {
  const h = await page.evaluate(() => window.__fluid.hello.params.map((x) => x.name));
  assert.ok(h.length >= 24);
  // young_modulus is the unified solver's parameter: the panel shows its row
  // while that solver runs (a parameter set per solver).
  await api(server, 'POST', '/api/solver', { name: 'unified' });
  await waitFor(page, () => window.__fluid.solver.current === 'unified');
  await page.click('#mat-tabs button[data-material=goo]');
  const rows = await page.$$eval('#mat-params .param', (rs) => rs.length);
  assert.equal(rows, h.length, 'one row per hello parameter');
  const box = 'input.num[aria-label="goo young_modulus value"]';
  await page.waitForSelector(box);
  const before = (await api(server, 'GET', '/api/materials')).materials.find((x) => x.name === 'goo').params.young_modulus;
  assert.equal(Number(await page.inputValue(box)), before.value);
  await page.fill(box, '350000');
  await page.press(box, 'Enter');
  let v;
  for (const until = Date.now() + 60000; ;) {   // a deadline only so that a hang fails
    v = (await api(server, 'GET', '/api/materials')).materials.find((x) => x.name === 'goo').params.young_modulus.value;
    if (v === 350000 || Date.now() > until) break;
    await sleep(100);
  }
  const slider = await page.inputValue('input[type=range][data-material=goo][data-param=young_modulus]');
  console.log(`young_modulus: range ${before.min}..${before.max} ${before.unit}; typed 350000 -> server ${v}; log slider at ${slider} / 1000`);
  assert.equal(v, 350000);
  assert.ok(Number(slider) > 300 && Number(slider) < 600);
  await page.$eval(box, (el) => el.scrollIntoView({ block: 'center' }));
  await page.screenshot({ path: join(ART, 'materials-panel.png'), clip: { x: 600, y: 0, width: 360, height: 600 } });
  assert.deepEqual(page.errors, []);
});

test('the Floor control sets a cold plate (heater slot 0): the bottom of the fluid cools; a scene load resets the control', async () => {
  const p = await openClient(browser, server);
  await connected(p);
  await api(server, 'POST', '/api/scene', { name: 'dam_break', particles: 3000 });
  await api(server, 'POST', '/api/resume');
  // The plate on for 2 simulated seconds (counted in the world's ticks from
  // the heater command's reply, however slowly the machine steps them).
  await p.evaluate(() => {
    const conn = window.__fluid.conn, send = conn.send.bind(conn);
    window.__heater = null;
    conn.send = (c) => { const r = send(c); if (c.type === 'heater') r.then((x) => { window.__heater = x; }); return r; };
  });
  await p.selectOption('#floor-plate', '-20');
  await waitFor(p, () => window.__heater !== null, null, 60000);
  const on = await p.evaluate(() => window.__heater);
  assert.ok(on.ok, `heater refused: ${JSON.stringify(on)}`);
  const tickHz = await p.evaluate(() => window.__fluid.hello.tick_hz);
  const steps = Math.round(2 * tickHz);
  let snap;
  for (const until = Date.now() + 60000; ;) {
    snap = await allParticles(server);
    if (snap.tick >= on.tick + steps) break;
    if (Date.now() > until) throw new Error(`the world stepped ${snap.tick - on.tick} ticks since the plate went on; waited for ${steps}`);
    await sleep(200);
  }
  const ys = snap.positions.map((q) => q[1]), lo = Math.min(...ys);
  const bottom = snap.temperatures.filter((_, i) => ys[i] < lo + 0.1);
  const mean = bottom.reduce((a, b) => a + b, 0) / bottom.length;
  console.log(`floor at -20 C for ${snap.tick - on.tick} ticks (${steps} are 2 simulated s): the bottom 10 cm of fluid at ${mean.toFixed(1)} C (was 20 C)`);
  assert.ok(mean < 5, `bottom at ${mean} C`);
  await p.selectOption('#floor-plate', 'off');
  await p.selectOption('#scene', 'dam_break');
  await waitFor(p, () => document.getElementById('floor-plate').value === '');
  await p.close();
});
