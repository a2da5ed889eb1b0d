// bodies.test.mjs - rigid bodies from the frames: interpolation by id,
// model matrices and picking with a ray.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { interpolateBodies, nlerpQuat, modelMatrix, rayBody, pickBody, quatToMat3 } from '../../../web-client/src/bodies.js';
import { project } from '../../../web-client/src/math.js';

const near = (a, b, eps = 1e-6) => a.every((x, i) => Math.abs(x - b[i]) < eps);
const rotY = (ang) => [Math.cos(ang / 2), 0, Math.sin(ang / 2), 0];

test('bodies: interpolated by id; new bodies appear where they are', () => {
  const a = [{ id: 1, pos: [0, 0, 0], rot: [1, 0, 0, 0] }, { id: 2, pos: [5, 5, 5], rot: [1, 0, 0, 0] }];
  const b = [{ id: 2, pos: [7, 5, 5], rot: rotY(Math.PI / 2) }, { id: 3, pos: [1, 1, 1], rot: [1, 0, 0, 0] }];
  const m = interpolateBodies(a, b, 0.5);
  assert.equal(m.length, 2);
  assert.deepEqual(m[0].pos, [6, 5, 5]);
  assert.ok(near(m[0].rot, nlerpQuat([1, 0, 0, 0], rotY(Math.PI / 2), 0.5)));
  assert.ok(Math.abs(Math.hypot(...m[0].rot) - 1) < 1e-12);
  assert.deepEqual(m[1].pos, [1, 1, 1]);
  assert.deepEqual(interpolateBodies(a, [], 0.5), []);
});

test('bodies: nlerp takes the short way round (q and -q are the same rotation)', () => {
  const q = rotY(0.2), negq = q.map((x) => -x);
  assert.ok(near(nlerpQuat(q, negq, 0.5).map(Math.abs), q.map(Math.abs)));
});

test('bodies: model matrix = translate * rotate * scale', () => {
  const m = modelMatrix([1, 2, 3], rotY(Math.PI / 2), [2, 1, 1]);
  // local +x (scaled by 2) turns to world -z under +90 degrees about y.
  const p = project(m, [1, 0, 0]);
  assert.ok(near(p.slice(0, 3), [1, 2, 1], 1e-6), `${p}`);
  const r = quatToMat3([1, 0, 0, 0]);
  assert.deepEqual(r, [1, 0, 0, 0, 1, 0, 0, 0, 1]);
});

test('bodies: rays hit spheres, rotated boxes and capsules where they are', () => {
  const ray = { origin: [0, 0, 10], dir: [0, 0, -1] };
  assert.ok(Math.abs(rayBody(ray, { shape: 'sphere', size: [1, 0, 0], pos: [0, 0, 0], rot: [1, 0, 0, 0] }) - 9) < 1e-9);
  // A box of half extent 1 turned 45 degrees about y: its corner faces the ray.
  const t = rayBody(ray, { shape: 'box', size: [1, 1, 1], pos: [0, 0, 0], rot: rotY(Math.PI / 4) });
  assert.ok(Math.abs(t - (10 - Math.SQRT2)) < 1e-9, `${t}`);
  // A mesh body is picked by the box of its size (half extents in its own frame).
  const m = rayBody(ray, { shape: 'mesh', size: [0.5, 2, 3], pos: [0, 0, 1], rot: [1, 0, 0, 0] });
  assert.ok(Math.abs(m - 6) < 1e-9, `${m}`);
  // Capsule along y: radius 0.5, half length 2: hit on the cylinder at y = 1.5, and on the cap above it.
  const cap = { shape: 'capsule', size: [0.5, 2, 0], pos: [0, 0, 0], rot: [1, 0, 0, 0] };
  assert.ok(Math.abs(rayBody({ origin: [0, 1.5, 10], dir: [0, 0, -1] }, cap) - 9.5) < 1e-9);
  assert.ok(Math.abs(rayBody({ origin: [0, 2.3, 10], dir: [0, 0, -1] }, cap) - (10 - Math.sqrt(0.25 - 0.09))) < 1e-9);
  assert.equal(rayBody({ origin: [0, 2.6, 10], dir: [0, 0, -1] }, cap), null);
  const hit = pickBody(ray, [{ id: 1, shape: 'sphere', size: [1, 0, 0], pos: [0, 0, -3], rot: [1, 0, 0, 0] },
    { id: 2, shape: 'sphere', size: [1, 0, 0], pos: [0, 0, 2], rot: [1, 0, 0, 0] }]);
  assert.equal(hit.body.id, 2);
  assert.ok(near(hit.point, [0, 0, 3]));
});
