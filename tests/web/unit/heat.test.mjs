// heat.test.mjs - the heat / cool tool's commands: fields and clamping to the
// protocol's ranges, the rate's sign, the throttle (about 8 a second while
// held, never closer than 0.1 s, nothing off the fluid), durations that cover
// late timers, and the stop on release.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { HeatTool, HEAT_DEFAULTS } from '../../../web-client/src/tools/heat.js';
import { cmd, HEAT } from '../../../web-client/src/protocol.js';

const P = [0.5, 0.25, 0.5];

test('heat command: exactly the protocol\'s fields, with the defaults', () => {
  const t = new HeatTool();
  assert.equal(HEAT_DEFAULTS.rate, 150);
  assert.equal(HEAT_DEFAULTS.radius, 0.3);
  t.begin(1);
  assert.deepEqual(t.tick(0, P), { type: 'heat', point: P, radius: 0.3, rate: 150, duration: 0.3 });
  assert.deepEqual(cmd.heat(P, 0.2, -40), { type: 'heat', point: P, radius: 0.2, rate: -40 }, 'duration is optional');
});

test('heat command: values are clamped to radius (0, 10], rate [-1000, 1000], duration (0, 10]', () => {
  assert.deepEqual(HEAT, { radius: [0.01, 10], rate: [-1000, 1000], duration: [0.01, 10] });
  const c = (r, rate, d) => { const x = cmd.heat(P, r, rate, d); return [x.radius, x.rate, x.duration]; };
  assert.deepEqual(c(50, 5000, 20), [10, 1000, 10]);
  assert.deepEqual(c(0, -5000, 0), [0.01, -1000, 0.01]);
  assert.deepEqual(c(-1, 0, -3), [0.01, 0, 0.01]);
  assert.deepEqual(c(0.3, 150, 0.3), [0.3, 150, 0.3]);
  assert.deepEqual(c(NaN, NaN, Infinity), [0.01, 0, 0.01], 'a non-finite rate becomes 0, never the -1000 end');
  assert.deepEqual(cmd.heat(['1', '2', '3'], '0.5', '7').point, [1, 2, 3]);
  const t = new HeatTool({ rate: 4000, radius: 30 });
  t.begin(-1);
  const x = t.tick(0, P);
  assert.equal(x.rate, -1000);
  assert.equal(x.radius, 10);
});

test('heat vs cool: the sign of the rate follows the tool, whatever the slider\'s sign', () => {
  const t = new HeatTool({ rate: 200 });
  t.begin(1);
  assert.equal(t.tick(0, P).rate, 200);
  t.end();
  t.begin(-1);
  assert.equal(t.tick(1000, P).rate, -200);
  t.rate = -75;
  t.end(); t.begin(1);
  assert.equal(t.tick(2000, P).rate, 75);
  t.end(); t.begin(-5);
  assert.equal(t.sign, -1);
});

test('throttle: about 8 a second while held, never closer than 100 ms, none off the fluid or released', () => {
  const t = new HeatTool();
  assert.equal(t.tick(0, P), null, 'not held');
  t.begin(1);
  assert.ok(t.tick(0, P), 'the press sends at once');
  assert.equal(t.tick(50, P), null);
  assert.equal(t.tick(99, P), null);
  assert.ok(t.tick(100, P));
  assert.equal(t.tick(150, null), null, 'off the fluid: nothing');
  assert.equal(t.lastSend, 100, 'and the throttle is not used up');
  assert.ok(t.tick(230, P));
  t.end();
  assert.equal(t.tick(1000, P), null, 'released');
  // Driven by the page's 125 ms timer for 2 s: 16 commands (8 Hz), each
  // lasting longer than the gap to the next, so the heating never lapses.
  const u = new HeatTool();
  u.begin(1);
  let n = 0, last = null, maxGap = 0;
  for (let now = 0; now < 2000; now += u.intervalMs) if (u.tick(now, P)) { if (last !== null) maxGap = Math.max(maxGap, now - last); last = now; n++; }
  assert.equal(n, 16);
  assert.ok(u.duration * 1000 > maxGap, `duration ${u.duration} s covers the ${maxGap} ms gap`);
  // Driven faster (a 60 Hz loop), it still sends at most 10 a second.
  const v = new HeatTool();
  v.begin(1);
  let m = 0;
  for (let now = 0; now < 1000; now += 1000 / 60) if (v.tick(now, P)) m++;
  assert.ok(m <= 10 && m >= 8, `${m} commands in 1 s at 60 Hz`);
  console.log(`REPORT heat: ${n} commands in 2 s from the 125 ms timer (largest gap ${maxGap} ms, each lasts ${u.duration * 1000} ms); ${m} in 1 s from a 60 Hz loop`);
});

test('duration: covers twice a late gap (up to 1 s); letting go stops the heating at once', () => {
  const t = new HeatTool();
  t.begin(1);
  assert.equal(t.tick(0, P).duration, 0.3);
  assert.equal(t.tick(125, P).duration, 0.3, 'on time: the base duration');
  assert.equal(t.tick(525, P).duration, 0.8, 'a 400 ms gap: 0.8 s');
  assert.equal(t.tick(3525, P).duration, 1, 'capped at 1 s');
  const stop = t.end();
  assert.deepEqual(stop, { type: 'heat', point: P, radius: 0.3, rate: 0, duration: 0.01 });
  assert.equal(t.end(), null, 'only once');
  t.begin(-1);
  assert.equal(t.end(), null, 'nothing sent, nothing to stop');
});
