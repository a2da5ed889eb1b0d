// obstacle_mesh.js - the obstacles' meshes on the page: decodes the server's
// quantized placed mesh (PROTOCOL.md, "Obstacles on the page"; GET
// /api/obstacles/{id}/mesh), checks its content hash, turns it into flat
// shaded triangles, and keeps the meshes by hash so that a mesh the page
// holds is not fetched again.  No DOM, no WebGL: the renderer draws what
// `ObstacleMeshes.drawable()` hands it.

export const MAGIC = 'FSOM';
export const HEAD = 48;
export const QMAX = 65535;
const HASH_AT = 40;

// FNV-1a, 64 bits, over every byte but the hash's own eight (bytes 40..47),
// as 16 lowercase hex digits.  In two 32-bit halves: h * p with
// p = 2^40 + 0x1b3 is h * 0x1b3 + (h << 40) modulo 2^64.
export function meshHash(bytes) {
  let lo = 0x84222325, hi = 0xcbf29ce4;
  for (let i = 0; i < bytes.length; i++) {
    if (i >= HASH_AT && i < HASH_AT + 8) continue;
    const x = (lo ^ bytes[i]) >>> 0;
    const t = x * 0x1b3; // < 2^41: exact
    lo = t >>> 0;
    hi = (Math.imul(hi, 0x1b3) + Math.floor(t / 4294967296) + (x << 8)) >>> 0;
  }
  return hi.toString(16).padStart(8, '0') + lo.toString(16).padStart(8, '0');
}

// The bytes of one encoded mesh (ArrayBuffer or Uint8Array) decoded:
// { hash, vertexCount, triangleCount, lo, hi, step [3], positions
// (Float32Array, 3 per vertex, metres), indices (Uint16Array or Uint32Array) }.
// Throws on bytes that are not one: a wrong magic or version, a length that
// does not match the counts, an index past the vertices, a hash that does not
// match the bytes.
export function decodeObstacleMesh(buf) {
  const u8 = buf instanceof Uint8Array ? buf : new Uint8Array(buf);
  if (u8.length < HEAD) throw new Error(`obstacle mesh: ${u8.length} bytes, shorter than its ${HEAD}-byte head`);
  const dv = new DataView(u8.buffer, u8.byteOffset, u8.byteLength);
  const magic = String.fromCharCode(u8[0], u8[1], u8[2], u8[3]);
  if (magic !== MAGIC) throw new Error(`obstacle mesh: magic '${magic}', not '${MAGIC}'`);
  const version = dv.getUint16(4, true), flags = dv.getUint16(6, true);
  if (version !== 1) throw new Error(`obstacle mesh: version ${version}, this page reads 1`);
  const nv = dv.getUint32(8, true), nt = dv.getUint32(12, true);
  const wide = (flags & 1) !== 0;
  const lo = [0, 1, 2].map((k) => dv.getFloat32(16 + 4 * k, true));
  const hi = [0, 1, 2].map((k) => dv.getFloat32(28 + 4 * k, true));
  const posEnd = (HEAD + 6 * nv + 3) & ~3;
  const want = posEnd + 3 * nt * (wide ? 4 : 2);
  if (u8.length !== want) throw new Error(`obstacle mesh: ${u8.length} bytes, ${nv} vertices and ${nt} triangles take ${want}`);
  const hash = dv.getUint32(HASH_AT + 4, true).toString(16).padStart(8, '0') + dv.getUint32(HASH_AT, true).toString(16).padStart(8, '0');
  const got = meshHash(u8);
  if (got !== hash) throw new Error(`obstacle mesh: the bytes hash to ${got}, the head says ${hash}`);
  const step = [0, 1, 2].map((k) => (hi[k] - lo[k]) / QMAX);
  const positions = new Float32Array(3 * nv);
  for (let i = 0; i < 3 * nv; i++) positions[i] = lo[i % 3] + dv.getUint16(HEAD + 2 * i, true) * step[i % 3];
  const indices = wide ? new Uint32Array(3 * nt) : new Uint16Array(3 * nt);
  for (let i = 0; i < 3 * nt; i++) {
    const v = wide ? dv.getUint32(posEnd + 4 * i, true) : dv.getUint16(posEnd + 2 * i, true);
    if (v >= nv) throw new Error(`obstacle mesh: index ${v} of triangle ${Math.floor(i / 3)} past its ${nv} vertices`);
    indices[i] = v;
  }
  return { hash, vertexCount: nv, triangleCount: nt, lo, hi, step, positions, indices };
}

