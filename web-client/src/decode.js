// decode.js - server messages: msgpack decoding (with @msgpack/msgpack), the
// protocol version, id-run helpers and the id-matched re-ordering
// interpolation needs; a frame's particles are stream_v2.js's.  Pure: runs
// under node too.
import { decode } from '@msgpack/msgpack';

export const PROTOCOL_VERSION = 2;

// bytes: Uint8Array (a view of the WebSocket ArrayBuffer).  Throws on bad msgpack.
export function decodeMessage(bytes) {
  const m = decode(bytes);
  if (m === null || typeof m !== 'object' || Array.isArray(m) || typeof m.type !== 'string')
    throw new Error('message is not a map with a type');
  return m;
}

// Sum of run lengths (must equal n).
export function runsCount(runs) {
  let c = 0;
  for (let r = 1; r < runs.length; r += 2) c += runs[r];
  return c;
}

// Expands id runs [(first, count)...] into the list of ids.
export function expandRuns(runs, out) {
  const n = runsCount(runs);
  out = out && out.length >= n ? out : new Uint32Array(n);
  let k = 0;
  for (let r = 0; r < runs.length; r += 2)
    for (let i = 0, first = runs[r], c = runs[r + 1]; i < c; i++) out[k++] = first + i;
  return out;
}

export function runsEqual(a, b) {
  if (a === b) return true;
  if (!a || !b || a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

// Writes into `out` (k·n values) the positions of frame A re-ordered into
// frame B's id order: a particle present in both gets A's position, a
// particle only in B (just emitted) gets B's own position.  Works run by run
// (copies of contiguous slices), so it costs O(runs + n) with no per-id search.
// Returns the number of particles matched.  `k` values per particle (3 for
// positions, 1 for the temperature bytes).
export function remapByIds(runsA, posA, runsB, posB, out, k = 3) {
  let ra = 0, ia = 0;             // run index in A, particle index of that run's start
  let matched = 0;
  let ib = 0;                     // particle index in B
  for (let rb = 0; rb < runsB.length; rb += 2) {
    let id = runsB[rb];
    const end = id + runsB[rb + 1];
    while (id < end) {
      // Skip A runs entirely below id.
      while (ra < runsA.length && runsA[ra] + runsA[ra + 1] <= id) { ia += runsA[ra + 1]; ra += 2; }
      if (ra >= runsA.length || runsA[ra] >= end) {          // nothing of A in the rest of this run
        const c = end - id;
        out.set(posB.subarray(k * ib, k * (ib + c)), k * ib);
        ib += c; id = end;
        continue;
      }
      const aFirst = runsA[ra];
      if (aFirst > id) {                                     // ids [id, aFirst) are new in B
        const c = aFirst - id;
        out.set(posB.subarray(k * ib, k * (ib + c)), k * ib);
        ib += c; id = aFirst;
        continue;
      }
      // id lies in A's run: copy the overlap.
      const aEnd = aFirst + runsA[ra + 1];
      const c = Math.min(aEnd, end) - id;
      const srcA = ia + (id - aFirst);
      out.set(posA.subarray(k * srcA, k * (srcA + c)), k * ib);
      matched += c; ib += c; id += c;
    }
  }
  return matched;
}

// Dequantizes particle i of a frame into out[0..2] (metres).
export function particlePosition(f, i, out = [0, 0, 0]) {
  const b = f.bounds, p = f.pos, s = 1 / 65535;
  out[0] = b[0] + p[3 * i] * s * (b[3] - b[0]);
  out[1] = b[1] + p[3 * i + 1] * s * (b[4] - b[1]);
  out[2] = b[2] + p[3 * i + 2] * s * (b[5] - b[2]);
  return out;
}

// Mean particle position of a frame (metres), or the box centre when empty.
export function centroid(f) {
  const b = f.bounds, p = f.pos, n = f.n;
  if (!n) return [(b[0] + b[3]) / 2, (b[1] + b[4]) / 2, (b[2] + b[5]) / 2];
  let x = 0, y = 0, z = 0;
  for (let i = 0; i < 3 * n; i += 3) { x += p[i]; y += p[i + 1]; z += p[i + 2]; }
  const s = 1 / (65535 * n);
  return [b[0] + x * s * (b[3] - b[0]), b[1] + y * s * (b[4] - b[1]), b[2] + z * s * (b[5] - b[2])];
}
