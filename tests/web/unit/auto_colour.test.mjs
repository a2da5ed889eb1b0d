// auto_colour.test.mjs - the page's own choice of colouring: the first frame
// with particles of each stream (hello, new epoch) is judged, a heated one
// turns material colours to temperature, a uniform one turns the page's own
// temperature choice back, the user's choices stay; and an old world's frame
// that arrives after the `scene` message is not the one judged.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { AutoColour } from '../../../web-client/src/auto_colour.js';
import { decodeMessage } from '../../../web-client/src/decode.js';
import { FrameStream } from '../../../web-client/src/stream_v2.js';
import { wasmDecoderFactory } from '../oracle/wasm.mjs';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
// A view of n particles of one stream: hot (every other one 100 °C above the rest) or uniform.
function view(epoch, n, hot) {
  const temp = new Uint8Array(n).fill(60);
  if (hot) for (let i = 0; i < n; i += 2) temp[i] = 160;
  return { epoch, n, temp };
}

test('the first frame after a hello is judged: heated -> temperature, then no other frame of that stream', () => {
  const a = new AutoColour();
  assert.equal(a.frame(view(3, 500, true), 'material', false), 'temperature');
  assert.equal(a.frame(view(3, 500, false), 'temperature', true), null, 'judged once per stream');
  assert.equal(a.frame(view(3, 500, true), 'material', false), null);
  a.hello();
  assert.equal(a.frame(view(3, 500, true), 'material', false), 'temperature', 'a reconnect judges again');
});

test('a new epoch (scene load) is judged: uniform after the page chose temperature -> material', () => {
  const a = new AutoColour();
  assert.equal(a.frame(view(1, 400, true), 'material', false), 'temperature');
  assert.equal(a.frame(view(2, 400, false), 'temperature', true), 'material');
  assert.equal(a.frame(view(3, 400, true), 'material', false), 'temperature');
});

test('an old world\'s frame that arrives after the scene message is not the one judged', () => {
  // The server encodes frames on another thread: the heated world's last
  // frame (epoch 4) reaches the page after the `scene` message; the uniform
  // scene's first frame (epoch 5) is the one judged.
  const a = new AutoColour();
  assert.equal(a.frame(view(4, 400, true), 'material', false), 'temperature');
  assert.equal(a.frame(view(4, 400, true), 'temperature', true), null, 'the stale frame decides nothing');
  assert.equal(a.frame(view(5, 300, false), 'temperature', true), 'material');
});

test('a stream whose first frames are empty is judged at its first frame with particles', () => {
  const a = new AutoColour();
  assert.equal(a.frame(view(7, 0, false), 'material', false), null);
  assert.equal(a.frame(view(7, 0, false), 'material', false), null);
  assert.equal(a.frame(view(7, 50, true), 'material', false), 'temperature');
  assert.equal(a.frame({ epoch: 8, n: 50, temp: null }, 'temperature', true), null, 'no temperatures: nothing to judge');
  assert.equal(a.frame(view(8, 50, false), 'temperature', true), null, 'and that frame was the judged one');
});

test('the user\'s choices stay: temperature chosen by hand, and speed colours', () => {
  const a = new AutoColour();
  assert.equal(a.frame(view(1, 100, false), 'temperature', false), null, 'the user chose temperature');
  assert.equal(a.frame(view(2, 100, true), 'speed', false), null, 'the user chose speed');
  assert.equal(a.frame(view(3, 100, true), 'temperature', false), null, 'already temperature');
});

test('a decoded view carries its stream\'s epoch (the payload header\'s, PROTOCOL.md)', () => {
  const b = readFileSync(join(ROOT, 'protocol', 'golden', 's2c_frame.msgpack'));
  const s = new FrameStream(wasmDecoderFactory());
  s.reset(16);
  const v = s.view(decodeMessage(new Uint8Array(b)), 0).view;
  assert.equal(v.epoch, 1, 'the golden keyframe is of stream 1');
  assert.equal(new AutoColour().frame(v, 'material', false), 'temperature', 'its particles span -60..300 °C');
});
