// frame_decoder.js - the oracle of the page's frame decoder: a JavaScript
// port, line by line, of the decoding walk of protocol v2's particle payload
// (protocol/PROTOCOL.md, "Frame payload, version 2"; the C is
// server/wire/frame_walk.c and frame_decoder.c).  The page decodes with the
// C decoder built to WebAssembly (web-client/src/frame_codec_wasm.js); the
// tests check that build against this port, written apart from it, on every
// golden payload and on recorded and live streams, and the server's tests
// decode their streams with it (no build step).  It reads the header with
// the page's own reader (web-client/src/frame_header.js).  Pure: runs under
// node.
//
// const dec = new FrameDecoder(capacity);       // once: all memory is allocated here
// const f = dec.decode(bytes);                  // Uint8Array; throws FrameCodecError
// f.q: Uint16Array(3n) x0 y0 z0 ..., position = grid.origin[a] + q * grid.step
// The frame returned stays valid for the next FC_DEC_HISTORY - 2 decodes.
import {
  FC_HEADER_BYTES, FC_NONE, FC_DEC_HISTORY, FC_PRED, FrameCodecError, readHeader, readBands,
} from '../../../web-client/src/frame_header.js';

export { FC_HEADER_BYTES, FC_VERSION, FC_NONE, FC_DEC_HISTORY, FC_MAX_BANDS, FrameCodecError, readHeader, readBands } from '../../../web-client/src/frame_header.js';

const PROB_ONE = 2048;
const NCLS = 33;
const MODEL = 2 * NCLS + 1;           // cls[33], mant[33], sign
// Model table: spatial [axis 3][neighbour 4], then singles.
const M_SPAT = 0;
const M_COUNT = M_SPAT + 12 * MODEL;
const M_GAP = M_COUNT + MODEL;
const M_IDFIRST = M_GAP + MODEL;
const M_RUNLEN = M_IDFIRST + MODEL;
const M_MAT = M_RUNLEN + MODEL;
const M_TEMP = M_MAT + MODEL;
const M_MATCHG = M_TEMP + MODEL;
const M_TEMPCHG = M_MATCHG + MODEL;
const M_TABN = M_TEMPCHG + MODEL;
const M_TABF = M_TABN + MODEL;
const M_TOTAL = M_TABF + MODEL;

// The table coder (server/wire/table_coder.h): rANS with 12-bit per-frame
// frequency tables in 16 contexts (axis x speed, then joint symbols by speed), 3
// interleaved states, raw bits apart.
const TC_SCALE = 4096;
const TC_NSYM = 34;        // a value's alphabet
const TC_AXIS_CTX = 12;    // contexts 12..15: joint symbols
const TC_CTX = 16;
const TC_JOINT_ESC = 125;  // joint symbols 0..124: three values in [-2, 2]; 125: escape
const TC_SYM_MAX = 126;
const TC_L = 1 << 16; // the rANS states' lower bound: renormalised by 16-bit words
const TC_STATES = 3;
const SYM_NRAW = new Uint8Array(TC_NSYM);
const SYM_BASE = new Uint32Array(TC_NSYM);
for (let s = 0; s < TC_NSYM; s++) {
  const c = s < 2 ? s : (s >> 1) + 1;                 // magnitude class
  SYM_NRAW[s] = c - (c >= 2 ? 1 : 0);                 // the sign, then c - 2 mantissa bits
  SYM_BASE[s] = c < 2 ? c : (2 | (s & 1)) << (c - 2); // the class's least magnitude with its top mantissa bit
}

function fail(msg) { throw new FrameCodecError(msg); }

