// fleet.test.mjs - a fleet of sim nodes on a loopback nats-server with
// JetStream (docs/fleet.md): three nodes join and each lists all three in
// GET /api/fleet; rooms made through one node are placed across the nodes
// by load and stepped only by their holder; a name taken anywhere in the
// fleet is 409; a value written into the directory's bucket by someone else
// that does not read is refused and counted; a holder frozen (SIGSTOP) past
// its lease stops stepping its rooms and, woken, says it lost them and does
// not step them again; a node killed (SIGKILL) leaves its rooms orphaned.
// Nothing is timed: each state is waited for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, connect as tcp } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, get, http, until, metric } from './lib.mjs';

const haveNats = spawnSync('nats-server', ['--version']).status === 0;
const why = haveNats ? false : 'nats-server is not installed (scripts/deps.sh test installs it)';
let broker = null;
const store = mkdtempSync(join(tmpdir(), 'fluid-fleet-js-'));
after(async () => {
  await stopAll();
  if (broker) broker.kill('SIGKILL');
  rmSync(store, { recursive: true, force: true });
});

function freePort() {
  return new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
}
// nats-server with JetStream on a port that was free a moment ago, its store in a temp folder.
async function startBroker() {
  for (let i = 0; ; i++) {
    const port = await freePort();
    const p = spawn('nats-server', ['-js', '-sd', store, '-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
    let exited = null;
    p.once('exit', (code) => { exited = code; });
    try {
      await until(async () => {
        if (exited !== null) throw new Error(`nats-server exited ${exited}`);
        return new Promise((res) => { const s = createServer(); s.once('error', () => res(true)); s.listen(port, '127.0.0.1', () => s.close(() => res(false))); });
      }, `nats-server to listen on ${port}`, { everyMs: 100 });
      return { proc: p, port };
    } catch (e) { p.kill('SIGKILL'); if (i >= 4) throw e; }
  }
}
// Publishes raw bytes on a subject with the NATS text protocol; resolves on the broker's PONG.
function natsPublish(port, subject, payload) {
  return new Promise((resolve, reject) => {
    const s = tcp(port, '127.0.0.1');
    let got = '';
    s.on('data', (d) => {
      got += d;
      if (/PONG/.test(got)) { s.end(); resolve(); }
      if (/-ERR/.test(got)) { s.destroy(); reject(new Error(got)); }
    });
    s.on('error', reject);
    const body = Buffer.from(payload);
    s.write(`CONNECT {"verbose":false}\r\nPUB ${subject} ${body.length}\r\n`);
    s.write(body);
    s.write('\r\nPING\r\n');
  });
}
const fleetOf = async (s) => (await get(s, '/api/fleet')).json;

test('a fleet of three sim nodes: directory, placement, one stepper per room, 409, bad values, SIGSTOP, SIGKILL', { skip: why }, async (t) => {
  const b = await startBroker();
  broker = b.proc;
  const url = `nats://127.0.0.1:${b.port}`;
  const nodeArgs = (id) => ['--particles', '1500', '--threads', '1', '--nats', url, '--fleet', 'ftest', '--node-id', String(id)];
  const nodes = [];
  for (const id of [1, 2, 3]) nodes.push(await startServer(nodeArgs(id)));
  const [a, bNode, c] = nodes;
  const byId = new Map([[1, a], [2, bNode], [3, c]]);

  // every node lists all three, live
  for (const s of nodes)
    await until(async () => { const f = await fleetOf(s); return f.nodes.filter((n) => n.live).length === 3 && f; },
      () => 'each node sees three live nodes');
  const f0 = await fleetOf(a);
  assert.equal(f0.fleet, 'ftest');
  assert.deepEqual(f0.nodes.map((n) => n.id).sort(), [1, 2, 3]);
  assert.ok(f0.nodes.every((n) => n.budget_ms >= 0 && n.used_ms >= 0 && n.rooms >= 1), JSON.stringify(f0.nodes));

  // six rooms made through node 1: placed across the nodes
  const names = ['r1', 'r2', 'r3', 'r4', 'r5', 'r6'];
  const holder = new Map();
  for (const name of names) {
    const r = await http(a, 'POST', '/api/rooms', { body: { name, particles: 1000 } });
    assert.equal(r.status, 201, `${name}: ${r.text}`);
    assert.equal(r.json.name, name);
    assert.ok([1, 2, 3].includes(r.json.node), `${name} names its node: ${r.text}`);
    holder.set(name, r.json.node);
  }
  const counts = [1, 2, 3].map((id) => [...holder.values()].filter((h) => h === id).length);
  t.diagnostic(`rooms per node: ${counts.join(', ')}`);
  // by load: each goes to the node with the most free budget, less what was placed on it since its record
  // (how many each takes depends on the nodes' measured load: at least two of them hold rooms)
  assert.ok(counts.filter((k) => k >= 1).length >= 2, `six rooms over at least two of the three nodes: ${counts}`);
  // every node's directory agrees on where each room is, claimed once
  for (const s of nodes)
    await until(async () => {
      const f = await fleetOf(s);
      return names.every((n) => f.rooms.some((r) => r.name === n && r.node === holder.get(n) && r.claim === 1));
    }, 'each node sees every room at its holder');

  // only the holder steps a room: its tick grows there; the others do not list it
  for (const name of names) {
    const h = byId.get(holder.get(name));
    const first = (await get(h, `/api/rooms/${name}/stats`)).json.tick;
    await until(async () => (await get(h, `/api/rooms/${name}/stats`)).json.tick > first, `${name} steps on its holder`);
    for (const [id, s] of byId)
      if (id !== holder.get(name)) assert.equal((await get(s, `/api/rooms/${name}`)).status, 404, `${name} is not on node ${id}`);
  }
  const m1 = (await get(byId.get(holder.get('r1')), '/metrics')).text;
  assert.ok(metric(m1, 'fluid_fleet_nodes') === 3, 'fluid_fleet_nodes 3');
  assert.ok(metric(m1, 'fluid_fleet_rooms_held') >= 1);
  assert.ok(metric(m1, 'fluid_fleet_claims_total{result="ok"}') >= 1);

  // a name taken in the fleet: 409 through any node
  for (const s of nodes) {
    const r = await http(s, 'POST', '/api/rooms', { body: { name: 'r1' } });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.code, 'conflict');
  }

  // a value someone else wrote into the bucket that does not read: refused, counted, logged
  await natsPublish(b.port, '$KV.fluid_ftest.room.evil', '{"node":1,"claim":"lots"}');
  await natsPublish(b.port, '$KV.fluid_ftest.node.9', 'not json at all');
  await until(async () => metric((await get(a, '/metrics')).text, 'fluid_fleet_refused_total') >= 2, 'the bad values refused');
  assert.match(a.stderr, /refused the value of (room\.evil|node\.9)/);
  assert.ok(!(await fleetOf(a)).rooms.some((r) => r.name === 'evil'), 'a refused room is not listed');

  // a holder frozen past its lease: its rooms are orphaned; woken, it says it lost them and steps them no more
  const frozenId = holder.get('r1');
  const frozen = byId.get(frozenId);
  const itsRooms = names.filter((n) => holder.get(n) === frozenId);
  const watcher = nodes.find((s) => s !== frozen);
  frozen.proc.kill('SIGSTOP');
  try {
    await until(async () => {
      const f = await fleetOf(watcher);
      return itsRooms.every((n) => f.rooms.some((r) => r.name === n && r.orphaned)) &&
        f.nodes.some((n) => n.id === frozenId && !n.live);
    }, `node ${frozenId}'s rooms orphaned while it is frozen`);
  } finally { frozen.proc.kill('SIGCONT'); }
  for (const n of itsRooms)
    await until(() => new RegExp(`lost room '${n}'`).test(frozen.stderr), `node ${frozenId} logs that it lost ${n}`);
  // (its sim threads may log 'stepping stops at tick N' first, or wake after the fleet thread fenced them for good)
  for (const n of itsRooms) assert.equal((await get(frozen, `/api/rooms/${n}`)).status, 404, `${n} is no longer on node ${frozenId}`);
  assert.ok(!/claim is renewed: stepping from tick/.test(frozen.stderr), 'the frozen node never stepped its rooms again');
  const mf = (await get(frozen, '/metrics')).text;
  assert.equal(metric(mf, 'fluid_fleet_rooms_lost_total'), itsRooms.length);
  assert.equal(metric(mf, 'fluid_fleet_rooms_held'), 0);
  // it rejoins as a live node
  await until(async () => (await fleetOf(watcher)).nodes.some((n) => n.id === frozenId && n.live), `node ${frozenId} live again`);

  // a node killed: its record stops, its rooms are orphaned
  const killedId = [1, 2, 3].find((id) => id !== frozenId && names.some((n) => holder.get(n) === id));
  const killed = byId.get(killedId);
  const killedRooms = names.filter((n) => holder.get(n) === killedId);
  await killed.stop('SIGKILL');
  const survivor = nodes.find((s) => s !== killed);
  await until(async () => {
    const f = await fleetOf(survivor);
    return f.nodes.some((n) => n.id === killedId && !n.live) && killedRooms.every((n) => f.rooms.some((r) => r.name === n && r.orphaned));
  }, `node ${killedId}'s rooms orphaned after SIGKILL`);
  t.diagnostic(`node ${frozenId} frozen and woken (${itsRooms.join(', ')} lost), node ${killedId} killed (${killedRooms.join(', ')} orphaned)`);
});

test('--fleet is refused without --nats or --node-id, and with a bad name', async () => {
  for (const [args, want] of [
    [['--fleet', 'x'], /--fleet needs --nats/],
    [['--fleet', 'x', '--nats', 'nats://127.0.0.1:1'], /--fleet needs --node-id/],
    [['--fleet', 'a.b', '--nats', 'nats://127.0.0.1:1', '--node-id', '1'], /letters, digits/],
    [['--node-id', '3'], /--node-id is a fleet's/],
  ]) {
    await assert.rejects(startServer(args, { timeoutMs: 20000 }), (e) => want.test(e.message), args.join(' '));
  }
});
