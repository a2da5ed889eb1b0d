// fair.test.mjs - one party's share of the server's work (PROTOCOL.md, "Fair
// shares"): reads of the recordings (the listing, a recording's files) are
// a party's budget, with 429 and Retry-After past it while another party is
// served; a party that keeps asking past its refusals has the next ones held
// a moment, still answered 429; the cached listing follows recordings as
// they start and stop; a world applies at most --rebuilds-per-min scene
// loads, solver switches and restores, whoever asks and through whichever
// edge, the rest answered rate_limited and changing nothing; a command the
// world cannot answer within its wait is answered 504 timeout, and still applied.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, stopAll, connect, http, get, until, metric } from './lib.mjs';

const dir = mkdtempSync(join(tmpdir(), 'fluid-fair-'));
after(async () => { await stopAll(); rmSync(dir, { recursive: true, force: true }); });

const metrics = async (s) => (await get(s, '/metrics')).text;
const recording = async (s) => (await http(s, 'GET', '/api/recordings', { from: '127.0.0.9' })).json.recording;

// Reads path from address `from` until the first 429 (at most `most`);
// the 200s before it and the refusal.
async function readUntilRefused(s, path, from, most = 2000) {
  let ok = 0;
  for (let i = 0; i < most; i++) {
    const r = await http(s, 'GET', path, { from });
    if (r.status === 429) return { ok, refused: r };
    assert.equal(r.status, 200, `${path}: ${r.text.slice(0, 200)}`);
    ok++;
  }
  return { ok, refused: null };
}

function assertBudgetRefusal(r, what) {
  assert.equal(r.json?.code, 'rate_limited', `${what}: ${r.text}`);
  const after = Number(r.headers.get('retry-after'));
  assert.ok(Number.isInteger(after) && after >= 1, `${what}: Retry-After ${r.headers.get('retry-after')}`);
  assert.match(r.json.error, /^too many reads of the recordings: at most 1800 a minute from one address/);
}

test('reads of the recordings are a party\'s budget: a burst of 100, then 429 with Retry-After; another party is served; refusals past 10 are held, still 429', async (t) => {
  const rec = join(dir, 'reads');
  const s = await startServer(['--particles', '500', '--record-dir', rec]);
  assert.equal((await http(s, 'POST', '/api/recordings', { body: { name: 'one' }, from: '127.0.0.9' })).status, 200);
  await until(async () => (await recording(s)).active, 'the recording to start');
  assert.equal((await http(s, 'POST', '/api/recordings/stop', { from: '127.0.0.9' })).status, 200);
  await until(async () => !(await recording(s)).active, 'the recording to stop');
  // the listing, from one address, until its bucket is empty
  const list = await readUntilRefused(s, '/api/recordings', '127.0.0.1');
  assert.ok(list.refused, 'refused at last');
  assert.ok(list.ok >= 100, `${list.ok} listings answered before the first 429 (burst 100)`);
  assertBudgetRefusal(list.refused, 'the listing');
  // another party: its own bucket
  const other = await http(s, 'GET', '/api/recordings', { from: '127.0.0.2' });
  assert.equal(other.status, 200, 'another address is served');
  assert.deepEqual(other.json.recordings.map((x) => x.name), ['one']);
  // a recording's files are paid for from the same kind of bucket
  const files = await readUntilRefused(s, '/api/recordings/one/index.json', '127.0.0.3');
  assert.ok(files.refused && files.ok >= 100, `${files.ok} file reads before the first 429`);
  // a page of up to 1000 costs 10: fewer of them
  const pages = await readUntilRefused(s, '/api/recordings?limit=1000', '127.0.0.4');
  assert.ok(pages.refused && pages.ok >= 10 && pages.ok < files.ok, `${pages.ok} pages of 1000 before the first 429`);
  assertBudgetRefusal(files.refused, 'a recording\'s file');
  // the first party keeps asking: past its refusals answered at once, the
  // next are held before they are sent, and are still whole 429s
  const held0 = metric(await metrics(s), 'fluid_http_refusals_held_total');
  const statuses = {};
  let refusals = 0, asked = 0;
  while (asked < 300 && metric(await metrics(s), 'fluid_http_refusals_held_total') === held0) {
    for (let i = 0; i < 5; i++, asked++) {
      const r = await http(s, 'GET', '/api/recordings', { from: '127.0.0.1' });
      statuses[r.status] = (statuses[r.status] || 0) + 1;
      if (r.status === 429) { refusals++; assertBudgetRefusal(r, 'a refusal, held or not'); }
    }
  }
  const m = await metrics(s);
  const held = metric(m, 'fluid_http_refusals_held_total') - held0;
  t.diagnostic(`listings ${list.ok} then 429; file reads ${files.ok} then 429; pages of 1000 ${pages.ok} then 429; then ${asked} more: ${JSON.stringify(statuses)}, ${held} refusals held`);
  assert.ok(held >= 1, `a refusal was held (after ${asked} more requests)`);
  assert.deepEqual(Object.keys(statuses).filter((k) => k !== '200' && k !== '429'), [], 'every answer a 200 or a 429');
  // (the refusal that ended the listings above was one of this party's first 10)
  assert.ok(refusals + 1 >= 10 + held, `${refusals} + 1 refusals seen: the first 10 answered at once, then ${held} held`);
  assert.ok(metric(m, 'fluid_commands_refused_total{reason="recordings_budget"}') >= refusals + 3, 'counted as the recordings\' budget');
});

