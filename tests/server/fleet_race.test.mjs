// fleet_race.test.mjs - rooms created and deleted in a race on a fleet of
// three sim nodes on a loopback nats-server with JetStream (docs/fleet.md,
// "Claims and leases", "Placement"): 4 names x 25 cycles, the four names'
// cycles running at once.  In each cycle the name is asked for at two nodes
// at once: exactly one answers 201, the other 409.  Once the create settles,
// the broker's key (read from the bucket itself, not through a node) names
// the holder the 201 named, at claim 1, every node's view of the directory
// agrees, and only the holder lists the room.  In every other cycle the
// delete is sent to the three nodes at once (the two that do not hold it
// pass theirs on to the holder): one is answered 200, the others 404 (or
// 503 `busy` while the key of the room just deleted is still in the
// bucket), and it is waited for until it settles (the bucket, every node's
// view and every node's list without it).  In the others it is sent to the
// holder alone, and the next cycle's two asks go out with it, and are asked again while both
// are 409 (the key not deleted yet), so that creates land just after the
// delete, on nodes whose watch may not have shown it yet.  At the end no
// node lists a room the bucket does not name and the bucket names no room,
// and across the fleet each of the 100 rooms was claimed exactly once: no
// claim failed, no room was lost (a holder that finds another's claim on
// its room counts it), none was taken over.  Nothing is timed: each state
// is waited for.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, stopAll, get, http, until, metric } from './lib.mjs';
import { noNats, jetStreamBrokers, fleetOf, roomIn, bucketKeys } from './jetstream.mjs';

const brokers = jetStreamBrokers('fluid-race-js-');
after(async () => {
  await stopAll();
  brokers.stop();
});

const FLEET = 'frace';
const NAMES = ['ra', 'rb', 'rc', 'rd'];
const CYCLES = 25;

// The fleet's rooms a node lists (GET /api/rooms), its own default room aside.
const listed = async (s) => (await get(s, '/api/rooms')).json.rooms.map((r) => r.name).filter((n) => n !== 'default');

