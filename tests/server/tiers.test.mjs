// tiers.test.mjs - tiers of detail on shaped links: a viewer of the 20k dam
// break on 1 Mbit/s is moved to a coarser tier, whose frames decode to fewer
// particles (about 1 in keep) on a coarser grid (step = lod.step, a multiple
// of hello.frame_step); pinning the full world brings every particle back
// whatever the link, unpinning hands the choice back to the link; raised to
// 10 Mbit/s, the link is given the full world again; on 10 Mbit/s from the
// start every frame is the full world.  Each link is a private network
// namespace (`unshare -n`) whose loopback a token bucket shapes (`tc ...
// tbf`), the server and the client inside it (tiers_link.mjs); what it saw
// comes back as counts and steps, never a time.  A relay's viewer plays the
// 1 Mbit/s scenario too, the relay's client port alone shaped.  Skipped,
// with the reason, where such a namespace cannot be made (it needs root).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const SHAPE = 'ip link set lo mtu 1500 up && tc qdisc add dev lo root tbf rate "$0" burst 32kb latency 50ms';
const RUN = join(dirname(fileURLToPath(import.meta.url)), 'tiers_link.mjs');
const probe = spawnSync('unshare', ['-n', 'sh', '-c', SHAPE, '1mbit'], { encoding: 'utf8' });
const cannot = probe.status !== 0 ? `cannot shape a private network namespace: ${(probe.stderr || probe.error || '').toString().trim()}` : null;

// One scenario on a link of `rate`: what tiers_link.mjs printed.
function shaped(rate, mode) {
  const r = spawnSync('unshare', ['-n', 'sh', '-c', `${SHAPE} && exec node "$1" "$2"`, rate, RUN, mode], {
    encoding: 'utf8', env: process.env, timeout: 10 * 60000,
  });
  const line = (r.stdout || '').trim().split('\n').pop();
  assert.equal(r.status, 0, `the run on ${rate} failed: ${(r.stderr || '').trim().slice(-3000)}`);
  return JSON.parse(line);
}

// A decoded frame of tier `tier`: its count and grid as that tier's.
function assertTier(f, out, what) {
  assert.ok(f, `${what}: no frame decoded`);
  assert.equal(f.n, f.msgN, `${what}: the message's n is the payload's`);
  if (f.tier === 0) {
    assert.equal(f.n, out.particles, `${what}: the full world has every particle`);
    assert.ok(Math.abs(f.step - out.frame_step) < 1e-9, `${what}: step ${f.step}, the stream's ${out.frame_step}`);
    return;
  }
  const mult = f.step / out.frame_step;
  assert.ok(f.keep >= 2 && mult >= 2 && Math.abs(mult - Math.round(mult)) < 1e-4, `${what}: 1 in ${f.keep}, step ${mult} times the stream's`);
  assert.ok(Math.abs(f.lodStep - f.step) < 1e-6, `${what}: lod.step ${f.lodStep} is the payload's grid step ${f.step}`);
  assert.ok(f.n < out.particles && f.n > (0.8 * out.particles) / f.keep && f.n < (1.2 * out.particles) / f.keep,
    `${what}: ${f.n} of ${out.particles} particles, 1 in ${f.keep}`);
}

