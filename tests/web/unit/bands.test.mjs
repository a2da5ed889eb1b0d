// bands.test.mjs - band containers (PROTOCOL.md "Bands (kind 2)") on the
// page's side, web-client/src/bands.js: splitBands finds the band payloads of
// a container and refuses broken ones with a message naming the rule;
// joinViews joins the bands' views into the frame's (ids, positions,
// materials, temperatures) and refuses ids out of order; and the golden
// banded payloads (protocol/golden/frame_v2_bands_*.bin) decoded band by band
// by two decoders, each given only its band, join to their meaning in
// frame_v2.json.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { splitBands, joinViews } from '../../../web-client/src/bands.js';
import { FrameDecoder } from '../oracle/frame_decoder.js';
import { wasmDecoderFactory } from '../oracle/wasm.mjs';
import { FrameStream, idRuns } from '../../../web-client/src/stream_v2.js';

const NONE = 0xffffffff;
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const GOLDEN = join(ROOT, 'protocol', 'golden');

function header(b, o, { kind, epoch = 77, seq = 9, base = NONE, prev = NONE, n = 0, body = 0 }) {
  const dv = new DataView(b.buffer, b.byteOffset + o);
  b[o] = 0x46; b[o + 1] = 2; b[o + 2] = kind;
  dv.setUint32(4, epoch, true); dv.setUint32(8, seq, true); dv.setUint32(12, base, true);
  dv.setUint32(16, prev, true); dv.setUint32(20, n, true); dv.setUint32(52, body, true);
  dv.setFloat32(36, 0.01, true); for (let a = 0; a < 3; a++) dv.setUint16(40 + 2 * a, 100, true); // a grid: 100 levels of 1 cm
}

// A container of bands whose payloads are headers followed by `lens[k] - 56`
// bytes of filler (their contents do not matter to splitBands).  Options
// break it: k (the count written), lo, tableLens (the lengths written),
// bodyLen, and band (fields of every band's header, or of band i: bandOf(i)).
function container({ lo = [0, 100], lens = [60, 70], k = lo.length, tableLens = lens, base = NONE, prev = NONE, bodyLen, bandOf = () => ({}), offset = 3 } = {}) {
  const body = 4 + 8 * lo.length + lens.reduce((s, x) => s + x, 0);
  const ab = new ArrayBuffer(offset + 56 + body + 5);
  const b = new Uint8Array(ab, offset, 56 + body);    // as a browser hands a msgpack bin: a view into a larger buffer
  header(b, 0, { kind: 2, base, prev, n: 10, body: bodyLen ?? body });
  const dv = new DataView(ab, offset);
  dv.setUint32(56, k, true);
  lo.forEach((x, i) => dv.setUint32(60 + 4 * i, x, true));
  tableLens.forEach((x, i) => dv.setUint32(60 + 4 * lo.length + 4 * i, x, true));
  let o = 60 + 8 * lo.length;
  lens.forEach((len, i) => {
    header(b, o, { kind: base === NONE ? 0 : 1, base, prev, body: len - 56, ...bandOf(i) });
    b.fill(i + 1, o + 56, o + len);
    o += len;
  });
  return b;
}

test('splitBands: a container gives its bands: count, first ids, payloads (views of the bytes)', () => {
  const b = container({ lo: [0, 100, 5000], lens: [60, 56, 99], base: 8, prev: 7 });
  const s = splitBands(b);
  assert.equal(s.k, 3);
  assert.deepEqual(Array.from(s.lo), [0, 100, 5000]);
  assert.deepEqual(s.parts.map((p) => p.length), [60, 56, 99]);
  assert.equal(s.epoch, 77); assert.equal(s.seq, 9); assert.equal(s.base, 8); assert.equal(s.prev, 7); assert.equal(s.n, 10);
  s.parts.forEach((p, i) => {
    assert.equal(p.buffer, b.buffer, 'a view, not a copy');
    assert.equal(p[0], 0x46); assert.equal(p[2], 1);
    assert.ok(p.subarray(56).every((x) => x === i + 1), `band ${i}'s bytes`);
  });
  assert.equal(splitBands(container({ lo: [0, 1], lens: [56, 56] })).parts[1][2], 0, 'a keyframe container holds keyframes');
});

