// decode_worker.js - the frame decoder's Web Worker: holds the page's one
// FrameStream (stream_v2.js) and decodes every frame payload it is posted,
// in order, off the main thread; posts back each view (its arrays
// transferred, not copied) or that a payload was refused.
//   in:  {type: 'reset', capacity} | {type: 'frame', m (a frame message), now}
//   out: {type: 'view', view, decodeMs} | {type: 'refused', ask, error}
import { FrameStream } from './stream_v2.js';

const stream = new FrameStream();

self.onmessage = (ev) => {
  const msg = ev.data;
  if (msg.type === 'reset') { stream.reset(msg.capacity); return; }
  if (msg.type !== 'frame') return;
  const r = stream.view(msg.m, msg.now);
  if (!r.view) {
    self.postMessage({ type: 'refused', ask: r.ask, error: stream.lastError, refused: stream.refused });
    return;
  }
  const v = r.view;
  self.postMessage({ type: 'view', view: v, decodeMs: stream.decodeMs, keys: stream.keys, refused: stream.refused },
    [v.pos.buffer, v.runs.buffer, v.mat.buffer, v.temp.buffer]);
};
