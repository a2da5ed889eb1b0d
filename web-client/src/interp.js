// interp.js - the playback timeline: frames arrive at frame_hz with jitter;
// each gets a smoothed local timestamp, and the view is drawn a little more
// than one frame interval behind the newest, interpolating between the two
// frames that bracket that time.  Pure (the caller passes the clock).

export class Timeline {
  constructor(keep = 4) {
    this.keep = keep;
    this.frames = [];        // oldest first: {seq, ts, order, f}
    this.seq = 0;
    this.order = 0;          // bumps whenever the id runs change
    this.interval = 1000 / 30;
    this.nominal = 1000 / 30;
    this.lastArrival = null;
  }

  // The configured frame interval (hello.frame_hz): the estimate stays within
  // [0.5, 4] times it, and longer gaps (a paused server sends one frame a
  // second as a heartbeat) do not count.
  setNominal(ms) { this.nominal = ms; this.interval = ms; }

  clear() { this.frames.length = 0; this.lastArrival = null; }

  // Adds a frame view (decode.frameView) received at local time `now` (ms).
  // sameOrder: whether its id runs equal the previous frame's.
  push(f, now, sameOrder) {
    if (this.lastArrival !== null) {
      const dt = now - this.lastArrival;
      if (dt < 3 * this.interval) {
        this.interval += 0.1 * (dt - this.interval);
        this.interval = Math.min(Math.max(this.interval, 0.5 * this.nominal), 4 * this.nominal);
      }
    }
    this.lastArrival = now;
    const prev = this.frames[this.frames.length - 1];
    let ts = now;
    if (prev) {
      // Advance by the smoothed interval, pulled gently toward the arrival
      // time; resynchronise after a stall.
      ts = prev.ts + this.interval + 0.1 * (now - (prev.ts + this.interval));
      if (Math.abs(ts - now) > 3 * this.interval) ts = now;
      ts = Math.max(ts, prev.ts + 1);
    }
    if (!sameOrder || !prev) this.order++;
    const e = { seq: ++this.seq, ts, order: this.order, f };
    this.frames.push(e);
    while (this.frames.length > this.keep) this.frames.shift();
    return e;
  }

  get newest() { return this.frames[this.frames.length - 1] || null; }
  get delay() { return 1.5 * this.interval; }

  // The bracket for drawing at local time `now`: {a, b, alpha}, a and b
  // timeline entries (a may equal b), alpha in [0, 1].
  sample(now) {
    const fr = this.frames;
    if (!fr.length) return null;
    const t = now - this.delay;
    if (fr.length === 1 || t <= fr[0].ts) return { a: fr[0], b: fr[Math.min(1, fr.length - 1)], alpha: fr.length === 1 ? 1 : 0 };
    for (let i = fr.length - 1; i > 0; i--) {
      if (t >= fr[i - 1].ts) {
        const a = fr[i - 1], b = fr[i];
        const alpha = Math.min(1, (t - a.ts) / Math.max(1, b.ts - a.ts));
        return { a, b, alpha };
      }
    }
    return { a: fr[0], b: fr[1], alpha: 0 };
  }
}
