// fleet.test.mjs - a page on a fleet's relay across a sim node's death: two
// sim nodes of a fleet on a loopback nats-server with JetStream and a relay
// of the fleet; a page shows room "mv" through the relay; its holder is
// killed (SIGKILL); the page, on the same WebSocket connection, shows the
// "moved" notice naming the new holder and streams the room from it, with no
// reload and no error (how long the move takes is not tested: tests never
// time anything; `fleet.test.mjs` in tests/server prints it).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep, api } from '../lib.mjs';

const haveNats = spawnSync('nats-server', ['--version']).status === 0;
const store = mkdtempSync(join(tmpdir(), 'fluid-fleet-page-'));
let broker = null, browser = null;
const freePort = () => new Promise((res) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const accepts = (port) => new Promise((res) => { const c = connect(port, '127.0.0.1', () => { c.destroy(); res(true); }); c.on('error', () => res(false)); });
// Polls f until it returns a truthy value (the deadline only turns a hang into a failure).
async function until(f, what) {
  const end = Date.now() + 60000;
  for (;;) {
    const v = await f();
    if (v) return v;
    if (Date.now() > end) throw new Error(`gave up waiting: ${what}`);
    await sleep(100);
  }
}
before(async () => { if (haveNats) browser = await launchBrowser(); });
after(async () => {
  await cleanup();
  if (broker) broker.kill('SIGKILL');
  rmSync(store, { recursive: true, force: true });
});

test('a page on a fleet relay: its room\'s holder killed, it shows the move and streams from the new holder on the same connection',
  { skip: haveNats ? false : 'nats-server is not installed' }, async () => {
    const np = await freePort();
    broker = spawn('nats-server', ['-js', '-sd', store, '-a', '127.0.0.1', '-p', String(np)], { stdio: 'ignore' });
    await until(() => accepts(np), `nats-server on ${np}`);
    const nats = `nats://127.0.0.1:${np}`;
    // (admission off: the test is not about placement, and a loaded machine's ticks are slow)
    const node = (id) => startServer(['--particles', '1500', '--nats', nats, '--fleet', 'fpage', '--node-id', String(id),
      '--fleet-save-s', '1', '--step-budget', '0', '--quiet']);
    const nodes = new Map([[1, await node(1)], [2, await node(2)]]);
    const relay = await startServer(['--nats', nats, '--fleet', 'fpage', '--relay', '1', '--relay-id', '5', '--quiet']);
    const one = nodes.get(1);
    await until(async () => (await api(one, 'GET', '/api/fleet')).nodes.filter((n) => n.live).length === 2, 'two live nodes');
    const made = await api(one, 'POST', '/api/rooms', { name: 'mv', particles: 1000 });
    const entry = await until(async () => (await api(relay, 'GET', '/api/fleet')).rooms.find((r) => r.name === 'mv' && r.claim >= 1),
      'the relay to see room mv claimed');
    assert.equal(entry.node, made.node, 'the relay names the holder the placement chose');
    const holderId = entry.node, otherId = holderId === 1 ? 2 : 1;

    const page = await openClient(browser, relay, { query: 'r/mv/' });
    await waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3).catch(async () => {
      throw new Error(`the page did not stream: ${page.errors.join(' | ')} ${relay.log.slice(-800)}`);
    });
    assert.equal(await page.evaluate(() => window.__fluid.hello.room), 'mv');
    const opened = await page.evaluate(() => window.__fluid.conn.conn); // WebSocket connections opened so far
    const tick0 = await page.evaluate(() => window.__fluid.tick);
    // the page saves no state of its own: the room's last snapshot in JetStream holds a later tick first
    await until(async () => (await api(one, 'GET', '/api/fleet')).rooms.some((r) => r.name === 'mv' && r.snap && r.snap.tick > tick0),
      'a snapshot of mv after the page\'s first frames');

    nodes.get(holderId).proc.kill('SIGKILL');
    const moves = await waitFor(page, () => window.__fluid.moves.length > 0 && window.__fluid.moves).then((h) => h.jsonValue())
      .catch(async (e) => { throw new Error(`no move shown: ${e.message}\nrelay: ${relay.log.slice(-1500)}`); });
    assert.equal(moves[0].node, otherId, `moved to node ${otherId}: ${JSON.stringify(moves)}`);
    assert.match(moves[0].text, new RegExp(`moved to sim node ${otherId}`));
    // the notice on the page: a toast with the relay's text (it fades after a few seconds)
    const toasts = await page.evaluate(() => [...document.querySelectorAll('#toasts .toast')].map((t) => t.textContent));
    assert.ok(toasts.some((t) => t === moves[0].text), `the notice is shown: ${JSON.stringify(toasts)}`);
    // frames again, of ticks the new holder steps, drawn by the same page on the same connection
    const f1 = await page.evaluate(() => window.__fluid.frames);
    await waitFor(page, (n) => window.__fluid.connected && window.__fluid.frames > n + 5, f1)
      .catch(async (e) => { throw new Error(`no frames after the move: ${e.message}\nrelay: ${relay.log.slice(-1500)}`); });
    const stats = await api(nodes.get(otherId), 'GET', '/api/rooms/mv/stats');
    assert.equal(stats.room, 'mv');
    assert.ok(await page.evaluate(() => window.__fluid.tick) > tick0, 'frames of later ticks after the move');
    assert.equal(await page.evaluate(() => window.__fluid.particles), stats.particles, 'the room\'s particles, from the new holder');
    assert.equal(await page.evaluate(() => window.__fluid.conn.conn), opened, 'no new WebSocket connection: the page did not reconnect or reload');
    assert.deepEqual(page.errors, []);
  });
