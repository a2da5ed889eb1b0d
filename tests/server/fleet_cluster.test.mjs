// fleet_cluster.test.mjs - a fleet on a 3-server NATS cluster with
// JetStream (docs/fleet.md, "A broker that is a cluster"): two sim nodes
// given the three servers' URLs (--nats a,b,c) make the bucket and the
// snapshots' stream with 3 replicas (--fleet-replicas 3) and hold four rooms;
// a server that leads neither the bucket nor the snapshots' stream is
// killed (SIGKILL): no room changes holder or claim, every room steps on,
// and its snapshots go on being written; brought back, that server rejoins
// (JetStream lists it as a current replica of both) and nothing moves.
// Then the server that leads the bucket is killed: no write to the bucket
// succeeds until the cluster elects another leader (4-9 s, longer than a
// claim's 3 s lease), and the holders' heartbeats, acknowledged by the other
// node, keep their rooms stepping (docs/fleet.md, "A broker that is a
// cluster"): no room changes holder or claim, none is lost or taken over,
// no sim thread stops at its fence, every room is saved again once the
// bucket has a leader, and every node's view of the directory is current
// again.  Nothing is timed: each state is waited for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { connect as tcp } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, get, http, until } from './lib.mjs';
import { noNats as why, freePort } from './jetstream.mjs';

const store = mkdtempSync(join(tmpdir(), 'fluid-fleet-cluster-'));
const brokers = [];
after(async () => {
  await stopAll();
  for (const b of brokers) b.proc?.kill('SIGKILL');
  rmSync(store, { recursive: true, force: true });
});

const listening = (port) => new Promise((res) => { const c = tcp(port, '127.0.0.1', () => { c.destroy(); res(true); }); c.on('error', () => res(false)); });

// Server i of the cluster (its name n<i>, its store, its client and route ports kept across restarts).
function startBroker(b) {
  b.proc = spawn('nats-server', ['-js', '-sd', b.dir, '-n', b.name, '-a', '127.0.0.1', '-p', String(b.port),
    '--cluster_name', 'fluidtest', '--cluster', `nats://127.0.0.1:${b.route}`, '--routes', b.routes], { stdio: 'ignore' });
  return until(() => listening(b.port), `${b.name} to listen on ${b.port}`);
}
const killBroker = (b) => new Promise((res) => { b.proc.once('exit', res); b.proc.kill('SIGKILL'); });

// A JetStream API request over the NATS text protocol, as any client makes
// it; resolves with the reply's JSON.
function jsRequest(port, subject) {
  return new Promise((resolve, reject) => {
    const s = tcp(port, '127.0.0.1');
    let got = '';
    const timer = setTimeout(() => { s.destroy(); reject(new Error(`no reply to ${subject}`)); }, 10000);
    s.on('data', (d) => {
      got += d;
      const m = /MSG _INBOX\.t 1 (\d+)\r\n/.exec(got);
      if (m && got.length >= m.index + m[0].length + Number(m[1])) {
        clearTimeout(timer);
        s.end();
        resolve(JSON.parse(got.slice(m.index + m[0].length, m.index + m[0].length + Number(m[1]))));
      }
    });
    s.on('error', (e) => { clearTimeout(timer); reject(e); });
    s.write(`CONNECT {"verbose":false}\r\nSUB _INBOX.t 1\r\nPUB ${subject} _INBOX.t 0\r\n\r\n`);
  });
}

