// limits.test.mjs - the page reads hello.limits: against a stand-in server
// whose hello carries smaller limits than the protocol's, the tool sliders
// end at them and a step command stays within them (the tools' clamping
// itself: tests/web/unit/limits.test.mjs).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { encode, decode } from '@msgpack/msgpack';
import { startServer, launchBrowser, waitFor, cleanup, ROOT } from '../lib.mjs';

let server, browser;

before(async () => {
  server = await startServer(['--scene', 'dam_break', '--particles', '1000', '--quiet']);   // serves the page
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

test('a hello with smaller limits: the tool sliders end at them, and a step command is clamped to them', async () => {
  const hello = decode(readFileSync(join(ROOT, 'protocol', 'golden', 's2c_hello.msgpack')));
  hello.limits = { ...hello.limits, push_strength: 4, heat_rate: 90, heat_radius: 0.5, steps: 3 };
  hello.paused = true;
  const p = await browser.browser.newPage({ viewport: { width: 960, height: 600 } });
  p.errors = [];
  p.on('pageerror', (e) => p.errors.push(String(e)));
  const sent = [];
  await p.routeWebSocket(/.*/, (ws) => {
    ws.onMessage((m) => {
      const c = decode(typeof m === 'string' ? Buffer.from(m) : m);
      sent.push(c);
      if (c.rid) ws.send(Buffer.from(encode({ type: 'reply', rid: c.rid, cmd: c.type, ok: true })));
    });
    ws.send(Buffer.from(encode(hello)));
  });
  await p.goto(`${server.base}/`);
  await waitFor(p, () => window.__fluid && window.__fluid.connected);
  const lim = await p.evaluate(() => window.__fluid.limits);
  assert.equal(lim.push_strength, 4);
  assert.equal(lim.max_msg, 4096, 'the ones the hello carries unchanged stay');
  const max = await p.evaluate(() => ['push-strength', 'push-radius', 'heat-rate', 'heat-radius'].map((id) => document.getElementById(id).max));
  assert.deepEqual(max, ['4', '2', '90', '0.5'], 'strength, heat rate and radius end at the limits; the push radius keeps the page\'s 2 m');
  assert.ok(Number(await p.inputValue('#heat-rate')) <= 90);
  // Shift+S while paused: ten steps asked, three sent.
  await p.click('#view');
  await p.keyboard.press('Shift+S');
  for (const until = Date.now() + 60000; !sent.some((c) => c.type === 'step') && Date.now() < until;) await new Promise((r) => setTimeout(r, 100));
  const step = sent.find((c) => c.type === 'step');
  assert.ok(step, `no step sent: ${JSON.stringify(sent.map((c) => c.type))}`);
  assert.equal(step.steps, 3);
  console.log(`stand-in hello with limits ${JSON.stringify(hello.limits)}: sliders end at ${max.join(', ')}; Shift+S sent steps ${step.steps}`);
  assert.deepEqual(p.errors, []);
  await p.close();
});
