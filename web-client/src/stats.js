// stats.js - rates for the heads-up display, over a sliding window.  Pure.

export class StreamStats {
  constructor(windowMs = 1000) { this.windowMs = windowMs; this.frames = []; this.bytes = []; }
  // A frame (tick, sim time) arrived at local time now (ms).
  frame(now, tick, time) {
    this.frames.push({ now, tick, time });
    this._trim(this.frames, now, 2);
  }
  // bytes received at now.
  received(now, n) {
    this.bytes.push({ now, n });
    this._trim(this.bytes, now, 1);
  }
  _trim(a, now, keep) { while (a.length > keep && now - a[0].now > this.windowMs) a.shift(); }
  // {tickHz, realtime, bytesPerS} measured over the window ending at now.
  rates(now) {
    const f = this.frames;
    let tickHz = null, realtime = null;
    if (f.length >= 2) {
      const a = f[0], b = f[f.length - 1];
      const dt = (b.now - a.now) / 1000;
      // Over at least a second of arrivals: a busy page handles frames in bursts.
      if (dt >= 1 && b.tick >= a.tick) { tickHz = (b.tick - a.tick) / dt; realtime = (b.time - a.time) / dt; }
    }
    let sum = 0;
    for (const x of this.bytes) if (now - x.now <= this.windowMs) sum += x.n;
    let framesPerS = null;
    if (f.length >= 2) {
      const span = (f[f.length - 1].now - f[0].now) / 1000;
      if (span > 0) framesPerS = (f.length - 1) / span;
    }
    return { tickHz, realtime, bytesPerS: sum / (this.windowMs / 1000), framesPerS };
  }
}

// A ring of the last `size` samples with summaries (decode / upload timings).
export class Ring {
  constructor(size = 600) { this.a = new Float64Array(size); this.n = 0; this.i = 0; }
  add(v) { this.a[this.i] = v; this.i = (this.i + 1) % this.a.length; if (this.n < this.a.length) this.n++; }
  values() { return Array.from(this.n < this.a.length ? this.a.subarray(0, this.n) : this.a); }
  summary() {
    const v = this.values().sort((x, y) => x - y);
    if (!v.length) return { n: 0 };
    const q = (p) => v[Math.min(v.length - 1, Math.floor(p * v.length))];
    return { n: v.length, mean: v.reduce((s, x) => s + x, 0) / v.length, median: q(0.5), p95: q(0.95), max: v[v.length - 1] };
  }
}