test('a fleet on a 3-server NATS cluster: a server killed, no room stops or moves; brought back, it rejoins', { skip: why }, async (t) => {
  const bs = [];
  for (let i = 1; i <= 3; i++) bs.push({ name: `n${i}`, port: await freePort(), route: await freePort(), dir: mkdtempSync(join(store, `n${i}-`)) });
  for (const b of bs) b.routes = bs.map((x) => `nats://127.0.0.1:${x.route}`).join(',');
  for (const b of bs) { brokers.push(b); await startBroker(b); }
  const urls = bs.map((b) => `nats://127.0.0.1:${b.port}`).join(',');
  // (admission off: a loaded machine's ticks are slow, and this test is not about placement)
  const args = (id) => ['--particles', '1000', '--threads', '1', '--nats', urls, '--fleet', 'fcluster', '--node-id', String(id),
    '--fleet-replicas', '3', '--fleet-save-s', '1', '--step-budget', '0'];
  const byId = new Map([[1, await startServer(args(1))], [2, await startServer(args(2))]]);
  const a = byId.get(1);
  const fleet = async (s) => (await get(s, '/api/fleet')).json;
  const logs = () => [...byId].map(([id, s]) => `node ${id}:\n${s.stderr.split('\n').filter((l) => /fleet|bus/.test(l)).slice(-25).join('\n')}`).join('\n');
  await until(async () => (await fleet(a)).nodes?.filter((n) => n.live).length === 2, 'two live nodes on the cluster');

  // the bucket and the stream, each with 3 replicas
  const kv = await jsRequest(bs[0].port, '$JS.API.STREAM.INFO.KV_fluid_fcluster');
  const snaps = await jsRequest(bs[0].port, '$JS.API.STREAM.INFO.FLUID_fcluster_SNAP');
  assert.equal(kv.config?.num_replicas, 3, JSON.stringify(kv).slice(0, 400));
  assert.equal(snaps.config?.num_replicas, 3, JSON.stringify(snaps).slice(0, 400));

  const names = ['c1', 'c2', 'c3', 'c4'];
  for (const name of names) {
    const r = await http(a, 'POST', '/api/rooms', { body: { name, particles: 800 } });
    assert.equal(r.status, 201, `${name}: ${r.text}`);
  }
  const claimed = await until(async () => {
    const f = await fleet(a);
    const rs = names.map((n) => f.rooms.find((r) => r.name === n));
    return rs.every((r) => r && r.claim >= 1 && r.snap && r.snap.save >= 3) && rs;
  }, 'every room claimed and saved three times').catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify((await fleet(a)).rooms)}\n${logs()}`);
  });
  const before = new Map(claimed.map((r) => [r.name, { node: r.node, claim: r.claim }]));

  // a server that leads neither the bucket nor the snapshots' stream killed: no room stops or moves
  const leaders = async (via) => ({
    kv: (await jsRequest(via.port, '$JS.API.STREAM.INFO.KV_fluid_fcluster')).cluster?.leader,
    snap: (await jsRequest(via.port, '$JS.API.STREAM.INFO.FLUID_fcluster_SNAP')).cluster?.leader,
  });
  const l0 = await leaders(bs[0]);
  assert.ok(l0.kv && l0.snap, `both streams have a leader: ${JSON.stringify(l0)}`);
  const follower = bs.find((b) => b.name !== l0.kv && b.name !== l0.snap);
  const ticks0 = new Map(), snap0 = new Map(claimed.map((r) => [r.name, r.snap.tick]));
  for (const name of names) ticks0.set(name, (await get(byId.get(before.get(name).node), `/api/rooms/${name}/stats`)).json.tick);
  await killBroker(follower);
  t.diagnostic(`killed ${follower.name} (leaders: bucket ${l0.kv}, snapshots ${l0.snap})`);
  const alive = bs.find((b) => b !== follower);
  // every room steps on at its holder, 3 s of simulated time later, and is saved again, with the same claim
  for (const name of names) {
    const h = byId.get(before.get(name).node);
    await until(async () => (await get(h, `/api/rooms/${name}/stats`)).json.tick >= ticks0.get(name) + 180, `${name} steps on`)
      .catch(async (e) => {
        throw new Error(`${e.message}: ${JSON.stringify((await get(h, `/api/rooms/${name}/stats`)).json).slice(0, 300)}\n` +
          `fleet: ${JSON.stringify(await fleet(a))}\n${logs()}`);
      });
  }
  await until(async () => {
    const f = await fleet(a);
    return names.every((n) => { const r = f.rooms.find((x) => x.name === n); return r && r.snap && r.snap.tick > snap0.get(n); });
  }, 'every room saved again');
  const f1 = await fleet(a);
  for (const name of names) {
    const r = f1.rooms.find((x) => x.name === name);
    assert.deepEqual({ node: r.node, claim: r.claim }, before.get(name), `${name} kept its holder and claim: ${logs()}`);
  }

  // brought back, it catches up as a replica of both streams, and the rooms step on as before
  await startBroker(follower);
  const current = async (stream) => (await jsRequest(alive.port, `$JS.API.STREAM.INFO.${stream}`)).cluster?.replicas?.some((r) => r.name === follower.name && r.current);
  await until(async () => (await current('KV_fluid_fcluster')) && (await current('FLUID_fcluster_SNAP')), `${follower.name} to catch up as a replica`);
  for (const name of names) {
    const h = byId.get(before.get(name).node), t0 = (await get(h, `/api/rooms/${name}/stats`)).json.tick;
    await until(async () => (await get(h, `/api/rooms/${name}/stats`)).json.tick > t0 + 60, `${name} steps on after ${follower.name} rejoined`);
  }
  const f2 = await fleet(a);
  for (const name of names) {
    const r = f2.rooms.find((x) => x.name === name);
    assert.deepEqual({ node: r.node, claim: r.claim }, before.get(name), `${name} kept its holder and claim after the rejoin: ${logs()}`);
  }
  t.diagnostic(`${follower.name} brought back: a current replica of the bucket and the snapshots`);

  // the bucket's leader killed: its writes fail until a new leader is elected; nothing stops or moves
  const l1 = await leaders(alive);
  const leader = bs.find((b) => b.name === l1.kv);
  assert.ok(leader, `the bucket has a leader: ${JSON.stringify(l1)}`);
  const via = bs.find((b) => b !== leader);
  const metric = (text, name) => Number(new RegExp(`^${name.replace(/[{}]/g, '\\$&')} (\\S+)$`, 'm').exec(text)?.[1]);
  const counts = async () => {
    const out = {};
    for (const [id, s] of byId) {
      const m = (await get(s, '/metrics')).text;
      out[id] = Object.fromEntries([['lost', 'rooms_lost_total'], ['takeovers', 'takeovers_total'], ['kept', 'fences_kept_total'],
        ['rewatches', 'rewatches_total'],
        ['failed', 'renewals_total{result="failed"}']].map(([k, name]) => [k, metric(m, `fluid_fleet_${name}`)]));
    }
    return out;
  };
  const c0 = await counts();
  const logAt = new Map([...byId].map(([id, s]) => [id, s.stderr.length]));
  const ticks1 = new Map(), snap1 = new Map(f2.rooms.map((r) => [r.name, r.snap.tick]));
  for (const name of names) ticks1.set(name, (await get(byId.get(before.get(name).node), `/api/rooms/${name}/stats`)).json.tick);
  await killBroker(leader);
  t.diagnostic(`killed ${leader.name}, the bucket's leader (snapshots' leader: ${l1.snap})`);
  await until(async () => { const l = await leaders(via).catch(() => ({})); return l.kv && l.kv !== leader.name; }, 'a new leader of the bucket');
  await until(async () => {
    const f = await fleet(a);
    return names.every((n) => { const r = f.rooms.find((x) => x.name === n); return r && r.snap && r.snap.tick > snap1.get(n); });
  }, 'every room saved again under the new leader').catch(async (e) => {
    throw new Error(`${e.message}: ${JSON.stringify((await fleet(a)).rooms)}\n${logs()}`);
  });
  // every node's view of the directory is current again (a watch served by the dead server is made anew)
  for (const [id, s] of byId) {
    await until(async () => {
      const f = await fleet(s);
      return f.nodes?.filter((n) => n.live).length === 2 && names.every((n) => { const r = f.rooms.find((x) => x.name === n); return r && !r.orphaned; });
    }, `node ${id}'s view current`).catch(async (e) => { throw new Error(`${e.message}: ${JSON.stringify(await fleet(s))}\n${logs()}`); });
  }
  const f3 = await fleet(a), c1 = await counts();
  t.diagnostic(`counters before ${JSON.stringify(c0)}, after ${JSON.stringify(c1)}`);
  for (const name of names) {
    const r = f3.rooms.find((x) => x.name === name);
    assert.deepEqual({ node: r.node, claim: r.claim }, before.get(name), `${name} kept its holder and claim through the election: ${logs()}`);
    const tick = (await get(byId.get(r.node), `/api/rooms/${name}/stats`)).json.tick;
    assert.ok(tick > ticks1.get(name), `${name} stepped on: tick ${ticks1.get(name)} -> ${tick}`);
  }
  for (const [id, s] of byId) {
    assert.equal(c1[id].lost, c0[id].lost, `node ${id} lost no room: ${logs()}`);
    assert.equal(c1[id].takeovers, c0[id].takeovers, `node ${id} took no room over: ${logs()}`);
    const since = s.stderr.slice(logAt.get(id));
    assert.doesNotMatch(since, /stepping stops at tick/, `node ${id}: no room stopped at its fence:\n${since.slice(-2000)}`);
  }
  // the election outlasted a fence, so the heartbeats carried the rooms: some renewal failed, and some
  // round moved a fence on while the bucket took no write
  const failed = [...byId.keys()].reduce((n, id) => n + c1[id].failed - c0[id].failed, 0);
  const kept = [...byId.keys()].reduce((n, id) => n + c1[id].kept - c0[id].kept, 0);
  assert.ok(failed > 0 && kept > 0, `renewals failed during the election (${failed}) and heartbeats kept fences (${kept})`);
  await startBroker(leader);

  for (const [id, s] of byId) {
    const end = await s.stop('SIGTERM');
    assert.equal(end.code, 0, `node ${id}: ${s.stderr.slice(-1500)}`);
  }
});
