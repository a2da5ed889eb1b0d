// app.js - the page: its shared state, the connection to the server and
// what each message does to the page; it builds the panel, the tools, the
// HUD and the draw loop around that state.  The entry point of index.html.
import { Connection } from './net.js';
import { runsEqual, centroid } from './decode.js';
import { FrameDecoderHost } from './frame_decoder_host.js';
import { cmd, shortName } from './protocol.js';
import { DEFAULT_LIMITS, readLimits } from './limits.js';
import { Timeline } from './interp.js';
import { OrbitCamera } from './camera.js';
import { Renderer } from './renderer/renderer.js';
import { Panel } from './ui/panel.js';
import { Input } from './ui/input.js';
import { Presence } from './ui/presence.js';
import { Hud } from './ui/hud.js';
import { showBanner, hideBanner, toast } from './ui/messages.js';
import { StreamStats, Ring } from './stats.js';
import { pickFluid } from './picking.js';
import { vec3 } from './math.js';
import { AutoColour } from './auto_colour.js';
import { Toolbox } from './tools/toolbox.js';
import { dropBody, clearBodies, setEmitter } from './actions.js';
import { DrawLoop } from './view.js';
import { installHooks } from './hooks.js';
import { RecordButton } from './recorder_button.js';
import { streamPath, roomName } from './room.js';
import { applyRole, allows } from './ui/roles.js';
import { RoomsPanel } from './ui/rooms_panel.js';
import { Obstacles } from './obstacles.js';

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);

function wsUrl() {
  if (query.get('ws')) return query.get('ws');
  // the page's credential: the server's token, or an invite (a room's invite link)
  const token = query.get('token'), invite = query.get('invite');
  const cred = token ? `?token=${encodeURIComponent(token)}` : invite ? `?invite=${encodeURIComponent(invite)}` : '';
  return `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}${streamPath()}${cred}`;
}

const canvas = $('view');

// The page's state, shared by the panel, the tools, the HUD, the draw loop
// and the test hooks (each module's header lists what it reads).
const page = {
  camera: new OrbitCamera(),
  renderer: null,
  conn: null,
  panel: null,
  timeline: new Timeline(4),
  decoder: null,                        // protocol v2: where frames decode (frame_decoder_host.js)
  stats: new StreamStats(3000),
  decodeRing: new Ring(600),             // a frame's decode: message + payload (worker or here)
  mainRing: new Ring(600),               // the main thread's part of it
  uploadRing: new Ring(600),
  hello: null, myId: 0, myColour: '#ffffff',
  limits: DEFAULT_LIMITS,               // the server's, from each hello
  newest: null,                         // the newest timeline entry {seq, order, f}
  lastRuns: null, lastFrameBytes: null, framesReceived: 0,
  moves: [], // the room's moves to another sim node a fleet relay told of: { node, text, frames }
  cursors: [], shownBodies: [],
  boundsKey: '',
  // After a hello or a scene load: look at the first frame's temperatures
  // and colour by temperature when the scene's particles span a range.
  autoColour: new AutoColour(),
  centreCache: { seq: -1, c: [0, 0, 0] },
  toast,
  bounds() { return this.newest?.f.bounds || this.hello?.bounds; },
  ray(ndc) { return this.camera.ray(ndc[0], ndc[1]); },
  get forward() { return this.camera.forward; },
  fluidCentre() {
    const n = this.newest;
    if (!n) return this.hello ? vec3.scale(vec3.add(this.hello.bounds.slice(0, 3), this.hello.bounds.slice(3)), 0.5) : [0, 0, 0];
    if (this.centreCache.seq !== n.seq) this.centreCache = { seq: n.seq, c: centroid(n.f) };
    return this.centreCache.c;
  },
  pickRay(ray) { return pickFluid(ray, this.newest?.f, this.renderer.radius * 1.5, this.fluidCentre(), this.camera.forward); },
  pick(ndc) { return this.pickRay(this.ray(ndc)); },
};

page.decoder = new FrameDecoderHost((f, ms) => onView(f, ms), () => askKeyframe(),
  (stride) => page.conn?.send({ type: 'pace', stride }));
