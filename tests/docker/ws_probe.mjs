// ws_probe.mjs - opens the fluid-server WebSocket stream (subprotocol
// fluid.v2) at a URL, checks that the first message is `hello` and that
// binary msgpack `frame` messages follow whose v2 payloads decode (the oracle
// of the web client's decoder, tests/web/oracle/frame_decoder.js), and prints one JSON line:
//   {"ok":true,"hello":{...},"frames":N,"n":particles,"tick":...}
// or {"ok":false,"error":"..."} (exit status 1); `hello` has the hello's
// version, scene, client_id and role.
//   node tests/docker/ws_probe.mjs ws://127.0.0.1:PORT/ [frames=3] [timeout_ms=15000]
// ws and @msgpack/msgpack are the server tests' pinned modules
// (tests/server/node_modules, made by `make tests/server/node_modules/.installed`).
import { createRequire } from 'node:module';
import { FrameDecoder } from '../web/oracle/frame_decoder.js';

const require = createRequire(new URL('../server/package.json', import.meta.url));
const WebSocket = require('ws');
const { decode } = require('@msgpack/msgpack');

const [url, wantArg = '3', timeoutArg = '15000'] = process.argv.slice(2);
if (!url) {
  console.error('usage: node ws_probe.mjs URL [frames] [timeout_ms]');
  process.exit(2);
}
const want = Number(wantArg);

function done(result) {
  console.log(JSON.stringify(result));
  process.exit(result.ok ? 0 : 1);
}

const ws = new WebSocket(url, 'fluid.v2');
let decoder = null;
ws.binaryType = 'nodebuffer';
const timer = setTimeout(() => done({ ok: false, error: `timed out after ${timeoutArg} ms`, ...state() }), Number(timeoutArg));
let hello = null, frames = 0, last = null, count = 0, protocol = '';

function state() {
  return { protocol, messages: count, frames, hello: hello && { version: hello.version, scene: hello.scene, client_id: hello.client_id, role: hello.role } };
}

ws.on('open', () => { protocol = ws.protocol; });
ws.on('error', (e) => { clearTimeout(timer); done({ ok: false, error: String(e.message || e), ...state() }); });
ws.on('close', (code) => { clearTimeout(timer); done({ ok: false, error: `closed (${code})`, ...state() }); });
ws.on('message', (data, isBinary) => {
  count++;
  let msg;
  try {
    if (!isBinary) throw new Error('text message');
    msg = decode(data);
  } catch (e) {
    clearTimeout(timer);
    return done({ ok: false, error: `message ${count} is not binary msgpack: ${e.message}`, ...state() });
  }
  if (count === 1) {
    if (msg.type !== 'hello') {
      clearTimeout(timer);
      return done({ ok: false, error: `first message is '${msg.type}', not hello`, ...state() });
    }
    hello = msg;
    decoder = new FrameDecoder(Math.max(1, hello.capacity >>> 0));
    return;
  }
  if (msg.type !== 'frame') return;
  // A frame's v2 payload decodes, in order, to its n particles.
  let f = null, why = '';
  try { f = decoder.decode(msg.data); } catch (e) { why = e.message; }
  if (!f || f.n !== msg.n) {
    clearTimeout(timer);
    return done({ ok: false, error: `frame ${frames + 1} does not decode (n ${msg.n}): ${why}`, ...state() });
  }
  frames++;
  last = msg;
  if (frames >= want) {
    clearTimeout(timer);
    ws.removeAllListeners('close');
    ws.close();
    done({ ok: protocol === 'fluid.v2' && hello.version === 2 && last.n > 0, ...state(), n: last.n, tick: last.tick });
  }
});
