// frame_codec.test.mjs - the page's v2 frame decoder (the server's, built to
// WebAssembly: web-client/src/frame_codec_wasm.js) checked against its oracle
// (the JavaScript port of the decoding walk, tests/web/oracle/frame_decoder.js)
// on every golden payload the C encoder wrote (protocol/golden/frame_v2_*.bin,
// meanings in frame_v2.json: a keyframe, a delta, a delta with particles added
// and removed and a material and temperature changed, the first delta again
// with joint symbols, and as an earlier encoder's adaptive coder wrote it,
// which both refuse; a keyframe and a delta in 2 bands, decoded whole and one
// decoder per band); then each of the two on its own on the same vectors and
// on malformed payloads, which both refuse.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { FrameDecoder, FrameCodecError, readHeader, readBands, FC_HEADER_BYTES, FC_VERSION } from '../oracle/frame_decoder.js';
import { wasmDecoderFactory } from '../oracle/wasm.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(ROOT, 'protocol', 'golden');
const meaning = JSON.parse(readFileSync(join(dir, 'frame_v2.json'), 'utf8'));
const NAMES = ['frame_v2_key', 'frame_v2_delta', 'frame_v2_add_remove'];
// web-client/client.mk builds the WebAssembly decoder (make web-client-wasm; a test dependency)
const DECODERS = [['the oracle', (cap) => new FrameDecoder(cap)], ['WebAssembly', wasmDecoderFactory()]];

// As a browser delivers a msgpack bin: a view at an arbitrary offset of a larger buffer.
function load(name, offset = 3) {
  const b = readFileSync(join(dir, `${name}.bin`));
  const ab = new ArrayBuffer(b.length + offset + 5);
  const v = new Uint8Array(ab, offset, b.length);
  v.set(b);
  return v;
}

function assertFrame(f, want, name) {
  assert.equal(f.seq, want.seq, `${name}: seq`);
  assert.equal(f.n, want.n, `${name}: n`);
  assert.deepEqual(Array.from(f.id.subarray(0, f.n)), want.ids, `${name}: ids`);
  assert.deepEqual(Array.from(f.q.subarray(0, 3 * f.n)), want.q, `${name}: quantized positions`);
  assert.deepEqual(Array.from(f.mat.subarray(0, f.n)), want.mat, `${name}: materials`);
  assert.deepEqual(Array.from(f.temp.subarray(0, f.n)), want.temp, `${name}: temperatures`);
  assert.deepEqual(f.grid.levels, want.levels, `${name}: grid levels`);
  assert.ok(Math.abs(f.grid.step - want.step) < 1e-9 && f.grid.origin.every((o, a) => Math.abs(o - want.origin[a]) < 1e-9));
}

// Every golden payload, in the streams that decode them (the last: a tier of
// detail's keyframe and delta, 1 in 2 particles on a grid twice as coarse): each stream through
// a fresh decoder of each kind.
const STREAMS = [
  ['frame_v2_key', 'frame_v2_delta', 'frame_v2_add_remove'],
  ['frame_v2_key', 'frame_v2_delta_adaptive', 'frame_v2_delta_joint', 'frame_v2_add_remove'],
  ['frame_v2_bands_key', 'frame_v2_bands_delta'],
  ['frame_v2_tier_key', 'frame_v2_tier_delta'],
];

test('every golden payload: the WebAssembly decoder decodes it exactly as the oracle does, or refuses it with the same words', () => {
  const files = readdirSync(dir).filter((f) => /^frame_v2_.*\.bin$/.test(f)).map((f) => f.slice(0, -4)).sort();
  assert.deepEqual([...new Set(STREAMS.flat())].sort(), files, 'the streams hold every golden payload');
  const [[, makeOracle], [, makeWasm]] = DECODERS;
  let same = 0, refused = 0;
  for (const stream of STREAMS) {
    const oracle = makeOracle(64), wasm = makeWasm(64);
    for (const name of stream) {
      const run = (dec) => { try { return { f: dec.decode(load(name)) }; } catch (e) { return { e: e.message }; } };
      const a = run(oracle), b = run(wasm);
      assert.equal(b.e, a.e, `${name}: the same refusal`);
      if (a.e) { refused++; continue; }
      for (const k of ['seq', 'n']) assert.equal(b.f[k], a.f[k], `${name}: ${k}`);
      assert.deepEqual(b.f.grid, { origin: a.f.grid.origin, step: a.f.grid.step, levels: a.f.grid.levels }, `${name}: grid`);
      assert.deepEqual(b.f.id, a.f.id.subarray(0, a.f.n), `${name}: ids`);
      assert.deepEqual(b.f.q, a.f.q.subarray(0, 3 * a.f.n), `${name}: positions`);
      assert.deepEqual(b.f.mat, a.f.mat.subarray(0, a.f.n), `${name}: materials`);
      assert.deepEqual(b.f.temp, a.f.temp.subarray(0, a.f.n), `${name}: temperatures`);
      assertFrame(a.f, meaning[name], name);
      same++;
    }
  }
  assert.equal(same, 10);
  assert.equal(refused, 1, 'the adaptive coder\'s delta');
});