test('the cached listing follows the recordings: a start and a stop show in the next listing', async () => {
  const rec = join(dir, 'cached');
  const s = await startServer(['--particles', '500', '--record-dir', rec]);
  const list = async () => (await get(s, '/api/recordings')).json;
  assert.equal((await list()).total, 0, 'none yet');
  assert.equal((await list()).total, 0, 'asked again: the same');
  for (const name of ['first', 'second']) {
    assert.equal((await http(s, 'POST', '/api/recordings', { body: { name } })).status, 200);
    await until(async () => (await list()).recordings.some((x) => x.name === name && x.recording), `${name} listed as recording`);
    assert.equal((await http(s, 'POST', '/api/recordings/stop')).status, 200);
    await until(async () => (await list()).recordings.some((x) => x.name === name && !x.recording && x.frames > 0), `${name} listed as stopped`);
  }
  const l = await list();
  assert.deepEqual(l.recordings.map((x) => [x.name, x.recording]), [['first', false], ['second', false]]);
  assert.equal(l.total, 2);
});

test('a world applies at most --rebuilds-per-min scene loads, solver switches and restores, over REST and WebSocket together; the rest are answered rate_limited', async (t) => {
  // one a minute, one at once: of everything below, at most 2 apply (the
  // first, and one more if a minute, the longest this can take, passes)
  const s = await startServer(['--scene', 'dam_break', '--particles', '800', '--rebuilds-per-min', '1']);
  const m0 = await metrics(s);
  const loads0 = metric(m0, 'fluid_commands_total{room="default",kind="load_scene",result="ok"}');
  const rest = await Promise.all(Array.from({ length: 12 }, () => http(s, 'POST', '/api/scene', { body: { name: 'drop', particles: 500 } })));
  const c = await connect(s);
  const ws = [];
  for (let i = 0; i < 6; i++) ws.push(await c.command({ type: 'load_scene', name: 'drop', particles: 600 }));
  const solver = await http(s, 'POST', '/api/solver', { body: { name: 'unified' } });
  c.close();
  const restOk = rest.filter((r) => r.status === 200).length, wsOk = ws.filter((r) => r.ok).length;
  const limited = [...rest.filter((r) => r.status === 429), ...(solver.status === 429 ? [solver] : [])];
  const wsLimited = ws.filter((r) => !r.ok && r.code === 'rate_limited');
  t.diagnostic(`REST: ${restOk} of 12 loaded; WebSocket: ${wsOk} of 6; the solver switch: ${solver.status}`);
  const applied = restOk + wsOk + (solver.status === 200 ? 1 : 0);
  assert.ok(applied >= 1 && applied <= 2, `applied: ${applied}`);
  assert.equal(limited.length + wsLimited.length + applied, 12 + 6 + 1, 'the rest refused as rate limited');
  for (const r of limited) {
    assert.equal(r.json.code, 'rate_limited', r.text);
    assert.ok(Number(r.headers.get('retry-after')) >= 1, 'Retry-After');
    assert.match(r.json.error, /this world applies at most 1 scene loads, solver switches and restores a minute/);
  }
  for (const r of wsLimited) assert.match(r.error, /this world applies at most 1 scene loads/);
  const m = await metrics(s);
  assert.equal(metric(m, 'fluid_rebuilds_refused_total{room="default"}') - metric(m0, 'fluid_rebuilds_refused_total{room="default"}'),
    limited.length + wsLimited.length, 'each refusal counted');
  assert.equal(metric(m, 'fluid_commands_total{room="default",kind="load_scene",result="ok"}') - loads0, restOk + wsOk, 'only the answered loads applied');
  const st = (await get(s, '/api/stats')).json;
  assert.equal(st.solver, solver.status === 200 ? 'unified' : 'clavet', 'a refused solver switch changed nothing');
  if (restOk + wsOk === 0) assert.equal(st.scene, 'dam_break', 'no load applied: the scene as it was');
});

test('a REST command the world cannot answer within 10 s is answered 504 timeout, not cut; it is still applied', async () => {
  // 500 steps of a 60k world take 15-50 s on machines of this kind: past the 10 s wait
  const s = await startServer(['--particles', '60000']);
  assert.equal((await http(s, 'POST', '/api/pause')).status, 200);
  const t0 = (await get(s, '/api/stats')).json.tick;
  const r = await http(s, 'POST', '/api/step', { body: { steps: 500 } });
  assert.equal(r.status, 504, r.text);
  assert.equal(r.json.code, 'timeout');
  assert.match(r.json.error, /no answer within 10 s.*may still be applied/);
  assert.equal(metric(await metrics(s), 'fluid_http_timeouts_total'), 1);
  // the connection answered; the next request on it is served
  assert.equal((await get(s, '/api/stats')).status, 200);
  await until(async () => (await get(s, '/api/stats')).json.tick === t0 + 500, 'the 500 steps applied after the answer',
    { timeoutMs: 180000, everyMs: 500 });
  await s.stop();
});