// Adaptive binary range decoder (11-bit probabilities, shift 5), and the
// integer code: magnitude class in unary, modelled top mantissa bit, raw rest, sign.
// The coder's range and code live in a Uint32Array: object fields holding
// values above 2^31 would be boxed numbers (measured 50x slower in node).
class RangeDecoder {
  constructor() { this.p = new Uint16Array(M_TOTAL); this.rs = new Uint32Array(2); this.buf = null; this.pos = 0; this.end = 0; this.overrun = false; this.cls = 0; }
  init(buf, off, len) {
    this.p.fill(PROB_ONE / 2);
    this.buf = buf; this.pos = off; this.end = off + len; this.overrun = false;
    const rs = this.rs;
    rs[0] = 0xffffffff; rs[1] = 0;
    for (let i = 0; i < 5; i++) rs[1] = (rs[1] << 8) | this.next();
  }
  next() {
    if (this.pos < this.end) return this.buf[this.pos++];
    this.overrun = true;
    return 0;
  }
  bit(i) {
    const p = this.p, pr = p[i], rs = this.rs;
    let range = rs[0], code = rs[1], b;
    const bound = (range >>> 11) * pr;
    if (code < bound) { range = bound; p[i] = pr + ((PROB_ONE - pr) >>> 5); b = 0; }
    else { code -= bound; range -= bound; p[i] = pr - (pr >>> 5); b = 1; }
    while (range < 16777216) { range = (range << 8) >>> 0; code = ((code << 8) | this.next()) >>> 0; }
    rs[0] = range; rs[1] = code;
    return b;
  }
  direct() {
    const rs = this.rs;
    let range = rs[0] >>> 1, code = rs[1], b = 0;
    if (code >= range) { code -= range; b = 1; }
    while (range < 16777216) { range = (range << 8) >>> 0; code = ((code << 8) | this.next()) >>> 0; }
    rs[0] = range; rs[1] = code;
    return b;
  }
  // The class loop and the modelled mantissa bit with the coder state in
  // locals (the same arithmetic as bit(), inlined by hand: the hot path).
  mag(m) {
    const p = this.p, rs = this.rs, buf = this.buf, end = this.end;
    let range = rs[0], code = rs[1], pos = this.pos, c = 0;
    for (;;) {
      const i = m + c, pr = p[i], bound = (range >>> 11) * pr;
      let b;
      if (code < bound) { range = bound; p[i] = pr + ((PROB_ONE - pr) >>> 5); b = 0; }
      else { code -= bound; range -= bound; p[i] = pr - (pr >>> 5); b = 1; }
      while (range < 16777216) {
        range = (range << 8) >>> 0;
        let byte = 0;
        if (pos < end) byte = buf[pos++]; else this.overrun = true;
        code = ((code << 8) | byte) >>> 0;
      }
      if (!b) break;
      if (++c === NCLS - 1) break;
    }
    rs[0] = range; rs[1] = code; this.pos = pos;
    this.cls = c;
    if (c <= 1) return c;
    let v = 2 + this.bit(m + NCLS + c);
    for (let b = c - 3; b >= 0; b--) v = v * 2 + this.direct();
    return v;
  }
  int(m) {
    const v = this.mag(m);
    if (!v) return 0;
    return this.bit(m + 2 * NCLS) ? -v : v;
  }
}

function speedCtx(vx, vy, vz) {
  let s = vx < 0 ? -vx : vx;
  if ((vy < 0 ? -vy : vy) > s) s = vy < 0 ? -vy : vy;
  if ((vz < 0 ? -vz : vz) > s) s = vz < 0 ? -vz : vz;
  return s <= 1 ? 0 : s <= 4 ? 1 : s <= 12 ? 2 : 3;
}
function nbCtx(a, b) { const s = a + b; return s === 0 ? 0 : s <= 2 ? 1 : s <= 4 ? 2 : 3; }

// The particles of frame f with ids in band i of the split lo: a view into f's arrays.
function bandView(f, lo, i) {
  const id = f.id, n = f.n;
  const first = (v) => { let a = 0, b = n; while (a < b) { const m = (a + b) >>> 1; if (id[m] < v) a = m + 1; else b = m; } return a; };
  const at = first(lo[i]), end = i + 1 < lo.length ? first(lo[i + 1]) : n;
  return { seq: f.seq, n: end - at, valid: f.valid, grid: f.grid, id: id.subarray(at), q: f.q.subarray(3 * at), mat: f.mat.subarray(at), temp: f.temp.subarray(at) };
}

