// solver.test.mjs - the solver selector's state: the golden hello, then
// `solver` and `scene` broadcasts (from anyone), and this page's own
// set_solver requests and their replies.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { decodeMessage } from '../../../web-client/src/decode.js';
import { SolverState } from '../../../web-client/src/solver.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(ROOT, 'protocol', 'golden');
const msg = (file) => decodeMessage(new Uint8Array(readFileSync(join(dir, file))));

test('solver: hello -> solver broadcast -> scene broadcast move the selector', () => {
  const s = new SolverState();
  assert.equal(s.shown, '');
  const hello = msg('s2c_hello.msgpack');
  s.fromHello(hello);
  assert.deepEqual(s.options, hello.solvers, 'the list is the server\'s, not a built-in one');
  assert.equal(s.current, 'clavet');
  assert.equal(s.shown, 'clavet');
  const b = msg('s2c_solver.msgpack');                 // {solver: mps, by: 3, tick: 11}
  assert.equal(s.onBroadcast(b), true);
  assert.equal(s.shown, 'mps');
  assert.equal(s.by, 3);
  assert.equal(s.tick, 11);
  assert.equal(s.onBroadcast(b), false, 'the same again is no change');
  const sc = msg('s2c_scene.msgpack');                 // loads dam_break with clavet, by REST
  assert.equal(s.onBroadcast(sc), true);
  assert.equal(s.shown, 'clavet');
  assert.equal(s.by, 0);
  assert.equal(s.onBroadcast({ type: 'state', paused: true, by: 1 }), false, 'other messages leave it');
  assert.equal(s.shown, 'clavet');
});

test('solver: a request shows the choice until the reply, then what the server runs', () => {
  const s = new SolverState();
  s.fromHello(msg('s2c_hello.msgpack'));
  assert.deepEqual(s.request('unified'), { type: 'set_solver', name: 'unified' });
  assert.equal(s.shown, 'unified');
  assert.equal(s.current, 'clavet');
  // Someone else switches meanwhile: the server's state moves, the selector keeps the request.
  s.onBroadcast({ type: 'solver', solver: 'mps', by: 9, tick: 5 });
  assert.equal(s.current, 'mps');
  assert.equal(s.shown, 'unified');
  assert.equal(s.onReply('unified', { ok: true, tick: 6 }), true);
  assert.equal(s.shown, 'unified');
  assert.deepEqual(s.lastReply, { name: 'unified', ok: true, error: null });
  // A refused request: back to the server's solver.
  s.request('mps');
  assert.equal(s.onReply('mps', { ok: false, error: 'set_solver: busy' }), false);
  assert.equal(s.shown, 'unified');
  assert.equal(s.lastReply.error, 'set_solver: busy');
  // The same solver again is still a request (the server switches anyway).
  assert.deepEqual(s.request('unified'), { type: 'set_solver', name: 'unified' });
  s.onReply('unified', { ok: true });
  // A name the server does not have sends nothing.
  assert.equal(s.request('sph'), null);
  assert.equal(s.shown, 'unified');
});

test('solver: a hello resynchronises (clears a request in flight); unknown names from broadcasts are added', () => {
  const s = new SolverState();
  s.fromHello({ solver: 'clavet', solvers: ['clavet'] });
  s.request('clavet');
  assert.equal(s.pending, 'clavet');
  s.fromHello({ solver: 'clavet', solvers: ['clavet'] });
  assert.equal(s.pending, null);
  s.onBroadcast({ type: 'solver', solver: 'unified', by: 2, tick: 1 });
  assert.deepEqual(s.options, ['clavet', 'unified']);
  assert.equal(s.shown, 'unified');
  s.fromHello({});                                      // a server without solvers
  assert.deepEqual(s.options, []);
  assert.equal(s.shown, '');
});

// A stand-in for GET /api/solvers (the shape the server answers).
const SOLVERS = {
  solvers: [
    { name: 'clavet', doc: 'Clavet et al. 2005', params: ['rest_density', 'stiffness', 'friction', 'heat_diffusivity'] },
    { name: 'unified', doc: 'unified particles', params: ['friction', 'young_modulus', 'heat_diffusivity'] },
    { name: 'mps', doc: 'MPS', params: ['kinematic_viscosity', 'surface_tension', 'heat_diffusivity'] },
  ],
};
const fakeFetch = (answer, { ok = true, fail = false } = {}) => {
  const calls = [];
  const f = async (url, opts) => {
    calls.push({ url, opts });
    if (fail) throw new TypeError('Failed to fetch');
    return { ok, json: async () => answer };
  };
  f.calls = calls;
  return f;
};

test('solver parameter sets: fetched from /api/solvers, the running solver\'s set follows hello and broadcasts', async () => {
  const s = new SolverState();
  s.fromHello(msg('s2c_hello.msgpack'));                // clavet
  assert.equal(s.paramSet, null, 'unknown until /api/solvers answers: every parameter shows');
  const f = fakeFetch(SOLVERS);
  const j = await s.fetchSets(f);
  assert.equal(f.calls.length, 1);
  assert.equal(f.calls[0].url, '/api/solvers');
  assert.equal(j.solvers[0].doc, 'Clavet et al. 2005', 'the answer comes back for the tooltips');
  assert.deepEqual([...s.paramSet], ['rest_density', 'stiffness', 'friction', 'heat_diffusivity']);
  s.onBroadcast(msg('s2c_solver.msgpack'));            // mps
  assert.ok(s.paramSet.has('surface_tension'));
  assert.ok(!s.paramSet.has('stiffness'), 'a Clavet-only parameter is not in MPS\'s set');
  s.request('unified');
  assert.ok(s.paramSet.has('surface_tension'), 'a request in flight does not change the set: the server still runs mps');
  s.onReply('unified', { ok: true });
  assert.ok(s.paramSet.has('young_modulus'));
  s.fromHello(msg('s2c_hello.msgpack'));
  assert.ok(s.paramSet.has('stiffness'), 'a hello keeps the sets until the next answer');
});

test('solver parameter sets: a failed fetch, an error status or a solver without a list shows every parameter', async () => {
  const s = new SolverState();
  s.fromHello(msg('s2c_hello.msgpack'));
  await s.fetchSets(fakeFetch(SOLVERS));
  assert.ok(s.paramSet);
  assert.equal(await s.fetchSets(fakeFetch(null, { fail: true })), null);
  assert.equal(s.paramSet, null, 'network failure');
  await s.fetchSets(fakeFetch(SOLVERS));
  await s.fetchSets(fakeFetch({ error: 'not found' }, { ok: false }));
  assert.equal(s.paramSet, null, 'HTTP error');
  // Today's server: solvers without `params`.
  await s.fetchSets(fakeFetch({ solvers: [{ name: 'clavet', doc: 'x' }, { name: 'mps', doc: 'y' }] }));
  assert.equal(s.paramSet, null);
  // Only some solvers listed: the others show everything.
  await s.fetchSets(fakeFetch({ solvers: [{ name: 'mps', doc: 'y', params: ['surface_tension'] }] }));
  assert.equal(s.paramSet, null, 'clavet has no list');
  s.onBroadcast({ type: 'solver', solver: 'mps', by: 1, tick: 2 });
  assert.deepEqual([...s.paramSet], ['surface_tension']);
});
