// picking.js - rays against planes and particles, and the push direction of
// a drag.  Pure.
import { vec3 } from './math.js';

// Ray {origin, dir} against the plane through `point` with normal `n`;
// returns the hit point or null (parallel, or behind the origin).
export function rayPlane(ray, point, n) {
  const d = vec3.dot(ray.dir, n);
  if (Math.abs(d) < 1e-9) return null;
  const t = vec3.dot(vec3.sub(point, ray.origin), n) / d;
  if (t < 0) return null;
  return { t, point: vec3.add(ray.origin, vec3.scale(ray.dir, t)) };
}

// The first particle of frame f (decode.frameView) along the ray within
// `radius` of it: {t, point, index} or null.  A linear scan over the
// quantized positions (about 1 ms at 100k particles).
export function rayParticles(ray, f, radius) {
  const b = f.bounds, p = f.pos, n = f.n, s = 1 / 65535;
  const sx = (b[3] - b[0]) * s, sy = (b[4] - b[1]) * s, sz = (b[5] - b[2]) * s;
  const [ox, oy, oz] = ray.origin, [dx, dy, dz] = ray.dir;
  const r2 = radius * radius;
  let best = Infinity, bi = -1;
  for (let i = 0; i < n; i++) {
    const px = b[0] + p[3 * i] * sx - ox, py = b[1] + p[3 * i + 1] * sy - oy, pz = b[2] + p[3 * i + 2] * sz - oz;
    const t = px * dx + py * dy + pz * dz;
    if (t <= 0 || t >= best) continue;
    const d2 = px * px + py * py + pz * pz - t * t;
    if (d2 <= r2) { best = t - Math.sqrt(r2 - d2); bi = i; }
  }
  if (bi < 0) return null;
  return { t: best, index: bi, point: vec3.add(ray.origin, vec3.scale(ray.dir, best)) };
}

// Ray against an axis-aligned box: the entry distance or null.
export function rayBox(ray, b) {
  let t0 = 0, t1 = Infinity;
  for (let a = 0; a < 3; a++) {
    const inv = 1 / ray.dir[a];
    let ta = (b[a] - ray.origin[a]) * inv, tb = (b[a + 3] - ray.origin[a]) * inv;
    if (ta > tb) [ta, tb] = [tb, ta];
    t0 = Math.max(t0, ta); t1 = Math.min(t1, tb);
    if (t0 > t1) return null;
  }
  return { t0, t1 };
}

// Where a pointer ray meets the fluid: the first particle it passes within
// `radius` of, else the plane facing the camera through the fluid's centre.
// Returns {point, onFluid} or null.
export function pickFluid(ray, f, radius, centre, camForward) {
  const hit = f && f.n ? rayParticles(ray, f, radius) : null;
  if (hit) return { point: hit.point, onFluid: true, t: hit.t };
  const pl = rayPlane(ray, centre, camForward);
  return pl ? { point: pl.point, onFluid: false, t: pl.t } : null;
}

// The world-space motion of a drag from ray0 to ray1 at the depth of `at`
// (on the plane facing the camera through `at`): a vector, or null.
export function dragVector(ray0, ray1, at, camForward) {
  const a = rayPlane(ray0, at, camForward), b = rayPlane(ray1, at, camForward);
  if (!a || !b) return null;
  return vec3.sub(b.point, a.point);
}

export function clampToBox(p, b) {
  return [Math.min(Math.max(p[0], b[0]), b[3]), Math.min(Math.max(p[1], b[1]), b[4]), Math.min(Math.max(p[2], b[2]), b[5])];
}
