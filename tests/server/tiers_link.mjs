// tiers_link.mjs - the tiers of detail on a shaped link, run INSIDE a private
// network namespace whose loopback the caller shaped (tiers.test.mjs: `unshare
// -n`, `ip link set lo mtu 1500 up`, `tc qdisc add dev lo root tbf rate RATE
// burst 32kb latency 50ms`).  Starts the server there with the 20k dam break,
// watches the stream as the scenario says, and prints one JSON line of what
// it saw (counts, tiers, steps; never a time).  It changes the link itself
// (`tc qdisc change`) where the scenario raises it.
// In `relay` mode the caller shaped nothing: a sim node and a relay share a
// nats-server in the namespace, and only what the relay sends from its
// client port is shaped (an htb root whose one filtered class has the
// token bucket), so the bus between them runs at loopback speed as it would
// between machines; the viewer of the relay then plays the slow scenario.
// usage: node tiers_link.mjs slow|fast|relay
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { startServer, connect, stopAll, get, until, WAIT } from './lib.mjs';

const mode = process.argv[2];
const out = { mode };
const tc = (...args) => {
  const r = spawnSync('tc', args, { encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`tc ${args.join(' ')}: ${r.stderr}`);
};
const freePort = () => new Promise((resolve) => { const l = createServer().listen(0, '127.0.0.1', () => { const p = l.address().port; l.close(() => resolve(p)); }); });
let broker = null;
// The server the viewer watches: the sim node, or (relay) a relay of it.
async function serve() {
  const scene = ['--scene', 'dam_break', '--particles', '20000', ...(process.env.TIERS_DEBUG ? ['--log-level', 'debug'] : [])];
  if (mode !== 'relay') return startServer(scene);
  const port = await freePort();
  broker = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
  await until(() => new Promise((res) => { const l = createServer(); l.once('error', () => res(true)); l.listen(port, '127.0.0.1', () => l.close(() => res(false))); }), 'nats-server to listen', { everyMs: 100 });
  const url = `nats://127.0.0.1:${port}`;
  await startServer([...scene, '--nats', url, '--world', 'tiers']);
  const relay = await startServer(['--nats', url, '--world', 'tiers', '--relay', '1', '--relay-id', '1']);
  const rport = new URL(relay.base).port;
  // an htb root of two unbounded classes: the relay's client port's packets
  // (the filter) go through 1:10, whose leaf is the token bucket; the rest
  // (the bus, the ACKs) through 1:20
  tc('qdisc', 'add', 'dev', 'lo', 'root', 'handle', '1:', 'htb', 'default', '20');
  for (const k of ['1:10', '1:20']) tc('class', 'add', 'dev', 'lo', 'parent', '1:', 'classid', k, 'htb', 'rate', '10gbit', 'quantum', '60000');
  tc('qdisc', 'add', 'dev', 'lo', 'parent', '1:10', 'handle', '10:', 'tbf', 'rate', '1mbit', 'burst', '32kb', 'latency', '50ms');
  tc('filter', 'add', 'dev', 'lo', 'parent', '1:', 'protocol', 'ip', 'prio', '1', 'u32', 'match', 'ip', 'sport', rport, '0xffff', 'flowid', '1:10');
  return relay;
}
let s = null;
// One decoded frame's tier, particle count and grid step (null: refused).
const seen = (m) => (m.ids ? { tier: m.lod ? m.lod.tier : 0, keep: m.lod ? m.lod.keep : 1, lodStep: m.lod ? m.lod.step : null, n: m.ids.length, msgN: m.n, step: m.grid.step, key: m.key } : null);
try {
  s = await serve();
  const c = await connect(s);
  const hello = await c.next((m) => m.type === 'hello');
  out.frame_step = hello.frame_step;
  const first = await c.next((m) => m.type === 'frame' && m.ids);
  out.particles = first.ids.length;
  // (a relay has no GET /api/clients: the sim node's lists its own clients)
  const client = async () => (mode === 'relay' ? null : (await get(s, '/api/clients')).json.clients.find((x) => x.id === hello.client_id));
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
    const where = mode === 'relay' ? ['parent', '1:10', 'handle', '10:'] : ['root'];
    const r = spawnSync('tc', ['qdisc', 'change', 'dev', 'lo', ...where, 'tbf', 'rate', '10mbit', 'burst', '32kb', 'latency', '50ms'], { encoding: 'utf8' });
    out.raised = r.status === 0 ? true : r.stderr;
    out.back = seen(await frame((m) => !m.lod && m.ids.length === out.particles));
    out.back_client = await client();
  }
  out.refused = c.refused;
  c.close();
} finally {
  if (process.env.TIERS_DEBUG && s) process.stderr.write(s.stdout + s.stderr);
  await stopAll();
  if (broker) broker.kill('SIGTERM');
}
console.log(JSON.stringify(out));
