// relays.test.mjs - the page behind relays (issue 18): a sim node and two
// relays on a loopback nats-server, each told the relays' URLs (--relays);
// a page on relay A gets them in its hello, and when relay A dies it moves
// to relay B by itself and streams again within 5 s.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { startServer, launchBrowser, openClient, waitFor, cleanup, sleep } from '../lib.mjs';

const haveNats = spawnSync('nats-server', ['--version']).status === 0;
let broker = null, browser = null;
const freePort = () => new Promise((res) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => res(p)); }); });
before(async () => { if (haveNats) browser = await launchBrowser(); });
after(async () => { await cleanup(); if (broker) broker.kill('SIGKILL'); });

test('a page whose relay dies moves to the next relay of its list and streams again', { skip: haveNats ? false : 'nats-server is not installed' }, async (t) => {
  const [np, pa, pb] = [await freePort(), await freePort(), await freePort()];
  broker = spawn('nats-server', ['-a', '127.0.0.1', '-p', String(np)], { stdio: 'ignore' });
  await sleep(500);
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
  const f0 = await page.evaluate(() => window.__fluid.frames);
  const t0 = Date.now();
  await ra.stop();
  await waitFor(page, (n) => window.__fluid.connected && window.__fluid.frames > n + 5, f0, 10000);
  const moved = Date.now() - t0;
  t.diagnostic(`the page moved from relay A to relay B in ${moved} ms`);
  assert.ok(moved < 5000, `moved in ${moved} ms`);
  const url = await page.evaluate(() => window.__fluid.wsUrl);
  assert.match(url, new RegExp(`:${pb}/`));
  page.errors = page.errors.filter((e) => !/WebSocket|ERR_CONNECTION_REFUSED/.test(e));
  assert.deepEqual(page.errors, []);
});