function gridEqual(a, b) {
  for (let i = 0; i < 3; i++) if (a.originBits[i] !== b.originBits[i] || a.levels[i] !== b.levels[i]) return false;
  return a.stepBits === b.stepBits;
}

export function frameChecksum(f) {
  let a = 1, b = f.n >>> 0;
  const id = f.id, q = f.q, mat = f.mat, temp = f.temp;
  for (let k = 0, n = f.n; k < n; k++) {
    a = (a + id[k]) >>> 0; b = (b + a) >>> 0;
    a = (a + q[3 * k]) >>> 0; b = (b + a) >>> 0;
    a = (a + q[3 * k + 1]) >>> 0; b = (b + a) >>> 0;
    a = (a + q[3 * k + 2]) >>> 0; b = (b + a) >>> 0;
    a = (a + (mat[k] | (temp[k] << 8))) >>> 0; b = (b + a) >>> 0;
  }
  return (a ^ ((b << 16) | (b >>> 16))) >>> 0;
}

export class FrameDecoder {
  constructor(capacity) {
    if (!Number.isInteger(capacity) || capacity < 0 || capacity > (1 << 24)) throw new RangeError('capacity');
    this.cap = capacity;
    const c = Math.max(1, capacity);
    this.hist = [];
    for (let i = 0; i < FC_DEC_HISTORY; i++)
      this.hist.push({ seq: 0, n: 0, valid: false, grid: null, id: new Uint32Array(c), q: new Uint16Array(3 * c),
        mat: new Uint8Array(c), temp: new Uint8Array(c), stamp: 0 });
    this.clock = 0; this.epoch = 0; this.hasEpoch = false;
    this.rc = new RangeDecoder();
    this.removed = new Uint32Array(c); this.added = new Float64Array(c);
    this.bidx = new Int32Array(c); this.pidx = new Int32Array(c);
    // the table coder: tables, states, streams
    this.tnsym = new Uint8Array(TC_CTX); this.tslot = new Uint8Array(TC_CTX * TC_SCALE);
    this.tfc = new Uint32Array(TC_CTX * TC_SYM_MAX); this.tfreq = new Uint16Array(TC_SYM_MAX);
    this.te = new Int32Array(3); // one particle's residuals
    this.tx = new Uint32Array(TC_STATES);
    this.ts = { buf: null, pos: 0, end: 0, over: false, bpos: 0, bend: 0, acc: 0, nacc: 0, pad: 0 };
  }

  reset() { this.hasEpoch = false; for (const f of this.hist) f.valid = false; }

  frame(seq) {
    if (seq === FC_NONE) return null;
    for (const f of this.hist) if (f.valid && f.seq === seq) return f;
    return null;
  }

  decode(bytes) {
    const h = readHeader(bytes);
    if (h.n > this.cap) fail(`frame of ${h.n} particles, this decoder holds at most ${this.cap}`);
    const delta = h.kind === 1 || (h.kind === 2 && h.base !== FC_NONE);
    let b = null, pv = null;
    if (delta) {
      if (!this.hasEpoch || h.epoch !== this.epoch) fail(`delta of stream ${h.epoch}, this decoder follows ${this.hasEpoch ? 'another' : 'none yet'}`);
      b = this.frame(h.base); pv = this.frame(h.prev);
      if (!b || (h.prev !== FC_NONE && !pv)) fail(`delta against frame ${h.base} (prev ${h.prev}), which this decoder does not hold`);
      if (!gridEqual(b.grid, h.grid) || (pv && !gridEqual(pv.grid, h.grid))) fail('delta on another quantization grid than its base');
    }
    let slot = null;
    for (const c of this.hist) {
      if (c === b || c === pv) continue;
      if (!slot || (slot.valid && (!c.valid || c.stamp < slot.stamp))) slot = c;
    }
    const f = slot;
    f.valid = false; f.n = h.n; f.grid = h.grid; f.seq = h.seq;
    if (h.kind === 2) this.decodeBands(bytes, h, f, b, pv); else this.decodeOne(bytes, h, f, b, pv);
    f.valid = true; f.stamp = ++this.clock;
    if (!delta) {
      if (!this.hasEpoch || this.epoch !== h.epoch) for (const c of this.hist) if (c !== f) c.valid = false;
      this.epoch = h.epoch; this.hasEpoch = true;
    }
    return f;
  }

