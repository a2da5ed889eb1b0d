// fleet.mjs - benchmark: rooms spread over a fleet of sim nodes (issue "A
// fleet of sim nodes on NATS JetStream", docs/fleet.md, "Placement").  A
// loopback nats-server with JetStream, three sim nodes of one fleet on this
// machine (each with its default room at DEFAULT particles, off the fleet),
// then ROOMS rooms of the dam break at PARTICLES each asked for at the nodes
// in turn (POST /api/rooms: the fleet places each on the node with the most
// free budget).  Once every room steps at its holder: the rooms each node
// holds, and each room's realtime ratio over SECONDS (simulated seconds per
// wall second, from /api/rooms/{name}/stats at its holder).  Bars: no node
// holds more than 5 of 12 rooms; every room >= 0.98 realtime.  Exits 1 when
// a bar is missed, 0 (with the reason) without nats-server.
// usage: FLUID_SERVER=build/fluid-server node tests/bench/fleet.mjs [SECONDS] [PARTICLES] [ROOMS]
import { loadavg } from 'node:os';
import { startServer, stopAll, sleep, get, http, until } from '../server/lib.mjs';
import { noNats, jetStreamBrokers, fleetOf, roomIn } from '../server/jetstream.mjs';

const SECONDS = Number(process.argv[2] || 20);
const PARTICLES = Number(process.argv[3] || 1000);
const ROOMS = Number(process.argv[4] || 12);
const DEFAULT = 500, MAX_PER_NODE = 5, BAR = 0.98, FLEET = 'fbench';

if (noNats) {
  console.log(`fleet bench: skipped, ${noNats}`);
  process.exit(0);
}
const brokers = jetStreamBrokers('fluid-fleet-bench-');
let failed = false;
try {
  const b = await brokers.start();
  const nodes = [];
  for (const id of [1, 2, 3])
    nodes.push(await startServer(['--particles', String(DEFAULT), '--threads', '1', '--nats', `nats://127.0.0.1:${b.port}`,
      '--fleet', FLEET, '--node-id', String(id)]));
  await until(async () => (await fleetOf(nodes[0])).nodes.filter((n) => n.live).length === 3, 'three live nodes');
  const names = [];
  for (let i = 0; i < ROOMS; i++) {
    const name = `f${i + 1}`;
    const r = await http(nodes[i % 3], 'POST', '/api/rooms', { body: { name, scene: 'dam_break', particles: PARTICLES } });
    if (r.status !== 201) throw new Error(`room ${name}: ${r.status} ${r.text}`);
    names.push(name);
    await sleep(500); // its cost per tick known to the fleet before the next is placed
  }
  const holderOf = async (name) => roomIn(await fleetOf(nodes[0]), name)?.node;
  const byId = (id) => nodes[id - 1];
  for (const name of names)
    await until(async () => { const h = await holderOf(name); return h && (await get(byId(h), `/api/rooms/${name}/stats`)).status === 200; },
      `${name} stepping at its holder`);
  await sleep(2000); // past each room's first ticks
  const holders = {};
  for (const name of names) holders[name] = await holderOf(name);
  const statsOf = async (name) => (await get(byId(holders[name]), `/api/rooms/${name}/stats`)).json;
  const t0 = {};
  for (const name of names) t0[name] = (await statsOf(name)).sim_time;
  const w0 = performance.now(), load0 = loadavg()[0];
  await sleep(SECONDS * 1000);
  const wall = (performance.now() - w0) / 1000;
  const rows = [];
  for (const name of names) {
    const st = await statsOf(name);
    rows.push({ name, node: holders[name], particles: st.particles, realtime: (st.sim_time - t0[name]) / wall });
  }
  const per = [1, 2, 3].map((id) => rows.filter((x) => x.node === id).length);
  console.log(`fleet bench: 3 sim nodes, ${ROOMS} rooms of the dam break at ${PARTICLES} particles (each node's default room at ` +
    `${DEFAULT}, off the fleet), ${SECONDS} s; load average ${load0.toFixed(1)} -> ${loadavg()[0].toFixed(1)}; ` +
    `bars: at most ${MAX_PER_NODE} rooms a node, every room >= ${BAR} realtime`);
  console.log(`  rooms per node: ${per.join(', ')}  ${Math.max(...per) <= MAX_PER_NODE ? 'ok' : 'MISSED'}`);
  for (const x of rows)
    console.log(`  ${x.name.padEnd(4)} node ${x.node}  ${String(x.particles).padStart(5)} particles  realtime ${x.realtime.toFixed(3)}  ${x.realtime >= BAR ? 'ok' : 'MISSED'}`);
  const low = rows.reduce((m, x) => Math.min(m, x.realtime), Infinity);
  console.log(`  slowest room ${low.toFixed(3)} realtime`);
  failed = Math.max(...per) > MAX_PER_NODE || low < BAR;
} finally {
  await stopAll();
  brokers.stop();
}
process.exit(failed ? 1 : 0);
