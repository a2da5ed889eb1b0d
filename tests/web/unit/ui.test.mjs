// ui.test.mjs - slider mapping, the heads-up display's rates, and the probes
// as the frames carry them and the display shows them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { toSlider, fromSlider, formatValue, STEPS } from '../../../web-client/src/ui/sliders.js';
import { StreamStats, Ring } from '../../../web-client/src/stats.js';
import { probeRows } from '../../../web-client/src/ui/hud.js';
import { probesOf } from '../../../web-client/src/stream_v2.js';

test('sliders: ends map to ends, the mapping is monotonic and round-trips', () => {
  for (const [min, max] of [[0, 1], [0.1, 100], [0, 20000], [1, 10], [0, 60]]) {
    assert.equal(toSlider(min, min, max), 0);
    assert.equal(toSlider(max, min, max), STEPS);
    assert.equal(fromSlider(0, min, max), min);
    assert.equal(fromSlider(STEPS, min, max), max);
    let last = -Infinity;
    for (let p = 0; p <= STEPS; p += 50) { const v = fromSlider(p, min, max); assert.ok(v >= last); last = v; }
    for (const v of [min, (min + max) / 3, max]) {
      const back = fromSlider(toSlider(v, min, max), min, max);
      assert.ok(Math.abs(back - v) <= (max - min) * 0.01 + 1e-9, `${v} -> ${back} in [${min}, ${max}]`);
    }
  }
  assert.ok(toSlider(600, 0, 20000) > 200, 'a wide range gives small defaults room');
  assert.equal(toSlider(-5, 0, 1), 0, 'clamped');
});

test('sliders: values are shown with sensible precision', () => {
  assert.equal(formatValue(0), '0');
  assert.equal(formatValue(1500), '1500');
  assert.equal(formatValue(12.345), '12.3');
  assert.equal(formatValue(0.0123), '0.012');
});

test('stats: tick rate, realtime ratio and bytes per second over the window', () => {
  const s = new StreamStats(1000);
  for (let k = 0; k <= 30; k++) { s.frame(1000 + k * 100 / 3, 2 * k, k / 30); s.received(1000 + k * 100 / 3, 1000); }
  const r = s.rates(2000);
  assert.ok(Math.abs(r.tickHz - 60) < 1, `${r.tickHz}`);
  assert.ok(Math.abs(r.realtime - 1) < 0.02, `${r.realtime}`);
  assert.ok(Math.abs(r.bytesPerS - 31000) < 2000, `${r.bytesPerS}`);
});

test('ring: bounded, with a summary', () => {
  const r = new Ring(10);
  for (let i = 1; i <= 25; i++) r.add(i);
  const s = r.summary();
  assert.equal(s.n, 10);
  assert.equal(s.max, 25);
  assert.equal(s.median, 21);
});

test('presence: label text stays readable on every cursor colour', async () => {
  const { luminance } = await import('../../../web-client/src/ui/presence.js');
  assert.ok(luminance('#ffffff') > 0.99);
  assert.ok(luminance('#000075') < 0.2, 'navy gets white text');
  assert.ok(luminance('#ffe119') > 0.2, 'yellow gets dark text');
});

test('sliders: a huge range (Young\'s modulus, 0 to 1e9 Pa) is logarithmic, with 0 at the left end', async () => {
  const { scaleOf } = await import('../../../web-client/src/ui/sliders.js');
  assert.equal(scaleOf(0, 1e9), 'log');
  assert.equal(scaleOf(0, 20000), 'cubic');
  assert.equal(scaleOf(0, 1), 'linear');
  const [min, max] = [0, 1e9];
  assert.equal(toSlider(0, min, max), 0);
  assert.equal(fromSlider(0, min, max), 0);
  assert.equal(toSlider(max, min, max), STEPS);
  assert.equal(fromSlider(STEPS, min, max), max);
  assert.equal(fromSlider(1, min, max), 1000, 'position 1 is six decades below the top');
  let last = -Infinity, worst = 0;
  for (let p = 0; p <= STEPS; p++) { const v = fromSlider(p, min, max); assert.ok(v > last || p === 0); last = v; }
  for (const v of [1e3, 5e4, 2e5, 3e7, 7e8]) {
    const back = fromSlider(toSlider(v, min, max), min, max);
    worst = Math.max(worst, Math.abs(back - v) / v);
  }
  console.log(`REPORT log slider 0..1e9: round trip within ${(100 * worst).toFixed(2)} % (relative) from 1e3 to 7e8`);
  assert.ok(worst < 0.01);
  assert.ok(toSlider(2e5, min, max) > 300 && toSlider(2e5, min, max) < 500, 'goo\'s 2e5 Pa sits mid-travel');
  assert.equal(formatValue(1e9), '1.00e9');
  assert.equal(formatValue(1e-6), '1.0e-6');
});

test('sliders: every parameter of the golden hello (however many) maps its materials\' values and ends', async () => {
  const { readFileSync } = await import('node:fs');
  const { decodeMessage } = await import('../../../web-client/src/decode.js');
  const h = decodeMessage(new Uint8Array(readFileSync(new URL('../../../protocol/golden/s2c_hello.msgpack', import.meta.url))));
  assert.ok(h.params.length >= 24, `${h.params.length} parameters`);
  for (const info of h.params) {
    if (info.flag) continue;
    assert.equal(fromSlider(toSlider(info.min, info.min, info.max), info.min, info.max), info.min, info.name);
    assert.equal(fromSlider(toSlider(info.max, info.min, info.max), info.min, info.max), info.max, info.name);
    for (const m of h.materials) {
      const v = m.params[info.name];
      assert.ok(Number.isFinite(v), `${m.name}.${info.name}`);
      const back = fromSlider(toSlider(v, info.min, info.max), info.min, info.max);
      assert.ok(back >= info.min && back <= info.max);
      // Within 1 % of the value or half a percent of the range, whichever is looser.
      assert.ok(Math.abs(back - v) <= Math.max(0.01 * Math.abs(v), 0.005 * (info.max - info.min)), `${m.name}.${info.name} ${v} -> ${back}`);
    }
  }
});

test('probes: a frame\'s map of finite numbers, or null; shown two to a row in their units', () => {
  assert.equal(probesOf({}), null, 'a world without probes');
  assert.equal(probesOf({ probes: [1, 2] }), null, 'not a map');
  assert.deepEqual(probesOf({ probes: { H1: 0.25, bad: 'x', nan: NaN, P1: 11200 } }), { H1: 0.25, P1: 11200 });
  assert.equal(probesOf({ probes: { bad: 'x' } }), null);
  const rows = probeRows({ H1: 0.25, H2: 0.0004, P1: 11200.4, X: 1.23456 }, { H1: 'm', H2: 'm', P1: 'Pa' });
  assert.deepEqual(rows, [['H1', '0.250 m', 'H2', '0.000 m'], ['P1', '11200 Pa', 'X', '1.235']]);
  assert.deepEqual(probeRows({ H1: 1 }), [['H1', '1.000']], 'units not known yet');
  assert.deepEqual(probeRows(null), []);
});
