// wasm.mjs - the page's frame decoder (the server's C decoder built to
// WebAssembly by `make web-client-wasm`, web-client/vendor/fc/frame_codec.wasm)
// loaded in node, for the tests that check it against the oracle
// (frame_decoder.js) and the unit tests of the page's code around it.
//
// const make = wasmDecoderFactory();   // make(capacity): a WasmFrameDecoder; throws when the file is missing
import { readFileSync, existsSync } from 'node:fs';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import { wasmDecoders } from '../../../web-client/src/frame_codec_wasm.js';

export const WASM_PATH = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'web-client', 'vendor', 'fc', 'frame_codec.wasm');

let factory = null;

export function wasmDecoderFactory() {
  if (!factory) {
    if (!existsSync(WASM_PATH)) throw new Error(`${WASM_PATH} is missing: make web-client-wasm builds it`);
    factory = wasmDecoders(new WebAssembly.Module(readFileSync(WASM_PATH)));
  }
  return factory;
}
