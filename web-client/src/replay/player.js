// player.js - a recording played back (PROTOCOL.md "Recordings"): the index,
// segments fetched when needed (each opens with a hello and a keyframe, so
// one decoder per segment reads it), every frame decoded into the view the
// renderer takes, and a clock in simulated seconds with a speed, seeking and
// stepping frame by frame.  A damaged segment plays up to the damage, which
// `damage` names.  No DOM: the page (replay_app.js) drives it; runs under node.
import { decode } from '@msgpack/msgpack';
import { readSegment, REC } from '../recording.js';
import { FrameStream } from '../stream_v2.js';
import { runsEqual } from '../decode.js';

export class Player {
  // fetchBytes(path) -> Promise<Uint8Array>, fetchJson(path) -> Promise<object>;
  // makeDecoder(capacity): the payload decoder (frame_codec_wasm.js's wasmDecoders(module))
  constructor(name, { fetchBytes, fetchJson, makeDecoder }) {
    Object.assign(this, { name, fetchBytes, fetchJson, makeDecoder });
    this.index = null; this.hello = null;
    this.frames = [];          // decoded frames of the loaded segments, time order: {seq, order, f, time}
    this.loaded = new Map();   // segment index -> [first, count) in frames
    this.damage = [];
    this.t = 0; this.speed = 1; this.playing = false; this.cursor = 0;
    this.order = 0;
  }

  async open() {
    this.index = await this.fetchJson(`/api/recordings/${encodeURIComponent(this.name)}/index.json`);
    if (!this.index.segments?.length) throw new Error(`recording ${this.name} holds no segments`);
    await this._load(0);
    this.t = this.start;
    return this;
  }

  get start() { return this.index.segments[0].first_time; }
  get end() { const s = this.index.segments; return s[s.length - 1].last_time; }

  // Loads (once) the segment holding simulated time t.
  async ensure(t) {
    const segs = this.index.segments;
    let i = segs.findIndex((s) => t <= s.last_time);
    if (i < 0) i = segs.length - 1;
    if (!this.loaded.has(i)) await this._load(i);
    if (i + 1 < segs.length && !this.loaded.has(i + 1) && t > segs[i].last_time - 1) this._load(i + 1).catch(() => {});
  }

  async _load(i) {
    const seg = this.index.segments[i];
    const bytes = await this.fetchBytes(`/api/recordings/${encodeURIComponent(this.name)}/${seg.file}`);
    const r = readSegment(bytes);
    if (r.damage) this.damage.push(`${seg.file}: ${r.damage}`);
    const stream = new FrameStream(this.makeDecoder);
    const got = [];
    let prevRuns = null;
    for (const rec of r.records) {
      if (rec.kind === REC.HEADER) { const h = decode(rec.bytes); this.hello = this.hello || h; stream.reset(h.capacity); continue; }
      if (rec.kind !== REC.FRAME) continue;
      const { view } = stream.view(decode(rec.bytes), 0);
      if (!view) { this.damage.push(`${seg.file}: frame refused (${stream.lastError})`); break; }
      if (!prevRuns || !runsEqual(prevRuns, view.runs)) this.order++;
      prevRuns = view.runs;
      got.push({ seq: view.seq, order: this.order, f: view, time: view.time });
    }
    this.loaded.set(i, got.length);
    this.frames = this.frames.concat(got).sort((a, b) => a.time - b.time);
    // keep memory bounded: at most three segments' frames
    if (this.loaded.size > 3) {
      const far = [...this.loaded.keys()].sort((a, b) => Math.abs(b - i) - Math.abs(a - i))[0];
      const s = this.index.segments[far];
      this.frames = this.frames.filter((x) => x.time < s.first_time || x.time > s.last_time);
      this.loaded.delete(far);
    }
  }

  // The two frames around simulated time t and how far between: {a, b, alpha}.
  sample(t = this.t) {
    const fr = this.frames;
    if (!fr.length) return null;
    let hi = fr.findIndex((x) => x.time >= t);
    if (hi < 0) return { a: fr[fr.length - 1], b: fr[fr.length - 1], alpha: 1 };
    if (hi === 0) return { a: fr[0], b: fr[0], alpha: 1 };
    const a = fr[hi - 1], b = fr[hi];
    return { a, b, alpha: b.time > a.time ? (t - a.time) / (b.time - a.time) : 1 };
  }

  // Advances the clock by wall seconds dt at the speed (0.25-4x), stopping at the end.
  tick(dt) {
    if (!this.playing) return;
    this.t = Math.min(this.end, this.t + dt * this.speed);
    if (this.t >= this.end) this.playing = false;
  }

  setSpeed(s) { this.speed = Math.min(4, Math.max(0.25, Number(s) || 1)); }
  seek(t) { this.t = Math.min(this.end, Math.max(this.start, t)); }

  // One frame forward (+1) or back (-1) from the current time; pauses.
  step(dir) {
    this.playing = false;
    const fr = this.frames;
    if (!fr.length) return;
    const eps = 1e-9;
    const next = dir > 0 ? fr.find((x) => x.time > this.t + eps) : [...fr].reverse().find((x) => x.time < this.t - eps);
    if (next) this.t = next.time;
  }
}
