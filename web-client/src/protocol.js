// protocol.js - client-to-server command values (PROTOCOL.md "Client to
// server"), the version check and the reconnect schedule.  Pure.
import { PROTOCOL_VERSION } from './decode.js';
import { DEFAULT_LIMITS, heatRanges } from './limits.js';

export const SUBPROTOCOL = 'fluid.v2';

const v3 = (p) => [Number(p[0]), Number(p[1]), Number(p[2])];

// The `heat` command's ranges until a hello gives the server's (limits.js).
export const HEAT = heatRanges(DEFAULT_LIMITS);
function clampTo(v, [lo, hi], otherwise = lo) {
  const x = Number(v);
  return Number.isFinite(x) ? Math.min(hi, Math.max(lo, x)) : otherwise;
}

export const cmd = {
  push: (point, direction, radius, strength) =>
    ({ type: 'push', point: v3(point), radius: Number(radius), strength: Number(strength), direction: v3(direction) }),
  setParam: (material, param, value) => ({ type: 'set_param', material, param, value: Number(value) }),
  setParams: (material, params) => ({ type: 'set_param', material, params }),
  // Without `solver` the scene brings its own (GET /api/scenes names it).
  loadScene: (name, particles, solver) => {
    const c = { type: 'load_scene', name };
    if (particles) c.particles = Math.round(particles);
    if (solver) c.solver = String(solver);
    return c;
  },
  setSolver: (name) => ({ type: 'set_solver', name: String(name) }),
  // The heat tool (negative rate cools), each value clamped to `ranges`
  // (heatRanges of the server's limits).
  heat: (point, radius, rate, duration, ranges = HEAT) => {
    const c = { type: 'heat', point: v3(point), radius: clampTo(radius, ranges.radius), rate: clampTo(rate, ranges.rate, 0) };
    if (duration !== undefined) c.duration = clampTo(duration, ranges.duration);
    return c;
  },
  // One of the world's fixed heat sources (PROTOCOL.md `heater`): a floor
  // plate {kind: 'floor', radius, rate, temperature} or a sphere {kind:
  // 'sphere', point, radius, rate}; enabled defaults to true.
  heater: (slot, def) => {
    const c = { type: 'heater', slot, ...def };
    if (def.point) c.point = v3(def.point);
    return c;
  },
  heaterEnable: (slot, enabled) => ({ type: 'heater', slot, enabled: !!enabled }),
  pause: () => ({ type: 'pause' }),
  resume: () => ({ type: 'resume' }),
  step: (steps = 1, lim = DEFAULT_LIMITS) => ({ type: 'step', steps: Math.round(clampTo(steps, [1, lim.steps])) }),
  emitterEnable: (slot, enabled) => ({ type: 'emitter', slot, enabled: !!enabled }),
  emitter: (slot, def) => ({ type: 'emitter', slot, ...def, pos: v3(def.pos), direction: v3(def.direction) }),
  cursor: (pos) => ({ type: 'cursor', rid: 0, pos: pos ? v3(pos) : null }),
  auth: (token) => ({ type: 'auth', token }),
  // Rigid bodies.  opts: {rot, vel, ang_vel, density, friction, static}.
  bodyCreate: (shape, size, pos, opts = {}) => {
    const c = { type: 'body_create', shape, size: v3(size), pos: v3(pos) };
    if (opts.rot) c.rot = opts.rot.map(Number);
    if (opts.vel) c.vel = v3(opts.vel);
    if (opts.ang_vel) c.ang_vel = v3(opts.ang_vel);
    if (opts.density !== undefined) c.density = Number(opts.density);
    if (opts.friction !== undefined) c.friction = Number(opts.friction);
    if (opts.static !== undefined) c.static = !!opts.static;
    return c;
  },
  bodyDestroy: (id) => ({ type: 'body_destroy', id }),
  bodyImpulse: (id, point, impulse) => ({ type: 'body_impulse', id, point: v3(point), impulse: v3(impulse) }),
  bodyGrab: (id, point, target) => ({ type: 'body_grab', id, point: v3(point), target: v3(target) }),
  bodyDrag: (id, target) => ({ type: 'body_drag', rid: 0, id, target: v3(target) }),
  bodyRelease: (id) => ({ type: 'body_release', id }),
};

// Commands the server answers only when they fail (send with rid 0).
export const NO_REPLY = new Set(['cursor', 'body_drag', 'keyframe', 'pace', 'detail']);

// Checks a hello; returns null when this client can use it, else a sentence
// for the user.
export function checkHello(h) {
  if (!h || h.type !== 'hello') return 'the server did not greet with a hello message';
  if (h.version !== PROTOCOL_VERSION)
    return `The server speaks protocol version ${h.version}; this page speaks version ${PROTOCOL_VERSION}. ` +
      'Reload the page to get the client that matches the server.';
  if (!Array.isArray(h.bounds) || h.bounds.length !== 6) return 'hello without bounds';
  return null;
}

// Reconnect delay (ms) after `attempt` failures in a row: exponential from
// 500 ms, capped at 10 s, with +-20% jitter (rand in [0, 1)).
export function backoffDelay(attempt, rand = Math.random()) {
  const base = Math.min(10000, 500 * 2 ** Math.min(attempt, 10));
  return Math.round(base * (0.8 + 0.4 * rand));
}

// Short, stable display names for client ids (there is no name in the protocol).
const NAMES = ['Otter', 'Heron', 'Lynx', 'Puffin', 'Newt', 'Koala', 'Ibis', 'Marten', 'Gecko', 'Bison', 'Crane',
  'Dingo', 'Egret', 'Ferret', 'Mole', 'Yak'];
export function shortName(id) { return `${NAMES[(id - 1) % NAMES.length]} ${id}`; }
