// hooks.js - `window.__fluid`: the page's state for the browser tests
// (tests/web/e2e) and the benchmark (tests/bench/bench_web.mjs), read-only but
// for the objects it hands out (camera, panel, conn, renderer).
import { benchUpload } from './bench_hook.js';
import { project } from './math.js';

export function installHooks(page, { toolbox, hud }) {
  const { conn, panel, camera } = page;
  window.__fluid = {
    get clientId() { return page.myId; },
    get connected() { return conn.connected; },
    get frames() { return page.framesReceived; },
    get particles() { return page.newest ? page.newest.f.n : null; },
    get tick() { return page.newest ? page.newest.f.tick : null; },
    get bodies() { return page.newest ? page.newest.f.bodies : []; },
    get cursors() { return page.cursors.map((c) => ({ id: c.id, colour: c.colour, pos: c.pos })); },
    get fps() { return hud.fps; },
    get bytesIn() { return conn.bytesIn; },
    get lastRtt() { return conn.lastRtt; },
    get hello() { return page.hello; },
    get moves() { return page.moves.slice(); },
    // The obstacles: listed by the server, drawn by the last frame, meshes fetched, uploads placed, the last refusal.
    get obstacles() {
      const o = page.obstacles, m = o.meshes;
      return { listed: m.list.length, ids: m.list.map((x) => x.id), version: m.version, drawn: page.renderer.obstaclesDrawn,
        held: m.meshes.size, fetches: m.fetches, uploads: o.uploads, lastError: o.lastError };
    },
    get wsUrl() { return page.conn.url; },
    get limits() { return page.limits; },
    get colour() { return panel.colour; },
    get solver() {
      const s = panel.solver;
      return { current: s.current, options: s.options.slice(), shown: s.shown, pending: s.pending, by: s.by, tick: s.tick, lastReply: s.lastReply,
        params: s.paramSet ? [...s.paramSet] : null };
    },
    get heat() {
      const h = toolbox.heat, t = h.tool;
      return { active: t.active, sent: t.sent, sign: t.sign, lastPoint: t.lastPoint, lastReply: h.lastReply };
    },
    // The newest frame's temperature bytes, as °C.
    temperatures() { const f = page.newest?.f; return f?.temp ? Array.from(f.temp, (b) => f.tempLo + b) : null; },
    rates: () => page.stats.rates(performance.now()),
    timings: () => ({ decode: page.decodeRing.summary(), main: page.mainRing.summary(), upload: page.uploadRing.summary(), inWorker: page.decoder.inWorker, decoder: page.decoder.decoder, keyframes: page.decoder.keys, refused: page.decoder.refused, pace: page.decoder.pacer.stride, arrivalMs: page.decoder.pacer.spacing() }),
    project: (p) => project(camera.viewProj, p),
    camera, panel, conn,
    get renderer() { return page.renderer; },
    // Decodes the newest frame's bytes again and uploads it, k times (bench_hook.js).
    benchUpload: (k = 200) => benchUpload(page.renderer, page.lastFrameBytes, page.newest?.f, k),
  };
}
