// frame_decoder_host.js - where the page's frame payloads are decoded: in a
// Web Worker (decode_worker.js) when the browser has module workers, so the
// main thread only posts the message and takes the view back; else on the
// main thread (stream_v2.js).  Either way the decoder is the server's, built
// to WebAssembly (frame_codec_wasm.js): the page has no other.  A frame in bands (PROTOCOL.md "Bands (kind
// 2)", bands.js) on a browser of 2 cores or more is decoded side by side:
// band k's payload goes to worker k mod W (W = the fewest of the bands, the
// cores and 4; the workers past the first are started when first needed),
// each worker holding one decoder per band; worker 0 joins the K views into
// the frame's (the others send theirs to it), so the main thread posts and
// takes back one view, as for whole frames; a frame one of whose bands was
// refused or skipped is dropped.
// Views come back in arrival order.  A decoder that falls more than
// MAX_BEHIND frames behind (slower than the stream) is reset and a keyframe
// asked for, so no queue grows without bound; before that, a decoder slower
// than the stream asks the server for fewer frames (pace.js), and gets every
// frame again when it keeps up.
import { FrameStream, probesOf } from './stream_v2.js';
import { Pacer } from './pace.js';
import { splitBands } from './bands.js';
import { loadWasmDecoder } from './frame_codec_wasm.js';

// A second of the stream: a page whose main thread stalled (a long render
// on a software GPU) posts the frames that queued meanwhile at once, and the
// worker decodes them in a fraction of that; 8 reset such bursts and cost a
// keyframe each time (the 20k dam break in headless Chromium: 1 to 10
// keyframes in 5 s).  Bounded either way: at 100k, 30 payloads are ~3 MB.
const MAX_BEHIND = 30;
// Most workers decoding one frame's bands.
const MAX_WORKERS = 4;
// A keyframe asked for here at most this often (stream_v2.js's pace).
const ASK_EVERY_MS = 500;

function cores() {
  const c = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency : 0;
  return c > 0 ? c : 1;
}

export class FrameDecoderHost {
  // onView(view, decodeMs), onAsk(): send the server {type: 'keyframe'},
  // onPace(stride): send it {type: 'pace', stride}.
  constructor(onView, onAsk, onPace = () => {}) {
    this.onView = onView; this.onAsk = onAsk; this.onPace = onPace;
    this.pacer = new Pacer();
    this.stream = null;                    // main-thread fallback: a FrameStream once the decoder loads
    this.mainLoad = null;                  // its loading (a promise), started when first needed
    this.workers = []; this.capacity = 1;
    this.pending = [];                     // frames posted and not yet answered, oldest first
    this.fid = 0;                          // the last frame posted's number
    this.bits = 0; this.keys = 0; this.refused = 0; this.lastError = ''; this.askedAt = -Infinity;
    this.decoder = 'none';                 // 'wasm' once a decoder (the server's, as WebAssembly) loaded
    this.bandWorkers = 0;                  // workers that decoded the last frame (0: the main thread)
    try {
      if (typeof Worker !== 'undefined') this._spawn();
    } catch (e) { this.workers = []; }
    if (!this.workers.length) this._loadMain();
  }

  // The main thread's decoder: loaded once; frames before it are skipped,
  // and a keyframe is asked for when it is ready.
  _loadMain() {
    if (this.mainLoad) return;
    this.mainLoad = loadWasmDecoder(new URL('../vendor/fc/frame_codec.wasm', import.meta.url)).then((make) => {
      if (!make) { this.lastError = 'the frame decoder (vendor/fc/frame_codec.wasm) did not load'; return; }
      this.stream = new FrameStream(make);
      this.stream.reset(this.capacity);
      this.decoder = 'wasm';
      this.onAsk();
    });
  }

  get inWorker() { return this.workers.length > 0; }
  get inflight() { return this.pending.length; }

  _spawn() {
    const w = new Worker(new URL('./decode_worker.js', import.meta.url), { type: 'module' });
    w.onmessage = (ev) => this._fromWorker(ev.data);
    w.onerror = (e) => { console.warn('decode worker failed; decoding on the main thread', e.message); this._fallback(); };
    if (this.workers.length) {
      w.postMessage({ type: 'reset', capacity: this.capacity });
      // its band results go to worker 0, which joins each frame's bands
      const ch = new MessageChannel();
      this.workers[0].postMessage({ type: 'peer', port: ch.port1 }, [ch.port1]);
      w.postMessage({ type: 'port', port: ch.port2 }, [ch.port2]);
    }
    this.workers.push(w);
    return w;
  }

