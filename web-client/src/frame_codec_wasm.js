// frame_codec_wasm.js - the page's v2 frame decoder: the server's own
// (server/wire/frame_decoder.c), compiled to WebAssembly from
// web-client/wasm/fc_wasm.c by web-client/client.mk.  decode(bytes) returns
// {seq, n, grid, id, q, mat, temp} or throws FrameCodecError; reset().  The
// frame's arrays are views into the module's memory, valid until the next
// decode.  It is the page's only decoder: the JavaScript port of its walk is
// the tests' oracle (tests/web/oracle/), which checks it.  Pure: runs under
// node too.
//
// const make = await loadWasmDecoder(url);     // null when WebAssembly or the file is missing
// const make = wasmDecoders(new WebAssembly.Module(bytes));   // the same, synchronously
// const dec = make(capacity);                  // one module instance per decoder
import { FrameCodecError } from './frame_header.js';

// The module imports three WASI calls its C library links (stdio's, never
// called by the decoder): each answers ENOSYS.
const ENOSYS = 52;
const WASI = { wasi_snapshot_preview1: { fd_close: () => ENOSYS, fd_seek: () => ENOSYS, fd_write: () => ENOSYS } };

export class WasmFrameDecoder {
  constructor(module, capacity) {
    if (!Number.isInteger(capacity) || capacity < 0 || capacity > (1 << 24)) throw new RangeError('capacity');
    this.x = new WebAssembly.Instance(module, WASI).exports;
    if (this.x._initialize) this.x._initialize();
    this.cap = capacity;
    this.input = this.x.fc_create(Math.max(1, capacity));
    if (!this.input) throw new RangeError(`no memory for a decoder of ${capacity} particles`);
    this.inputCap = this.x.fc_input_cap();
  }

  reset() { this.x.fc_reset(); }

  decode(bytes) {
    if (!(bytes instanceof Uint8Array)) throw new FrameCodecError('frame payload is not bytes');
    const x = this.x;
    if (bytes.length > this.inputCap) throw new FrameCodecError(`frame payload of ${bytes.length} bytes, larger than any frame of ${this.cap} particles`);
    new Uint8Array(x.memory.buffer, this.input, bytes.length).set(bytes);
    const n = x.fc_decode(bytes.length);
    const buf = x.memory.buffer;
    if (n < 0) {
      const m = new Uint8Array(buf, x.fc_error(), 256);
      const end = m.indexOf(0);
      throw new FrameCodecError(new TextDecoder().decode(m.subarray(0, end < 0 ? 256 : end)));
    }
    const g = new Float32Array(buf, x.fc_grid(), 7);
    return {
      seq: x.fc_seq() >>> 0, n,
      grid: { origin: [g[0], g[1], g[2]], step: g[3], levels: [g[4], g[5], g[6]] },
      id: new Uint32Array(buf, x.fc_ids(), n), q: new Uint16Array(buf, x.fc_q(), 3 * n),
      mat: new Uint8Array(buf, x.fc_mat(), n), temp: new Uint8Array(buf, x.fc_temp(), n),
    };
  }
  // The last decoded frame's positions as 16-bit fractions of the box b, as
  // stream_v2.js boxPositions computes them (the same values): a copy.
  boxPositions(n, grid, b) {
    const o = [0, 1, 2].map((a) => grid.origin[a] - b[a]), s = [0, 1, 2].map((a) => { const span = b[a + 3] - b[a]; return span > 0 ? 65535 / span : 0; });
    const at = this.x.fc_box16(o[0], o[1], o[2], s[0], s[1], s[2]);
    return new Uint16Array(this.x.memory.buffer, at, 3 * n).slice();
  }

  // The last decoded frame's ids as runs (stream_v2.js idRuns): a copy.
  idRuns() {
    const r = this.x.fc_runs();
    return new Uint32Array(this.x.memory.buffer, this.x.fc_runs_at(), 2 * r).slice();
  }
}

// A factory of decoders from a compiled module.
export function wasmDecoders(module) { return (capacity) => new WasmFrameDecoder(module, capacity); }

// Fetches and compiles the module at url: the factory, or null when it cannot
// be had (no WebAssembly, no file: a build without the WebAssembly toolchain).
export async function loadWasmDecoder(url) {
  try {
    if (typeof WebAssembly === 'undefined' || typeof fetch !== 'function') return null;
    const r = await fetch(url);
    if (!r.ok) return null;
    const module = await WebAssembly.compile(await r.arrayBuffer());
    wasmDecoders(module)(1); // instantiates: its imports and exports are what this file expects
    return wasmDecoders(module);
  } catch (e) {
    return null;
  }
}