test('100 create/delete cycles racing on 3 nodes: never a room held twice, never a room lost', { skip: noNats }, async (t) => {
  const b = await brokers.start();
  const url = `nats://127.0.0.1:${b.port}`;
  // admission off (every room fits: this is about claims, not budgets), small worlds
  const args = (id) => ['--particles', '1000', '--threads', '1', '--nats', url, '--fleet', FLEET, '--node-id', String(id),
    '--step-budget', '0'];
  const nodes = [];
  for (const id of [1, 2, 3]) nodes.push(await startServer(args(id)));
  for (const s of nodes) await until(async () => (await fleetOf(s)).nodes.filter((n) => n.live).length === 3, 'three live nodes');
  const placed = [0, 0, 0];
  const bucketRoom = async (name) => (await bucketKeys(b.port, FLEET)).get(`room.${name}`);

  let early = 0;
  // cycle k of name: after an even cycle the delete is waited for until it settles; after an odd one the next
  // cycle asks at the same time as the delete (pending: its answers, checked), while the key may still be there
  // (both asks 409: asked again) or just gone
  const cycle = async (name, i, k, pending) => {
    const what = `${name}, cycle ${k + 1}`;
    // the create, asked at two nodes at once
    const at = [(i + k) % 3, (i + k + 1) % 3];
    const ask = () => Promise.all(at.map((j) => http(nodes[j], 'POST', '/api/rooms', { body: { name, particles: 1000 } })));
    let rs = await ask();
    if (pending) {
      await pending;
      rs = await until(async () => {
        if (rs.every((r) => r.status === 409)) { early++; rs = await ask(); }
        return rs.some((r) => r.status !== 409) && rs;
      }, () => `${what}: the name free again after its delete: ${rs.map((r) => r.text)}`, { everyMs: 5 });
    }
    assert.deepEqual(rs.map((r) => r.status).sort(), [201, 409], `${what}: one 201 and one 409 at nodes ${at.map((j) => j + 1)}: ${rs.map((r) => r.text)}`);
    const won = rs.find((r) => r.status === 201).json;
    const holder = won.node;
    assert.ok([1, 2, 3].includes(holder), `${what}: placed on a node of the fleet: ${JSON.stringify(won)}`);
    placed[holder - 1]++;
    let seen = null;
    await until(async () => {
      const key = await bucketRoom(name);
      seen = { key };
      if (!key || key.node !== holder || key.claim !== 1) return false;
      for (const [j, s] of nodes.entries()) {
        const e = roomIn(await fleetOf(s), name);
        seen[`node ${j + 1}`] = e;
        if (!e || e.node !== holder || e.claim !== 1) return false;
      }
      return true;
    }, () => `${what}: the bucket and every node name node ${holder}, claim 1: ${JSON.stringify(seen)}`);
    for (const [j, s] of nodes.entries())
      assert.equal((await listed(s)).includes(name), j + 1 === holder, `${what}: listed by its holder (node ${holder}) only; node ${j + 1}`);
    // the delete, asked at the three nodes at once (the holder deletes it once, whichever asked first); when
    // the next cycle's create races it, at the holder alone: a delete passed on by another node could
    // otherwise delete the next cycle's room, made a moment later (a delete names a room, not a claim)
    const racing = k % 2 === 1;
    const del = (async () => {
      const ds = await Promise.all((racing ? [nodes[holder - 1]] : nodes).map((s) => http(s, 'DELETE', `/api/rooms/${name}`)));
      // the others: 404, or 503 `busy` while the deleted room's key is still in the bucket
      const st = ds.map((r) => r.status);
      assert.ok(st.filter((x) => x === 200).length === 1 && st.every((x, j) => x === 200 || x === 404 || (x === 503 && ds[j].json?.code === 'busy')),
        `${what}: deleted once at its holder, node ${holder} (the others pass theirs on to it): ${st} ${ds.map((r) => r.text)}`);
    })();
    if (racing) return { del };
    await del;
    await until(async () => {
      if (await bucketRoom(name)) return false;
      for (const s of nodes) if (roomIn(await fleetOf(s), name) || (await listed(s)).includes(name)) return false;
      return true;
    }, `${what}: its key deleted, and no node has it`);
    return {};
  };
  await Promise.all(NAMES.map(async (name, i) => {
    let pending;
    for (let k = 0; k < CYCLES; k++) pending = (await cycle(name, i, k, pending)).del;
  }));
  t.diagnostic(`${NAMES.length * CYCLES} rooms created and deleted; placed on nodes 1, 2, 3: ${placed.join(', ')}; ` +
    `${early} asks both 409 while a delete was settling, asked again`);
  // the last delete of each name settled
  await until(async () => {
    const keys = await bucketKeys(b.port, FLEET);
    return NAMES.every((n) => !keys.has(`room.${n}`));
  }, 'the last deletes settled');

  // nothing held that the bucket does not name, nothing named that no node holds
  const keys = await bucketKeys(b.port, FLEET);
  const rooms = [...keys.keys()].filter((k) => k.startsWith('room.'));
  assert.deepEqual(rooms, [], 'the bucket names no room');
  for (const [j, s] of nodes.entries()) {
    assert.deepEqual(await listed(s), [], `node ${j + 1} lists no room of the fleet`);
    assert.deepEqual((await fleetOf(s)).rooms, [], `node ${j + 1}'s view of the directory has no room`);
  }
  // each room claimed exactly once in the fleet: none lost, taken over, or claimed twice
  const sum = { ok: 0, failed: 0, lost: 0, takeovers: 0, refused: 0 };
  for (const s of nodes) {
    const m = (await get(s, '/metrics')).text;
    sum.ok += metric(m, 'fluid_fleet_claims_total{result="ok"}');
    sum.failed += metric(m, 'fluid_fleet_claims_total{result="failed"}');
    sum.lost += metric(m, 'fluid_fleet_rooms_lost_total');
    sum.takeovers += metric(m, 'fluid_fleet_takeovers_total');
    sum.refused += metric(m, 'fluid_fleet_refused_total');
  }
  t.diagnostic(`claims across the fleet: ${JSON.stringify(sum)}`);
  assert.deepEqual(sum, { ok: NAMES.length * CYCLES, failed: 0, lost: 0, takeovers: 0, refused: 0 });
  assert.doesNotMatch(nodes.map((s) => s.stderr).join(''), /lost room|Sanitizer|runtime error/);
});
