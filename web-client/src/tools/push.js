// push.js - the push tool: a left drag on the fluid pushes it the way the
// pointer moves, harder the faster the drag, at most 30 commands a second;
// radius and strength are clamped to the server's limits (hello.limits; the
// protocol's until a hello arrives).  Pure: the caller passes the clock and
// the view (rays, picking, the box).
import { cmd } from '../protocol.js';
import { DEFAULT_LIMITS } from '../limits.js';
import { dragVector, clampToBox } from '../picking.js';
import { vec3, clamp } from '../math.js';

export const PUSH_GAP_MS = 33;

export class PushTool {
  constructor(limits = DEFAULT_LIMITS) {
    this.limits = limits;
    this.active = false;
    this.ndc = null;
    this.prevNdc = null;
    this.lastSend = 0;
  }

  // The server's limits (readLimits of a hello).
  setLimits(limits) { this.limits = limits; }

  begin(ndc, now) { Object.assign(this, { active: true, ndc, prevNdc: ndc, lastSend: now }); }
  move(ndc) { this.ndc = ndc; }
  end() { this.active = false; }

  // The command pushing at `point` along the unit `direction`, clamped to
  // the limits.
  command(point, direction, radius, strength) {
    const l = this.limits;
    return cmd.push(point, direction, Math.min(l.push_radius, Number(radius)), Math.min(l.push_strength, Number(strength)));
  }

  // The command to send now for the drag so far, or null (not dragging, too
  // soon, off the fluid, or the pointer has not moved).
  // view: {ray(ndc), pickRay(ray) -> {point}|null, forward, bounds()}.
  tick(now, view, radius, strength) {
    if (!this.active || !this.ndc || now - this.lastSend < PUSH_GAP_MS) return null;
    const ray1 = view.ray(this.ndc);
    const hit = view.pickRay(ray1);
    if (!hit) return null;
    const d = dragVector(view.ray(this.prevNdc), ray1, hit.point, view.forward);
    const len = d ? vec3.len(d) : 0;
    if (len <= 1e-4) return null;
    const dt = Math.max((now - this.lastSend) / 1000, 1 / 60);
    const k = clamp(len / dt / 2, 0.4, 3);          // faster drags push harder
    this.prevNdc = this.ndc;
    this.lastSend = now;
    return this.command(clampToBox(hit.point, view.bounds()), vec3.norm(d), radius, strength * k);
  }
}
