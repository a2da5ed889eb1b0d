// probes.test.mjs - the world's probes on the page: with the spheric2 scene
// the heads-up display lists its twelve probes from the frames, each with its
// value in its unit (m for the heights, Pa for the pressures, from GET
// /api/probes); the list goes when a scene without probes is loaded.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startServer, launchBrowser, openClient, waitFor, cleanup, api } from '../lib.mjs';

let server, browser;

before(async () => {
  server = await startServer(['--scene', 'spheric2', '--particles', '2000', '--quiet']);
  browser = await launchBrowser();
});
after(async () => { await cleanup(); });

test('the HUD lists the probes the frames carry, in their units, and hides them for a world without', async () => {
  const page = await openClient(browser, server);
  await waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3);
  // 12 probes, two to a row; the units once GET /api/probes answered
  await waitFor(page, () => {
    const el = document.getElementById('hud-probes');
    const cells = [...document.querySelectorAll('#hud-probes-table td')].map((td) => td.textContent);
    return !el.classList.contains('hidden') && cells.length === 24 && cells.some((t) => t.endsWith(' Pa'));
  });
  const cells = await page.evaluate(() => [...document.querySelectorAll('#hud-probes-table td')].map((td) => td.textContent));
  const names = cells.filter((_, i) => i % 2 === 0), values = cells.filter((_, i) => i % 2 === 1);
  assert.deepEqual(names, ['H1', 'H2', 'H3', 'H4', 'P1', 'P2', 'P3', 'P4', 'P5', 'P6', 'P7', 'P8']);
  assert.ok(values.slice(0, 4).every((v) => /^-?\d+\.\d{3} m$/.test(v)), `heights: ${values.slice(0, 4)}`);
  assert.ok(values.slice(4).every((v) => /^-?\d+ Pa$/.test(v)), `pressures: ${values.slice(4)}`);
  await api(server, 'POST', '/api/scene', { name: 'dam_break', particles: 1000 });
  await waitFor(page, () => document.getElementById('hud-probes').classList.contains('hidden'));
  assert.deepEqual(page.errors, []);
});
