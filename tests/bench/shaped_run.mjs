// shaped_run.mjs - one viewer of the 20k dam break behind a shaped link,
// run INSIDE a private network namespace whose loopback the caller shaped
// (tests/bench/shaped.mjs: `unshare -n`, `ip link set lo mtu 1500 up`, `tc
// qdisc add dev lo root tbf rate R burst 32kb latency 50ms`).  Starts the server
// there, watches the first SECONDS of the dam break, pushes every 0.3 s, and
// prints one JSON line: frames per second received and decoded, the
// push-to-frame latency of each push (sent -> the first decoded frame whose
// tick is at or after the tick its reply names), bits per particle of the
// frames received, keyframes and refused payloads, the frames of each tier of
// detail, and (RAISE_TO set: the link is changed to that rate, `tc qdisc
// change`, half way) the time from the change to the first full-world frame.
// usage: [RAISE_TO=10mbit] node shaped_run.mjs SECONDS [server args...]
import { spawnSync } from 'node:child_process';
import { startServer, connect, stopAll, sleep } from '../server/lib.mjs';

const seconds = Number(process.argv[2] || 10);
const extra = process.argv.slice(3);
const debug = process.env.SHAPED_DEBUG ? ['--log-level', 'debug'] : [];
const s = await startServer(['--scene', 'dam_break', '--particles', '20000', ...debug, ...extra]);
const med = (a) => { const b = [...a].sort((x, y) => x - y); return b.length ? b[b.length >> 1] : null; };
const out = { seconds, frames: 0, fps: 0, pushes: 0, latency_ms: [], bits: [], keyframes: 0, refused: 0, kbit_s: 0, tiers: [0, 0, 0] };
const raiseTo = process.env.RAISE_TO;
let raisedAt = null;
try {
  const c = await connect(s);
  const pending = []; // pushes sent: {t, tick (from the reply, null until it comes)}
  c.onMessage = (m) => {
    if (m.type === 'reply') {
      const p = pending.find((x) => x.rid === m.rid);
      if (p) { p.tick = m.ok ? m.tick : -1; out.pushes++; }
    }
    if (m.type !== 'frame' || !m.ids) return;
    out.bits.push((8 * m.data.length) / Math.max(1, m.n));
    const now = performance.now();
    const tier = m.lod ? m.lod.tier : 0;
    out.tiers[tier] = (out.tiers[tier] || 0) + 1;
    if (raisedAt !== null && tier === 0 && out.full_after_raise_ms === undefined) out.full_after_raise_ms = Math.round(now - raisedAt);
    for (let i = pending.length - 1; i >= 0; i--)
      if (pending[i].tick !== null && pending[i].tick >= 0 && m.tick >= pending[i].tick) {
        out.latency_ms.push(Math.round(now - pending[i].t));
        pending.splice(i, 1);
      }
  };
  await c.next((m) => m.type === 'frame' && m.ids, 10000); // the first keyframe, decoded
  const t0 = performance.now(), f0 = c.frames, b0 = c.frameBytes;
  let nextPush = t0 + 300;
  while (performance.now() - t0 < seconds * 1000) {
    if (raiseTo && raisedAt === null && performance.now() - t0 >= seconds * 500) {
      const r = spawnSync('tc', ['qdisc', 'change', 'dev', 'lo', 'root', 'tbf', 'rate', raiseTo, 'burst', '32kb', 'latency', '50ms']);
      if (r.status !== 0) throw new Error(`tc qdisc change: ${r.stderr}`);
      raisedAt = performance.now();
    }
    if (performance.now() >= nextPush) {
      nextPush += 300;
      const rid = c.rid++;
      pending.push({ rid, t: performance.now(), tick: null });
      c.send({ type: 'push', rid, point: [1, 0.5, 0.5], radius: 0.5, strength: 2, direction: [1, 1, 0] });
    }
    await sleep(10);
    c.messages.length = 0; // onMessage saw them
  }
  c.onMessage = null;
  const dt = (performance.now() - t0) / 1000;
  out.frames = c.frames - f0;
  out.fps = out.frames / dt;
  out.kbit_s = (8 * (c.frameBytes - b0)) / dt / 1000;
  out.keyframes = c.keyframes;
  out.refused = c.refused;
  const stats = await (await fetch(`${s.base}/api/stats`)).json();
  out.server = { frames_dropped: stats.frames_dropped, realtime_ratio: stats.realtime_ratio, particles: stats.particles };
  c.close();
} finally {
  if (debug.length) process.stderr.write(s.stdout + s.stderr);
  await stopAll();
}
out.latency_median_ms = med(out.latency_ms);
out.latency_last10_median_ms = med(out.latency_ms.slice(-10)); // the median of 10, on the settled link
out.bits_median = med(out.bits);
delete out.bits;
console.log(JSON.stringify(out));