// Full detail pinned (PROTOCOL.md "Tiers of detail"): told at once, and again
// on every hello (a new connection starts with the link's choice).
const fullDetail = document.getElementById('full-detail');
const sendDetail = () => { if (fullDetail) page.conn?.send({ type: 'detail', full: fullDetail.checked }); };
fullDetail?.addEventListener('change', sendDetail);

try { page.renderer = new Renderer(canvas); } catch (e) {
  showBanner(`Cannot draw: ${e.message}`, true);
  throw e;
}

page.panel = new Panel({
  cmd,
  send: (c) => page.conn.send(c),
  get limits() { return page.limits; },
  nameOf: (id) => shortName(id),
  toast,
  onTool: (t) => canvas.classList.toggle('orbit', t === 'orbit'),
  resetView: () => resetView(),
  setEmitter: (on) => setEmitter(page, on),
  dropBody: (shape) => dropBody(page, shape),
  clearBodies: () => clearBodies(page),
});
const toolbox = new Toolbox(page);
const hud = new Hud(page);
const panel = page.panel, camera = page.camera;

page.conn = new Connection(wsUrl(), {
  onStatus: ({ state, text }) => {
    const el = $('conn');
    el.textContent = state === 'connected' ? 'connected' : state === 'fatal' ? 'stopped' : text.split(' — ')[0];
    el.className = `conn ${state === 'connected' ? 'ok' : 'bad'}`;
    if (state === 'connected') hideBanner();
    else if (state === 'fatal') showBanner(text, true);
    else if (state === 'waiting' || (state === 'connecting' && page.framesReceived)) showBanner(text, false);
  },
  onMessage,
});

function resetView() {
  if (page.newest) camera.fit(page.newest.f.bounds); else if (page.hello) camera.fit(page.hello.bounds);
}

function who(by) { return by === page.myId ? 'you' : by ? shortName(by) : 'the REST API'; }

function forgetFrames() { page.timeline.clear(); page.lastRuns = null; }

function onMessage(m, data, decodeMs) {
  page.stats.received(performance.now(), data.byteLength);
  switch (m.type) {
    case 'hello': onHello(m); break;
    case 'frame': onFrame(m, data, decodeMs); break;
    case 'param': panel.onParam(m, page.myId); break;
    case 'reply':
      // Commands sent without a request id answer only when refused.
      if (!m.ok && m.rid === 0 && m.cmd === 'body_drag') toolbox.grab.refused(m.error);
      else if (!m.ok && m.rid === 0 && m.cmd === 'cursor') console.warn('cursor refused:', m.error);
      break;
    case 'scene':
      panel.setScene(m.scene, m.scene_particles || m.particles);
      panel.onSolver(m);
      forgetFrames();
      $('emitter').checked = false; $('scene-emitter').checked = true;
      toast(`${who(m.by)} loaded ${m.scene} (${m.particles.toLocaleString()} particles${m.solver ? `, ${m.solver} solver` : ''})`);
      break;
    case 'solver':
      panel.onSolver(m);
      toast(`${who(m.by)} switched the solver to ${m.solver}`);
      break;
    case 'status': // a relay about its link to the simulation, or (a fleet's relay) its room's move to another sim node
      if (m.moved) page.moves.push({ node: m.node, text: m.text, frames: page.framesReceived });
      if (m.connected) { hideBanner(); toast(m.text); } else showBanner(m.text, false);
      break;
    case 'obstacles': page.obstacles.onMessage(m, page.myId, who); break;
    case 'state':
      panel.setPaused(m.paused);
      if (m.by !== page.myId) toast(`${who(m.by)} ${m.paused ? 'paused' : 'resumed'} the simulation`);
      break;
    default: break;
  }
}

function onFrame(m, data, decodeMs) {
  page.lastFrameBytes = data;
  page.msgDecodeMs = decodeMs;
  const t0 = performance.now();
  page.decoder.push(m, t0);
  page.mainRing.add(decodeMs + performance.now() - t0);   // the main thread's part of a frame
}

function askKeyframe() {
  console.warn(`a frame was refused (${page.decoder.lastError}); asking for a keyframe`);
  page.conn.send({ type: 'keyframe' });
}

