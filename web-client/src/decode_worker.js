// decode_worker.js - the frame decoder's Web Worker: holds the page's one
// FrameStream (stream_v2.js) and decodes every frame payload it is posted,
// in order, off the main thread; posts back each view (its arrays
// transferred, not copied) or that a payload was refused.  It decodes with
// the WebAssembly build of the server's decoder (frame_codec_wasm.js) when
// that loads, else with the JavaScript one; messages that come while the
// module loads wait, in order.
//   in:  {type: 'reset', capacity} | {type: 'frame', m (a frame message), now}
//   out: {type: 'view', view, decodeMs, decoder} | {type: 'refused', ask, error, decoder}
import { FrameStream } from './stream_v2.js';
import { loadWasmDecoder } from './frame_codec_wasm.js';

let stream = null, decoder = 'js';
const waiting = [];

function handle(msg) {
  if (msg.type === 'reset') { stream.reset(msg.capacity); return; }
  if (msg.type !== 'frame') return;
  const r = stream.view(msg.m, msg.now);
  if (!r.view) {
    self.postMessage({ type: 'refused', ask: r.ask, error: stream.lastError, refused: stream.refused, decoder });
    return;
  }
  const v = r.view;
  self.postMessage({ type: 'view', view: v, decodeMs: stream.decodeMs, keys: stream.keys, refused: stream.refused, decoder },
    [v.pos.buffer, v.runs.buffer, v.mat.buffer, v.temp.buffer]);
}

self.onmessage = (ev) => { if (stream) handle(ev.data); else waiting.push(ev.data); };

loadWasmDecoder(new URL('../vendor/fc/frame_codec.wasm', import.meta.url)).then((make) => {
  stream = new FrameStream(make || undefined); // undefined: the JavaScript decoder
  decoder = make ? 'wasm' : 'js';
  for (const m of waiting.splice(0)) handle(m);
});
