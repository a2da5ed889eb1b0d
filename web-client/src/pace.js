// pace.js - how many of the stream's frames this page's decoder can take:
// every frame, every 2nd or every 4th (the stride it asks the server for with
// {type: 'pace', stride}).  A decoder slower than the stream would otherwise
// fall behind until the page resets it and asks for a keyframe, and show a
// few frames a second; at a stride it keeps up, and the server codes its
// frames against the last one it got, as for a slow link.  Decisions use the
// median decode time of the last frames, so one slow keyframe moves nothing.
export const PACE_STRIDES = [1, 2, 4];
export const PACE_WINDOW = 8;    // decode times the median is taken over
export const PACE_SLOW = 0.85;   // median above this share of the frame budget: half the frames
export const PACE_FAST = 0.6;    // median under this share of the faster budget ...
export const PACE_HOLD_MS = 3000; // ... held this long since the last change: twice the frames
export const PACE_BACKLOG = 3;   // frames waiting in the decoder that mean it is behind

export class Pacer {
  constructor() { this.stride = 1; this.frameMs = 1000 / 30; this.changedAt = -Infinity; this.times = []; }

  // The stream's frame interval (1000 / hello.frame_hz).
  setFrameMs(ms) { if (ms > 0 && Number.isFinite(ms)) this.frameMs = ms; }

  median() {
    const s = [...this.times].sort((a, b) => a - b);
    return s.length ? s[s.length >> 1] : 0;
  }

  // One decoded frame: its decode time (ms), the frames still waiting in the
  // decoder, the time now (ms).  Returns the new stride when it changes, else 0.
  note(decodeMs, waiting, now) {
    if (!(decodeMs >= 0)) return 0;
    this.times.push(decodeMs);
    if (this.times.length > PACE_WINDOW) this.times.shift();
    if (this.times.length < PACE_WINDOW / 2) return 0;
    const med = this.median(), budget = this.frameMs * this.stride;
    let next = this.stride;
    if (this.stride < 4 && (med > PACE_SLOW * budget || (waiting >= PACE_BACKLOG && now - this.changedAt > 1000)))
      next = this.stride * 2;
    else if (this.stride > 1 && med < PACE_FAST * budget / 2 && now - this.changedAt > PACE_HOLD_MS)
      next = this.stride / 2;
    if (next === this.stride) return 0;
    this.stride = next;
    this.changedAt = now;
    this.times.length = 0; // judge the new stride on its own frames
    return next;
  }
}
