// pace.js - how many of the stream's frames this page's decoder can take:
// every frame, every 2nd or every 4th (the stride it asks the server for with
// {type: 'pace', stride}).  A decoder slower than the stream would otherwise
// fall behind until the page resets it and asks for a keyframe, and show a
// few frames a second; at a stride it keeps up, and the server codes its
// frames against the last one it got, as for a slow link.  Decisions use the
// median decode time of the last frames, so one slow keyframe moves nothing,
// against the time between frames: the stream's interval at this stride, or
// the frames' own spacing when they come slower (a simulation slower than
// real time sends fewer frames, and a decoder that keeps up with those is
// not the slow part).
export const PACE_WINDOW = 8;    // decode times the median is taken over
export const PACE_SLOW = 0.85;   // median above this share of the frame budget: half the frames
export const PACE_FAST = 0.6;    // median under this share of the faster budget ...
export const PACE_HOLD_MS = 3000; // ... held this long since the last change: twice the frames

export class Pacer {
  constructor() {
    this.stride = 1; this.frameMs = 1000 / 30; this.changedAt = -Infinity;
    this.times = []; this.arrivals = [];
  }

  // The stream's frame interval (1000 / hello.frame_hz).
  setFrameMs(ms) { if (ms > 0 && Number.isFinite(ms)) this.frameMs = ms; }

  // The median of the last decode times (0 before there are any).
  median() {
    const s = [...this.times].sort((a, b) => a - b);
    return s.length ? s[s.length >> 1] : 0;
  }

  // A frame arrived (ms).
  arrived(now) {
    this.arrivals.push(now);
    if (this.arrivals.length > 2 * PACE_WINDOW) this.arrivals.shift();
  }

  // The mean time between the last frames' arrivals (a busy page takes them
  // in bursts, so not the median), 0 before there are two.
  spacing() {
    const a = this.arrivals, n = a.length;
    return n > 1 ? (a[n - 1] - a[0]) / (n - 1) : 0;
  }

  // The time a frame's decode may take at this stride.
  budget() { return Math.max(this.frameMs * this.stride, this.spacing()); }

  // One decoded frame: its decode time (ms) and the time now (ms).  Returns
  // the new stride when it changes, else 0.  (Not the frames waiting in the
  // decoder: a busy page takes several at once, frames come in bursts, and
  // a backlog rule paced a decoder that kept up at 7 ms a frame.)
  note(decodeMs, now) {
    if (!(decodeMs >= 0)) return 0;
    this.times.push(decodeMs);
    if (this.times.length > PACE_WINDOW) this.times.shift();
    if (this.times.length < PACE_WINDOW / 2) return 0;
    const med = this.median(), budget = this.budget();
    let next = this.stride;
    if (this.stride < 4 && med > PACE_SLOW * budget) next = this.stride * 2;
    else if (this.stride > 1 && med < PACE_FAST * budget / 2 && now - this.changedAt > PACE_HOLD_MS)
      next = this.stride / 2;
    if (next === this.stride) return 0;
    this.stride = next;
    this.changedAt = now;
    this.times.length = 0; // judge the new stride on its own frames
    this.arrivals.length = 0;
    return next;
  }
}
