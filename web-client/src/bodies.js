// bodies.js - rigid bodies from the frames: interpolation between two
// frames (matched by id), their model matrices and ray picking.  Pure.
import { vec3 } from './math.js';

// Normalised-lerp of unit quaternions (w, x, y, z), taking the short way.
export function nlerpQuat(a, b, t) {
  const d = a[0] * b[0] + a[1] * b[1] + a[2] * b[2] + a[3] * b[3];
  const s = d < 0 ? -1 : 1;
  const q = [0, 1, 2, 3].map((i) => a[i] + (s * b[i] - a[i]) * t);
  const l = Math.hypot(...q) || 1;
  return q.map((x) => x / l);
}

// The bodies of frame b, each moved back toward where it was in frame a.
export function interpolateBodies(a, b, t) {
  if (!b?.length) return [];
  const byId = new Map((a || []).map((x) => [x.id, x]));
  return b.map((x) => {
    const p = byId.get(x.id);
    if (!p || t >= 1) return x;
    return { ...x, pos: vec3.lerp(p.pos, x.pos, t), rot: nlerpQuat(p.rot, x.rot, t) };
  });
}

// Rotation matrix (row-major 3x3 as [r00, r01, r02, r10, ...]) of a quaternion.
export function quatToMat3(q) {
  const [w, x, y, z] = q;
  return [
    1 - 2 * (y * y + z * z), 2 * (x * y - w * z), 2 * (x * z + w * y),
    2 * (x * y + w * z), 1 - 2 * (x * x + z * z), 2 * (y * z - w * x),
    2 * (x * z - w * y), 2 * (y * z + w * x), 1 - 2 * (x * x + y * y),
  ];
}

// Column-major 4x4 model matrix: translate(pos) * rotate(rot) * scale(s).
export function modelMatrix(pos, rot, s) {
  const r = quatToMat3(rot);
  const m = new Float32Array(16);
  for (let c = 0; c < 3; c++) for (let row = 0; row < 3; row++) m[c * 4 + row] = r[row * 3 + c] * s[c];
  m[12] = pos[0]; m[13] = pos[1]; m[14] = pos[2]; m[15] = 1;
  return m;
}

// World -> body-local (rotation only, about pos).
function toLocal(body, p) {
  const r = quatToMat3(body.rot);
  const d = vec3.sub(p, body.pos);
  return [r[0] * d[0] + r[3] * d[1] + r[6] * d[2], r[1] * d[0] + r[4] * d[1] + r[7] * d[2], r[2] * d[0] + r[5] * d[1] + r[8] * d[2]];
}
function dirToLocal(body, d) {
  const r = quatToMat3(body.rot);
  return [r[0] * d[0] + r[3] * d[1] + r[6] * d[2], r[1] * d[0] + r[4] * d[1] + r[7] * d[2], r[2] * d[0] + r[5] * d[1] + r[8] * d[2]];
}

function raySphereT(o, d, c, r) {
  const oc = vec3.sub(o, c);
  const b = vec3.dot(oc, d), cc = vec3.dot(oc, oc) - r * r;
  const disc = b * b - cc;
  if (disc < 0) return null;
  const t = -b - Math.sqrt(disc);
  return t >= 0 ? t : (-b + Math.sqrt(disc) >= 0 ? 0 : null);
}

// Distance along the ray to the body's surface, or null.
export function rayBody(ray, body) {
  const o = toLocal(body, ray.origin), d = dirToLocal(body, ray.dir);
  const s = body.size;
  if (body.shape === 'sphere') return raySphereT(o, d, [0, 0, 0], s[0]);
  if (body.shape === 'box' || body.shape === 'mesh') { // a mesh body is picked by its box
    let t0 = 0, t1 = Infinity;
    for (let a = 0; a < 3; a++) {
      const inv = 1 / d[a];
      let ta = (-s[a] - o[a]) * inv, tb = (s[a] - o[a]) * inv;
      if (ta > tb) [ta, tb] = [tb, ta];
      t0 = Math.max(t0, ta); t1 = Math.min(t1, tb);
      if (t0 > t1) return null;
    }
    return t0;
  }
  if (body.shape === 'capsule') {
    // Nearest of: the two end spheres and the cylinder between them (local y axis).
    const r = s[0], hl = s[1];
    let best = null;
    for (const cy of [-hl, hl]) { const t = raySphereT(o, d, [0, cy, 0], r); if (t !== null && (best === null || t < best)) best = t; }
    const a = d[0] * d[0] + d[2] * d[2];
    if (a > 1e-12) {
      const b = o[0] * d[0] + o[2] * d[2], c = o[0] * o[0] + o[2] * o[2] - r * r;
      const disc = b * b - a * c;
      if (disc >= 0) {
        const t = (-b - Math.sqrt(disc)) / a;
        const y = o[1] + t * d[1];
        if (t >= 0 && Math.abs(y) <= hl && (best === null || t < best)) best = t;
      }
    }
    return best;
  }
  return null;
}

// The nearest body the ray hits: {body, t, point} or null.
export function pickBody(ray, bodies) {
  let best = null;
  for (const b of bodies || []) {
    const t = rayBody(ray, b);
    if (t !== null && (!best || t < best.t)) best = { body: b, t };
  }
  if (best) best.point = vec3.add(ray.origin, vec3.scale(ray.dir, best.t));
  return best;
}
