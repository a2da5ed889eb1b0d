// view.js - the draw loop: fits the canvas to the window, samples the
// playback timeline, uploads and draws the pair of frames around the sample
// (with interpolated bodies, the tools' markers and everyone's name labels),
// and rebuilds the renderer when a lost WebGL context comes back.
// page: {conn, camera, renderer, panel, timeline, uploadRing, hello, newest,
// cursors, myId, myColour, shownBodies}.
import { Renderer, hexColour } from './renderer/renderer.js';
import { interpolateBodies } from './bodies.js';
import { showBanner, hideBanner } from './ui/messages.js';

const $ = (id) => document.getElementById(id);

export class DrawLoop {
  // toolbox: tick(now), markers(); hud: frameDrawn(now); presence: update(...)
  constructor(page, canvas, { toolbox, hud, presence }) {
    Object.assign(this, { page, canvas, toolbox, hud, presence });
    this.contextLost = false;
    this.holderColour = (id) => {
      if (id === page.myId) return hexColour(page.myColour);
      const c = page.cursors.find((x) => x.id === id);
      return c ? hexColour(c.colour) : [1, 1, 1];
    };
    canvas.addEventListener('webglcontextlost', (e) => {
      e.preventDefault();
      this.contextLost = true;
      showBanner('The graphics context was lost; waiting for it to come back…', false);
    });
    canvas.addEventListener('webglcontextrestored', () => this._restore());
  }

  start() { requestAnimationFrame((t) => this.frame(t)); }

  // A lost WebGL context (driver reset, too many contexts) comes back by
  // itself: rebuild the renderer on the restored context and carry on.
  _restore() {
    const page = this.page;
    try {
      page.renderer = new Renderer(this.canvas);
      if (page.hello) page.renderer.setWorld(page.hello);
      if (page.newest) page.renderer.bounds = page.newest.f.bounds;
      this.contextLost = false;
      hideBanner();
    } catch (err) { showBanner(`Cannot draw: ${err.message}`, true); }
  }

  _resize() {
    const { canvas } = this, { camera, renderer } = this.page;
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

  frame(now) {
    requestAnimationFrame((t) => this.frame(t));
    if (this.contextLost) return;
    const page = this.page, { camera, panel } = page;
    this._resize();
    this.toolbox.tick(now);
    const s = page.timeline.sample(now);
    let alpha = 1, invDt = 0, bodies = [];
    if (s) {
      const t0 = performance.now();
      page.renderer.setDetail(s.b.f.lod);
      const bytes = page.renderer.uploadPair(s.a, s.b);
      if (bytes) page.uploadRing.add(performance.now() - t0);
      alpha = s.alpha;
      const dts = s.b.f.time - s.a.f.time;
      invDt = dts > 1e-6 ? 1 / dts : 0;
      bodies = interpolateBodies(s.a.f.bodies, s.b.f.bodies, alpha);
    }
    page.shownBodies = bodies;
    page.renderer.draw(camera, { alpha, invDt, colorMode: panel.colour, speedMax: panel.speedMax, mode: panel.mode,
      markers: this.toolbox.markers(), bodies, holderColour: this.holderColour });
    const labelled = page.cursors.filter((c) => c.id !== page.myId);
    const own = this.toolbox.cursor.marker;
    if (own) labelled.push({ id: page.myId, colour: page.myColour, pos: own, own: true });
    this.presence.update(labelled, camera.viewProj, this.canvas.clientWidth, this.canvas.clientHeight);
    this.hud.frameDrawn(now);
  }
}
