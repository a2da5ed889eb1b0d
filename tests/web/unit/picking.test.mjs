// picking.test.mjs - rays from the camera, against planes, boxes and particles,
// and the drag direction of the push tool.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { OrbitCamera } from '../../../web-client/src/camera.js';
import { rayPlane, rayParticles, rayBox, pickFluid, dragVector } from '../../../web-client/src/picking.js';
import { project, multiply, invert, vec3 } from '../../../web-client/src/math.js';

const near = (a, b, eps = 1e-4) => a.every((x, i) => Math.abs(x - b[i]) < eps);

test('camera: the ray through a projected point passes through it', () => {
  const cam = new OrbitCamera();
  cam.setAspect(1.6);
  cam.fit([0, 0, 0, 4, 2, 1]);
  cam.orbit(0.3, -0.1);
  cam.setShift(-0.2);
  for (const p of [[2, 1, 0.5], [0, 0, 0], [4, 2, 1], [1, 0.3, 0.8]]) {
    const q = project(cam.viewProj, p);
    const r = cam.ray(q[0], q[1]);
    const t = vec3.dot(vec3.sub(p, r.origin), r.dir);
    assert.ok(near(vec3.add(r.origin, vec3.scale(r.dir, t)), p, 1e-3), `point ${p}`);
  }
  assert.ok(near([...multiply(cam.viewProj, invert(cam.viewProj))], [1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1], 1e-3));
});

test('camera: fit puts the whole box in view', () => {
  const cam = new OrbitCamera();
  cam.setAspect(1.5);
  const b = [0, 0, 0, 6, 3, 1.5];
  cam.fit(b);
  for (let i = 0; i < 8; i++) {
    const q = project(cam.viewProj, [b[(i & 1) * 3], b[1 + ((i >> 1) & 1) * 3], b[2 + ((i >> 2) & 1) * 3]]);
    assert.ok(Math.abs(q[0]) <= 1 && Math.abs(q[1]) <= 1 && q[3] > 0, `corner ${i}: ${q}`);
  }
});

test('rayPlane and rayBox', () => {
  const ray = { origin: [0, 5, 0], dir: [0, -1, 0] };
  assert.deepEqual(rayPlane(ray, [0, 1, 0], [0, 1, 0]).point, [0, 1, 0]);
  assert.equal(rayPlane(ray, [0, 6, 0], [0, 1, 0]), null, 'behind the origin');
  assert.equal(rayPlane({ origin: [0, 0, 0], dir: [1, 0, 0] }, [0, 1, 0], [0, 1, 0]), null, 'parallel');
  const hit = rayBox({ origin: [-1, 0.5, 0.5], dir: [1, 0, 0] }, [0, 0, 0, 2, 1, 1]);
  assert.equal(hit.t0, 1);
  assert.equal(hit.t1, 3);
  assert.equal(rayBox({ origin: [-1, 5, 0.5], dir: [1, 0, 0] }, [0, 0, 0, 2, 1, 1]), null);
});

function frameOf(points, bounds) {
  const pos = new Uint16Array(3 * points.length);
  points.forEach((p, i) => { for (let a = 0; a < 3; a++) pos[3 * i + a] = Math.round((p[a] - bounds[a]) / (bounds[a + 3] - bounds[a]) * 65535); });
  return { n: points.length, pos, bounds };
}

test('rayParticles: the first particle along the ray, on its sphere', () => {
  const b = [0, 0, 0, 2, 2, 2];
  const f = frameOf([[1, 1, 0.5], [1, 1, 1.5], [1.5, 1, 1]], b);
  const ray = { origin: [1, 1, 5], dir: [0, 0, -1] };
  const hit = rayParticles(ray, f, 0.1);
  assert.equal(hit.index, 1);
  assert.ok(near(hit.point, [1, 1, 1.6], 1e-3));
  assert.equal(rayParticles({ origin: [0.2, 0.2, 5], dir: [0, 0, -1] }, f, 0.1), null);
});

test('pickFluid: falls back to the plane through the fluid centre, facing the camera', () => {
  const b = [0, 0, 0, 2, 2, 2];
  const f = frameOf([[1, 1, 1]], b);
  const p = pickFluid({ origin: [0.3, 0.4, 5], dir: [0, 0, -1] }, f, 0.1, [1, 1, 1], [0, 0, -1]);
  assert.equal(p.onFluid, false);
  assert.ok(near(p.point, [0.3, 0.4, 1]));
  const q = pickFluid({ origin: [1, 1, 5], dir: [0, 0, -1] }, f, 0.1, [1, 1, 1], [0, 0, -1]);
  assert.equal(q.onFluid, true);
});

test('dragVector: a sideways drag on screen pushes sideways in the world, scaled by depth', () => {
  const cam = new OrbitCamera();
  cam.setAspect(1);
  cam.target = [0, 0, 0]; cam.yaw = 0; cam.pitch = 0; cam.distance = 4; cam.update();
  const at = [0, 0, 0];
  const d = dragVector(cam.ray(0, 0), cam.ray(0.1, 0), at, cam.forward);
  assert.ok(d[0] > 0 && Math.abs(d[1]) < 1e-6 && Math.abs(d[2]) < 1e-6, `${d}`);
  const far = dragVector(cam.ray(0, 0), cam.ray(0.1, 0), [0, 0, -4], cam.forward);
  assert.ok(Math.abs(far[0] / d[0] - 2) < 1e-3, 'twice as far: twice the world motion');
  const up = dragVector(cam.ray(0, 0), cam.ray(0, 0.1), at, cam.forward);
  assert.ok(up[1] > 0);
});