  // An ordinary payload (kind 0 or 1, header h) into f against b and pv
  // (whole frames, or a band's views of them).
  decodeOne(bytes, h, f, b, pv) {
    const table = !!b; // a delta: its streams' lengths, then the streams
    if (table) this.tableStreams(bytes, h.bodyLen);
    else this.rc.init(bytes, FC_HEADER_BYTES, h.bodyLen);
    if (b) this.walkDelta(h.options, f, b, pv); else this.walkKey(f);
    if (this.rc.overrun) fail('frame payload truncated');
    if (table) {
      const t = this.ts, left = (t.bend - t.bpos) * 8 + t.nacc - t.pad;
      if (t.pos !== t.end || left < 0 || left >= 8 || this.tx.some((x) => x !== TC_L)) fail('frame payload: the table-coded streams do not end where declared');
    }
    if (frameChecksum(f) !== h.checksum) fail('frame payload checksum mismatch (corrupt, or coded against another base)');
  }

  // Bands (kind 2, header h) into f: each band checked against the
  // container, decoded after the bands before it against the same id range
  // of b and pv, its ids checked against its range.
  decodeBands(bytes, h, f, b, pv) {
    const { k, lo, parts } = readBands(bytes, h);
    let at = 0;
    for (let i = 0; i < k; i++) {
      const bh = readHeader(parts[i]);
      if (bh.kind !== (b ? 1 : 0) || bh.epoch !== h.epoch || bh.seq !== h.seq || bh.base !== h.base || bh.prev !== h.prev ||
          !gridEqual(bh.grid, h.grid) || bh.n > h.n - at) fail(`frame payload: band ${i} does not belong to its frame (kind, numbers, grid or count)`);
      const v = { seq: f.seq, n: bh.n, valid: false, grid: f.grid, id: f.id.subarray(at), q: f.q.subarray(3 * at), mat: f.mat.subarray(at), temp: f.temp.subarray(at) };
      this.decodeOne(parts[i], bh, v, b && bandView(b, lo, i), pv && bandView(pv, lo, i));
      if (v.n && (v.id[0] < lo[i] || (i + 1 < k && v.id[v.n - 1] >= lo[i + 1]))) fail(`frame payload: band ${i} holds ids outside [${lo[i]}, ${i + 1 < k ? lo[i + 1] : 0})`);
      at += v.n;
    }
    if (at !== h.n) fail(`frame payload: bands of ${at} particles, ${h.n} declared`);
  }

  // Positions, material and temperature of particle k from the previous one so coded (st).
  spatial(f, k, st) {
    const rc = this.rc, lv = f.grid.levels, q = f.q;
    for (let a = 0; a < 3; a++) {
      const ctx = nbCtx(st.cls[a], a ? st.cls[a - 1] : st.cls[a]);
      const v = st.q[a] + rc.int(M_SPAT + (a * 4 + ctx) * MODEL);
      if (v < 0 || v >= lv[a]) fail(`frame payload: particle ${k} lies outside the grid on axis ${a}`);
      q[3 * k + a] = v; st.q[a] = v; st.cls[a] = rc.cls;
    }
    let v = st.mat + rc.int(M_MAT);
    if (v < 0 || v > 255) fail('frame payload: material out of range');
    f.mat[k] = v; st.mat = v;
    v = st.temp + rc.int(M_TEMP);
    if (v < 0 || v > 255) fail('frame payload: temperature out of range');
    f.temp[k] = v; st.temp = v;
  }

  newSpatial(f) {
    const lv = f.grid.levels;
    return { q: [lv[0] >> 1, lv[1] >> 1, lv[2] >> 1], mat: 0, temp: 0, cls: [0, 0, 0] };
  }

