// main.js - the page: connects to the server, keeps the playback timeline,
// draws every animation frame, and turns the user's input into commands.
import { Connection } from './net.js';
import { frameView, runsEqual, centroid, decodeMessage } from './decode.js';
import { cmd, shortName } from './protocol.js';
import { Timeline } from './interp.js';
import { OrbitCamera } from './camera.js';
import { Renderer, hexColour } from './renderer/renderer.js';
import { Panel } from './ui/panel.js';
import { Input } from './ui/input.js';
import { Presence } from './ui/presence.js';
import { StreamStats, Ring } from './stats.js';
import { pickFluid, dragVector, clampToBox } from './picking.js';
import { vec3, clamp } from './math.js';
import { interpolateBodies, pickBody } from './bodies.js';
import { HeatTool } from './heat.js';
import { byteRange, spansTemperatures } from './temperature.js';

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const USER_EMITTER_SLOT = 7;
const PUSH_MAX = 50;   // m/s, the server's bound on push strength (PROTOCOL.md)

function wsUrl() {
  if (query.get('ws')) return query.get('ws');
  const token = query.get('token');
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/${token ? `?token=${encodeURIComponent(token)}` : ''}`;
}

const canvas = $('view');
const camera = new OrbitCamera();
let renderer;
try { renderer = new Renderer(canvas); } catch (e) {
  showBanner(`Cannot draw: ${e.message}`, true);
  throw e;
}

const timeline = new Timeline(4);
const stats = new StreamStats(3000);
const decodeRing = new Ring(600), uploadRing = new Ring(600);
let hello = null, myId = 0, myColour = '#ffffff';
let lastRuns = null, lastFrameBytes = null, newest = null, centreCache = { seq: -1, c: [0, 0, 0] };
let cursors = [];
let framesReceived = 0;
let fps = 0, fpsCount = 0, fpsT0 = performance.now();
let boundsKey = '';
let shownBodies = [];
// After a hello or a scene load: look at the first frame's temperatures and
// colour by temperature when the scene's particles span a range.
let tempCheck = true;
function holderColour(id) {
  if (id === myId) return hexColour(myColour);
  const c = cursors.find((x) => x.id === id);
  return c ? hexColour(c.colour) : [1, 1, 1];
}

const app = {
  cmd,
  send: (c) => conn.send(c),
  nameOf: (id) => shortName(id),
  toast,
  onTool: (t) => canvas.classList.toggle('orbit', t === 'orbit'),
  resetView: () => { if (newest) camera.fit(newest.f.bounds); else if (hello) camera.fit(hello.bounds); },
  setEmitter,
  dropBody: (shape) => dropBody(shape),
  clearBodies: () => clearBodies(),
};
const panel = new Panel(app);
const presence = new Presence($('labels'), shortName);

const conn = new Connection(wsUrl(), {
  onStatus: ({ state, text }) => {
    const el = $('conn');
    el.textContent = state === 'connected' ? 'connected' : state === 'fatal' ? 'stopped' : text.split(' — ')[0];
    el.className = `conn ${state === 'connected' ? 'ok' : 'bad'}`;
    if (state === 'connected') hideBanner();
    else if (state === 'fatal') showBanner(text, true);
    else if (state === 'waiting' || (state === 'connecting' && framesReceived)) showBanner(text, false);
  },
  onMessage,
});

function onMessage(m, data, decodeMs) {
  const now = performance.now();
  stats.received(now, data.byteLength);
  switch (m.type) {
    case 'hello': onHello(m); break;
    case 'frame': {
      const t0 = performance.now();
      let f;
      try { f = frameView(m); } catch (e) { console.warn(e); return; }
      decodeRing.add(decodeMs + performance.now() - t0);
      framesReceived++;
      lastFrameBytes = data;
      if (newest && f.tick < newest.f.tick) { timeline.clear(); lastRuns = null; }   // a scene was loaded
      const same = lastRuns !== null && runsEqual(f.runs, lastRuns);
      lastRuns = f.runs;
      newest = timeline.push(f, now, same);
      stats.frame(now, f.tick, f.time);
      cursors = f.cursors;
      if (f.paused !== panel.paused) panel.setPaused(f.paused);
      if (tempCheck && f.n) { tempCheck = false; autoColour(f); }
      const bk = f.bounds.join(',');
      if (bk !== boundsKey) { boundsKey = bk; keepAnglesFit(f.bounds); }
      break;
    }
    case 'param': panel.onParam(m, myId); break;
    case 'reply':
      // Commands sent without a request id answer only when refused.
      if (!m.ok && m.rid === 0 && m.cmd === 'body_drag') { grab.id = null; toast(`carry: ${m.error}`, true); }
      else if (!m.ok && m.rid === 0 && m.cmd === 'cursor') console.warn('cursor refused:', m.error);
      break;
    case 'scene':
      panel.setScene(m.scene, m.particles);
      panel.onSolver(m);
      tempCheck = true;
      timeline.clear(); lastRuns = null;
      $('emitter').checked = false; $('scene-emitter').checked = true;
      toast(`${who(m.by)} loaded ${m.scene} (${m.particles.toLocaleString()} particles${m.solver ? `, ${m.solver} solver` : ''})`);
      break;
    case 'solver':
      panel.onSolver(m);
      toast(`${who(m.by)} switched the solver to ${m.solver}`);
      break;
    case 'state':
      panel.setPaused(m.paused);
      if (m.by !== myId) toast(`${who(m.by)} ${m.paused ? 'paused' : 'resumed'} the simulation`);
      break;
    default: break;
  }
}

function who(by) { return by === myId ? 'you' : by ? shortName(by) : 'the REST API'; }

function onHello(h) {
  const first = !hello;
  hello = h;
  myId = h.client_id;
  myColour = h.colour;
  $('me-dot').style.background = myColour;
  $('me-name').textContent = shortName(myId);
  renderer.setWorld(h);
  panel.fromHello(h);
  timeline.clear(); lastRuns = null;
  if (h.frame_hz > 0) timeline.setNominal(1000 / h.frame_hz);
  if (first) { camera.fit(h.bounds); boundsKey = h.bounds.join(','); }
  tempCheck = true;
  $('hud-h').textContent = Number.isFinite(h.h) ? `${h.h.toPrecision(3)} m` : '–';
  $('hud-h').title = Number.isFinite(h.h) ? `interaction radius h = ${h.h} m; particles about ${(h.h / 2.1).toPrecision(2)} m apart` : '';
}

// Colour by temperature when a newly loaded scene's particles span more than
// 2 °C (unless the user chose a colouring other than material); back to
// material when the page had chosen temperature and the new scene is uniform.
function autoColour(f) {
  if (!f.temp) return;
  const spans = spansTemperatures(f.temp, f.n, 2);
  if (spans && panel.colour === 'material') {
    panel.setColour('temperature', true);
    toast('this scene has hot and cold parts: colouring by temperature');
  } else if (!spans && panel.colour === 'temperature' && panel.colourAuto) panel.setColour('material');
}

// A new box (another scene or count): frame it, keeping the user's angles.
function keepAnglesFit(b) {
  const { yaw, pitch } = camera;
  camera.fit(b);
  camera.yaw = yaw; camera.pitch = pitch; camera.update();
}

// --- tools -----------------------------------------------------------------
const hover = { ndc: null, changed: false, lastSent: 0, shown: false, pos: null, onFluid: false };
const drag = { active: false, ndc: null, prevNdc: null, lastSend: 0 };
// Holding a rigid body: a drag that starts on a body grabs it instead of pushing.
const grab = { id: null, plane: null, ndc: null, lastSend: 0, pending: false };
// The heat / cool tool: held on the fluid, a `heat` command every 125 ms from
// a timer (the draw loop can run at a few frames a second in software WebGL).
const heat = { tool: new HeatTool(), timer: null, ndc: null, errorAt: 0, lastReply: null };
const isHeatTool = (t) => t === 'heat' || t === 'cool';
function fluidCentre() {
  if (!newest) return hello ? vec3.scale(vec3.add(hello.bounds.slice(0, 3), hello.bounds.slice(3)), 0.5) : [0, 0, 0];
  if (centreCache.seq !== newest.seq) centreCache = { seq: newest.seq, c: centroid(newest.f) };
  return centreCache.c;
}

function pick(ndc) {
  const ray = camera.ray(ndc[0], ndc[1]);
  const f = newest?.f;
  return pickFluid(ray, f, renderer.radius * 1.5, fluidCentre(), camera.forward);
}

new Input(canvas, camera, {
  tool: () => panel.tool,
  onHover: (ndc) => { hover.ndc = ndc; hover.changed = true; },
  onPushStart: (ndc) => {
    if (isHeatTool(panel.tool)) { startHeat(ndc); return; }
    const hit = conn.connected ? pickBody(camera.ray(ndc[0], ndc[1]), shownBodies) : null;
    if (hit && !hit.body.static && (!hit.body.grabbed_by || hit.body.grabbed_by === myId)) { startGrab(hit, ndc); return; }
    Object.assign(drag, { active: true, ndc, prevNdc: ndc, lastSend: performance.now() });
  },
  onPushMove: (ndc) => { drag.ndc = ndc; grab.ndc = ndc; heat.ndc = ndc; },
  onPushEnd: () => { drag.active = false; endGrab(); endHeat(); },
});

function startHeat(ndc) {
  heat.ndc = ndc;
  heat.tool.begin(panel.tool === 'cool' ? -1 : 1);
  clearInterval(heat.timer);
  heat.timer = setInterval(heatTick, heat.tool.intervalMs);
  heatTick();
}
function endHeat() {
  clearInterval(heat.timer);
  heat.timer = null;
  const stop = heat.tool.end();
  if (stop && conn.connected) conn.send(stop);
}
function heatTick() {
  if (!conn.connected || !heat.ndc || !heat.tool.active) return;
  heat.tool.rate = panel.heatRate;
  heat.tool.radius = panel.heatRadius;
  const p = pick(heat.ndc);
  const b = newest?.f.bounds || hello.bounds;
  const c = heat.tool.tick(performance.now(), p?.onFluid ? clampToBox(p.point, b) : null);
  if (!c) return;
  conn.send(c).then((r) => {
    heat.lastReply = r;
    // One message per couple of seconds while refused (e.g. four others heating).
    if (!r.ok && performance.now() - heat.errorAt > 2000) { heat.errorAt = performance.now(); toast(`heat: ${r.error}`, true); }
  });
}

function toolsTick(now) {
  if (!conn.connected) return;
  // Presence: our cursor where the pointer meets the fluid, at most 20 times a second.
  if (hover.changed && now - hover.lastSent >= 50) {
    hover.changed = false;
    hover.lastSent = now;
    const p = hover.ndc ? pick(hover.ndc) : null;
    const b = newest?.f.bounds || hello.bounds;
    hover.pos = p ? clampToBox(p.point, b) : null;
    hover.onFluid = !!p?.onFluid;
    if (hover.pos) { conn.send(cmd.cursor(hover.pos)); hover.shown = true; }
    else if (hover.shown) { conn.send(cmd.cursor(null)); hover.shown = false; }
  }
  // Push: along the drag, at most 30 commands a second.
  if (drag.active && drag.ndc && now - drag.lastSend >= 33) {
    const ray1 = camera.ray(drag.ndc[0], drag.ndc[1]);
    const hit = pickFluid(ray1, newest?.f, renderer.radius * 1.5, fluidCentre(), camera.forward);
    if (hit) {
      const ray0 = camera.ray(drag.prevNdc[0], drag.prevNdc[1]);
      const d = dragVector(ray0, ray1, hit.point, camera.forward);
      const len = d ? vec3.len(d) : 0;
      if (len > 1e-4) {
        const dt = Math.max((now - drag.lastSend) / 1000, 1 / 60);
        const k = clamp(len / dt / 2, 0.4, 3);          // faster drags push harder
        const b = newest?.f.bounds || hello.bounds;
        conn.send(cmd.push(clampToBox(hit.point, b), vec3.norm(d), panel.pushRadius, Math.min(PUSH_MAX, panel.pushStrength * k)))
          .then((r) => { if (!r.ok) toast(`push: ${r.error}`, true); });
        drag.prevNdc = drag.ndc;
        drag.lastSend = now;
      }
    }
  }
}

function startGrab(hit, ndc) {
  const id = hit.body.id;
  Object.assign(grab, { id, plane: hit.point, ndc, lastSend: performance.now(), pending: true });
  conn.send(cmd.bodyGrab(id, hit.point, hit.point)).then((r) => {
    grab.pending = false;
    if (!r.ok) { toast(`grab: ${r.error}`, true); if (grab.id === id) grab.id = null; }
  });
}
function endGrab() {
  if (grab.id === null) return;
  const id = grab.id;
  grab.id = null;
  conn.send(cmd.bodyRelease(id)).then((r) => { if (!r.ok && !/not held|held by/.test(r.error || '')) toast(`release: ${r.error}`, true); });
}
function grabTick(now) {
  if (grab.id === null || !grab.ndc || now - grab.lastSend < 33) return;
  const ray = camera.ray(grab.ndc[0], grab.ndc[1]);
  const hit = rayPlaneFacing(ray, grab.plane);
  if (!hit) return;
  const b = newest?.f.bounds || hello.bounds;
  conn.send(cmd.bodyDrag(grab.id, clampToBox(hit, b)));
  grab.lastSend = now;
}
function rayPlaneFacing(ray, at) {
  const n = camera.forward;
  const d = vec3.dot(ray.dir, n);
  if (Math.abs(d) < 1e-6) return null;
  const t = vec3.dot(vec3.sub(at, ray.origin), n) / d;
  return t > 0 ? vec3.add(ray.origin, vec3.scale(ray.dir, t)) : null;
}

// Drops a body from above the middle of the box, a little off-centre.
async function dropBody(shape) {
  const b = newest?.f.bounds || hello?.bounds;
  if (!b) return;
  const sx = b[3] - b[0], sy = b[4] - b[1], sz = b[5] - b[2];
  const k = Math.min(sx, sy, sz);
  const r = clamp(0.08 * k, 0.08, 0.6);
  const size = shape === 'box' ? [r, 0.7 * r, 0.9 * r] : shape === 'capsule' ? [0.6 * r, 1.2 * r, 0] : [r, 0, 0];
  const pos = [b[0] + sx * (0.35 + 0.3 * Math.random()), b[1] + 0.8 * sy, b[2] + sz * (0.35 + 0.3 * Math.random())];
  const q = vec3.norm([Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5]);
  const ang = Math.random() * Math.PI;
  const rot = [Math.cos(ang / 2), ...vec3.scale(q, Math.sin(ang / 2))];
  const r2 = await conn.send(cmd.bodyCreate(shape, size, pos, { rot, density: Number($('body-density').value) }));
  if (!r2.ok) toast(`add ${shape}: ${r2.error}`, true);
}
async function clearBodies() {
  for (const bd of shownBodies) {
    if (bd.grabbed_by && bd.grabbed_by !== myId) continue;
    const r = await conn.send(cmd.bodyDestroy(bd.id));
    if (!r.ok) { toast(`remove: ${r.error}`, true); break; }
  }
}

async function setEmitter(on) {
  const b = newest?.f.bounds || hello?.bounds;
  if (!b) return;
  let r;
  if (on) {
    const sy = b[4] - b[1];
    r = await conn.send(cmd.emitter(USER_EMITTER_SLOT, {
      pos: [(b[0] + b[3]) / 2, b[4] - 0.12 * sy, (b[2] + b[5]) / 2], direction: [0.15, -1, 0.1],
      speed: 1.5, radius: Math.max(0.1, 2.5 * renderer.spacing), rate: 800,
      cap: Math.min(hello.capacity, (newest?.f.n || 0) + 10000), material: panel.currentMaterial(), enabled: true,
    }));
  } else r = await conn.send(cmd.emitterEnable(USER_EMITTER_SLOT, false));
  if (!r.ok) { toast(`emitter: ${r.error}`, true); $('emitter').checked = !on; }
}

window.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey) return;
  const k = e.key.toLowerCase();
  if (k === ' ') { e.preventDefault(); panel.togglePause(); }
  else if (k === 'l') panel.setMode(panel.mode === 'surface' ? 'particles' : 'surface');
  else if (k === 'o') panel.setTool('orbit');
  else if (k === 'p') panel.setTool('push');
  else if (k === 'h') panel.setTool('heat');
  else if (k === 'c') panel.setTool('cool');
  else if (k === 'r') app.resetView();
  else if (k === 's' && panel.paused) conn.send(cmd.step(e.shiftKey ? 10 : 1));
});

// --- drawing ---------------------------------------------------------------
function resize() {
  const dpr = Math.min(window.devicePixelRatio || 1, 2);
  const w = Math.max(1, Math.round(canvas.clientWidth * dpr)), h = Math.max(1, Math.round(canvas.clientHeight * dpr));
  if (canvas.width !== w || canvas.height !== h || camera.aspect !== w / h) {
    renderer.resize(w, h);
    camera.setAspect(w / h);
  }
  const side = $('side');
  const covered = side.classList.contains('collapsed') || canvas.clientWidth < 700 ? 0 : (side.offsetWidth + 10) / canvas.clientWidth;
  camera.setShift(covered);
}

function markers() {
  const out = [];
  const r = Math.max(0.05, 1.6 * renderer.radius);
  for (const c of cursors) if (c.id !== myId && c.pos) out.push({ pos: c.pos, colour: hexColour(c.colour), radius: r });
  if (hover.pos && hover.ndc) {
    out.push({ pos: hover.pos, colour: hexColour(myColour), radius: r });
    if (panel.tool === 'push') out.push({ pos: hover.pos, colour: hexColour(myColour), radius: panel.pushRadius, ring: true, alpha: 0.35 });
    else if (isHeatTool(panel.tool)) {
      const on = heat.tool.active;
      out.push({ pos: hover.pos, colour: panel.tool === 'cool' ? [0.3, 0.6, 1] : [1, 0.45, 0.1], radius: panel.heatRadius, ring: true, alpha: on ? 0.6 : 0.35 });
    }
  }
  return out;
}

function frameLoop(now) {
  requestAnimationFrame(frameLoop);
  if (contextLost) return;
  resize();
  toolsTick(now);
  if (conn.connected) grabTick(now);
  const s = timeline.sample(now);
  let alpha = 1, invDt = 0, bodies = [];
  if (s) {
    const t0 = performance.now();
    const bytes = renderer.uploadPair(s.a, s.b);
    if (bytes) uploadRing.add(performance.now() - t0);
    alpha = s.alpha;
    const dts = s.b.f.time - s.a.f.time;
    invDt = dts > 1e-6 ? 1 / dts : 0;
    bodies = interpolateBodies(s.a.f.bodies, s.b.f.bodies, alpha);
  }
  shownBodies = bodies;
  renderer.draw(camera, { alpha, invDt, colorMode: panel.colour, speedMax: panel.speedMax, mode: panel.mode, markers: markers(), bodies, holderColour });
  const labelled = cursors.filter((c) => c.id !== myId);
  if (hover.pos && hover.ndc) labelled.push({ id: myId, colour: myColour, pos: hover.pos, own: true });
  presence.update(labelled, camera.viewProj, canvas.clientWidth, canvas.clientHeight);
  fpsCount++;
  if (now - fpsT0 >= 500) {
    fps = fpsCount * 1000 / (now - fpsT0);
    fpsCount = 0; fpsT0 = now;
    updateHud(now);
  }
}

// The server's own measurements (REST, same origin), polled while connected;
// the frame-derived rates stand in until the first answer.
let serverStats = null, serverStatsAt = 0;
async function pollStats() {
  if (conn.connected && !document.hidden) {
    try {
      const res = await fetch('/api/stats', { signal: AbortSignal.timeout(3000), cache: 'no-store' });
      if (res.ok) { serverStats = await res.json(); serverStatsAt = performance.now(); }
    } catch { /* next time */ }
  }
  setTimeout(pollStats, 2000);
}
pollStats();

function updateHud(now) {
  const r = stats.rates(now);
  if (serverStats && now - serverStatsAt < 15000) {
    r.tickHz = serverStats.paused ? 0 : serverStats.tick_hz_actual;
    r.realtime = serverStats.paused ? 0 : serverStats.realtime_ratio;
  }
  const fmt = (v, d, unit = '') => (v === null || v === undefined || !Number.isFinite(v) ? '–' : `${v.toFixed(d)}${unit}`);
  $('hud-fps').textContent = fmt(fps, 0);
  $('hud-tick').textContent = fmt(r.tickHz, 1, ' Hz');
  $('hud-rt').textContent = fmt(r.realtime, 2, '×');
  $('hud-particles').textContent = newest ? String(newest.f.n) : '–';
  $('hud-kbs').textContent = fmt(r.bytesPerS / 1000, 0, ' kB/s');
  $('hud-rtt').textContent = conn.lastRtt === null ? '–' : `${conn.lastRtt.toFixed(1)} ms`;
  $('hud-scene').textContent = hello ? `${$('scene').value}${panel.paused ? ' (paused)' : ''}` : '–';
  $('hud-solver').textContent = panel.solver.current || '–';
  $('hud-time').textContent = newest ? `${newest.f.time.toFixed(1)} s` : '–';
  // The newest frame's coldest and hottest particle (one pass over n bytes, twice a second).
  const f = newest?.f;
  const tr = f?.temp ? byteRange(f.temp, f.n) : null;
  const range = tr ? { min: f.tempLo + tr.min, max: f.tempLo + tr.max } : null;
  $('hud-temp').textContent = !range ? '–' : range.min === range.max ? `${range.min} °C` : `${range.min} to ${range.max} °C`;
  if (panel.colour === 'temperature') panel.showTemperatures(range, f?.tempLo, f?.tempHi);
  // Users connected (the server's count; until it answers, those showing a cursor).
  const others = cursors.filter((c) => c.id !== myId && c.pos).length;
  $('hud-users').textContent = !conn.connected ? '–'
    : serverStats && now - serverStatsAt < 15000 ? String(serverStats.clients) : String(1 + others);
}

// --- messages to the user --------------------------------------------------
function showBanner(text, fatal) {
  const b = $('banner');
  b.textContent = text;
  b.className = `banner${fatal ? ' fatal' : ''}`;
}
function hideBanner() { $('banner').className = 'banner hidden'; }
function toast(text, err = false) {
  const el = document.createElement('div');
  el.className = `toast${err ? ' err' : ''}`;
  el.textContent = text;
  $('toasts').append(el);
  while ($('toasts').children.length > 5) $('toasts').firstChild.remove();
  setTimeout(() => { el.style.opacity = '0'; setTimeout(() => el.remove(), 600); }, 4000);
}

// A lost WebGL context (driver reset, too many contexts) comes back by itself:
// rebuild the renderer on the restored context and carry on.
let contextLost = false;
canvas.addEventListener('webglcontextlost', (e) => { e.preventDefault(); contextLost = true; showBanner('The graphics context was lost; waiting for it to come back…', false); });
canvas.addEventListener('webglcontextrestored', () => {
  try {
    renderer = new Renderer(canvas);
    if (hello) renderer.setWorld(hello);
    if (newest) renderer.bounds = newest.f.bounds;
    contextLost = false;
    hideBanner();
  } catch (err) { showBanner(`Cannot draw: ${err.message}`, true); }
});

// --- hooks for the browser tests and the benchmark -----------------------
window.__fluid = {
  get clientId() { return myId; },
  get connected() { return conn.connected; },
  get frames() { return framesReceived; },
  get particles() { return newest ? newest.f.n : null; },
  get tick() { return newest ? newest.f.tick : null; },
  get bodies() { return newest ? newest.f.bodies : []; },
  get cursors() { return cursors.map((c) => ({ id: c.id, colour: c.colour, pos: c.pos })); },
  get fps() { return fps; },
  get bytesIn() { return conn.bytesIn; },
  get lastRtt() { return conn.lastRtt; },
  get hello() { return hello; },
  get colour() { return panel.colour; },
  get solver() { const s = panel.solver; return { current: s.current, options: s.options.slice(), shown: s.shown, pending: s.pending, by: s.by, tick: s.tick, lastReply: s.lastReply }; },
  get heat() { const t = heat.tool; return { active: t.active, sent: t.sent, sign: t.sign, lastPoint: t.lastPoint, lastReply: heat.lastReply }; },
  // The newest frame's temperature bytes, as °C.
  temperatures() { const f = newest?.f; return f?.temp ? Array.from(f.temp, (b) => f.tempLo + b) : null; },
  rates: () => stats.rates(performance.now()),
  timings: () => ({ decode: decodeRing.summary(), upload: uploadRing.summary() }),
  project: (p) => { const { project } = window.__fluidMath; return project(camera.viewProj, p); },
  camera, panel, conn,
  get renderer() { return renderer; },
  // Decodes the newest frame's bytes again and uploads it, k times.  The
  // page clock is coarse (0.1 ms without cross-origin isolation), so means
  // come from whole batches: decode alone (msgpack + views), decode + upload
  // (bufferSubData of the positions as received), and decode + upload + a
  // 1-pixel readPixels that waits until the GPU process has done the upload.
  benchUpload(k = 200) {
    if (!lastFrameBytes) return null;
    const gl = renderer.gl, px = new Uint8Array(4);
    const sync = () => { gl.bindFramebuffer(gl.FRAMEBUFFER, null); gl.readPixels(0, 0, 1, 1, gl.RGBA, gl.UNSIGNED_BYTE, px); };
    const decodeOnce = () => frameView(decodeMessage(new Uint8Array(lastFrameBytes)));
    let seq = -1;
    const upload = (f) => { const e = { seq: seq--, order: seq, f }; renderer.uploadPair(e, e); };
    // Median of 5 batch means: robust against a garbage collection or a
    // busy machine in one batch.
    const batch = (fn) => {
      const means = [];
      for (let b = 0; b < 5; b++) {
        const m = Math.max(1, Math.round(k / 5));
        const t0 = performance.now();
        for (let i = 0; i < m; i++) fn();
        means.push((performance.now() - t0) / m);
      }
      return means.sort((x, y) => x - y)[2];
    };
    const per = (fn) => { const r = new Ring(k); for (let i = 0; i < k; i++) { const t0 = performance.now(); fn(); r.add(performance.now() - t0); } return r.summary(); };
    sync();
    const decodeMean = batch(decodeOnce);
    const totalMean = batch(() => upload(decodeOnce()));
    sync();
    const syncedMean = batch(() => { upload(decodeOnce()); sync(); });
    const totalPer = per(() => upload(decodeOnce()));
    // The temperature attribute's share: decode + upload with and without it,
    // in alternating batches (the machine's load drifts between batches), and
    // its texture upload alone (with and without waiting for the GPU process).
    const noTemp = () => { const f = decodeOnce(); f.temp = null; return f; };
    const ab = (withFn, withoutFn) => {
      const a = [], b = [];
      for (let r = 0; r < 5; r++) { a.push(batch(withFn)); b.push(batch(withoutFn)); }
      const med = (x) => x.sort((p, q) => p - q)[2];
      return [med(a), med(b)];
    };
    sync();
    const [withTempMean, noTempMean] = ab(() => upload(decodeOnce()), () => upload(noTemp()));
    const [withTempSyncedMean, noTempSyncedMean] = ab(() => { upload(decodeOnce()); sync(); }, () => { upload(noTemp()); sync(); });
    const f = decodeOnce();
    let tempUploadMean = null, tempSyncedMean = null;
    if (f.temp) {
      tempUploadMean = batch(() => renderer._uploadBytes(renderer.tempTex[0], f.temp, f.n));
      sync();
      tempSyncedMean = batch(() => { renderer._uploadBytes(renderer.tempTex[0], f.temp, f.n); sync(); }) - batch(sync);
    }
    renderer.slotKey = ['', '']; renderer.matOrder = -1;
    return { n: f.n, bytes: lastFrameBytes.byteLength, k, decodeMean, uploadMean: totalMean - decodeMean, totalMean,
      syncedMean, totalP95: totalPer.p95, totalMax: totalPer.max,
      temp: !!f.temp, withTempMean, noTempMean, withTempSyncedMean, noTempSyncedMean, tempUploadMean, tempSyncedMean };
  },
};
import('./math.js').then((m) => { window.__fluidMath = m; });

conn.start();
requestAnimationFrame(frameLoop);