// A frame decoded (in the worker, or here): onto the timeline.
function onView(f, decodeMs) {
  const now = performance.now();
  page.decodeRing.add(decodeMs + (page.msgDecodeMs || 0));
  page.framesReceived++;
  if (page.newest && f.tick < page.newest.f.tick) forgetFrames();   // a scene was loaded
  const same = page.lastRuns !== null && runsEqual(f.runs, page.lastRuns);
  page.lastRuns = f.runs;
  page.newest = page.timeline.push(f, now, same);
  page.stats.frame(now, f.tick, f.time);
  page.cursors = f.cursors;
  if (f.paused !== panel.paused) panel.setPaused(f.paused);
  autoColour(f);
  const bk = f.bounds.join(',');
  if (bk !== page.boundsKey) { page.boundsKey = bk; keepAnglesFit(f.bounds); }
}

function onHello(h) {
  const first = !page.hello;
  page.hello = h;
  page.myId = h.client_id;
  page.myColour = h.colour;
  page.limits = readLimits(h);
  toolbox.setLimits(page.limits);
  if (fullDetail?.checked) sendDetail();
  $('me-dot').style.background = page.myColour;
  $('me-name').textContent = shortName(page.myId);
  $('room-name').textContent = h.room || roomName();
  $('role-name').textContent = h.role || 'player';
  applyRole(document, h.role || 'admin');
  page.roomsPanel?.fromHello(h);
  if (!allows(h.role || 'admin', 'player') && panel.tool !== 'orbit') panel.setTool('orbit');
  document.title = `fluid · ${h.room || roomName()}`;
  page.renderer.setWorld(h);
  page.obstacles.reset();
  page.decoder.reset(h.capacity, h.frame_hz > 0 ? 1000 / h.frame_hz : 0);
  panel.fromHello(h);
  forgetFrames();
  if (h.frame_hz > 0) page.timeline.setNominal(1000 / h.frame_hz);
  if (first) { camera.fit(h.bounds); page.boundsKey = h.bounds.join(','); }
  page.autoColour.hello();
  hud.fromHello(h);
}

// Colour by temperature when a newly loaded scene's particles span more than
// 2 °C (unless the user chose a colouring other than material); back to
// material when the page had chosen temperature and the new scene is uniform.
function autoColour(f) {
  const c = page.autoColour.frame(f, panel.colour, panel.colourAuto);
  if (c === 'temperature') {
    panel.setColour('temperature', true);
    toast('this scene has hot and cold parts: colouring by temperature');
  } else if (c === 'material') panel.setColour('material');
}

// A new box (another scene or count): frame it, keeping the user's angles.
function keepAnglesFit(b) {
  const { yaw, pitch } = camera;
  camera.fit(b);
  camera.yaw = yaw; camera.pitch = pitch; camera.update();
}

new Input(canvas, camera, toolbox.handlers());

window.addEventListener('keydown', (e) => {
  if (e.target instanceof HTMLInputElement || e.target instanceof HTMLSelectElement || e.ctrlKey || e.metaKey) return;
  const k = e.key.toLowerCase();
  if (k === ' ') { e.preventDefault(); panel.togglePause(); }
  else if (k === 'l') panel.setMode(panel.mode === 'surface' ? 'particles' : 'surface');
  else if (k === 'o') panel.setTool('orbit');
  else if (k === 'p') panel.setTool('push');
  else if (k === 'h') panel.setTool('heat');
  else if (k === 'c') panel.setTool('cool');
  else if (k === 'r') resetView();
  else if (k === 's' && panel.paused) page.conn.send(cmd.step(e.shiftKey ? 10 : 1, page.limits));
});

installHooks(page, { toolbox, hud });
page.recordButton = new RecordButton(query.get('token') || query.get('invite'), toast);
page.roomsPanel = new RoomsPanel(query.get('token'), toast);
page.obstacles = new Obstacles(page, query.get('token') || query.get('invite'), toast,
  { canvas, file: $('mesh-file'), add: $('add-mesh'), clear: $('clear-obstacles'), state: $('obstacle-state') });
setInterval(() => { if (page.recordButton.active) page.recordButton.refresh(); }, 2000);
hud.poll();
page.conn.start();
new DrawLoop(page, canvas, { toolbox, hud, presence: new Presence($('labels'), shortName) }).start();