// Flat shading: every triangle its own three vertices, interleaved position
// and unit face normal (6 floats a vertex, as the renderer's body meshes).
// A degenerate triangle (after quantization) gets a zero normal.
export function flatTriangles(mesh) {
  const { positions: p, indices: ix, triangleCount: nt } = mesh;
  const out = new Float32Array(nt * 18);
  for (let t = 0; t < nt; t++) {
    const a = 3 * ix[3 * t], b = 3 * ix[3 * t + 1], c = 3 * ix[3 * t + 2];
    const ux = p[b] - p[a], uy = p[b + 1] - p[a + 1], uz = p[b + 2] - p[a + 2];
    const vx = p[c] - p[a], vy = p[c + 1] - p[a + 1], vz = p[c + 2] - p[a + 2];
    let nx = uy * vz - uz * vy, ny = uz * vx - ux * vz, nz = ux * vy - uy * vx;
    const l = Math.hypot(nx, ny, nz);
    if (l > 0) { nx /= l; ny /= l; nz /= l; }
    let o = 18 * t;
    for (const v of [a, b, c]) {
      out[o++] = p[v]; out[o++] = p[v + 1]; out[o++] = p[v + 2];
      out[o++] = nx; out[o++] = ny; out[o++] = nz;
    }
  }
  return out;
}

// The obstacles the page shows and the meshes it holds, by hash.  `apply`
// takes an `obstacles` message (older versions than the last are ignored:
// a new viewer may be sent the list before a broadcast it already missed);
// `reset` comes with every hello.  Meshes the list names and the page lacks
// are fetched once each (fetchMesh(id) -> ArrayBuffer); a mesh no obstacle
// uses any more is dropped.  onChange() runs when what to draw changed.
export class ObstacleMeshes {
  constructor(fetchMesh, { onChange = () => {}, onError = () => {} } = {}) {
    this.fetchMesh = fetchMesh;
    this.onChange = onChange;
    this.onError = onError;
    this.list = [];          // [{ id, hash, bounds, triangles, vertices, closed }]
    this.version = -1;
    this.meshes = new Map(); // hash -> { mesh, flat }
    this.pending = new Map(); // hash -> promise
    this.fetches = 0;        // meshes fetched (a mesh the page held is not)
  }

  reset() { this.version = -1; }

  apply(msg) {
    if (!Array.isArray(msg.obstacles)) return false;
    if (typeof msg.version === 'number' && msg.version <= this.version) return false;
    this.version = typeof msg.version === 'number' ? msg.version : this.version;
    this.list = msg.obstacles.map((o) => ({ ...o }));
    const wanted = new Set(this.list.map((o) => o.hash));
    for (const h of [...this.meshes.keys()]) if (!wanted.has(h)) this.meshes.delete(h);
    for (const o of this.list) if (!this.meshes.has(o.hash) && !this.pending.has(o.hash)) this._fetch(o);
    this.onChange();
    return true;
  }

  async _fetch(o) {
    const p = (async () => {
      this.fetches++;
      const mesh = decodeObstacleMesh(await this.fetchMesh(o.id));
      if (mesh.hash !== o.hash) throw new Error(`obstacle ${o.id}: its mesh now hashes to ${mesh.hash}, the list said ${o.hash}`);
      return mesh;
    })();
    this.pending.set(o.hash, p);
    try {
      const mesh = await p;
      if (this.list.some((x) => x.hash === o.hash)) {
        this.meshes.set(o.hash, { mesh, flat: flatTriangles(mesh) });
        this.onChange();
      }
    } catch (e) {
      this.pending.delete(o.hash);
      // the obstacle went away meanwhile: not an error worth showing, but
      // another obstacle of the same mesh is asked for it
      if (this.list.some((x) => x.id === o.id && x.hash === o.hash)) this.onError(e);
      else {
        const other = this.list.find((x) => x.hash === o.hash);
        if (other) this._fetch(other);
      }
    } finally {
      if (this.pending.get(o.hash) === p) this.pending.delete(o.hash);
    }
  }

  // What to draw: one entry per listed obstacle whose mesh the page holds.
  drawable() {
    const out = [];
    for (const o of this.list) {
      const m = this.meshes.get(o.hash);
      if (m) out.push({ id: o.id, hash: o.hash, flat: m.flat, triangles: m.mesh.triangleCount });
    }
    return out;
  }
}
