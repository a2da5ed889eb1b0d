// toolbox.js - the tools together: routes the pointer (Input's onPush*) to
// the current one (push, or carry when the drag starts on a body; heat /
// cool), ticks them each animation frame, hands the server's limits to each
// and lists the markers drawn under the pointer (the cursor sphere and the
// tool's radius ring).
// page: {conn, camera, panel, renderer, myId, myColour, shownBodies, ray(ndc),
// pickRay(ray), pick(ndc), forward, bounds(), toast(text, err)}.
import { pickBody } from '../bodies.js';
import { hexColour } from '../renderer/renderer.js';
import { PushTool } from './push.js';
import { GrabTool } from './grab.js';
import { HeatControl } from './heat.js';
import { CursorTool } from './cursor.js';

export const isHeatTool = (t) => t === 'heat' || t === 'cool';

export class Toolbox {
  constructor(page) {
    this.page = page;
    this.cursor = new CursorTool(page);
    this.push = new PushTool();
    this.grab = new GrabTool(page);
    this.heat = new HeatControl(page);
  }

  // The server's limits (readLimits of a hello).
  setLimits(limits) {
    this.push.setLimits(limits);
    this.heat.tool.setLimits(limits);
  }

  // Input's handlers.
  handlers() {
    return {
      tool: () => this.page.panel.tool,
      onHover: (ndc) => this.cursor.hover(ndc),
      onPushStart: (ndc) => this._start(ndc),
      onPushMove: (ndc) => { this.push.move(ndc); this.grab.move(ndc); this.heat.ndc = ndc; },
      onPushEnd: () => { this.push.end(); this.grab.end(); this.heat.end(); },
    };
  }

  _start(ndc) {
    const { panel, conn, camera, myId } = this.page;
    if (isHeatTool(panel.tool)) { this.heat.start(ndc, panel.tool === 'cool' ? -1 : 1); return; }
    const hit = conn.connected ? pickBody(camera.ray(ndc[0], ndc[1]), this.page.shownBodies) : null;
    if (hit && !hit.body.static && (!hit.body.grabbed_by || hit.body.grabbed_by === myId)) { this.grab.start(hit, ndc); return; }
    this.push.begin(ndc, performance.now());
  }

  // Every animation frame: the cursor (20 a second), the push (30 a second)
  // and the carried body (30 a second).
  tick(now) {
    const { conn, panel } = this.page;
    if (!conn.connected) return;
    this.cursor.tick(now);
    const c = this.push.tick(now, this.page, panel.pushRadius, panel.pushStrength);
    if (c) conn.send(c).then((r) => { if (!r.ok) this.page.toast(`push: ${r.error}`, true); });
    this.grab.tick(now);
  }

  // The markers under this page's pointer and the others' cursors:
  // [{pos, colour, radius, ring?, alpha?}] for the renderer.
  markers() {
    const { panel, renderer, myId, myColour } = this.page;
    const out = [];
    const r = Math.max(0.05, 1.6 * renderer.radius);
    for (const c of this.page.cursors) if (c.id !== myId && c.pos) out.push({ pos: c.pos, colour: hexColour(c.colour), radius: r });
    const pos = this.cursor.marker;
    if (!pos) return out;
    out.push({ pos, colour: hexColour(myColour), radius: r });
    if (panel.tool === 'push') out.push({ pos, colour: hexColour(myColour), radius: panel.pushRadius, ring: true, alpha: 0.35 });
    else if (isHeatTool(panel.tool)) {
      const on = this.heat.tool.active;
      out.push({ pos, colour: panel.tool === 'cool' ? [0.3, 0.6, 1] : [1, 0.45, 0.1], radius: panel.heatRadius, ring: true, alpha: on ? 0.6 : 0.35 });
    }
    return out;
  }
}
