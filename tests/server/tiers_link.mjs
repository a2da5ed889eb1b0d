// tiers_link.mjs - the tiers of detail on a shaped link, run INSIDE a private
// network namespace whose loopback the caller shaped (tiers.test.mjs: `unshare
// -n`, `ip link set lo mtu 1500 up`, `tc qdisc add dev lo root tbf rate RATE
// burst 32kb latency 50ms`).  Starts the server there with the 20k dam break,
// watches the stream as the scenario says, and prints one JSON line of what
// it saw (counts, tiers, steps; never a time).  It changes the link itself
// (`tc qdisc change`) where the scenario raises it.
// usage: node tiers_link.mjs slow|fast
import { spawnSync } from 'node:child_process';
import { startServer, connect, stopAll, get, WAIT } from './lib.mjs';

const mode = process.argv[2];
const out = { mode };
// One decoded frame's tier, particle count and grid step (null: refused).
const seen = (m) => (m.ids ? { tier: m.lod ? m.lod.tier : 0, keep: m.lod ? m.lod.keep : 1, lodStep: m.lod ? m.lod.step : null, n: m.ids.length, msgN: m.n, step: m.grid.step, key: m.key } : null);
const s = await startServer(['--scene', 'dam_break', '--particles', '20000', ...(process.env.TIERS_DEBUG ? ['--log-level', 'debug'] : [])]);
try {
  const c = await connect(s);
  const hello = await c.next((m) => m.type === 'hello');
  out.frame_step = hello.frame_step;
  const first = await c.next((m) => m.type === 'frame' && m.ids);
  out.particles = first.ids.length;
  const client = async () => (await get(s, '/api/clients')).json.clients.find((x) => x.id === hello.client_id);
  // The next decoded frame that passes pred (frames refused in between counted).
  const frame = (pred) => c.next((m) => m.type === 'frame' && m.ids && pred(m), Number(process.env.TIERS_WAIT || WAIT));
  if (process.env.TIERS_DEBUG) c.onMessage = (m) => { if (m.type === 'frame') process.stderr.write(`f ${m.seq} t${m.lod?.tier ?? 0} n${m.n} ${m.data.length}B key ${m.key} ${m.ids ? 'ok' : m._refused}\n`); };
  if (mode === 'fast') {
    // 90 frames in a row on 10 Mbit/s: each the full world
    out.frames = [];
    for (let i = 0; i < 90; i++) out.frames.push(seen(await frame(() => true)));
    out.client = await client();
  } else {
    // 1 Mbit/s: the link moves it to a coarser tier
    out.coarse = seen(await frame((m) => m.lod && m.lod.tier > 0));
    out.coarse_client = await client();
    // pinned: the full world again, however slow
    c.send({ type: 'detail', full: true, rid: 0 });
    out.pinned = seen(await frame((m) => !m.lod));
    out.pinned_client = await client();
    const pinned = [];
    for (let i = 0; i < 10; i++) pinned.push(seen(await frame(() => true)));
    out.pinned_after = pinned;
    // unpinned: the link chooses again (coarser)
    c.send({ type: 'detail', full: false, rid: 0 });
    out.unpinned = seen(await frame((m) => m.lod && m.lod.tier > 0));
    // the link raised to 10 Mbit/s: back to the full world
    const r = spawnSync('tc', ['qdisc', 'change', 'dev', 'lo', 'root', 'tbf', 'rate', '10mbit', 'burst', '32kb', 'latency', '50ms'], { encoding: 'utf8' });
    out.raised = r.status === 0 ? true : r.stderr;
    out.back = seen(await frame((m) => !m.lod && m.ids.length === out.particles));
    out.back_client = await client();
  }
  out.refused = c.refused;
  c.close();
} finally {
  if (process.env.TIERS_DEBUG) process.stderr.write(s.stdout + s.stderr);
  await stopAll();
}
console.log(JSON.stringify(out));
