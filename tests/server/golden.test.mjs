// golden.test.mjs - the JavaScript side of protocol/golden: @msgpack/msgpack
// (what the browser uses) decodes every golden vector to its meaning, and the
// binary frame fields can be viewed as typed arrays without copying.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { decode } from '@msgpack/msgpack';
import { ROOT } from './lib.mjs';

const dir = join(ROOT, 'protocol', 'golden');
const { vectors, protocol_version: version } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8'));

function load(file) {
  const b = readFileSync(join(dir, file));
  // Copy into a fresh ArrayBuffer at offset 0, as a browser WebSocket delivers it.
  const ab = new ArrayBuffer(b.length);
  new Uint8Array(ab).set(b);
  return new Uint8Array(ab);
}

test('golden: protocol version is 1 and there are vectors for every message kind', () => {
  assert.equal(version, 1);
  const files = vectors.filter((v) => v.file).map((v) => v.file);
  for (const f of ['s2c_hello', 's2c_frame', 's2c_param', 's2c_scene', 's2c_state', 's2c_reply_push', 's2c_reply_error',
    'c2s_push', 'c2s_set_param', 'c2s_load_scene', 'c2s_pause', 'c2s_resume', 'c2s_step', 'c2s_emitter', 'c2s_cursor'])
    assert.ok(files.includes(`${f}.msgpack`), f);
});

for (const v of vectors.filter((x) => x.file && x.direction === 'client_to_server')) {
  test(`golden: ${v.file} decodes to its meaning`, () => {
    assert.deepEqual(decode(load(v.file)), v.expect);
  });
}

for (const v of vectors.filter((x) => x.file && x.direction === 'server_to_client')) {
  test(`golden: ${v.file} decodes to its meaning`, () => {
    const bytes = load(v.file);
    const m = decode(bytes);
    if (m.type !== 'frame') {
      assert.deepEqual(m, v.expect);
      return;
    }
    const { pos, ids, mat, temp, ...rest } = m;
    for (const k of Object.keys(rest)) if (k.startsWith('_')) delete rest[k]; // alignment padding
    const { ids_u32: eIds, pos_u16: ePos, mat_u8: eMat, temp_u8: eTemp, ...eRest } = v.expect;
    assert.deepEqual(rest, eRest);
    // bin fields are views into the message: no copy, and aligned for typed arrays.
    assert.equal(pos.buffer, bytes.buffer);
    assert.equal(pos.byteOffset % 4, 0, 'pos payload aligned');
    assert.equal(ids.byteOffset % 4, 0, 'ids payload aligned');
    assert.deepEqual([...new Uint16Array(pos.buffer, pos.byteOffset, pos.byteLength / 2)], ePos);
    assert.deepEqual([...new Uint32Array(ids.buffer, ids.byteOffset, ids.byteLength / 4)], eIds);
    assert.deepEqual([...mat], eMat);
    assert.deepEqual([...temp], eTemp);
    // Temperatures decode as T = temp_range[0] + byte, within half a degree inside the range.
    v.input.particles.forEach((p, k) => {
      const want = Math.min(Math.max(p.temp, m.temp_range[0]), m.temp_range[1]);
      assert.ok(Math.abs(m.temp_range[0] + temp[k] - want) <= 0.5, `particle ${p.id} temperature`);
    });
    // Dequantizing gives the input positions back within one quantization step.
    const b = m.bounds;
    v.input.particles.forEach((p, k) => {
      for (let a = 0; a < 3; a++) {
        const want = Math.min(Math.max(p.pos[a], b[a]), b[a + 3]);
        const got = b[a] + (ePos[3 * k + a] / 65535) * (b[a + 3] - b[a]);
        assert.ok(Math.abs(got - want) <= (b[a + 3] - b[a]) / 65535, `particle ${p.id} axis ${a}`);
      }
    });
  });
}
