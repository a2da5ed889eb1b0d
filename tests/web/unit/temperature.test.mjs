// temperature.test.mjs - the frames' temperature bytes through the client's
// own decode path (golden vectors in protocol/), byte -> °C -> colour of the
// Temperature view, the lookup texture the renderer uploads, and re-ordering
// temperatures by id like positions.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeMessage, remapByIds } from '../../../web-client/src/decode.js';
import { FrameStream } from '../../../web-client/src/stream_v2.js';
import { wasmDecoderFactory } from '../oracle/wasm.mjs';
import { tempOfByte, tempColour, tempLut, byteRange, spansTemperatures, legendGradient, RAMP, TEMP_RANGE } from '../../../web-client/src/temperature.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(ROOT, 'protocol', 'golden');
const { vectors } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8'));
const vector = (file) => vectors.find((v) => v.file === file);
function load(file) {
  const b = readFileSync(join(dir, file));
  const ab = new ArrayBuffer(b.length);
  new Uint8Array(ab).set(b);
  return new Uint8Array(ab);
}
const close = (a, b, eps = 1e-9) => a.length === b.length && a.every((x, i) => Math.abs(x - b[i]) <= eps);

function viewOf(file) {
  const s = new FrameStream(wasmDecoderFactory());
  s.reset(16);
  return s.view(decodeMessage(load(file)), 0).view;
}

test('golden frame: temp decodes through the v2 stream to the temperature bytes', () => {
  const v = vector('s2c_frame.msgpack');
  const f = viewOf(v.file);
  assert.ok(f.temp instanceof Uint8Array);
  assert.deepEqual([...f.temp], v.expect.decoded.temp);
  assert.deepEqual([f.tempLo, f.tempHi], v.expect.temp_range);
  assert.deepEqual([f.tempLo, f.tempHi], TEMP_RANGE);
  // Each byte is the input temperature rounded and clamped to the range.
  v.input.particles.forEach((p, i) => {
    const want = Math.min(TEMP_RANGE[1], Math.max(TEMP_RANGE[0], Math.round(p.temp) || 0));
    assert.equal(tempOfByte(f.temp[i], f.tempLo), want, `particle ${p.id}: ${p.temp} °C`);
  });
  console.log(`REPORT golden temps ${v.input.particles.map((p) => p.temp).join(', ')} °C -> bytes ${[...f.temp].join(', ')} -> ` +
    `${[...f.temp].map((b) => tempOfByte(b, f.tempLo)).join(', ')} °C`);
  const e = viewOf('s2c_frame_empty.msgpack');
  assert.equal(e.temp.length, 0);
});

test('ramp: byte -> °C -> colour at the stops and between them', () => {
  // byte -> °C with the protocol's lower end, -40 °C.
  assert.equal(tempOfByte(0), -40);
  assert.equal(tempOfByte(40), 0);
  assert.equal(tempOfByte(70), 30);
  assert.equal(tempOfByte(140), 100);
  assert.equal(tempOfByte(255), 215);
  // The stops, exactly.
  assert.deepEqual(tempColour(tempOfByte(0)), [0.20, 0.08, 0.42]);      // -40 °C deep violet
  assert.deepEqual(tempColour(tempOfByte(40)), [0.13, 0.42, 0.98]);     // 0 °C blue
  assert.deepEqual(tempColour(tempOfByte(70)), [0.95, 0.95, 0.95]);     // 30 °C white
  assert.deepEqual(tempColour(tempOfByte(100)), [1.00, 0.62, 0.18]);    // 60 °C orange
  assert.deepEqual(tempColour(tempOfByte(140)), [0.88, 0.14, 0.08]);    // 100 °C red
  assert.deepEqual(tempColour(tempOfByte(255)), [1.00, 0.98, 0.86]);    // 215 °C yellow-white
  // Between stops: linear. 20 °C is a third of the way from pale blue (15) to white (30).
  assert.ok(close(tempColour(20), [0.65, 0.81, 0.98333333333], 1e-9), String(tempColour(20)));
  assert.ok(close(tempColour(45), [0.975, 0.785, 0.565], 1e-9), String(tempColour(45)));
  // Outside the range: the ends.
  assert.deepEqual(tempColour(-100), RAMP[0][1]);
  assert.deepEqual(tempColour(1000), RAMP[RAMP.length - 1][1]);
  assert.deepEqual(tempColour(NaN), RAMP[0][1]);
  // Cold is blue-dominant, hot is red-dominant.
  for (let t = -40; t <= 10; t++) { const c = tempColour(t); assert.ok(c[2] > c[0], `${t} °C`); }
  for (let t = 40; t <= 215; t++) { const c = tempColour(t); assert.ok(c[0] > c[2], `${t} °C`); }
});

