// limits.js - the server's limits as this page uses them: hello.limits
// (PROTOCOL.md `hello`), with the protocol's documented values as the
// fallback until a hello arrives (the only place they are written), the
// ranges the tools clamp to, and the command rate budget.  Pure.

// PROTOCOL.md's values; a hello replaces each one it carries.
export const DEFAULT_LIMITS = Object.freeze({
  max_msg: 4096,          // bytes per client message
  rate_per_s: 120,        // command rate limit (token bucket)
  rate_burst: 240,
  push_strength: 50,      // m/s
  push_radius: 100,       // m
  heat_rate: 1000,        // K/s
  heat_radius: 10,        // m
  heat_duration: 10,      // s
  steps: 1000,            // per `step`
});

// The limits a hello gives (each value a positive finite number; any other
// or missing one keeps its fallback).
export function readLimits(hello) {
  const out = { ...DEFAULT_LIMITS };
  const l = hello?.limits;
  if (l && typeof l === 'object') {
    for (const k of Object.keys(out)) {
      const v = Number(l[k]);
      if (l[k] !== undefined && l[k] !== null && Number.isFinite(v) && v > 0) out[k] = v;
    }
  }
  return Object.freeze(out);
}

// The `heat` command's ranges: radius (0, heat_radius] m, rate
// [-heat_rate, heat_rate] K/s, duration (0, heat_duration] s; the open ends
// are kept off zero.
const HEAT_FLOOR = 0.01;
export function heatRanges(lim = DEFAULT_LIMITS) {
  return {
    radius: [HEAT_FLOOR, lim.heat_radius],
    rate: [-lim.heat_rate, lim.heat_rate],
    duration: [HEAT_FLOOR, lim.heat_duration],
  };
}

// What one message costs against the rate limit (PROTOCOL.md "Limits").
const COST = { load_scene: 30, body_create: 5 };
export const commandCost = (type) => COST[type] ?? 1;

// The server's token bucket as seen from this page: rate_per_s tokens a
// second up to rate_burst.  take(cost, now ms) spends them when there are
// enough and says whether it did; charge() spends what there is (a message
// sent anyway, which the server may refuse).
export class RateBudget {
  constructor(lim = DEFAULT_LIMITS) { this.setLimits(lim); }
  setLimits(lim) {
    this.rate = lim.rate_per_s;
    this.burst = lim.rate_burst;
    this.tokens = lim.rate_burst;
    this.at = null;
  }
  _refill(now) {
    if (this.at !== null) this.tokens = Math.min(this.burst, this.tokens + Math.max(0, now - this.at) * this.rate / 1000);
    this.at = now;
  }
  take(cost, now) {
    this._refill(now);
    if (this.tokens < cost) return false;
    this.tokens -= cost;
    return true;
  }
  charge(cost, now) { if (!this.take(cost, now)) this.tokens = 0; }
}
