// bench_zstd_decode.mjs - the alternative the v2 codec was measured against:
// times fzstd (npm, pure-JS zstd decoder) on the zstd-compressed residual byte
// planes bench_codec wrote (DIR/NNNN.zst with BENCH_CODEC_DUMP) and the
// un-planing into int32 residuals; the prediction steps would cost what they
// cost in the JavaScript decoder (tests/web/oracle/frame_decoder.js).  fzstd is not a project dependency: install it
// anywhere and name it, e.g.
//   (cd /tmp/fz && npm install fzstd@0.1.1)
//   FZSTD=/tmp/fz/node_modules/fzstd/esm/index.mjs node tests/bench/bench_zstd_decode.mjs DIR
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const { decompress } = await import(process.env.FZSTD);
const dir = process.argv[2];
const files = readdirSync(dir).filter((f) => f.endsWith('.zst')).sort();
const blobs = files.map((f) => new Uint8Array(readFileSync(join(dir, f))));
const times = [];
let res = null, bytes = 0;
for (let pass = 0; pass < 2; pass++) {
  for (const z of blobs) {
    const c0 = process.cpuUsage();
    const planes = decompress(z);
    const m = planes.length / 6;
    if (!res || res.length < 3 * m) res = new Int32Array(3 * m);
    for (let a = 0; a < 3; a++)
      for (let i = 0; i < m; i++) {
        const zz = planes[a * m + i] | (planes[(3 + a) * m + i] << 8);
        res[3 * i + a] = (zz >>> 1) ^ -(zz & 1);
      }
    const c = process.cpuUsage(c0);
    if (pass === 1) { times.push((c.user + c.system) / 1e3); bytes += z.length; }
  }
}
times.sort((a, b) => a - b);
console.log(`${dir}: ${blobs.length} zstd plane sets, ${(bytes / blobs.length / 1024).toFixed(1)} KiB each: fzstd + un-planing median ${times[times.length >> 1].toFixed(2)} ms (CPU)`);