test('golden: the header names version, kind, base and counts', () => {
  const h = readHeader(load('frame_v2_add_remove'));
  assert.equal(FC_VERSION, 2);
  assert.equal(h.kind, 1);
  assert.equal(h.seq, 12);
  assert.equal(h.base, 11);
  assert.equal(h.prev, 10);
  assert.equal(h.n, meaning.frame_v2_add_remove.n);
  assert.equal(readHeader(load('frame_v2_key')).kind, 0);
});

for (const [name, make] of DECODERS) {
  test(`${name}: golden: keyframe, delta, and a delta adding and removing particles decode to their meaning`, () => {
    const dec = make(64);
    for (const name of NAMES) {
      const bytes = load(name);
      const h = readHeader(bytes);
      assert.equal(h.epoch, meaning.epoch);
      assertFrame(dec.decode(bytes), meaning[name], name);
    }
    const key = meaning.frame_v2_key, ar = meaning.frame_v2_add_remove;
    assert.ok(ar.ids.length < key.ids.length + 2 && ar.ids.some((id) => !key.ids.includes(id)), 'the vector adds ids');
    assert.ok(key.ids.some((id) => !ar.ids.includes(id)), 'the vector removes ids');
  });

  test(`${name}: golden: the same delta from an earlier encoder's adaptive coder in cell order is refused, naming its options, and the delta as coded now decodes after it`, () => {
    const dec = make(64);
    dec.decode(load('frame_v2_key'));
    const bytes = load('frame_v2_delta_adaptive');
    assert.throws(() => readHeader(bytes), /options 0x11 name an earlier encoder's coding/);
    assert.throws(() => dec.decode(bytes), /options 0x11 name an earlier encoder's coding .* a recording made before the table coder/);
    assert.deepEqual(readHeader(load('frame_v2_delta')).options, { predictor: 1, joint: 0 });
    assertFrame(dec.decode(load('frame_v2_delta')), meaning.frame_v2_delta, 'the delta');
    assertFrame(dec.decode(load('frame_v2_add_remove')), meaning.frame_v2_add_remove, 'table delta after it');
    for (const o of [0x25, 0x29, 0x31, 0x01, 0x22, 0x23]) { // neighbour 1, 2, cell order, adaptive, predictors 2 and 3
      const b = load('frame_v2_add_remove').slice();
      b[3] = o;
      assert.throws(() => dec.decode(b), /earlier encoder/, `options 0x${o.toString(16)}`);
    }
  });

  test(`${name}: golden: the same delta with the table coder's joint symbols decodes to the same frame, and the next delta follows it`, () => {
    const dec = make(64);
    dec.decode(load('frame_v2_key'));
    const bytes = load('frame_v2_delta_joint');
    assert.deepEqual(readHeader(bytes).options, { predictor: 1, joint: 1 });
    assertFrame(dec.decode(bytes), meaning.frame_v2_delta, 'joint delta');
    assertFrame(dec.decode(load('frame_v2_add_remove')), meaning.frame_v2_add_remove, 'table delta after it');
    const adaptiveJoint = bytes.slice();
    adaptiveJoint[3] &= ~(1 << 5); // joint symbols without the table coder
    assert.throws(() => make(64).decode(adaptiveJoint), /options/);
  });

  test(`${name}: golden: bands (a keyframe and a delta in 2 bands) decode whole, and band by band to the same frames`, () => {
    const dec = make(64), part = [make(64), make(64)];
    for (const nm of ['frame_v2_bands_key', 'frame_v2_bands_delta']) {
      const bytes = load(nm);
      const h = readHeader(bytes);
      assert.equal(h.kind, 2, `${nm}: kind`);
      assertFrame(dec.decode(bytes), meaning[nm], nm);
      const { k, lo, parts } = readBands(bytes);
      assert.equal(k, 2);
      assert.equal(lo[0], 0);
      const ids = [], q = [];
      for (let i = 0; i < k; i++) {
        assert.ok(readHeader(parts[i]).kind === (h.base === 0xffffffff ? 0 : 1), `${nm}: band ${i} is an ordinary payload`);
        const f = part[i].decode(parts[i]);
        ids.push(...f.id.subarray(0, f.n)); q.push(...f.q.subarray(0, 3 * f.n));
        for (const id of f.id.subarray(0, f.n)) assert.ok(id >= lo[i] && (i + 1 === k || id < lo[i + 1]), `${nm}: band ${i} id ${id}`);
      }
      assert.deepEqual(ids, meaning[nm].ids, `${nm}: band ids joined`);
      assert.deepEqual(q, meaning[nm].q, `${nm}: band positions joined`);
    }
    const added = meaning.frame_v2_bands_delta.ids.filter((id) => !meaning.frame_v2_bands_key.ids.includes(id));
    assert.ok(added.length === 2, 'the delta adds 2 particles');
  });

  test(`${name}: refuses malformed bands (count, first ids, lengths, a band of another frame, ids outside a band)`, () => {
    const key = load('frame_v2_bands_key'), del = load('frame_v2_bands_delta');
    const patched = (src, at, v) => { const b = src.slice(); new DataView(b.buffer).setUint32(at, v, true); return b; };
    const H = FC_HEADER_BYTES;
    const len0 = new DataView(key.buffer, key.byteOffset).getUint32(H + 12, true);
    for (const [bytes, why] of [[patched(key, H, 1), /bands/], [patched(key, H, 17), /bands/], [patched(key, H + 4, 3), /first id/],
      [patched(key, H + 8, 0), /first id/], [patched(key, H + 12, len0 + 1), /bytes/], [patched(key, H + 12, 20), /shorter/],
      [patched(key, H + 8, 1), /outside/], [key.subarray(0, key.length - 3), /declares/]]) assert.throws(() => make(64).decode(bytes), why);
    const dec = make(64);
    dec.decode(key);
    const dlen0 = new DataView(del.buffer, del.byteOffset).getUint32(H + 12, true);
    assert.throws(() => dec.decode(patched(del, H + 20 + dlen0 + 8, 99)), /does not belong/);
    const opt = del.slice(); opt[3] = 1;
    assert.throws(() => dec.decode(opt), /options/);
    assertFrame(dec.decode(del), meaning.frame_v2_bands_delta, 'the delta after refusals');
  });

  test(`${name}: refuses a delta without its base, a wrong base and another epoch, and keeps what it holds`, () => {
    const dec = make(64);
    assert.throws(() => dec.decode(load('frame_v2_delta')), /none yet/);
    dec.decode(load('frame_v2_key'));
    assert.throws(() => dec.decode(load('frame_v2_add_remove')), /does not hold/);   // needs 11 (and 10)
    const other = load('frame_v2_delta').slice();
    other[4] ^= 1;
    assert.throws(() => dec.decode(other), /stream/);
    const wrongBase = load('frame_v2_delta').slice();
    wrongBase[12] = 99;
    assert.throws(() => dec.decode(wrongBase), /does not hold/);
    assertFrame(dec.decode(load('frame_v2_delta')), meaning.frame_v2_delta, 'delta after refusals');
  });

  test(`${name}: refuses every truncation, with or without a patched length`, () => {
    const full = load('frame_v2_add_remove', 0);
    let accepted = 0;
    for (let cut = 0; cut < full.length; cut++) {
      for (const patch of [false, true]) {
        if (patch && cut < FC_HEADER_BYTES) continue;
        const dec = make(64);
        dec.decode(load('frame_v2_key'));
        dec.decode(load('frame_v2_delta'));
        const b = full.slice(0, cut);
        if (patch) new DataView(b.buffer).setUint32(52, cut - FC_HEADER_BYTES, true);
        try { dec.decode(b); accepted++; } catch (e) { assert.ok(e instanceof FrameCodecError, String(e)); }
      }
    }
    assert.equal(accepted, 0);
  });

  test(`${name}: refuses corrupted bodies (or decodes them to the same frame), more particles than its capacity, and random bytes`, () => {
    const full = load('frame_v2_delta', 0);
    let other = 0;
    for (let i = FC_HEADER_BYTES; i < full.length; i++) {
      for (let bit = 0; bit < 8; bit++) {
        const dec = make(64);
        dec.decode(load('frame_v2_key'));
        const b = full.slice();
        b[i] ^= 1 << bit;
        try {
          const f = dec.decode(b);
          assertFrame(f, meaning.frame_v2_delta, 'a flip in the coder slack');
        } catch (e) {
          if (!(e instanceof FrameCodecError)) other++;
        }
      }
    }
    assert.equal(other, 0);
    assert.throws(() => make(10).decode(load('frame_v2_key')), /at most 10/);
    let seed = 1;
    const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) >>> 8) & 255;
    for (let t = 0; t < 500; t++) {
      const dec = make(64);
      dec.decode(load('frame_v2_key'));
      const len = FC_HEADER_BYTES + (rnd() % 200);
      const b = new Uint8Array(len);
      b.set(full.subarray(0, FC_HEADER_BYTES));
      for (let i = FC_HEADER_BYTES; i < len; i++) b[i] = rnd();
      new DataView(b.buffer).setUint32(52, len - FC_HEADER_BYTES, true);
      assert.throws(() => dec.decode(b), FrameCodecError);
    }
    assert.throws(() => readHeader(new Uint8Array(10)), /truncated/);
    assert.throws(() => readHeader(new Uint8Array(64)), /version/);
  });
}
