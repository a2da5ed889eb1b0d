// recording.js - reads a recording's segment (protocol/PROTOCOL.md, "Recordings"):
// the signature, then records (length, kind, CRC-32, bytes) up to the end or the
// first damage, which it reports with its byte offset.  Pure: runs under node too.
//
// const { records, damage, ended } = readSegment(bytes);   // bytes: Uint8Array
// records: [{ kind, bytes }] with kind REC.HEADER (a hello), REC.FRAME (a frame
// message, as the stream sends it), REC.BCAST (a broadcast), REC.END.

export const REC = { HEADER: 1, FRAME: 2, BCAST: 3, END: 4 };
const SIGNATURE = [0x46, 0x53, 0x52, 0x45, 0x43, 0, 1, 0]; // "FSREC", 0, version 1
const HEAD = 9;
const MAX_RECORD = 64 << 20;

let table = null;
function crcTable() {
  if (table) return table;
  table = new Uint32Array(256);
  for (let i = 0; i < 256; i++) {
    let c = i;
    for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
    table[i] = c >>> 0;
  }
  return table;
}

// CRC-32 (IEEE) of bytes, continuing from crc.
export function crc32(bytes, crc = 0) {
  const t = crcTable();
  let c = ~crc >>> 0;
  for (let i = 0; i < bytes.length; i++) c = t[(c ^ bytes[i]) & 0xff] ^ (c >>> 8);
  return ~c >>> 0;
}

export function readSegment(bytes) {
  const out = { records: [], damage: null, ended: false };
  if (bytes.length < SIGNATURE.length || SIGNATURE.some((b, i) => bytes[i] !== b)) {
    out.damage = 'not a recording segment (no FSREC version 1 signature)';
    return out;
  }
  const dv = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let off = SIGNATURE.length;
  while (off < bytes.length && !out.ended) {
    if (bytes.length - off < HEAD) { out.damage = `truncated record head at byte ${off}`; break; }
    const len = dv.getUint32(off, true), kind = bytes[off + 4], crc = dv.getUint32(off + 5, true);
    if (len > MAX_RECORD || kind < REC.HEADER || kind > REC.END) { out.damage = `bad record (length ${len}, kind ${kind}) at byte ${off}`; break; }
    if (len > bytes.length - off - HEAD) { out.damage = `record truncated at byte ${off} (${len} bytes declared, ${bytes.length - off - HEAD} present)`; break; }
    const body = bytes.subarray(off + HEAD, off + HEAD + len);
    if (crc32(body, crc32(bytes.subarray(off + 4, off + 5))) !== crc) { out.damage = `record damaged (CRC mismatch) at byte ${off}`; break; }
    out.records.push({ kind, bytes: body });
    if (kind === REC.END) out.ended = true;
    off += HEAD + len;
  }
  return out;
}
