// camera.js - an orbit camera around a target: yaw / pitch / distance, with
// pan, and the ray through a pointer position for picking.
import { vec3, perspective, lookAt, multiply, invert, clamp } from './math.js';

export class OrbitCamera {
  constructor() {
    this.target = [0, 0, 0];
    this.yaw = 0.35;       // radians around +y; 0 looks along -z
    this.pitch = 0.35;     // radians above the horizon
    this.distance = 5;
    this.fovy = 45 * Math.PI / 180;
    this.aspect = 1;
    this.minDistance = 0.2;
    this.maxDistance = 200;
    this.shiftX = 0;
    this.update();
  }

  // Frames a world box [minx, miny, minz, maxx, maxy, maxz].
  fit(bounds) {
    const c = [(bounds[0] + bounds[3]) / 2, (bounds[1] + bounds[4]) / 2, (bounds[2] + bounds[5]) / 2];
    const ext = [bounds[3] - bounds[0], bounds[4] - bounds[1], bounds[5] - bounds[2]];
    const r = 0.5 * Math.hypot(ext[0], ext[1], ext[2]);
    this.target = [c[0], c[1] - 0.1 * ext[1], c[2]];
    const visible = Math.max(0.5, this.aspect * (1 + this.shiftX));   // width left of the panel
    const fit = Math.min(this.fovy, 2 * Math.atan(Math.tan(this.fovy / 2) * visible));
    this.distance = clamp(1.05 * r / Math.sin(fit / 2), this.minDistance, this.maxDistance);
    this.maxDistance = Math.max(this.maxDistance, 4 * this.distance);
    this.yaw = 0.35;
    this.pitch = 0.38;
    this.update();
  }

  eye() {
    const cp = Math.cos(this.pitch);
    return [this.target[0] + this.distance * cp * Math.sin(this.yaw),
      this.target[1] + this.distance * Math.sin(this.pitch),
      this.target[2] + this.distance * cp * Math.cos(this.yaw)];
  }

  update() {
    this.position = this.eye();
    this.view = lookAt(this.position, this.target, [0, 1, 0]);
    this.near = Math.max(0.01, this.distance * 0.02);
    this.far = this.distance * 10 + 50;
    this.proj = perspective(this.fovy, this.aspect, this.near, this.far);
    this.proj[8] = -this.shiftX;  // moves the image sideways by shiftX in NDC (clear of the side panel)
    this.viewProj = multiply(this.proj, this.view);
    this.invViewProj = invert(this.viewProj);
    // Camera axes in world space (rows of the view matrix).
    this.right = [this.view[0], this.view[4], this.view[8]];
    this.up = [this.view[1], this.view[5], this.view[9]];
    this.forward = [-this.view[2], -this.view[6], -this.view[10]];
  }

  setAspect(a) { this.aspect = a; this.update(); }
  // Keeps the orbit target at the centre of the part of the canvas a panel
  // does not cover: `covered` is the fraction of the width hidden on the right.
  setShift(covered) { const s = -Math.min(0.6, Math.max(0, covered)); if (s !== this.shiftX) { this.shiftX = s; this.update(); } }
  orbit(dx, dy) {
    this.yaw -= dx;
    this.pitch = clamp(this.pitch + dy, -1.45, 1.45);
    this.update();
  }
  zoom(factor) {
    this.distance = clamp(this.distance * factor, this.minDistance, this.maxDistance);
    this.update();
  }
  // Pans by a fraction of the view height.
  pan(fx, fy) {
    const s = 2 * this.distance * Math.tan(this.fovy / 2);
    this.target = vec3.add(this.target, vec3.add(vec3.scale(this.right, -fx * s), vec3.scale(this.up, fy * s)));
    this.update();
  }

  // The world-space ray through normalised device coordinates (ndcX, ndcY)
  // in [-1, 1] (y up): {origin, dir} with dir unit length.
  ray(ndcX, ndcY) { return rayFromInverse(this.invViewProj, ndcX, ndcY); }
}

export function rayFromInverse(inv, ndcX, ndcY) {
  const un = (z) => {
    const x = inv[0] * ndcX + inv[4] * ndcY + inv[8] * z + inv[12];
    const y = inv[1] * ndcX + inv[5] * ndcY + inv[9] * z + inv[13];
    const zz = inv[2] * ndcX + inv[6] * ndcY + inv[10] * z + inv[14];
    const w = inv[3] * ndcX + inv[7] * ndcY + inv[11] * z + inv[15];
    return [x / w, y / w, zz / w];
  };
  const a = un(-1), b = un(1);
  return { origin: a, dir: vec3.norm(vec3.sub(b, a)) };
}