  walkKey(f) {
    const rc = this.rc, n = f.n, id = f.id;
    const runs = rc.mag(M_COUNT);
    if (runs > n || (n && !runs)) fail(`frame payload: ${runs} id runs for ${n} particles`);
    let next = 0, k = 0;
    for (let i = 0; i < runs; i++) {
      const gap = rc.mag(M_GAP), len = rc.mag(M_RUNLEN) + 1;
      const start = next + gap;
      if (len > n - k || start + len - 1 > 0xffffffff) fail('frame payload: id runs exceed the declared count or the id range');
      for (let j = 0; j < len; j++) id[k++] = start + j;
      next = start + len;
      if (rc.overrun) fail('frame payload truncated');
    }
    if (k !== n) fail(`frame payload: id runs hold ${k} ids, ${n} declared`);
    const st = this.newSpatial(f);
    for (k = 0; k < n; k++) {
      this.spatial(f, k, st);
      if (rc.overrun) fail('frame payload truncated');
    }
  }

  walkDelta(o, f, base, prev) {
    const rc = this.rc, n = f.n, bn = base.n, removed = this.removed, added = this.added, bidx = this.bidx;
    // 1-2. ids removed and added
    const nrem = rc.mag(M_COUNT);
    if (nrem > bn) fail(`frame payload: removes ${nrem} of the base's ${bn} particles`);
    let last = -1;
    for (let i = 0; i < nrem; i++) {
      const at = last + 1 + rc.mag(M_GAP);
      if (at >= bn) fail(`frame payload: removes particle ${at} of a base of ${bn}`);
      removed[i] = last = at;
      if (rc.overrun) fail('frame payload truncated');
    }
    const nadd = rc.mag(M_COUNT);
    if (bn - nrem + nadd !== n) fail(`frame payload: ${bn} - ${nrem} + ${nadd} particles, ${n} declared`);
    const ref = bn ? base.id[bn - 1] + 1 : 0;
    for (let i = 0; i < nadd; i++) {
      const id = i === 0 ? ref + rc.int(M_IDFIRST) : added[i - 1] + 1 + rc.mag(M_GAP);
      if (id < 0 || id > 0xffffffff) fail('frame payload: added id out of range');
      added[i] = id;
      if (rc.overrun) fail('frame payload truncated');
    }
    {
      let ri = 0, ai = 0, k = 0;
      const fid = f.id, bid = base.id;
      for (let i = 0; i <= bn; i++) {
        let keep = i < bn;
        if (keep && ri < nrem && removed[ri] === i) { keep = false; ri++; }
        while (ai < nadd && (i === bn || added[ai] < bid[i]) && (keep || i === bn)) {
          if (k && added[ai] <= fid[k - 1]) fail('frame payload: added ids not increasing');
          fid[k] = added[ai++]; bidx[k++] = -1;
        }
        if (keep) {
          if (k && bid[i] <= fid[k - 1]) fail(`frame payload: added id ${fid[k - 1]} already present`);
          fid[k] = bid[i]; bidx[k++] = i;
        }
      }
      if (ai !== nadd || k !== n) fail('frame payload: ids do not merge');
    }
    // 3-4. prediction and residuals (the table coder's tables first)
    this.readTables();
    this.matchPrev(base, prev);
    this.phaseTableById(f, base, prev, o.predictor === FC_PRED.CV ? 1 : 0, o.joint);
    this.phaseNew(f);
    this.phaseChanges(f, base);
  }

  // Each base particle's index in prev (same id), or -1.
  matchPrev(base, prev) {
    if (!prev) return;
    const pidx = this.pidx, pid = prev.id, pn = prev.n, bid = base.id, bn = base.n;
    let j = 0;
    for (let i = 0; i < bn; i++) {
      while (j < pn && pid[j] < bid[i]) j++;
      pidx[i] = j < pn && pid[j] === bid[i] ? j : -1;
    }
  }

