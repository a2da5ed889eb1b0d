// interp.test.mjs - matching particles by id between frames (emitters add
// ids, drains remove them) and the playback timeline.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { remapByIds, expandRuns } from '../../../web-client/src/decode.js';
import { Timeline } from '../../../web-client/src/interp.js';

// Builds runs and positions (3 uint16 per particle, x = id so matches are visible).
function frame(ids, tag) {
  const runs = [];
  for (const id of ids) {
    const r = runs.length;
    if (r && runs[r - 2] + runs[r - 1] === id) runs[r - 1]++;
    else runs.push(id, 1);
  }
  const pos = new Uint16Array(3 * ids.length);
  ids.forEach((id, i) => { pos[3 * i] = id; pos[3 * i + 1] = tag; pos[3 * i + 2] = i; });
  return { runs: new Uint32Array(runs), pos, ids };
}

// The obvious per-id reference.
function reference(a, b) {
  const m = new Map(a.ids.map((id, i) => [id, i]));
  const out = new Uint16Array(b.pos.length);
  b.ids.forEach((id, i) => {
    const j = m.get(id);
    const src = j === undefined ? b.pos : a.pos, k = j === undefined ? i : j;
    out.set(src.subarray(3 * k, 3 * k + 3), 3 * i);
  });
  return out;
}

const cases = {
  identical: [[0, 1, 2, 3, 4], [0, 1, 2, 3, 4]],
  'emitter appends': [[0, 1, 2, 3], [0, 1, 2, 3, 4, 5, 6]],
  'drain removes from the middle': [[0, 1, 2, 3, 4, 5, 6, 7], [0, 1, 4, 5, 7]],
  'both at once': [[2, 3, 4, 9, 10, 11, 20], [0, 3, 4, 5, 10, 20, 21, 22]],
  'disjoint (new scene)': [[0, 1, 2], [10, 11]],
  'empty before': [[], [1, 2, 3]],
  'empty after': [[1, 2, 3], []],
};
for (const [name, [ia, ib]] of Object.entries(cases)) {
  test(`remapByIds: ${name}`, () => {
    const a = frame(ia, 1), b = frame(ib, 2);
    assert.deepEqual([...expandRuns(b.runs)], ib);
    const out = new Uint16Array(b.pos.length);
    const matched = remapByIds(a.runs, a.pos, b.runs, b.pos, out);
    assert.deepEqual([...out], [...reference(a, b)]);
    assert.equal(matched, ib.filter((id) => ia.includes(id)).length);
  });
}

test('remapByIds: random id sets against the reference', () => {
  let seed = 12345;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  for (let it = 0; it < 200; it++) {
    const pick = () => [...Array(200).keys()].filter(() => rnd() < 0.6);
    const a = frame(pick(), 1), b = frame(pick(), 2);
    const out = new Uint16Array(b.pos.length);
    remapByIds(a.runs, a.pos, b.runs, b.pos, out);
    assert.deepEqual([...out], [...reference(a, b)]);
  }
});

test('timeline: draws between the two frames bracketing now - delay', () => {
  const tl = new Timeline(4);
  tl.setNominal(100);
  const f = (tick) => ({ tick, n: 0 });
  for (let k = 0; k < 4; k++) tl.push(f(k), 1000 + 100 * k, k > 0);
  assert.ok(Math.abs(tl.interval - 100) < 1e-9);
  const s = tl.sample(1300 + 150 + 50);      // render time 1350: halfway between ticks 3.5 -> frames at 1300 and beyond
  assert.equal(s.b, tl.newest);
  assert.equal(s.alpha, 1);                   // nothing newer than the newest: hold it
  const m = tl.sample(1000 + 150 + 150);      // render time 1150: halfway between the frames at 1100 and 1200
  assert.equal(m.a.f.tick, 1);
  assert.equal(m.b.f.tick, 2);
  assert.ok(Math.abs(m.alpha - 0.5) < 1e-9);
  assert.equal(tl.frames.length, 4);
  tl.push(f(4), 1400, true);
  assert.equal(tl.frames.length, 4, 'keeps a bounded number of frames');
});

test('timeline: jittered arrivals give monotonic, evenly spaced timestamps', () => {
  const tl = new Timeline(8);
  const jitter = [0, 9, -7, 12, -10, 4, 0, -3, 8, -8];
  let last = -Infinity;
  for (let k = 0; k < 40; k++) {
    const e = tl.push({ tick: k }, 1000 + 33.3 * k + jitter[k % jitter.length], true);
    assert.ok(e.ts > last);
    if (k > 10) assert.ok(Math.abs(e.ts - last - 33.3) < 8, `spacing ${e.ts - last}`);
    last = e.ts;
  }
});

test('timeline: the order id changes only when the id runs change', () => {
  const tl = new Timeline(4);
  const a = tl.push({}, 0, false), b = tl.push({}, 33, true), c = tl.push({}, 66, false);
  assert.equal(a.order, b.order);
  assert.notEqual(b.order, c.order);
});

test('timeline: a heartbeat gap (paused server, 1 frame/s) does not stretch the delay', () => {
  const tl = new Timeline(4);
  tl.setNominal(1000 / 30);
  for (let k = 0; k < 10; k++) tl.push({}, 33.3 * k, true);
  for (let k = 0; k < 5; k++) tl.push({}, 400 + 1000 * k, true);
  assert.ok(tl.delay < 120, `delay ${tl.delay}`);
});

test('timeline: 60 Hz drawing of 30 Hz frames with jitter advances evenly (no stalls, no jumps)', () => {
  const tl = new Timeline(4);
  tl.setNominal(1000 / 30);
  let seed = 7;
  const rnd = () => ((seed = (seed * 1103515245 + 12345) >>> 0) / 2 ** 32);
  const arrivals = [];
  for (let k = 0; k < 300; k++) arrivals.push({ t: 1000 + k * 1000 / 30 + (rnd() - 0.5) * 16, tick: 2 * k });
  arrivals.sort((a, b) => a.t - b.t);
  let next = 0, last = null;
  const steps = [];
  for (let now = 1000; now < 1000 + 9500; now += 1000 / 60) {
    while (next < arrivals.length && arrivals[next].t <= now) { tl.push({ tick: arrivals[next].tick }, arrivals[next].t, true); next++; }
    const s = tl.sample(now);
    if (!s) continue;
    const shown = s.a.f.tick + s.alpha * (s.b.f.tick - s.a.f.tick);   // in ticks: 2 per frame, 1 per 60 Hz draw
    if (last !== null && now > 1500) steps.push(shown - last);
    last = shown;
  }
  const min = Math.min(...steps), max = Math.max(...steps);
  const mean = steps.reduce((x, y) => x + y, 0) / steps.length;
  console.log(`60 Hz draws: advance per draw ${mean.toFixed(3)} ticks (min ${min.toFixed(3)}, max ${max.toFixed(3)})`);
  assert.ok(Math.abs(mean - 1) < 0.02);
  assert.ok(min >= 0, 'never goes backwards');
  assert.ok(min > 0.5 && max < 1.5, `uneven: ${min}..${max}`);
});
