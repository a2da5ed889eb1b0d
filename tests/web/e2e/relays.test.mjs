// relays.test.mjs - the page behind relays: a sim node and two
// relays on a loopback nats-server, each told the relays' URLs (--relays);
// a page on relay A gets them in its hello, and when relay A dies it moves
// to relay B by itself and streams again (how long that takes is not
// tested: tests never time anything).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer, connect } from 'node:net';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep } from '../lib.mjs';

const haveNats = spawnSync('nats-server', ['--version']).status === 0;
let broker = null, browser = null;
const freePort = () => new Promise((res) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
const accepts = (port) => new Promise((res) => { const c = connect(port, '127.0.0.1', () => { c.destroy(); res(true); }); c.on('error', () => res(false)); });
// Until the broker takes connections (a deadline only so that a hang fails).
async function brokerUp(port) {
  const until = Date.now() + 30000;
  while (!(await accepts(port))) {
    if (Date.now() > until) throw new Error(`nats-server is not listening on ${port}`);
    await sleep(100);
  }
}
before(async () => { if (haveNats) browser = await launchBrowser(); });
after(async () => { await cleanup(); if (broker) broker.kill('SIGKILL'); });

test('a page whose relay dies moves to the next relay of its list and streams again', { skip: haveNats ? false : 'nats-server is not installed' }, async () => {
  const [np, pa, pb] = [await freePort(), await freePort(), await freePort()];
  broker = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(np)], { stdio: 'ignore' });
  await brokerUp(np);
  const nats = `nats://127.0.0.1:${np}`, A = `http://127.0.0.1:${pa}/`, B = `http://127.0.0.1:${pb}/`;
  const common = ['--nats', nats, '--world', 'pagetest', '--relays', `${A},${B}`, '--allow-origin', `http://127.0.0.1:${pa},http://127.0.0.1:${pb}`];
  await startServer(['--scene', 'dam_break', '--particles', '2000', '--quiet', ...common]);
  const ra = await startServer(['--relay', '1', '--relay-id', '1', '--quiet', ...common], { port: pa });
  await startServer(['--relay', '1', '--relay-id', '2', '--quiet', ...common], { port: pb });
  const page = await openClient(browser, ra);
  await waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3).catch(async () => {
    const st = await page.evaluate(() => ({ conn: document.getElementById('conn')?.textContent, frames: window.__fluid?.frames }));
    throw new Error(`the page did not stream: ${JSON.stringify(st)} ${page.errors.join(' | ')} ${ra.log.slice(-500)}`);
  });
  const relays = await page.evaluate(() => window.__fluid.hello.relays);
  assert.deepEqual(relays, [A, B]);
  assert.match(await page.evaluate(() => window.__fluid.wsUrl), new RegExp(`:${pa}/`), 'the page starts on relay A');
  const opened = await page.evaluate(() => window.__fluid.conn.conn);   // WebSocket connections opened so far
  await ra.stop();
  // The page connects to relay B, and frames arrive again: more than 5 after
  // it is back (frames counts every frame since the page loaded).
  await waitFor(page, (p) => window.__fluid.connected && new RegExp(`:${p}/`).test(window.__fluid.wsUrl), pb, 60000);
  const f1 = await page.evaluate(() => window.__fluid.frames);
  await waitFor(page, (n) => window.__fluid.connected && window.__fluid.frames > n + 5, f1, 60000);
  const url = await page.evaluate(() => window.__fluid.wsUrl);
  assert.match(url, new RegExp(`:${pb}/`));
  // It moved at once: its first connection after A's loss was to B (no
  // attempt at A again, no backoff wait between failed attempts).
  assert.equal(await page.evaluate(() => window.__fluid.conn.conn), opened + 1, 'one connection opened after relay A died: relay B');
  page.errors = page.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e));
  assert.deepEqual(page.errors, []);
});