test('lookup texture: 256 RGBA8 texels, one per byte, for the frame\'s range', () => {
  const lut = tempLut(-40);
  assert.equal(lut.length, 1024);
  const texel = (b, l = lut) => [...l.subarray(4 * b, 4 * b + 4)];
  assert.deepEqual(texel(0), [51, 20, 107, 255]);
  assert.deepEqual(texel(40), [33, 107, 250, 255]);
  assert.deepEqual(texel(70), [242, 242, 242, 255]);
  assert.deepEqual(texel(140), [224, 36, 20, 255]);
  assert.deepEqual(texel(255), [255, 250, 219, 255]);
  // The golden frame's particles as the page colours them.
  const f = viewOf('s2c_frame.msgpack');
  const got = [...f.temp].map((b) => texel(b).slice(0, 3));
  // 20 °C: a third from pale blue to white; -60: clamped to -40; 36.6 -> 37 °C: 7/30 from white to
  // orange; 300 -> 215; -0.4 -> 0 °C blue; 99.4 -> 99 °C: 39/40 from orange to red.
  assert.deepEqual(got, [[166, 207, 251], [51, 20, 107], [245, 223, 196], [255, 250, 219], [33, 107, 250], [225, 39, 21]]);
  // Another lower end shifts the table.
  assert.deepEqual(texel(0, tempLut(0)), texel(40));
  // Filling a given array allocates nothing.
  const out = new Uint8Array(1024);
  assert.equal(tempLut(-40, out), out);
});

test('spread: a scene whose particles differ by more than 2 °C counts as spanning temperatures', () => {
  assert.equal(spansTemperatures(new Uint8Array([60, 61, 62, 60]), 4), false);
  assert.equal(spansTemperatures(new Uint8Array([60, 61, 63]), 3), true);
  assert.equal(spansTemperatures(new Uint8Array([60, 61, 63]), 2), false, 'only the first n count');
  assert.equal(spansTemperatures(new Uint8Array([]), 0), false);
  assert.equal(spansTemperatures(null, 0), false);
  assert.deepEqual(byteRange(new Uint8Array([9, 3, 250, 7])), { min: 3, max: 250 });
  const f = viewOf('s2c_frame.msgpack');
  assert.equal(spansTemperatures(f.temp, f.n), true);
});

test('legend: a CSS gradient with the ramp\'s stops at their places in the range', () => {
  const g = legendGradient(-40, 215);
  assert.match(g, /^linear-gradient\(to right, rgb\(51,20,107\) 0%, /);
  assert.match(g, /rgb\(242,242,242\) 27\.5%/);          // 30 °C: 70 / 255 of the way
  assert.match(g, /rgb\(255,250,219\) 100%\)$/);
});

test('temperatures are re-ordered by id like positions (one byte per particle)', () => {
  // Frame A: ids 0-3 and 7; frame B: ids 1-2, 7, 8 (8 is new).
  const runsA = new Uint32Array([0, 4, 7, 1]), tempA = new Uint8Array([10, 11, 12, 13, 17]);
  const runsB = new Uint32Array([1, 2, 7, 2]), tempB = new Uint8Array([91, 92, 97, 98]);
  const out = new Uint8Array(4);
  const matched = remapByIds(runsA, tempA, runsB, tempB, out, 1);
  assert.equal(matched, 3);
  assert.deepEqual([...out], [11, 12, 17, 98]);
});
