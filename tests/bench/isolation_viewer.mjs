// isolation_viewer.mjs - the well-behaved viewer of the isolation benchmark
// (isolation.mjs): one WebSocket client, in its own process as a browser on
// another machine would be, that counts the frames and keyframes it receives.
// On stdin: "reset" zeroes the counts, "report" prints them as one JSON line,
// "quit" closes.  Prints "open" once it has its first frame.
//   node isolation_viewer.mjs WS_URL
import { WebSocket, decode } from '../server/lib.mjs';

const ws = new WebSocket(process.argv[2], 'fluid.v2');
ws.binaryType = 'arraybuffer';
let frames = 0, keyframes = 0, bytes = 0, opened = false;
ws.on('message', (data) => {
  let m;
  try { m = decode(new Uint8Array(data)); } catch { return; }
  if (m.type !== 'frame') return;
  frames++;
  bytes += data.byteLength;
  if (m.key) keyframes++;
  if (!opened) { opened = true; process.stdout.write('open\n'); }
});
ws.on('error', (e) => { process.stderr.write(`viewer: ${e.message}\n`); process.exit(3); });
ws.on('close', () => { process.stderr.write('viewer: closed by the server\n'); });
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  if (d.includes('reset')) frames = keyframes = bytes = 0;
  if (d.includes('report')) process.stdout.write(JSON.stringify({ frames, keyframes, bytes }) + '\n');
  if (d.includes('quit')) { ws.close(); setTimeout(() => process.exit(0), 200); }
});
setTimeout(() => process.exit(2), 30 * 60000).unref();
