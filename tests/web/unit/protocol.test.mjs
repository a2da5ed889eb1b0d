// protocol.test.mjs - the commands the client builds are exactly the golden
// client-to-server vectors (same fields, same values), and the reconnect
// schedule backs off.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join, resolve, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { encode, decode } from '@msgpack/msgpack';
import { cmd, backoffDelay, shortName } from '../../../web-client/src/protocol.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const dir = join(ROOT, 'protocol', 'golden');
const { vectors } = JSON.parse(readFileSync(join(dir, 'vectors.json'), 'utf8'));
const golden = (file) => vectors.find((v) => v.file === file).expect;

// The client's builder for each golden command, with the vector's values.
const build = {
  'c2s_push.msgpack': (e) => cmd.push(e.point, e.direction, e.radius, e.strength),
  'c2s_set_param.msgpack': (e) => cmd.setParam(e.material, e.param, e.value),
  'c2s_set_params.msgpack': (e) => cmd.setParams(e.material, e.params),
  'c2s_load_scene.msgpack': (e) => cmd.loadScene(e.name, e.particles, e.solver),
  'c2s_set_solver.msgpack': (e) => cmd.setSolver(e.name),
  'c2s_heat.msgpack': (e) => cmd.heat(e.point, e.radius, e.rate, e.duration),
  'c2s_heater.msgpack': (e) => { const { type, rid, slot, ...def } = e; return cmd.heater(slot, def); },
  'c2s_pause.msgpack': () => cmd.pause(),
  'c2s_resume.msgpack': () => cmd.resume(),
  'c2s_step.msgpack': (e) => cmd.step(e.steps),
  'c2s_emitter.msgpack': (e) => { const { type, rid, slot, ...def } = e; return cmd.emitter(slot, def); },
  'c2s_emitter_off.msgpack': (e) => cmd.emitterEnable(e.slot, e.enabled),
  'c2s_cursor.msgpack': (e) => cmd.cursor(e.pos),
  'c2s_cursor_hide.msgpack': () => cmd.cursor(null),
  'c2s_auth.msgpack': (e) => cmd.auth(e.token),
  'c2s_body_create.msgpack': (e) => cmd.bodyCreate(e.shape, e.size, e.pos, e),
  'c2s_body_destroy.msgpack': (e) => cmd.bodyDestroy(e.id),
  'c2s_body_impulse.msgpack': (e) => cmd.bodyImpulse(e.id, e.point, e.impulse),
  'c2s_body_grab.msgpack': (e) => cmd.bodyGrab(e.id, e.point, e.target),
  'c2s_body_drag.msgpack': (e) => cmd.bodyDrag(e.id, e.target),
  'c2s_body_release.msgpack': (e) => cmd.bodyRelease(e.id),
};

for (const v of vectors.filter((x) => x.file && x.direction === 'client_to_server')) {
  test(`commands: the client builds ${v.file}`, () => {
    const f = build[v.file];
    assert.ok(f, `no builder for ${v.file}`);
    const e = golden(v.file);
    const c = { ...f(e), rid: e.rid };
    // Compare what goes on the wire, decoded (numbers: msgpack int vs float is allowed).
    assert.deepEqual(decode(encode(c)), decode(readFileSync(join(dir, v.file))));
  });
}

test('reconnect: backoff grows from 0.5 s to at most 12 s with jitter', () => {
  assert.equal(backoffDelay(0, 0.5), 500);
  assert.equal(backoffDelay(1, 0.5), 1000);
  assert.equal(backoffDelay(3, 0.5), 4000);
  assert.equal(backoffDelay(30, 0.5), 10000);
  for (let a = 0; a < 40; a++) {
    assert.ok(backoffDelay(a, 0) >= 400);
    assert.ok(backoffDelay(a, 0.999) <= 12000);
    assert.ok(backoffDelay(a + 1, 0.5) >= backoffDelay(a, 0.5));
  }
});

test('presence: short names are stable per id and distinct for neighbours', () => {
  assert.equal(shortName(3), shortName(3));
  assert.notEqual(shortName(3), shortName(4));
  assert.match(shortName(17), /17$/);
});
