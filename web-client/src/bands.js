// bands.js - protocol v2's band containers (PROTOCOL.md "Bands (kind 2)") on
// the page's side: splitBands checks a container and finds its K band
// payloads (ordinary payloads, each decoded by a decoder of its own, one per
// band); joinViews puts the K bands' decoded views (stream_v2.js's shape)
// together into the frame's view.  Pure: runs under node too.
//
// const s = splitBands(bytes);     // null: not a container; else {k, lo, parts}
// const view = joinViews(views, { bytes: bytes.length, epoch, n, lo: s.lo });

import { readHeader, readBands, FC_MAX_BANDS } from './frame_header.js';

const HEADER = 56;
const NONE = 0xffffffff;
export const BANDS_KIND = 2;
export const BANDS_MIN = 2;
export const BANDS_MAX = FC_MAX_BANDS;

function u32(b, o) { return (b[o] | (b[o + 1] << 8) | (b[o + 2] << 16) | (b[o + 3] << 24)) >>> 0; }

// The container's header fields that every band repeats.
function header(b) {
  return { epoch: u32(b, 4), seq: u32(b, 8), base: u32(b, 12), prev: u32(b, 16), n: u32(b, 20) };
}

// bytes: a frame payload (Uint8Array).  null when it is not a band container
// (shorter than a header, not a version 2 payload, or of kind 0 or 1: the
// whole-frame decoder takes, or refuses, those); else
// {k, lo: Uint32Array(k), parts: [Uint8Array, ...] (views into bytes), epoch,
// seq, base, prev, n}.  The header and the band table are checked by
// frame_header.js (readHeader, readBands), then each band's kind and
// numbers against the container's.  Throws an Error naming the rule a
// container breaks.
export function splitBands(bytes) {
  if (!(bytes instanceof Uint8Array) || bytes.length < HEADER) return null;
  if (bytes[0] !== 0x46 || bytes[1] !== 2 || bytes[2] !== BANDS_KIND) return null;
  const h = readHeader(bytes);
  const { k, lo, parts } = readBands(bytes, h);
  const kind = h.base === NONE ? 0 : 1;
  for (let i = 0; i < k; i++) {
    const p = parts[i];
    if (p[0] !== 0x46 || p[1] !== 2 || p[2] !== kind) {
      throw new Error(`bands: band ${i} is not a version 2 ${kind ? 'delta' : 'keyframe'} payload (kind ${p[2]})`);
    }
    const b = header(p);
    for (const f of ['epoch', 'seq', 'base', 'prev']) {
      if (b[f] !== h[f]) throw new Error(`bands: band ${i}'s ${f} ${b[f]} is not the container's ${h[f]}`);
    }
  }
  return { k, lo, parts, epoch: h.epoch, seq: h.seq, base: h.base, prev: h.prev, n: h.n };
}

// views: the K bands' views (stream_v2.js FrameStream.view()'s shape), in
// band order, of one frame.  extra: {bytes (the container payload's length),
// epoch (the container's), and optionally n (the container's: the bands'
// must add up to it), lo (the bands' first ids: each band's ids must lie in
// its range), cursors, bodies, probes (the frame message's)}.  Returns the frame's
// view; throws when the bands are not of one frame or their ids are not in
// increasing order across them.
export function joinViews(views, extra) {
  if (!views.length) throw new Error('bands: no bands to join');
  const v0 = views[0];
  let n = 0;
  for (let i = 0; i < views.length; i++) {
    if (views[i].seq !== v0.seq) throw new Error(`bands: band ${i} is of frame ${views[i].seq}, band 0 of ${v0.seq}`);
    n += views[i].n;
  }
  if (extra.n !== undefined && n !== extra.n) throw new Error(`bands: the bands hold ${n} particles, the frame ${extra.n}`);
  const pos = new Uint16Array(3 * n), mat = new Uint8Array(n), temp = new Uint8Array(n);
  const runs = [];
  let at = 0, last = -1; // ids so far end at `last` (-1: none yet)
  for (let i = 0; i < views.length; i++) {
    const v = views[i], r = v.runs;
    if (v.n) {
      const first = r[0], end = r[r.length - 2] + r[r.length - 1] - 1;
      if (extra.lo) {
        const hi = i + 1 < extra.lo.length ? extra.lo[i + 1] : 2 ** 32;
        if (first < extra.lo[i] || end >= hi) throw new Error(`bands: band ${i} holds ids ${first}..${end}, outside its range ${extra.lo[i]}..${hi - 1}`);
      }
      if (first <= last) throw new Error(`bands: band ${i} starts at id ${first}, not after the bands before it (up to ${last})`);
      let j = 0;
      if (runs.length && last + 1 === first) { runs[runs.length - 1] += r[1]; j = 2; }
      for (; j < r.length; j++) runs.push(r[j]);
      last = end;
    }
    pos.set(v.pos.subarray(0, 3 * v.n), 3 * at);
    mat.set(v.mat.subarray(0, v.n), at);
    temp.set(v.temp.subarray(0, v.n), at);
    at += v.n;
  }
  return {
    tick: v0.tick, time: v0.time, paused: v0.paused, n,
    bounds: v0.bounds.slice(),
    cursors: extra.cursors ?? v0.cursors, bodies: extra.bodies ?? v0.bodies, probes: extra.probes ?? v0.probes ?? null,
    pos, runs: Uint32Array.from(runs), mat, temp,
    tempLo: v0.tempLo, tempHi: v0.tempHi,
    copied: 0, seq: v0.seq, key: v0.key, bits: n ? (8 * extra.bytes) / n : 0,
    epoch: extra.epoch ?? v0.epoch,
  };
}