  // The table coder's body: two stream lengths, the range-coded stream, the rANS stream
  // (its 3 states first), the raw bits.
  tableStreams(bytes, bodyLen) {
    const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), o = FC_HEADER_BYTES;
    const rl = bodyLen >= 8 ? dv.getUint32(o, true) : 0, tl = bodyLen >= 8 ? dv.getUint32(o + 4, true) : 0;
    if (bodyLen < 8 || rl + tl > bodyLen - 8) fail(`frame payload: its streams do not fit its body of ${bodyLen} bytes`);
    this.rc.init(bytes, o + 8, rl);
    const t = this.ts, r0 = o + 8 + rl;
    if (tl < 4 * TC_STATES) fail('frame payload: bad rANS state');
    for (let i = 0; i < TC_STATES; i++) {
      const x = dv.getUint32(r0 + 4 * i, true);
      if (x < TC_L) fail('frame payload: bad rANS state');
      this.tx[i] = x;
    }
    t.buf = bytes; t.pos = r0 + 4 * TC_STATES; t.end = r0 + tl; t.over = false;
    t.bpos = r0 + tl; t.bend = o + bodyLen; t.acc = 0; t.nacc = 0; t.pad = 0;
  }

  // Per context: its symbol count, then each symbol's frequency (range coded); they must sum to 4096.
  readTables() {
    const rc = this.rc, nsym = this.tnsym, slot = this.tslot, fc = this.tfc, fr = this.tfreq;
    for (let c = 0; c < TC_CTX; c++) {
      const ns = rc.mag(M_TABN);
      const most = c < TC_AXIS_CTX ? TC_NSYM : TC_SYM_MAX;
      if (ns > most) fail(`frame payload: a table of ${ns} symbols in context ${c} (at most ${most})`);
      for (let k = 0; k < ns; k++) {
        const v = rc.mag(M_TABF);
        if (v > TC_SCALE) fail(`frame payload: a table frequency of ${v}`);
        fr[k] = v;
      }
      if (rc.overrun) fail('frame payload truncated');
      let cum = 0;
      for (let k = 0; k < ns; k++) {
        if (fr[k] > TC_SCALE - cum) fail(`frame payload: table ${c} does not sum to ${TC_SCALE}`);
        fc[c * TC_SYM_MAX + k] = fr[k] | (cum << 16);
        slot.fill(k, c * TC_SCALE + cum, c * TC_SCALE + cum + fr[k]);
        cum += fr[k];
      }
      if (ns && cum !== TC_SCALE) fail(`frame payload: table ${c} does not sum to ${TC_SCALE}`);
      nsym[c] = ns;
    }
  }

  // One symbol from state st in context ctx (which must have a table).
  tableSym(st, ctx) {
    if (!this.tnsym[ctx]) fail(`frame payload: a value in context ${ctx}, which has no table`);
    const t = this.ts, xs = this.tx, buf = t.buf;
    let x = xs[st];
    const s = x & (TC_SCALE - 1), sym = this.tslot[ctx * TC_SCALE + s], e = this.tfc[ctx * TC_SYM_MAX + sym];
    x = (e & 0xffff) * (x >>> 12) + s - (e >>> 16);
    if (x < TC_L) { // one 16-bit word, least significant byte first, brings it back
      let w = 0;
      if (t.end - t.pos >= 2) { w = buf[t.pos] | (buf[t.pos + 1] << 8); t.pos += 2; } else { t.pos = t.end; t.over = true; }
      x = ((x << 16) | w) >>> 0;
    }
    xs[st] = x;
    return sym;
  }

  // One value on axis a (state a) in context ctx: its symbol, then its raw bits.
  tableValue(a, ctx) {
    const t = this.ts, buf = t.buf, sym = this.tableSym(a, ctx);
    const nr = SYM_NRAW[sym];
    let acc = t.acc, nacc = t.nacc;
    while (nacc < nr) {
      let byte = 0;
      if (t.bpos < t.bend) byte = buf[t.bpos++]; else t.pad += 8;
      acc = (acc | (byte << nacc)) >>> 0; nacc += 8;
    }
    const raw = acc & ((1 << nr) - 1);
    t.acc = acc >>> nr; t.nacc = nacc - nr;
    const m = SYM_BASE[sym] + (raw >>> 1);
    return raw & 1 ? -m : m;
  }

  // One particle's three residuals into this.te, in speed context sc: with joint symbols
  // first a joint symbol on state js (the three values, or the escape), then, escaped or
  // without joint symbols, one value per axis (server/wire/frame_walk.c's table_triple).
  tableTriple(sc, joint, js) {
    const e = this.te;
    if (joint) {
      const j = this.tableSym(js, TC_AXIS_CTX + sc);
      if (j < TC_JOINT_ESC) { e[0] = ((j / 25) | 0) - 2; e[1] = (((j / 5) | 0) % 5) - 2; e[2] = (j % 5) - 2; return; }
    }
    for (let a = 0; a < 3; a++) e[a] = this.tableValue(a, a * 4 + sc);
  }

  tableEnd() {
    const t = this.ts;
    if (t.over || (t.bend - t.bpos) * 8 + t.nacc - t.pad < 0) fail('frame payload truncated');
  }

  // Steps 3-4: prediction and residual in one pass in id order, as
  // server/wire/frame_walk.c's table_by_id.
  phaseTableById(f, base, prev, cv, joint) {
    const n = f.n, bidx = this.bidx, pidx = this.pidx, bq = base.q, pq = prev ? prev.q : null, q = f.q;
    const lv = f.grid.levels, e = this.te;
    let j = 0;
    for (let k = 0; k < n; k++) {
      const b = bidx[k];
      if (b < 0) continue;
      const pi = prev ? pidx[b] : -1;
      const b3 = 3 * b;
      let vx = 0, vy = 0, vz = 0;
      if (pi >= 0) { vx = bq[b3] - pq[3 * pi]; vy = bq[b3 + 1] - pq[3 * pi + 1]; vz = bq[b3 + 2] - pq[3 * pi + 2]; }
      this.tableTriple(speedCtx(vx, vy, vz), joint, j++ & 1);
      for (let a = 0; a < 3; a++) {
        let p = bq[b3 + a] + cv * (a === 0 ? vx : a === 1 ? vy : vz);
        if (p < 0) p = 0;
        if (p >= lv[a]) p = lv[a] - 1;
        const v = p + e[a];
        if (v < 0 || v >= lv[a]) fail(`frame payload: particle ${k} lies outside the grid`);
        q[3 * k + a] = v;
      }
    }
    this.tableEnd();
  }

  phaseNew(f) {
    // 5. new particles
    const rc = this.rc, n = f.n, bidx = this.bidx;
    const st = this.newSpatial(f);
    for (let k = 0; k < n; k++) if (bidx[k] < 0) {
      this.spatial(f, k, st);
      if (rc.overrun) fail('frame payload truncated');
    }
  }

  phaseChanges(f, base) {
    const rc = this.rc, n = f.n, bidx = this.bidx;
    // 6. materials and temperatures: changes only
    for (let which = 0; which < 2; which++) {
      const dst = which ? f.temp : f.mat, src = which ? base.temp : base.mat;
      const nch = rc.mag(M_COUNT);
      if (nch > n) fail(`frame payload: ${nch} changes for ${n} particles`);
      let k = 0;
      for (let i = 0; i < nch; i++) {
        const kk = k + rc.mag(M_GAP);
        if (kk >= n) fail('frame payload: a change past the last particle');
        if (bidx[kk] < 0) fail('frame payload: a change on a new particle');
        for (let t = k; t < kk; t++) if (bidx[t] >= 0) dst[t] = src[bidx[t]];
        const old = src[bidx[kk]], v = old + rc.int(which ? M_TEMPCHG : M_MATCHG);
        if (v < 0 || v > 255 || v === old) fail(`frame payload: bad ${which ? 'temperature' : 'material'} change`);
        dst[kk] = v; k = kk + 1;
        if (rc.overrun) fail('frame payload truncated');
      }
      for (let t = k; t < n; t++) if (bidx[t] >= 0) dst[t] = src[bidx[t]];
    }
  }
}
