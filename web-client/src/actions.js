// actions.js - the panel's one-shot changes to the world: drop a body from
// above the box, remove the bodies nobody else holds, and this page's
// emitter (slot 7, a stream from the top of the box).
// page: {conn, panel, renderer, hello, newest, myId, shownBodies, bounds(), toast(text, err)}.
import { cmd } from './protocol.js';
import { vec3, clamp } from './math.js';

const USER_EMITTER_SLOT = 7;
const $ = (id) => document.getElementById(id);

// Drops a body from above the middle of the box, a little off-centre.
export async function dropBody(page, shape) {
  const b = page.bounds();
  if (!b) return;
  const sx = b[3] - b[0], sy = b[4] - b[1], sz = b[5] - b[2];
  const k = Math.min(sx, sy, sz);
  const r = clamp(0.08 * k, 0.08, 0.6);
  const size = shape === 'box' ? [r, 0.7 * r, 0.9 * r] : shape === 'capsule' ? [0.6 * r, 1.2 * r, 0] : [r, 0, 0];
  const pos = [b[0] + sx * (0.35 + 0.3 * Math.random()), b[1] + 0.8 * sy, b[2] + sz * (0.35 + 0.3 * Math.random())];
  const q = vec3.norm([Math.random() - 0.5, Math.random() - 0.5, Math.random() - 0.5]);
  const ang = Math.random() * Math.PI;
  const rot = [Math.cos(ang / 2), ...vec3.scale(q, Math.sin(ang / 2))];
  const r2 = await page.conn.send(cmd.bodyCreate(shape, size, pos, { rot, density: Number($('body-density').value) }));
  if (!r2.ok) page.toast(`add ${shape}: ${r2.error}`, true);
}

export async function clearBodies(page) {
  for (const bd of page.shownBodies) {
    if (bd.grabbed_by && bd.grabbed_by !== page.myId) continue;
    const r = await page.conn.send(cmd.bodyDestroy(bd.id));
    if (!r.ok) { page.toast(`remove: ${r.error}`, true); break; }
  }
}

export async function setEmitter(page, on) {
  const b = page.bounds();
  if (!b) return;
  let r;
  if (on) {
    const sy = b[4] - b[1];
    r = await page.conn.send(cmd.emitter(USER_EMITTER_SLOT, {
      pos: [(b[0] + b[3]) / 2, b[4] - 0.12 * sy, (b[2] + b[5]) / 2], direction: [0.15, -1, 0.1],
      speed: 1.5, radius: Math.max(0.1, 2.5 * page.renderer.spacing), rate: 800,
      cap: Math.min(page.hello.capacity, (page.newest?.f.n || 0) + 10000), material: page.panel.currentMaterial(), enabled: true,
    }));
  } else r = await page.conn.send(cmd.emitterEnable(USER_EMITTER_SLOT, false));
  if (!r.ok) { page.toast(`emitter: ${r.error}`, true); $('emitter').checked = !on; }
}
