// bench_hook.js - the measurement behind `window.__fluid.benchUpload`
// (tests/bench/bench_web.mjs): decodes one frame's bytes again and uploads it, k
// times, through the renderer's public API only (uploadPair, and its
// benchmark methods finish, uploadTemperatures, forgetUploads).
import { decodeMessage } from './decode.js';
import { Ring } from './stats.js';

// Median of 5 batch means of fn (k calls in all): the page clock is coarse
// (0.1 ms without cross-origin isolation), so means come from whole
// batches, and the median is robust against a garbage collection or a busy
// machine in one batch.
function batchMean(fn, k) {
  const means = [];
  for (let b = 0; b < 5; b++) {
    const m = Math.max(1, Math.round(k / 5));
    const t0 = performance.now();
    for (let i = 0; i < m; i++) fn();
    means.push((performance.now() - t0) / m);
  }
  return means.sort((x, y) => x - y)[2];
}

// Each call timed alone (for the 95th percentile and the worst).
function perCall(fn, k) {
  const r = new Ring(k);
  for (let i = 0; i < k; i++) { const t0 = performance.now(); fn(); r.add(performance.now() - t0); }
  return r.summary();
}

// Medians of 5 alternating batches of each (the machine's load drifts
// between batches).
function alternating(withFn, withoutFn, k) {
  const a = [], b = [];
  for (let r = 0; r < 5; r++) { a.push(batchMean(withFn, k)); b.push(batchMean(withoutFn, k)); }
  const med = (x) => x.sort((p, q) => p - q)[2];
  return [med(a), med(b)];
}

// Means of: decode alone (msgpack + views), decode + upload (bufferSubData
// of the positions as received), and decode + upload + waiting until the
// GPU process has done the upload; then the temperature attribute's share
// (decode + upload with and without it, and its texture upload alone).
// frameBytes: a frame message as received (ArrayBuffer); view: the page's
// decoded view of it (protocol v2 payloads decode once, in order: "decode"
// here is the message's msgpack parse and a copy of the view; the payload's
// own decode time is in the page's decode ring); null without one.
export function benchUpload(renderer, frameBytes, view, k = 200) {
  if (!frameBytes || !view) return null;
  const sync = () => renderer.finish();
  const decodeOnce = () => { decodeMessage(new Uint8Array(frameBytes)); return { ...view }; };
  let seq = -1;
  const upload = (f) => { const e = { seq: seq--, order: seq, f }; renderer.uploadPair(e, e); };
  sync();
  const decodeMean = batchMean(decodeOnce, k);
  const totalMean = batchMean(() => upload(decodeOnce()), k);
  sync();
  const syncedMean = batchMean(() => { upload(decodeOnce()); sync(); }, k);
  const totalPer = perCall(() => upload(decodeOnce()), k);
  const noTemp = () => { const f = decodeOnce(); f.temp = null; return f; };
  sync();
  const [withTempMean, noTempMean] = alternating(() => upload(decodeOnce()), () => upload(noTemp()), k);
  const [withTempSyncedMean, noTempSyncedMean] = alternating(() => { upload(decodeOnce()); sync(); }, () => { upload(noTemp()); sync(); }, k);
  const f = decodeOnce();
  let tempUploadMean = null, tempSyncedMean = null;
  if (f.temp) {
    tempUploadMean = batchMean(() => renderer.uploadTemperatures(f.temp, f.n), k);
    sync();
    tempSyncedMean = batchMean(() => { renderer.uploadTemperatures(f.temp, f.n); sync(); }, k) - batchMean(sync, k);
  }
  renderer.forgetUploads();
  return { n: f.n, bytes: frameBytes.byteLength, k, decodeMean, uploadMean: totalMean - decodeMean, totalMean,
    syncedMean, totalP95: totalPer.p95, totalMax: totalPer.max,
    temp: !!f.temp, withTempMean, noTempMean, withTempSyncedMean, noTempSyncedMean, tempUploadMean, tempSyncedMean };
}
