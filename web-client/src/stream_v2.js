// stream_v2.js - protocol v2 frames (PROTOCOL.md "frame"): decodes each frame
// message's payload in arrival order with one decoder (the page's: the
// WebAssembly build of the server's, frame_codec_wasm.js) and
// gives the view the interpolation and the renderer take (decode.js
// frameView's shape: positions as 16-bit fractions of the box, id runs,
// materials, temperature bytes).  A refused payload (a delta against frames
// this decoder does not hold, damage) asks the server for a keyframe, at
// most every half second, and deltas are skipped until one decodes.  Pure:
// runs under node too.
import { TEMP_RANGE } from './temperature.js';

const ASK_EVERY_MS = 500;

// The frame message's probes ({name: value}, only when the world has some)
// as a plain object of finite numbers, or null.
export function probesOf(m) {
  const p = m.probes;
  if (!p || typeof p !== 'object' || Array.isArray(p)) return null;
  const out = {};
  for (const [k, v] of Object.entries(p)) if (typeof v === 'number' && Number.isFinite(v)) out[k] = v;
  return Object.keys(out).length ? out : null;
}

// Consecutive ids as runs [(first, count), ...].
export function idRuns(ids, n) {
  const runs = [];
  for (let k = 0; k < n; k++) {
    if (k && ids[k] === ids[k - 1] + 1) runs[runs.length - 1]++;
    else runs.push(ids[k], 1);
  }
  return Uint32Array.from(runs);
}

// Quantized positions q (3n, on grid) as 16-bit fractions of the box b
// ([lo x y z, hi x y z]) into out: round((origin - lo + q step) 65535 / span)
// per axis, ties up (as Math.round), clamped to 0..65535.  A table per axis
// over the grid's levels, then a lookup per coordinate (the decoder has
// checked every q against its axis's levels): 100k particles in a fraction
// of the time of the loop with Math.round that it replaces (docs/wire-v2.md,
// "The view's positions").  The WebAssembly decoder does the same in its
// memory; this one serves decoders without it (the tests' oracle).
export function boxPositions(q, n, grid, b, out) {
  const lut = [0, 1, 2].map((a) => {
    const span = b[a + 3] - b[a], scale = span > 0 ? 65535 / span : 0, off = grid.origin[a] - b[a], st = grid.step;
    const t = new Uint16Array(grid.levels[a]);
    for (let l = 0; l < t.length; l++) {
      const v = Math.round((off + l * st) * scale);
      t[l] = v < 0 ? 0 : v > 65535 ? 65535 : v;
    }
    return t;
  });
  const lx = lut[0], ly = lut[1], lz = lut[2];
  for (let i = 0, e = 3 * n; i < e; i += 3) {
    out[i] = lx[q[i]]; out[i + 1] = ly[q[i + 1]]; out[i + 2] = lz[q[i + 2]];
  }
  return out;
}

export class FrameStream {
  // makeDecoder(capacity): the payload decoder (frame_codec_wasm.js's
  // wasmDecoders(module), or a decoder of the same interface).
  constructor(makeDecoder) {
    if (typeof makeDecoder !== 'function') throw new TypeError('FrameStream needs a decoder factory');
    this.makeDecoder = makeDecoder;
    this.dec = null; this.cap = -1;
    this.waitKey = false; this.askedAt = -Infinity;
    this.refused = 0; this.keys = 0; this.lastError = '';
    this.bits = 0;          // bits per particle of the last payload
    this.decodeMs = 0;      // the last payload's decode time
  }

  // A hello, or the page starting over: a fresh decoder, which waits for a
  // keyframe (the server sends one first; deltas before it are skipped, not
  // refused).
  reset(capacity) {
    const cap = Math.max(1, capacity >>> 0);
    if (!this.dec || cap !== this.cap) { this.dec = this.makeDecoder(cap); this.cap = cap; } else this.dec.reset();
    this.waitKey = true;
  }

  // m: a decoded `frame` message.  Returns {view} or {ask: true|false} when
  // the payload was refused (ask: send {type: 'keyframe'} now).
  view(m, now = 0) {
    if (!this.dec) this.reset(m.n);
    const data = m.data;
    if (!(data instanceof Uint8Array)) return this._refuse('frame: no data payload', now);
    if (this.waitKey && !m.key) return { ask: now - this.askedAt > ASK_EVERY_MS && this._asked(now) };
    const t0 = performance.now();
    let f;
    try { f = this.dec.decode(data); } catch (e) { return this._refuse(String(e.message || e), now); }
    this.decodeMs = performance.now() - t0;
    if (m.key) this.keys++;
    this.waitKey = false;
    const n = f.n;
    this.bits = n ? (8 * data.byteLength) / n : 0;
    const b = m.bounds, dec = this.dec;
    // the WebAssembly decoder converts in its own memory (same values)
    const pos = dec.boxPositions ? dec.boxPositions(n, f.grid, b) : boxPositions(f.q, n, f.grid, b, new Uint16Array(3 * n));
    const tr = m.temp_range;
    return {
      view: {
        tick: m.tick, time: m.time, paused: !!m.paused, n,
        bounds: [b[0], b[1], b[2], b[3], b[4], b[5]],
        cursors: Array.isArray(m.cursors) ? m.cursors : [],
        bodies: Array.isArray(m.bodies) ? m.bodies : [],
        probes: probesOf(m),
        pos, runs: dec.idRuns ? dec.idRuns() : idRuns(f.id, n), mat: f.mat.slice(0, n), temp: f.temp.slice(0, n),
        tempLo: Array.isArray(tr) ? tr[0] : TEMP_RANGE[0], tempHi: Array.isArray(tr) ? tr[1] : TEMP_RANGE[1],
        copied: 0, seq: m.seq, key: !!m.key, bits: this.bits,
        lod: m.lod && m.lod.keep > 1 ? { tier: m.lod.tier, keep: m.lod.keep, step: m.lod.step } : null,
        epoch: new DataView(data.buffer, data.byteOffset, data.byteLength).getUint32(4, true),
      },
    };
  }

  _asked(now) { this.askedAt = now; return true; }

  _refuse(why, now) {
    this.refused++;
    this.lastError = why;
    this.waitKey = true;
    const ask = now - this.askedAt > ASK_EVERY_MS;
    if (ask) this.askedAt = now;
    return { ask };
  }
}
