// pace.test.mjs - the page's decoder pace (pace.js): a decoder slower than
// the stream asks for every 2nd, then 4th frame; one that keeps up again
// asks for more after a hold; one slow keyframe changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pacer, PACE_HOLD_MS } from '../../../web-client/src/pace.js';

const FRAME = 1000 / 30;

// Feeds n frames of decode time ms, arriving one frame interval (at the
// pacer's stride, or `every` ms) apart, from time t; returns the strides
// asked for and the end time.
function feed(p, n, ms, t, every = 0) {
  const asked = [];
  for (let i = 0; i < n; i++) {
    t += every || FRAME * p.stride;
    p.arrived(t);
    const s = p.note(ms, t);
    if (s) asked.push(s);
  }
  return { asked, t };
}

test('a decoder that keeps up stays at every frame, one slow keyframe included', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  let r = feed(p, 20, 5, 0);
  assert.deepEqual(r.asked, []);
  assert.equal(p.note(150, r.t + FRAME), 0, 'a keyframe of 150 ms');
  r = feed(p, 20, 5, r.t + FRAME);
  assert.deepEqual(r.asked, []);
  assert.equal(p.stride, 1);
});

test('a decoder slower than the stream asks for every 2nd frame, and not for fewer while it keeps up at that', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  // 47 ms per frame: the 100k dam break in Chromium's worker (docs/wire-v2.md)
  const r = feed(p, 40, 47, 0);
  assert.deepEqual(r.asked, [2]);
  assert.equal(p.stride, 2);
});

test('a decoder slower than two frames asks for every 4th, never beyond', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  const r = feed(p, 60, 120, 0);
  assert.deepEqual(r.asked, [2, 4]);
});

test('frames that come slower than the stream rate (a slow simulation) leave a decoder that keeps up with them alone', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  const r = feed(p, 40, 47, 0, 300);
  assert.deepEqual(r.asked, []);
  assert.equal(p.stride, 1);
  // and when they speed up to the stream's rate, the same decoder is too slow
  const r2 = feed(p, 40, 47, r.t);
  assert.deepEqual(r2.asked, [2]);
});

test('a decoder that became fast again gets every frame back, after the hold', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  let r = feed(p, 60, 120, 0);
  assert.equal(p.stride, 4);
  const changed = r.t;
  r = feed(p, 200, 4, r.t);
  assert.deepEqual(r.asked, [2, 1]);
  assert.equal(p.stride, 1);
  assert.ok(r.t - changed > 2 * PACE_HOLD_MS, 'the two steps each waited for the hold');
});

test('bad decode times are ignored', () => {
  const p = new Pacer();
  for (let i = 0; i < 20; i++) assert.equal(p.note(NaN, i * 40), 0);
  assert.equal(p.note(-1, 1000), 0);
  assert.equal(p.stride, 1);
});

test('frames that come in bursts (a busy page) do not make a decoder that keeps up look slow', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  let t = 0;
  for (let b = 0; b < 20; b++) { // 4 frames at once every 4 intervals
    t += 4 * FRAME;
    for (let k = 0; k < 4; k++) { p.arrived(t + k); assert.equal(p.note(10, t + k), 0); }
  }
  assert.equal(p.stride, 1);
  assert.ok(p.spacing() > 0.7 * FRAME && p.spacing() < 1.05 * FRAME, `spacing ${p.spacing()}`);
});
