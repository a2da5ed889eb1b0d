// frame_decoder_host.js - where the page's frame payloads are decoded: in a
// Web Worker (decode_worker.js) when the browser has module workers, so the
// main thread only posts the message and takes the view back; else on the
// main thread (stream_v2.js).  Views come back in arrival order.  A worker
// that falls more than MAX_BEHIND frames behind (a decoder slower than the
// stream) is reset and a keyframe asked for, so no queue grows without bound;
// before that, a decoder slower than the stream asks the server for fewer
// frames (pace.js), and gets every frame again when it keeps up.
import { FrameStream } from './stream_v2.js';
import { Pacer } from './pace.js';

// A second of the stream: a page whose main thread stalled (a long render
// on a software GPU) posts the frames that queued meanwhile at once, and the
// worker decodes them in a fraction of that; 8 reset such bursts and cost a
// keyframe each time (the 20k dam break in headless Chromium: 1 to 10
// keyframes in 5 s).  Bounded either way: at 100k, 30 payloads are ~3 MB.
const MAX_BEHIND = 30;

export class FrameDecoderHost {
  // onView(view, decodeMs), onAsk(): send the server {type: 'keyframe'},
  // onPace(stride): send it {type: 'pace', stride}.
  constructor(onView, onAsk, onPace = () => {}) {
    this.onView = onView; this.onAsk = onAsk; this.onPace = onPace;
    this.pacer = new Pacer();
    this.stream = new FrameStream();       // main-thread fallback, and the counters the HUD shows
    this.worker = null; this.inflight = 0; this.capacity = 1;
    this.bits = 0; this.keys = 0; this.refused = 0; this.lastError = '';
    this.decoder = 'js';                   // the worker's: 'wasm' (the server's decoder as WebAssembly) or 'js'
    try {
      if (typeof Worker !== 'undefined') {
        this.worker = new Worker(new URL('./decode_worker.js', import.meta.url), { type: 'module' });
        this.worker.onmessage = (ev) => this._fromWorker(ev.data);
        this.worker.onerror = (e) => { console.warn('decode worker failed; decoding on the main thread', e.message); this._fallback(); };
      }
    } catch (e) { this.worker = null; }
  }

  get inWorker() { return !!this.worker; }

  // A hello: a fresh decoder (the connection's pace is said again, since a
  // new connection starts at every frame).
  reset(capacity, frameMs) {
    this.capacity = capacity;
    if (frameMs) this.pacer.setFrameMs(frameMs);
    if (this.pacer.stride > 1) this.onPace(this.pacer.stride);
    this.stream.reset(capacity);
    this.inflight = 0;
    if (this.worker) this.worker.postMessage({ type: 'reset', capacity });
  }

  // m: a decoded frame message (its `data` a view into the WebSocket message).
  push(m, now) {
    this.pacer.arrived(now);
    if (!this.worker) {
      const r = this.stream.view(m, now);
      this._count(this.stream);
      if (r.view) { this._paced(this.stream.decodeMs, now); this.onView(r.view, this.stream.decodeMs); } else if (r.ask) this.onAsk();
      return;
    }
    if (this.inflight >= MAX_BEHIND) {
      // the decoder cannot keep up: start again from a keyframe
      this.reset(this.capacity);
      this.onAsk();
    }
    this.inflight++;
    // the payload's bytes go to the worker (copied out of the message, so the
    // main thread keeps the message for the HUD and the bench hook)
    const data = m.data.slice();
    const { data: _d, ...rest } = m;
    this.worker.postMessage({ type: 'frame', m: { ...rest, data }, now }, [data.buffer]);
  }

  _paced(decodeMs, now) {
    const s = this.pacer.note(decodeMs, now);
    if (s) this.onPace(s);
  }

  _count(s) { this.bits = s.bits; this.keys = s.keys; this.refused = s.refused; this.lastError = s.lastError; }

  _fromWorker(msg) {
    if (this.inflight > 0) this.inflight--;
    this.keys = msg.keys ?? this.keys;
    this.refused = msg.refused ?? this.refused;
    this.decoder = msg.decoder ?? this.decoder;
    if (msg.type === 'view') {
      this.bits = msg.view.bits;
      this._paced(msg.decodeMs, performance.now());
      this.onView(msg.view, msg.decodeMs);
      return;
    }
    this.lastError = msg.error;
    if (msg.ask) this.onAsk();
  }

  _fallback() {
    if (this.worker) this.worker.terminate();
    this.worker = null;
    this.stream.reset(this.capacity);
    this.onAsk();
  }
}