test('1 Mbit/s: a coarser tier with fewer particles on a coarser grid; pinned, the full world; raised to 10 Mbit/s, the full world again', { skip: cannot ?? false }, () => {
  const out = shaped('1mbit', 'slow');
  console.log(`    1 Mbit/s: tier ${out.coarse.tier} (1 in ${out.coarse.keep}, ${out.coarse.n} of ${out.particles} particles, step ${(out.coarse.step * 1000).toFixed(2)} mm); pinned ${out.pinned.n}; unpinned tier ${out.unpinned.tier}; raised: tier ${out.back.tier}, ${out.back.n} particles; ${out.refused} refused`);
  assertTier(out.coarse, out, 'on 1 Mbit/s');
  assert.ok(out.coarse.tier >= 1 && out.coarse_client.tier >= 1, '/api/clients shows the coarser tier');
  assertTier(out.pinned, out, 'pinned');
  assert.equal(out.pinned_client.full_detail, true);
  assert.equal(out.pinned_client.tier, 0);
  for (const f of out.pinned_after) assertTier(f, out, 'pinned, later');
  assert.ok(out.pinned_after.every((f) => f.tier === 0), 'pinned: every frame after is the full world');
  assertTier(out.unpinned, out, 'unpinned');
  assert.equal(out.raised, true, 'tc changed the link');
  assertTier(out.back, out, 'raised to 10 Mbit/s');
  assert.equal(out.back_client.tier, 0);
  assert.equal(out.refused, 0, 'no payload refused');
});

// A relay's viewer: only the relay's client port is shaped (tiers_link.mjs, relay).
const haveNats = spawnSync('nats-server', ['--version']).status === 0;
const CLASSES = 'ip link set lo up && tc qdisc add dev lo root handle 1: htb default 20 && tc class add dev lo parent 1: classid 1:10 htb rate 1gbit quantum 60000 && tc filter add dev lo parent 1: protocol ip prio 1 u32 match ip sport 80 0xffff flowid 1:10';
const classes = cannot ? null : spawnSync('unshare', ['-n', 'sh', '-c', CLASSES], { encoding: 'utf8' });
const relaySkip = cannot ?? (!haveNats ? 'nats-server is not installed (scripts/deps.sh test installs it)'
  : classes.status !== 0 ? `cannot shape one port (tc htb and u32): ${(classes.stderr || '').trim()}` : false);
test('a relay\'s viewer on 1 Mbit/s: the coarser tier the sim node codes for it; pinned, the full world; raised, the full world again', { skip: relaySkip }, () => {
  const r = spawnSync('unshare', ['-n', 'sh', '-c', 'ip link set lo mtu 1500 up && exec node "$0" relay', RUN], {
    encoding: 'utf8', env: process.env, timeout: 10 * 60000,
  });
  assert.equal(r.status, 0, `the relay's run failed: ${(r.stderr || '').trim().slice(-3000)}`);
  const out = JSON.parse((r.stdout || '').trim().split('\n').pop());
  console.log(`    relay, 1 Mbit/s: tier ${out.coarse.tier} (1 in ${out.coarse.keep}, ${out.coarse.n} of ${out.particles} particles); pinned ${out.pinned.n}; unpinned tier ${out.unpinned.tier}; raised: tier ${out.back.tier}, ${out.back.n} particles; ${out.refused} refused`);
  assertTier(out.coarse, out, 'a relay\'s viewer on 1 Mbit/s');
  assertTier(out.pinned, out, 'pinned');
  assert.ok(out.pinned_after.every((f) => f.tier === 0), 'pinned: every frame after is the full world');
  assertTier(out.unpinned, out, 'unpinned');
  assert.ok(out.unpinned.tier >= 1, 'unpinned: a coarser tier again');
  assert.equal(out.raised, true, 'tc changed the link');
  assertTier(out.back, out, 'raised to 10 Mbit/s');
  assert.equal(out.refused, 0, 'no payload refused');
});

test('10 Mbit/s: every frame the full world, every particle on the stream\'s grid', { skip: cannot ?? false }, () => {
  const out = shaped('10mbit', 'fast');
  const tiers = out.frames.map((f) => f.tier);
  console.log(`    10 Mbit/s: ${out.frames.length} frames, tiers ${[...new Set(tiers)].join(',')}, ${out.refused} refused`);
  for (const f of out.frames) assertTier(f, out, '10 Mbit/s');
  assert.ok(tiers.every((t) => t === 0), `every frame tier 0 (${tiers.join('')})`);
  assert.equal(out.client.tier, 0);
  assert.equal(out.refused, 0);
});
