// limits.test.mjs - hello.limits read by the client: the golden hello's
// limits are the fallback's, a hello with other limits changes what the
// push, heat and step commands are clamped to and how big a message may be,
// missing or bad values keep the fallback, and the rate budget follows the
// server's token bucket.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { decodeMessage } from '../../../web-client/src/decode.js';
import { DEFAULT_LIMITS, readLimits, heatRanges, RateBudget, commandCost } from '../../../web-client/src/limits.js';
import { PushTool } from '../../../web-client/src/tools/push.js';
import { HeatTool } from '../../../web-client/src/tools/heat.js';
import { cmd } from '../../../web-client/src/protocol.js';

const golden = decodeMessage(new Uint8Array(readFileSync(new URL('../../../protocol/golden/s2c_hello.msgpack', import.meta.url))));
const P = [0.5, 0.25, 0.5], DIR = [1, 0, 0];

test('limits: the fallback is what the golden hello sends; a hello without limits keeps it', () => {
  assert.deepEqual({ ...readLimits(golden) }, { ...DEFAULT_LIMITS });
  assert.deepEqual(Object.keys(golden.limits).sort(), Object.keys(DEFAULT_LIMITS).sort(), 'every limit the server sends is read');
  assert.deepEqual({ ...readLimits({}) }, { ...DEFAULT_LIMITS });
  assert.deepEqual({ ...readLimits(null) }, { ...DEFAULT_LIMITS });
  const odd = readLimits({ limits: { push_strength: -3, heat_rate: 'lots', steps: NaN, max_msg: 0, heat_radius: 2 } });
  assert.equal(odd.push_strength, 50, 'a negative value keeps the fallback');
  assert.equal(odd.heat_rate, 1000, 'a string keeps the fallback');
  assert.equal(odd.steps, 1000);
  assert.equal(odd.max_msg, 4096);
  assert.equal(odd.heat_radius, 2, 'a good value is taken');
});

test('limits: a hello with other limits changes what the tools clamp to', () => {
  const small = readLimits({ ...golden, limits: { ...golden.limits, push_strength: 4, push_radius: 0.2, heat_rate: 90, heat_radius: 0.5, heat_duration: 0.25, steps: 3 } });
  // Push: before the hello the protocol's 50 m/s and 100 m; after it the server's.
  const push = new PushTool();
  assert.deepEqual(push.command(P, DIR, 0.5, 30), cmd.push(P, DIR, 0.5, 30));
  assert.deepEqual(push.command(P, DIR, 150, 80), cmd.push(P, DIR, 100, 50));
  push.setLimits(small);
  assert.deepEqual(push.command(P, DIR, 0.5, 30), cmd.push(P, DIR, 0.2, 4));
  assert.deepEqual(push.command(P, DIR, 0.1, 3), cmd.push(P, DIR, 0.1, 3), 'values inside the limits pass unchanged');
  // Heat: rate, radius and duration.
  const heat = new HeatTool({ rate: 500, radius: 1, duration: 0.3 });
  heat.begin(1);
  assert.deepEqual(heat.tick(0, P), { type: 'heat', point: P, radius: 1, rate: 500, duration: 0.3 });
  heat.setLimits(small);
  assert.deepEqual(heat.tick(1000, P), { type: 'heat', point: P, radius: 0.5, rate: 90, duration: 0.25 });
  heat.begin(-1);
  assert.equal(heat.tick(2000, P).rate, -90, 'cooling is bounded the same');
  assert.deepEqual(heat.end(), { type: 'heat', point: P, radius: 0.5, rate: 0, duration: 0.01 });
  assert.deepEqual(heatRanges(small), { radius: [0.01, 0.5], rate: [-90, 90], duration: [0.01, 0.25] });
  // Step.
  assert.equal(cmd.step(10).steps, 10);
  assert.equal(cmd.step(10, small).steps, 3);
  assert.equal(cmd.step(5000).steps, 1000);
  console.log(`REPORT limits: push 30 m/s -> ${push.command(P, DIR, 0.5, 30).strength} m/s, heat 500 K/s -> 90 K/s, step 10 -> ${cmd.step(10, small).steps} under a hello with smaller limits`);
});

test('rate budget: burst, then the rate; fire-and-forget messages wait for tokens', () => {
  const b = new RateBudget(readLimits({ limits: { rate_per_s: 10, rate_burst: 20 } }));
  let n = 0;
  for (let i = 0; i < 50; i++) if (b.take(1, 0)) n++;
  assert.equal(n, 20, 'the burst at once');
  assert.equal(b.take(1, 50), false, 'half a token after 50 ms');
  assert.equal(b.take(1, 100), true, 'one after 100 ms at 10 a second');
  assert.equal(b.take(1, 10000), true);
  assert.ok(b.tokens <= 20, 'refilled to the burst at most');
  assert.equal(commandCost('load_scene'), 30);
  assert.equal(commandCost('body_create'), 5);
  assert.equal(commandCost('cursor'), 1);
  b.charge(30, 10000);
  assert.equal(b.take(1, 10000), false, 'a scene load sent anyway spent what there was');
});
