// frame_header.js - what the page reads of a protocol v2 frame payload
// (protocol/PROTOCOL.md, "Frame payload, version 2") without decoding its
// body: the 56-byte header, checked as the server's decoder checks it
// (server/wire/frame_header.c, the same refusals in the same words), and a
// band container's table (PROTOCOL.md, "Bands (kind 2)"), so that bands.js
// can hand each band to a decoder of its own.  The body is decoded by the
// server's decoder built to WebAssembly (frame_codec_wasm.js).  Pure: runs
// under node too.
//
// const h = readHeader(bytes);            // throws FrameCodecError
// const { k, lo, parts } = readBands(bytes, h);

export const FC_VERSION = 2;
export const FC_HEADER_BYTES = 56;
export const FC_NONE = 0xffffffff;
export const FC_DEC_HISTORY = 4;
export const FC_MAX_BANDS = 16;
export const FC_PRED = { ZERO: 0, CV: 1 };
// The options byte: bits 0-1 the predictor, bit 5 the table coder (set in
// every payload the server writes), bit 6 joint symbols.  Bits 2-4, bit 5
// clear and predictors 2-3 named earlier encoders' codings, refused.
const OPT_PREDICTOR = 0x03, OPT_RETIRED = 0x1c, OPT_TABLE = 0x20, OPT_JOINT = 0x40;

export class FrameCodecError extends Error {}

function fail(msg) { throw new FrameCodecError(msg); }
const hex = (o) => `0x${o.toString(16).padStart(2, '0')}`;

// Reads the 56-byte header.  Throws when it is not a v2 payload this
// decoder reads or the body length disagrees.
export function readHeader(bytes) {
  if (!(bytes instanceof Uint8Array)) fail('frame payload is not bytes');
  if (bytes.length < FC_HEADER_BYTES) fail(`frame payload truncated: ${bytes.length} bytes, the header alone is ${FC_HEADER_BYTES}`);
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (bytes[0] !== 0x46 || bytes[1] !== FC_VERSION) fail(`not a version ${FC_VERSION} frame payload`);
  const kind = bytes[2], o = bytes[3];
  if (kind > 2 || (kind === 2 && o) || (o >> 7) || bytes[46] || bytes[47]) fail(`frame payload: unknown kind ${kind} or options ${hex(o)}`);
  if (kind !== 2 && ((o & OPT_RETIRED) || !(o & OPT_TABLE) || (o & OPT_PREDICTOR) > FC_PRED.CV)) {
    fail(`frame payload: options ${hex(o)} name an earlier encoder's coding (adaptive residual coder, cell order, ` +
      'neighbour residual or cell-mean predictor), no longer decoded: a recording made before the table coder was the only coding');
  }
  const h = {
    kind, options: { predictor: o & OPT_PREDICTOR, joint: (o & OPT_JOINT) ? 1 : 0 },
    epoch: dv.getUint32(4, true), seq: dv.getUint32(8, true), base: dv.getUint32(12, true), prev: dv.getUint32(16, true),
    n: dv.getUint32(20, true),
    grid: {
      origin: [dv.getFloat32(24, true), dv.getFloat32(28, true), dv.getFloat32(32, true)],
      originBits: [dv.getUint32(24, true), dv.getUint32(28, true), dv.getUint32(32, true)],
      step: dv.getFloat32(36, true), stepBits: dv.getUint32(36, true),
      levels: [dv.getUint16(40, true), dv.getUint16(42, true), dv.getUint16(44, true)],
    },
    checksum: dv.getUint32(48, true), bodyLen: dv.getUint32(52, true),
  };
  if (h.bodyLen !== bytes.length - FC_HEADER_BYTES) fail(`frame payload: body declares ${h.bodyLen} bytes, ${bytes.length - FC_HEADER_BYTES} present`);
  for (let a = 0; a < 3; a++) if (!h.grid.levels[a] || !Number.isFinite(h.grid.origin[a])) fail('frame payload: bad quantization grid');
  if (!(h.grid.step > 0) || !Number.isFinite(h.grid.step)) fail('frame payload: bad quantization step');
  if ((kind === 1 || (kind === 2 && h.base !== FC_NONE)) && (h.base === FC_NONE || (h.prev !== FC_NONE && h.prev === h.base))) fail(`frame payload: delta with a bad base (${h.base}) or prev (${h.prev})`);
  return h;
}

// Bands (kind 2): a container's band table, checked: {k, lo (each band's
// first id), parts (each band's payload, a view into bytes)}.  h: the
// container's header (readHeader).
export function readBands(bytes, h = readHeader(bytes)) {
  if (h.kind !== 2) fail('frame payload: not bands');
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength), o = FC_HEADER_BYTES, body = h.bodyLen;
  if (body < 4) fail('frame payload: bands without a band count');
  const k = dv.getUint32(o, true);
  if (k < 2 || k > FC_MAX_BANDS) fail(`frame payload: ${k} bands (2 to ${FC_MAX_BANDS})`);
  if (body < 4 + 8 * k) fail('frame payload: band table truncated');
  const lo = new Uint32Array(k), parts = [];
  let at = 4 + 8 * k;
  for (let i = 0; i < k; i++) {
    lo[i] = dv.getUint32(o + 4 + 4 * i, true);
    const len = dv.getUint32(o + 4 + 4 * k + 4 * i, true);
    if (i === 0 && lo[0] !== 0) fail(`frame payload: band 0's first id is ${lo[0]}, not 0`);
    if (i > 0 && lo[i] <= lo[i - 1]) fail(`frame payload: band ${i}'s first id ${lo[i]} does not follow band ${i - 1}'s ${lo[i - 1]}`);
    if (len < FC_HEADER_BYTES) fail(`frame payload: band ${i} of ${len} bytes, shorter than a header`);
    if (at + len > body) fail(`frame payload: bands of more than the body's ${body} bytes`);
    parts.push(bytes.subarray(o + at, o + at + len));
    at += len;
  }
  if (at !== body) fail(`frame payload: bands of ${at} bytes in a body of ${body}`);
  return { k, lo, parts };
}
