// bench_clients.mjs - N WebSocket clients that read every frame, run by
// bench.mjs as a separate, low-priority process (standing in for browsers on
// other machines).  Prints one JSON line of counts on stdin "report".
import { WebSocket } from '../server/lib.mjs';

const [url, nStr] = process.argv.slice(2);
const n = Number(nStr);
const counts = new Array(n).fill(0), bytes = new Array(n).fill(0);
const socks = [];
let open = 0;
for (let i = 0; i < n; i++) {
  const ws = new WebSocket(url, 'fluid.v2');
  ws.binaryType = 'arraybuffer';
  ws.on('open', () => { if (++open === n) process.stdout.write('open\n'); });
  ws.on('message', (d) => { counts[i]++; bytes[i] += d.byteLength; });
  ws.on('error', (e) => { process.stderr.write(`client ${i}: ${e.message}\n`); });
  socks.push(ws);
}
process.stdin.setEncoding('utf8');
process.stdin.on('data', (d) => {
  if (d.includes('reset')) { counts.fill(0); bytes.fill(0); }
  if (d.includes('report')) process.stdout.write(JSON.stringify({ counts, bytes }) + '\n');
  if (d.includes('quit')) { for (const s of socks) s.close(); setTimeout(() => process.exit(0), 200); }
});
setTimeout(() => process.exit(2), 300000).unref();
