// decode_worker.js - a frame decoder's Web Worker: holds the page's
// whole-frame FrameStream (stream_v2.js), plus one FrameStream per band
// index of band containers (PROTOCOL.md "Bands (kind 2)"; bands.js; created
// on first use, sized by the last reset's capacity), and decodes every
// payload it is posted, in order, off the main thread; posts back each view
// (its arrays transferred, not copied) or that a payload was refused or
// skipped (a delta while waiting for a keyframe).  frame_decoder_host.js
// runs one such worker, or one per core when frames come in bands, band k
// going to worker k mod W.  It decodes with the WebAssembly build of the
// server's decoder (frame_codec_wasm.js) when that loads, else with the
// JavaScript one; messages that come while the module loads wait, in order.
//   in:  {type: 'reset', capacity}
//      | {type: 'frame', fid, m (a frame message), now}
//      | {type: 'band', fid, band, seq, m (the frame message's fields, data: band `band`'s payload), now}
//   out: {type: 'view', fid, band?, seq, view, decodeMs, decoder}
//      | {type: 'refused', fid, band?, seq, ask, skipped, error, decoder}
import { FrameStream } from './stream_v2.js';
import { loadWasmDecoder } from './frame_codec_wasm.js';

let make = null, stream = null, decoder = 'js', capacity = 0;
const bands = [];                  // band index -> FrameStream
const waiting = [];

function bandStream(k) {
  if (!bands[k]) {
    bands[k] = new FrameStream(make);
    if (capacity) bands[k].reset(capacity);  // else it sizes itself by the first message's n
  }
  return bands[k];
}

function handle(msg) {
  if (msg.type === 'reset') {
    capacity = msg.capacity;
    stream.reset(capacity);
    for (const s of bands) if (s) s.reset(capacity);
    return;
  }
  if (msg.type !== 'frame' && msg.type !== 'band') return;
  const band = msg.type === 'band' ? msg.band : undefined;
  const s = band === undefined ? stream : bandStream(band);
  const refused = s.refused;
  const r = s.view(msg.m, msg.now);
  const seq = msg.m.seq;
  if (!r.view) {
    self.postMessage({ type: 'refused', fid: msg.fid, band, seq, ask: r.ask, skipped: s.refused === refused, error: s.lastError, decoder });
    return;
  }
  const v = r.view;
  self.postMessage({ type: 'view', fid: msg.fid, band, seq, view: v, decodeMs: s.decodeMs, decoder },
    [v.pos.buffer, v.runs.buffer, v.mat.buffer, v.temp.buffer]);
}

self.onmessage = (ev) => { if (stream) handle(ev.data); else waiting.push(ev.data); };

loadWasmDecoder(new URL('../vendor/fc/frame_codec.wasm', import.meta.url)).then((wasm) => {
  make = wasm || undefined;        // undefined: FrameStream's default, the JavaScript decoder
  stream = new FrameStream(make);
  decoder = wasm ? 'wasm' : 'js';
  for (const m of waiting.splice(0)) handle(m);
});