  // A hello: fresh decoders (the connection's pace is said again, since a
  // new connection starts at every frame).
  reset(capacity, frameMs) {
    this.capacity = capacity;
    if (frameMs) this.pacer.setFrameMs(frameMs);
    if (this.pacer.stride > 1) this.onPace(this.pacer.stride);
    if (this.stream) this.stream.reset(capacity);
    this.pending = [];                     // answers to frames posted before are dropped
    for (const w of this.workers) w.postMessage({ type: 'reset', capacity });
  }

  // m: a decoded frame message (its `data` a view into the WebSocket message).
  push(m, now) {
    this.pacer.arrived(now);
    if (!this.workers.length) {
      if (!this.stream) return;            // the decoder is loading, or did not load (lastError)
      const before = { keys: this.stream.keys, refused: this.stream.refused };
      const r = this.stream.view(m, now);
      this._count(this.stream, before);
      this.bandWorkers = 0;
      if (r.view) { this._paced(this.stream.decodeMs, now); this.onView(r.view, this.stream.decodeMs); } else if (r.ask) this.onAsk();
      return;
    }
    if (this.pending.length >= MAX_BEHIND) {
      // the decoders cannot keep up: start again from a keyframe
      this.reset(this.capacity);
      this.onAsk();
    }
    let split = null;
    try { split = cores() >= 2 ? splitBands(m.data) : null; } catch (e) { this._refuse(String(e.message || e), now); return; }
    const { data: _d, ...rest } = m;
    const fid = ++this.fid;
    if (!split) {
      // the payload's bytes go to the worker (copied out of the message, so the
      // main thread keeps the message for the HUD and the bench hook)
      const data = m.data instanceof Uint8Array ? m.data.slice() : m.data;
      this.pending.push({ fid, answer: null });
      this.workers[0].postMessage({ type: 'frame', fid, m: { ...rest, data }, now }, data instanceof Uint8Array ? [data.buffer] : []);
      return;
    }
    const W = Math.min(split.k, cores(), MAX_WORKERS);
    while (this.workers.length < W) this._spawn();
    // one answer, the joined view, from worker 0 (cursors, bodies and probes stay here)
    this.pending.push({ fid, answer: null, extra: { cursors: m.cursors, bodies: m.bodies, probes: probesOf(m) }, workers: W });
    const base = { type: m.type, tick: m.tick, time: m.time, paused: m.paused, bounds: m.bounds, temp_range: m.temp_range, seq: m.seq, key: m.key, n: m.n, lod: m.lod };
    const join = { k: split.k, n: split.n, lo: split.lo, bytes: m.data.byteLength, epoch: split.epoch };
    for (let k = 0; k < split.k; k++) {
      const data = split.parts[k].slice();
      this.workers[k % W].postMessage({ type: 'band', fid, band: k, seq: m.seq, m: { ...base, data }, now, join: k ? undefined : join }, [data.buffer]);
    }
  }

  _paced(decodeMs, now) {
    const s = this.pacer.note(decodeMs, now);
    if (s) this.onPace(s);
  }

  _count(s, before) {
    this.bits = s.bits; this.lastError = s.lastError;
    this.keys += s.keys - before.keys; this.refused += s.refused - before.refused;
  }

  // A frame refused here (a band container that breaks the rules, bands that
  // do not join): asks for a keyframe at most every ASK_EVERY_MS, as a
  // decoder does.
  _refuse(why, now) {
    this.refused++;
    this.lastError = why;
    if (now - this.askedAt > ASK_EVERY_MS) { this.askedAt = now; this.onAsk(); }
  }

  // An answer for one frame, or one band of one; frames are handed on in the
  // order they were posted, each once all its bands are in.
  _fromWorker(msg) {
    if (msg.decoder) this.decoder = msg.decoder;
    const e = this.pending.find((p) => p.fid === msg.fid);
    if (!e || e.answer) return;            // posted before a reset, or answered
    e.answer = msg;
    while (this.pending.length && this.pending[0].answer) this._done(this.pending.shift());
  }

  // A frame's answer (a view, or a refusal or skip), in the order frames were posted.
  _done(e) {
    const a = e.answer;
    if (a.type === 'view') {
      const view = a.view;
      if (e.extra) { view.cursors = e.extra.cursors ?? view.cursors; view.bodies = e.extra.bodies ?? view.bodies; view.probes = e.extra.probes ?? view.probes; }
      this.bandWorkers = e.extra ? e.workers : 1;
      this.bits = view.bits;
      if (view.key) this.keys++;
      this._paced(a.decodeMs, performance.now());
      this.onView(view, a.decodeMs);
      return;
    }
    if (!a.skipped) { this.refused++; this.lastError = a.error; }
    if (a.ask) this.onAsk();
  }

  _fallback() {
    for (const w of this.workers) w.terminate();
    this.workers = [];
    this.pending = [];
    if (this.stream) { this.stream.reset(this.capacity); this.onAsk(); } else this._loadMain();
  }
}
