// decode_worker.js - a frame decoder's Web Worker: holds the page's
// whole-frame FrameStream (stream_v2.js), plus one FrameStream per band
// index of band containers (PROTOCOL.md "Bands (kind 2)"; bands.js; created
// on first use, sized by the last reset's capacity), and decodes every
// payload it is posted, in order, off the main thread.  frame_decoder_host.js
// runs one such worker, or one per core when frames come in bands, band k
// going to worker k mod W.  Worker 0 joins a frame's bands: the others send
// their band's view (or refusal) to it over a MessagePort, so the page's
// main thread gets one view per frame and never touches the bands (it
// posts and takes back, as for whole frames).  Views go out with their
// arrays transferred, not copied.  It decodes with the WebAssembly build of
// the server's decoder (frame_codec_wasm.js), the page's only decoder;
// messages that come while the module loads wait, in order, and when it
// cannot load every frame is refused, saying so (no keyframe asked for).
//   in:  {type: 'reset', capacity}
//      | {type: 'peer', port}: (worker 0) a port on which another worker sends band results
//      | {type: 'port', port}: (workers past 0) the port to worker 0
//      | {type: 'frame', fid, m (a frame message), now}
//      | {type: 'band', fid, band, seq, m (the frame message's fields, data: band `band`'s payload), now,
//         join (worker 0, with band 0: {k, n, lo, bytes, epoch})}
//   out: {type: 'view', fid, seq, view, decodeMs, decoder}
//      | {type: 'refused', fid, seq, ask, skipped, error, decoder}
import { FrameStream } from './stream_v2.js';
import { loadWasmDecoder } from './frame_codec_wasm.js';
import { joinViews } from './bands.js';

// Frames whose bands worker 0 is still gathering, at most this many (a
// band lost with a reset is dropped with the oldest).
const MAX_JOINS = 32;

// The refusal of every frame when the decoder did not load.
const NO_DECODER = 'the frame decoder (vendor/fc/frame_codec.wasm, built by make web-client-wasm) did not load';

let make = null, stream = null, decoder = 'none', capacity = 0, toJoiner = null, loaded = false;
const bands = [];                  // band index -> FrameStream
const joins = new Map();           // (worker 0) fid -> {join, got, views[], ms, bad, ask, skipped, error}
const waiting = [];

function bandStream(k) {
  if (!bands[k]) {
    bands[k] = new FrameStream(make);
    if (capacity) bands[k].reset(capacity);  // else it sizes itself by the first message's n
  }
  return bands[k];
}

const arrays = (v) => [v.pos.buffer, v.runs.buffer, v.mat.buffer, v.temp.buffer];

// A band's result (this worker's or a peer's) for worker 0's join of frame fid.
function gather(fid, band, r) {
  let j = joins.get(fid);
  if (!j) {
    if (joins.size >= MAX_JOINS) joins.delete(joins.keys().next().value);
    j = { join: null, got: 0, views: [], ms: 0, bad: false, ask: false, skipped: true, error: '', seq: r.seq };
    joins.set(fid, j);
  }
  if (r.join) j.join = r.join;
  j.got++;
  if (r.view) { j.views[band] = r.view; j.ms = Math.max(j.ms, r.decodeMs); } else {
    j.bad = true; j.ask ||= r.ask;
    if (!r.skipped) { j.skipped = false; j.error = r.error; }
  }
  if (!j.join || j.got < j.join.k) return;
  joins.delete(fid);
  if (!j.bad) {
    try {
      const v = joinViews(j.views, j.join);
      self.postMessage({ type: 'view', fid, seq: j.seq, view: v, decodeMs: j.ms, decoder }, arrays(v));
      return;
    } catch (e) { j.skipped = false; j.error = String(e.message || e); j.ask = true; }
  }
  self.postMessage({ type: 'refused', fid, seq: j.seq, ask: j.ask, skipped: j.skipped, error: j.error, decoder });
}

function handle(msg) {
  if (msg.type === 'reset') {
    capacity = msg.capacity;
    if (stream) stream.reset(capacity);
    for (const s of bands) if (s) s.reset(capacity);
    joins.clear();
    return;
  }
  if (msg.type === 'peer') { msg.port.onmessage = (ev) => gather(ev.data.fid, ev.data.band, ev.data); return; }
  if (msg.type === 'port') { toJoiner = msg.port; return; }
  if (msg.type !== 'frame' && msg.type !== 'band') return;
  const band = msg.type === 'band' ? msg.band : undefined;
  const seq = msg.m.seq;
  let r = {}, out = { ask: false, skipped: false, error: NO_DECODER };
  if (make) {
    const s = band === undefined ? stream : bandStream(band);
    const refused = s.refused;
    r = s.view(msg.m, msg.now);
    out = r.view ? { view: r.view, decodeMs: s.decodeMs } : { ask: r.ask, skipped: s.refused === refused, error: s.lastError };
  }
  if (band === undefined) {
    if (r.view) self.postMessage({ type: 'view', fid: msg.fid, seq, ...out, decoder }, arrays(r.view));
    else self.postMessage({ type: 'refused', fid: msg.fid, seq, ...out, decoder });
  } else if (toJoiner) {
    toJoiner.postMessage({ fid: msg.fid, band, seq, ...out }, r.view ? arrays(r.view) : []);
  } else {
    gather(msg.fid, band, { seq, join: msg.join, ...out });
  }
}

self.onmessage = (ev) => { if (loaded) handle(ev.data); else waiting.push(ev.data); };

loadWasmDecoder(new URL('../vendor/fc/frame_codec.wasm', import.meta.url)).then((wasm) => {
  make = wasm;
  if (make) { stream = new FrameStream(make); decoder = 'wasm'; }
  loaded = true;
  for (const m of waiting.splice(0)) handle(m);
});
