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
