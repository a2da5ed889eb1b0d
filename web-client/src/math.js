// math.js - the small amount of vector / matrix maths the client needs.
// Matrices are column-major Float32Array(16), as WebGL expects.

export const vec3 = {
  add: (a, b) => [a[0] + b[0], a[1] + b[1], a[2] + b[2]],
  sub: (a, b) => [a[0] - b[0], a[1] - b[1], a[2] - b[2]],
  scale: (a, s) => [a[0] * s, a[1] * s, a[2] * s],
  dot: (a, b) => a[0] * b[0] + a[1] * b[1] + a[2] * b[2],
  cross: (a, b) => [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]],
  len: (a) => Math.hypot(a[0], a[1], a[2]),
  norm(a) { const l = Math.hypot(a[0], a[1], a[2]); return l > 0 ? [a[0] / l, a[1] / l, a[2] / l] : [0, 0, 0]; },
  lerp: (a, b, t) => [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t, a[2] + (b[2] - a[2]) * t],
};

export function perspective(fovy, aspect, near, far) {
  const f = 1 / Math.tan(fovy / 2), nf = 1 / (near - far);
  const m = new Float32Array(16);
  m[0] = f / aspect; m[5] = f; m[10] = (far + near) * nf; m[11] = -1; m[14] = 2 * far * near * nf;
  return m;
}

export function lookAt(eye, target, up) {
  const z = vec3.norm(vec3.sub(eye, target));
  let x = vec3.cross(up, z);
  if (vec3.len(x) < 1e-9) x = vec3.cross([0, 0, 1], z);
  x = vec3.norm(x);
  const y = vec3.cross(z, x);
  const m = new Float32Array(16);
  m[0] = x[0]; m[4] = x[1]; m[8] = x[2];
  m[1] = y[0]; m[5] = y[1]; m[9] = y[2];
  m[2] = z[0]; m[6] = z[1]; m[10] = z[2];
  m[12] = -vec3.dot(x, eye); m[13] = -vec3.dot(y, eye); m[14] = -vec3.dot(z, eye); m[15] = 1;
  return m;
}

export function multiply(a, b) {
  const o = new Float32Array(16);
  for (let c = 0; c < 4; c++)
    for (let r = 0; r < 4; r++) {
      let s = 0;
      for (let k = 0; k < 4; k++) s += a[k * 4 + r] * b[c * 4 + k];
      o[c * 4 + r] = s;
    }
  return o;
}

// The inverse by cofactors, inv = adj(m) / det(m); null when m is singular.
export function invert(m) {
  const at = (c, r) => m[c * 4 + r];
  // The cofactor of the element in column c, row r.
  const cofactor = (c0, r0) => {
    const cs = [0, 1, 2, 3].filter((c) => c !== c0), rs = [0, 1, 2, 3].filter((r) => r !== r0);
    const e = (i, j) => at(cs[i], rs[j]);
    const minor = e(0, 0) * (e(1, 1) * e(2, 2) - e(1, 2) * e(2, 1)) - e(1, 0) * (e(0, 1) * e(2, 2) - e(0, 2) * e(2, 1))
      + e(2, 0) * (e(0, 1) * e(1, 2) - e(0, 2) * e(1, 1));
    return (c0 + r0) & 1 ? -minor : minor;
  };
  let det = 0;
  for (let c = 0; c < 4; c++) det += at(c, 0) * cofactor(c, 0);
  if (!det) return null;
  const inv = new Float32Array(16);
  for (let c = 0; c < 4; c++) for (let r = 0; r < 4; r++) inv[c * 4 + r] = cofactor(r, c) / det;
  return inv;
}

// Transforms a point by m and divides by w.
export function project(m, p) {
  const x = m[0] * p[0] + m[4] * p[1] + m[8] * p[2] + m[12];
  const y = m[1] * p[0] + m[5] * p[1] + m[9] * p[2] + m[13];
  const z = m[2] * p[0] + m[6] * p[1] + m[10] * p[2] + m[14];
  const w = m[3] * p[0] + m[7] * p[1] + m[11] * p[2] + m[15];
  return [x / w, y / w, z / w, w];
}

export const clamp = (x, lo, hi) => (x < lo ? lo : x > hi ? hi : x);
