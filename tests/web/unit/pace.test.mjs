// pace.test.mjs - the page's decoder pace (pace.js): a decoder slower than
// the stream asks for every 2nd, then 4th frame; one that keeps up again
// asks for more after a hold; one slow keyframe changes nothing.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Pacer, PACE_WINDOW, PACE_HOLD_MS } from '../../../web-client/src/pace.js';

const FRAME = 1000 / 30;

// Feeds n frames of decode time ms, one frame interval (at the pacer's
// stride) apart, from time t; returns the strides asked for and the end time.
function feed(p, n, ms, t, waiting = 0) {
  const asked = [];
  for (let i = 0; i < n; i++) {
    t += FRAME * p.stride;
    const s = p.note(ms, waiting, t);
    if (s) asked.push(s);
  }
  return { asked, t };
}

test('a decoder that keeps up stays at every frame, one slow keyframe included', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  let r = feed(p, 20, 5, 0);
  assert.deepEqual(r.asked, []);
  assert.equal(p.note(150, 0, r.t + FRAME), 0, 'a keyframe of 150 ms');
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

test('a backlog in the decoder halves the rate even before the median shows it', () => {
  const p = new Pacer();
  p.setFrameMs(FRAME);
  const r = feed(p, PACE_WINDOW, 20, 2000, 3);
  assert.deepEqual(r.asked, [2]);
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
  for (let i = 0; i < 20; i++) assert.equal(p.note(NaN, 0, i * 40), 0);
  assert.equal(p.note(-1, 0, 1000), 0);
  assert.equal(p.stride, 1);
});
