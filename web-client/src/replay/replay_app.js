// replay_app.js - the replay page (replay.html): lists the server's
// recordings, or plays one (?rec=NAME, optionally &t=SECONDS: a link to that
// moment) with play, pause, scrub, speed (0.25-4x) and frame steps, in the
// live page's renderer and colour and view modes.  The link follows the
// playhead, so the address bar is always a shareable link.
import { Player } from './player.js';
import { loadWasmDecoder } from '../frame_codec_wasm.js';
import { Renderer } from '../renderer/renderer.js';
import { OrbitCamera } from '../camera.js';
import { interpolateBodies } from '../bodies.js';

const $ = (id) => document.getElementById(id);
const query = new URLSearchParams(location.search);
const name = query.get('rec');
const token = query.get('token');
const auth = token ? { headers: { Authorization: `Bearer ${token}` } } : {};

async function fetchBytes(path) {
  const r = await fetch(path, auth);
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return new Uint8Array(await r.arrayBuffer());
}
async function fetchJson(path) {
  const r = await fetch(path, auth);
  if (!r.ok) throw new Error(`${path}: ${r.status}`);
  return r.json();
}

// Every recording, page by page (GET /api/recordings?offset=&limit=).
async function listRecordings() {
  const ul = $('list');
  $('listing').classList.remove('hidden');
  let shown = 0;
  for (let offset = 0; ;) {
    const list = await fetchJson(`/api/recordings?offset=${offset}`);
    if (!list.enabled) { ul.textContent = 'This server keeps no recordings (start it with --record-dir DIR).'; return; }
    for (const r of list.recordings) {
      const li = document.createElement('li');
      const a = document.createElement('a');
      a.href = `?rec=${encodeURIComponent(r.name)}${token ? `&token=${encodeURIComponent(token)}` : ''}`;
      a.textContent = `${r.name}: ${r.seconds.toFixed(1)} s simulated, ${r.frames} frames${r.recording ? ' (recording)' : ''}` +
        `${r.stopped ? ` (stopped: ${r.stopped})` : ''}`;
      li.appendChild(a);
      ul.appendChild(li);
    }
    shown += list.recordings.length;
    offset += list.recordings.length;
    if (!list.recordings.length || offset >= list.total) break;
  }
  if (!shown) ul.textContent = 'No recordings yet: POST /api/recordings, or the Record button of the live page.';
}

function shareLink(p) {
  const q = new URLSearchParams(location.search);
  q.set('t', p.t.toFixed(3));
  history.replaceState(null, '', `?${q}`);
}

function wireTransport(p) {
  const slider = $('scrub');
  slider.min = p.start; slider.max = p.end; slider.step = 0.001;
  $('play').onclick = () => { if (p.t >= p.end) p.seek(p.start); p.playing = !p.playing; if (!p.playing) shareLink(p); };
  $('back').onclick = () => { p.step(-1); shareLink(p); };
  $('fwd').onclick = () => { p.step(1); shareLink(p); };
  $('speed').onchange = (e) => p.setSpeed(e.target.value);
  slider.oninput = () => { p.seek(Number(slider.value)); p.ensure(p.t); };
  slider.onchange = () => shareLink(p);
  window.addEventListener('keydown', (e) => {
    if (e.key === ' ') { e.preventDefault(); $('play').click(); }
    if (e.key === 'ArrowRight') $('fwd').click();
    if (e.key === 'ArrowLeft') $('back').click();
  });
}

function wireCamera(canvas, camera) {
  let last = null;
  canvas.addEventListener('pointerdown', (e) => { last = [e.clientX, e.clientY]; canvas.setPointerCapture(e.pointerId); });
  canvas.addEventListener('pointermove', (e) => {
    if (!last) return;
    camera.orbit((e.clientX - last[0]) * 0.006, (e.clientY - last[1]) * 0.006);
    last = [e.clientX, e.clientY];
  });
  canvas.addEventListener('pointerup', () => { last = null; });
  canvas.addEventListener('wheel', (e) => { e.preventDefault(); camera.zoom(Math.exp(e.deltaY * 0.001)); }, { passive: false });
}

async function play() {
  $('player').classList.remove('hidden');
  $('title').textContent = name;
  // a segment's frames are decoded at once, by the server's decoder as WebAssembly
  const makeDecoder = await loadWasmDecoder(new URL('../../vendor/fc/frame_codec.wasm', import.meta.url));
  if (!makeDecoder) throw new Error('the frame decoder (vendor/fc/frame_codec.wasm, built by make web-client-wasm) did not load');
  const p = await new Player(name, { fetchBytes, fetchJson, makeDecoder }).open();
  if (query.get('t')) { p.seek(Number(query.get('t'))); await p.ensure(p.t); }
  const canvas = $('view'), camera = new OrbitCamera(), renderer = new Renderer(canvas);
  renderer.setWorld(p.hello);
  camera.fit(p.hello.bounds);
  wireTransport(p);
  wireCamera(canvas, camera);
  window.__replay = p; // for tests
  let prev = performance.now();
  const frame = (now) => {
    requestAnimationFrame(frame);
    p.tick((now - prev) / 1000);
    prev = now;
    p.ensure(p.t).catch((e) => { $('status').textContent = String(e.message || e); });
    const w = canvas.clientWidth, h = canvas.clientHeight;
    renderer.resize(w, h);
    camera.setAspect(w / Math.max(1, h));
    const s = p.sample();
    if (!s) return;
    renderer.uploadPair(s.a, s.b);
    const dts = s.b.time - s.a.time;
    const colour = document.querySelector('input[name=colour]:checked').value;
    const mode = document.querySelector('input[name=mode]:checked').value;
    renderer.draw(camera, { alpha: s.alpha, invDt: dts > 1e-6 ? 1 / dts : 0, colorMode: colour, speedMax: 3, mode, markers: [],
      bodies: interpolateBodies(s.a.f.bodies, s.b.f.bodies, s.alpha), holderColour: () => [1, 1, 1] });
    $('scrub').value = p.t;
    $('time').textContent = `${(p.t - p.start).toFixed(2)} / ${(p.end - p.start).toFixed(2)} s · ${s.b.f.n} particles`;
    $('play').textContent = p.playing ? 'Pause' : 'Play';
    $('status').textContent = p.damage.length ? `played up to damage: ${p.damage[0]}` : '';
  };
  requestAnimationFrame(frame);
}

(name ? play() : listRecordings()).catch((e) => { $('status').textContent = `cannot replay: ${e.message || e}`; });
