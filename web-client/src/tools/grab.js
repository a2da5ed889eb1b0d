// grab.js - carrying a rigid body: a drag that starts on a body grabs it
// (body_grab), moves it on the plane facing the camera through the grab point
// (body_drag, at most 30 a second, answered only when refused) and lets go
// with a throw when the pointer goes up (body_release).
// page: {conn, camera, bounds(), toast(text, err)}.
import { cmd } from '../protocol.js';
import { clampToBox } from '../picking.js';
import { vec3 } from '../math.js';

export class GrabTool {
  constructor(page) {
    this.page = page;
    this.id = null;          // the body held, or null
    this.plane = null;       // the grab point: the drag plane passes through it
    this.ndc = null;
    this.lastSend = 0;
    this.pending = false;    // body_grab sent, not answered yet
  }

  start(hit, ndc) {
    const id = hit.body.id;
    Object.assign(this, { id, plane: hit.point, ndc, lastSend: performance.now(), pending: true });
    this.page.conn.send(cmd.bodyGrab(id, hit.point, hit.point)).then((r) => {
      this.pending = false;
      if (!r.ok) { this.page.toast(`grab: ${r.error}`, true); if (this.id === id) this.id = null; }
    });
  }

  move(ndc) { this.ndc = ndc; }

  end() {
    if (this.id === null) return;
    const id = this.id;
    this.id = null;
    this.page.conn.send(cmd.bodyRelease(id)).then((r) => {
      // conflict: another client holds it, or this one no longer does (nothing to say)
      if (!r.ok && r.code !== 'conflict') this.page.toast(`release: ${r.error}`, true);
    });
  }

  // A body_drag the server refused (it answers those only then).
  refused(error) { this.id = null; this.page.toast(`carry: ${error}`, true); }

  tick(now) {
    if (this.id === null || !this.ndc || now - this.lastSend < 33) return;
    const { camera } = this.page;
    const hit = rayPlaneFacing(camera.ray(this.ndc[0], this.ndc[1]), this.plane, camera.forward);
    if (!hit) return;
    this.page.conn.send(cmd.bodyDrag(this.id, clampToBox(hit, this.page.bounds())));
    this.lastSend = now;
  }
}

// Ray against the plane through `at` with normal n (the camera's forward).
function rayPlaneFacing(ray, at, n) {
  const d = vec3.dot(ray.dir, n);
  if (Math.abs(d) < 1e-6) return null;
  const t = vec3.dot(vec3.sub(at, ray.origin), n) / d;
  return t > 0 ? vec3.add(ray.origin, vec3.scale(ray.dir, t)) : null;
}