test('splitBands: not a container (kinds 0 and 1, short, another version) is null', () => {
  const b = container();
  for (const kind of [0, 1]) { const c = b.slice(); c[2] = kind; assert.equal(splitBands(c), null); }
  assert.equal(splitBands(b.subarray(0, 55)), null);
  const v = b.slice(); v[1] = 1; assert.equal(splitBands(v), null);
  assert.equal(splitBands(null), null);
});

test('splitBands: broken containers are refused with a message naming the rule', () => {
  const cases = [
    ['truncated', container().subarray(0, 100), /body declares \d+ bytes, 44 present/],
    ['truncated to the header', (() => { const b = container({ bodyLen: 0 }); return b.subarray(0, 56); })(), /bands without a band count/],
    ['table cut', (() => { const b = container({ lo: [0, 5, 9], lens: [56, 56, 56] }); const c = b.slice(0, 70); new DataView(c.buffer).setUint32(52, 14, true); return c; })(), /band table truncated/],
    ['1 band', container({ lo: [0], lens: [60] }), /1 bands \(2 to 16\)/],
    ['0 bands', container({ k: 0 }), /0 bands \(2 to 16\)/],
    ['17 bands', container({ lo: Array.from({ length: 17 }, (_, i) => i), lens: Array(17).fill(56) }), /17 bands \(2 to 16\)/],
    ['lo_0 not 0', container({ lo: [1, 100] }), /band 0's first id is 1, not 0/],
    ['lo equal', container({ lo: [0, 50, 50], lens: [56, 56, 56] }), /band 2's first id 50 does not follow band 1's 50/],
    ['lo decreasing', container({ lo: [0, 50, 20], lens: [56, 56, 56] }), /band 2's first id 20 does not follow band 1's 50/],
    ['band shorter than a header', container({ lens: [60, 70], tableLens: [60, 40] }), /band 1 of 40 bytes, shorter than a header/],
    ['lengths short of the rest', container({ lens: [60, 70], tableLens: [60, 69] }), /bands of 149 bytes in a body of 150/],
    ['lengths past the rest', container({ lens: [60, 70], tableLens: [61, 70] }), /bands of more than the body's 150 bytes/],
    ['body length says more', container({ bodyLen: 999 }), /body declares 999 bytes, \d+ present/],
    ['options', (() => { const b = container(); b[3] = 0x21; return b; })(), /unknown kind 2 or options 0x21/],
    ['band of kind 2', container({ bandOf: (i) => (i === 1 ? { kind: 2 } : {}) }), /band 1 is not a version 2 keyframe payload \(kind 2\)/],
    ['delta in a keyframe container', container({ bandOf: (i) => (i === 0 ? { kind: 1 } : {}) }), /band 0 is not a version 2 keyframe payload \(kind 1\)/],
    ['band of another seq', container({ bandOf: (i) => (i === 1 ? { seq: 10 } : {}) }), /band 1's seq 10 is not the container's 9/],
    ['band of another epoch', container({ bandOf: () => ({ epoch: 1 }) }), /band 0's epoch 1 is not the container's 77/],
    ['band of another base', container({ base: 8, bandOf: (i) => (i === 1 ? { base: 6 } : {}) }), /band 1's base 6 is not the container's 8/],
    ['band of another prev', container({ base: 8, prev: 7, bandOf: (i) => (i === 1 ? { prev: NONE } : {}) }), /band 1's prev 4294967295 is not the container's 7/],
  ];
  for (const [what, bytes, msg] of cases) assert.throws(() => splitBands(bytes), msg, what);
  assert.ok(splitBands(container({ lo: Array.from({ length: 16 }, (_, i) => 3 * i), lens: Array(16).fill(56) })), '16 bands are fine');
});

// A band's view as stream_v2.js makes it: ids given as a list.
function bandView(ids, { seq = 4, tick = 40, key = false } = {}) {
  const n = ids.length;
  return {
    tick, time: tick / 60, paused: false, n, bounds: [0, 0, 0, 1, 2, 3], cursors: [], bodies: [],
    pos: Uint16Array.from({ length: 3 * n }, (_, i) => 7 * ids[Math.floor(i / 3)] + (i % 3)),
    runs: idRuns(Uint32Array.from(ids), n),
    mat: Uint8Array.from(ids, (id) => id % 3), temp: Uint8Array.from(ids, (id) => (40 + id) & 255),
    tempLo: -40, tempHi: 215, copied: 0, seq, key, bits: 5, epoch: 77,
  };
}

function expand(runs) {
  const ids = [];
  for (let i = 0; i < runs.length; i += 2) for (let j = 0; j < runs[i + 1]; j++) ids.push(runs[i] + j);
  return ids;
}

test('joinViews: the bands one after the other: ids, positions, materials, temperatures; a run across the boundary merged', () => {
  const a = [0, 1, 2, 5, 6, 7], b = [8, 9, 12], c = [20, 21];
  const v = joinViews([bandView(a), bandView(b), bandView(c)], { bytes: 1100, epoch: 78, n: 11, lo: Uint32Array.from([0, 8, 15]), cursors: [{ id: 3 }], bodies: [{ id: 1 }], probes: { H1: 0.25 } });
  const ids = [...a, ...b, ...c], all = bandView(ids);
  assert.equal(v.n, 11);
  assert.deepEqual(Array.from(v.runs), [0, 3, 5, 5, 12, 1, 20, 2], '5..7 and 8..9 are one run');
  assert.deepEqual(expand(v.runs), ids);
  assert.deepEqual(Array.from(v.pos), Array.from(all.pos));
  assert.deepEqual(Array.from(v.mat), Array.from(all.mat));
  assert.deepEqual(Array.from(v.temp), Array.from(all.temp));
  assert.equal(v.bits, 800, '8 x the container bytes / n');
  assert.equal(v.epoch, 78, "the container's epoch");
  assert.deepEqual(v.cursors, [{ id: 3 }]); assert.deepEqual(v.bodies, [{ id: 1 }]); assert.deepEqual(v.probes, { H1: 0.25 });
  assert.equal(v.seq, 4); assert.equal(v.tick, 40); assert.equal(v.key, false); assert.deepEqual(v.bounds, [0, 0, 0, 1, 2, 3]);
  assert.equal(v.tempLo, -40); assert.equal(v.tempHi, 215);
  // runs that do not touch stay apart; an empty band is nothing
  const w = joinViews([bandView([0, 1]), bandView([]), bandView([3, 4])], { bytes: 10, epoch: 1 });
  assert.deepEqual(Array.from(w.runs), [0, 2, 3, 2]);
  assert.equal(w.n, 4);
  assert.deepEqual(Array.from(w.pos), Array.from(bandView([0, 1, 3, 4]).pos));
  assert.equal(joinViews([bandView([]), bandView([])], { bytes: 120, epoch: 1 }).n, 0);
});

test('joinViews: ids out of order across bands, outside a band\'s range, counts or frames that differ are refused', () => {
  const x = { bytes: 100, epoch: 1 };
  assert.throws(() => joinViews([bandView([0, 1, 5]), bandView([4, 6])], x), /band 1 starts at id 4, not after the bands before it \(up to 5\)/);
  assert.throws(() => joinViews([bandView([0, 1, 5]), bandView([5, 6])], x), /band 1 starts at id 5, not after/);
  assert.throws(() => joinViews([bandView([0, 9]), bandView([]), bandView([3])], x), /band 2 starts at id 3, not after the bands before it \(up to 9\)/);
  assert.throws(() => joinViews([bandView([0, 9]), bandView([10])], { ...x, lo: Uint32Array.from([0, 9]) }), /band 0 holds ids 0\.\.9, outside its range 0\.\.8/);
  assert.throws(() => joinViews([bandView([0]), bandView([10])], { ...x, lo: Uint32Array.from([0, 11]) }), /band 1 holds ids 10\.\.10, outside its range 11\.\.4294967295/);
  assert.throws(() => joinViews([bandView([0]), bandView([10])], { ...x, n: 3 }), /the bands hold 2 particles, the frame 3/);
  assert.throws(() => joinViews([bandView([0]), bandView([10], { seq: 5 })], x), /band 1 is of frame 5, band 0 of 4/);
});

// --- the golden banded payloads: 2 bands, a keyframe and a delta against it
const NAMES = ['frame_v2_bands_key', 'frame_v2_bands_delta'];

test('golden: 2-band keyframe and delta decoded band by band by two decoders join to their meaning', () => {
  const meaning = JSON.parse(readFileSync(join(GOLDEN, 'frame_v2.json'), 'utf8'));
  const decs = [new FrameDecoder(64), new FrameDecoder(64)];
  const streams = [new FrameStream(wasmDecoderFactory()), new FrameStream(wasmDecoderFactory())];
  streams.forEach((s) => s.reset(64));
  for (const name of NAMES) {
    const bytes = new Uint8Array(readFileSync(join(GOLDEN, `${name}.bin`)));
    const want = meaning[name];
    const s = splitBands(bytes);
    assert.ok(s, `${name} is a band container`);
    assert.equal(s.k, 2);
    assert.equal(s.seq, want.seq);
    assert.equal(s.n, want.n);
    // two decoders, each given only its band's payloads
    const ids = [], q = [], mat = [], temp = [];
    s.parts.forEach((p, k) => {
      const f = decs[k].decode(p.slice());
      const hi = k + 1 < s.k ? s.lo[k + 1] : 2 ** 32;
      for (let i = 0; i < f.n; i++) {
        assert.ok(f.id[i] >= s.lo[k] && f.id[i] < hi, `${name}: band ${k}'s id ${f.id[i]} in its range`);
        ids.push(f.id[i]); mat.push(f.mat[i]); temp.push(f.temp[i]);
        for (let a = 0; a < 3; a++) q.push(f.q[3 * i + a]);
      }
      assert.ok(f.n > 0, `${name}: band ${k} holds particles`);
    });
    assert.deepEqual(ids, want.ids, `${name}: ids`);
    assert.deepEqual(q, want.q, `${name}: quantized positions`);
    assert.deepEqual(mat, want.mat, `${name}: materials`);
    assert.deepEqual(temp, want.temp, `${name}: temperatures`);
    // the page's way: a FrameStream per band, the views joined
    const g = { origin: want.origin, step: want.step, levels: want.levels };
    const bounds = [...g.origin, ...g.origin.map((o, a) => o + (g.levels[a] - 1) * g.step)];
    const m = { type: 'frame', tick: 3, time: 0.05, seq: want.seq, key: name === 'frame_v2_bands_key', bounds, n: want.n };
    const views = s.parts.map((p, k) => streams[k].view({ ...m, data: p.slice() }).view);
    const v = joinViews(views, { bytes: bytes.length, epoch: s.epoch, n: s.n, lo: s.lo });
    assert.equal(v.n, want.n);
    assert.equal(v.epoch, meaning.epoch);
    assert.deepEqual(expand(v.runs), want.ids, `${name}: joined ids`);
    assert.deepEqual(Array.from(v.runs), Array.from(idRuns(Uint32Array.from(want.ids), want.n)), `${name}: runs merged across the bands`);
    const pos = want.q.map((x, i) => Math.round((x * g.step) * (65535 / (bounds[3 + (i % 3)] - bounds[i % 3])))); // stream_v2.js's arithmetic
    assert.deepEqual(Array.from(v.pos), pos, `${name}: joined positions`);
    assert.deepEqual(Array.from(v.mat), want.mat);
    assert.deepEqual(Array.from(v.temp), want.temp);
    assert.equal(v.bits, (8 * bytes.length) / want.n);
  }
});
