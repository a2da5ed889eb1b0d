// meshes.js - unit meshes for rigid bodies: interleaved position + normal.

// A UV sphere of radius 1 with an odd number of stacks, so that no vertex
// lies on the equator: the capsule shader pushes the upper half up and the
// lower half down, stretching the middle band into the cylinder.
export function sphereMesh(stacks = 17, slices = 24) {
  const v = [];
  const idx = [];
  for (let i = 0; i <= stacks; i++) {
    const th = (i / stacks) * Math.PI;
    for (let j = 0; j <= slices; j++) {
      const ph = (j / slices) * 2 * Math.PI;
      const x = Math.sin(th) * Math.cos(ph), y = Math.cos(th), z = Math.sin(th) * Math.sin(ph);
      v.push(x, y, z, x, y, z);
    }
  }
  for (let i = 0; i < stacks; i++)
    for (let j = 0; j < slices; j++) {
      const a = i * (slices + 1) + j, b = a + slices + 1;
      idx.push(a, a + 1, b, a + 1, b + 1, b);
    }
  return { data: new Float32Array(v), index: new Uint16Array(idx) };
}

// A cube [-1, 1]^3 with flat normals.
export function cubeMesh() {
  const v = [], idx = [];
  const faces = [[0, 1], [0, -1], [1, 1], [1, -1], [2, 1], [2, -1]];
  for (const [axis, sgn] of faces) {
    const u = (axis + 1) % 3, w = (axis + 2) % 3;
    const base = v.length / 6;
    for (const [a, b] of [[-1, -1], [1, -1], [1, 1], [-1, 1]]) {
      const p = [0, 0, 0], n = [0, 0, 0];
      p[axis] = sgn; p[u] = a; p[w] = b * sgn;
      n[axis] = sgn;
      v.push(...p, ...n);
    }
    idx.push(base, base + 1, base + 2, base, base + 2, base + 3);
  }
  return { data: new Float32Array(v), index: new Uint16Array(idx) };
}
