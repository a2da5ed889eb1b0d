// jetstream.mjs - nats-server with JetStream for the fleet's tests: each
// broker on a port that was free a moment ago (another process may take it
// first: then another port), its store in a temporary folder removed with
// the brokers; and what the tests read of a fleet's directory, through the
// nodes (GET /api/fleet) or straight from the broker's bucket.
import { spawn, spawnSync } from 'node:child_process';
import { createServer, connect as tcp } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get, until, WAIT } from './lib.mjs';

export const haveNats = spawnSync('nats-server', ['--version']).status === 0;
export const noNats = haveNats ? false : 'nats-server is not installed (scripts/deps.sh test installs it)';

export function freePort() {
  return new Promise((resolve) => { const s = createServer().listen(0, '127.0.0.1', () => { const p = s.address().port; s.close(() => resolve(p)); }); });
}

// A set of brokers: start() -> { proc, port }; stop() kills them all and removes their stores.
export function jetStreamBrokers(prefix) {
  const procs = [];
  const store = mkdtempSync(join(tmpdir(), prefix));
  return {
    async start() {
      for (let i = 0; ; i++) {
        const port = await freePort();
        const dir = mkdtempSync(join(store, 'js-'));
        const p = spawn('nats-server', ['-js', '-sd', dir, '-a', '127.0.0.1', '-p', String(port)], { stdio: 'ignore' });
        let exited = null;
        p.once('exit', (code) => { exited = code; });
        try {
          await until(async () => {
            if (exited !== null) throw new Error(`nats-server exited ${exited}`);
            return new Promise((res) => { const s = createServer(); s.once('error', () => res(true)); s.listen(port, '127.0.0.1', () => s.close(() => res(false))); });
          }, `nats-server to listen on ${port}`, { everyMs: 100 });
          procs.push(p);
          return { proc: p, port };
        } catch (e) { p.kill('SIGKILL'); if (i >= 4) throw e; }
      }
    },
    stop() {
      for (const p of procs) p.kill('SIGKILL');
      rmSync(store, { recursive: true, force: true });
    },
  };
}

export const fleetOf = async (s) => (await get(s, '/api/fleet')).json;
export const roomIn = (doc, name) => doc.rooms.find((r) => r.name === name);
export const nodeIn = (doc, id) => doc.nodes.find((n) => n.id === id);
// A frame's epoch (its payload's bytes 4-7).
export const epochOf = (frame) => new DataView(frame.data.buffer, frame.data.byteOffset, frame.data.byteLength).getUint32(4, true);

// One request on the NATS text protocol (a reply inbox of its own, no
// headers): resolves with the reply's payload, a Buffer.
export function natsRequest(port, subject, payload) {
  return new Promise((resolve, reject) => {
    const s = tcp(port, '127.0.0.1');
    const inbox = `_INBOX.t${Math.random().toString(36).slice(2)}`;
    let buf = Buffer.alloc(0);
    s.setTimeout(WAIT, () => { s.destroy(); reject(new Error(`no reply to ${subject}`)); });
    s.on('error', reject);
    s.on('data', (d) => {
      buf = Buffer.concat([buf, d]);
      for (;;) {
        const eol = buf.indexOf('\r\n');
        if (eol < 0) return;
        const line = buf.subarray(0, eol).toString();
        if (line.startsWith('MSG ')) {
          const len = Number(line.split(' ').at(-1));
          if (buf.length < eol + 2 + len + 2) return;
          s.end();
          resolve(Buffer.from(buf.subarray(eol + 2, eol + 2 + len)));
          return;
        }
        if (line.startsWith('-ERR')) { s.destroy(); reject(new Error(line)); return; }
        if (line === 'PING') s.write('PONG\r\n');
        buf = buf.subarray(eol + 2);
      }
    });
    const body = Buffer.from(payload);
    s.write(`CONNECT {"verbose":false}\r\nSUB ${inbox} 1\r\nPUB ${subject} ${inbox} ${body.length}\r\n`);
    s.write(body);
    s.write('\r\n');
  });
}

// The keys of a fleet's bucket fluid_<fleet> as the broker holds them now
// (not as any node sees them): a Map of key -> its value (parsed JSON); a
// deleted or purged key is not there.
export async function bucketKeys(port, fleet) {
  const stream = `KV_fluid_${fleet}`, prefix = `$KV.fluid_${fleet}.`;
  const info = JSON.parse(await natsRequest(port, `$JS.API.STREAM.INFO.${stream}`, JSON.stringify({ subjects_filter: `${prefix}>` })));
  if (info.error) throw new Error(`${stream}: ${JSON.stringify(info.error)}`);
  const out = new Map();
  for (const subject of Object.keys(info.state?.subjects ?? {})) {
    const r = JSON.parse(await natsRequest(port, `$JS.API.STREAM.MSG.GET.${stream}`, JSON.stringify({ last_by_subj: subject })));
    if (!r.message) continue; // gone since the listing
    const hdrs = r.message.hdrs ? Buffer.from(r.message.hdrs, 'base64').toString() : '';
    if (/KV-Operation:\s*(DEL|PURGE)/i.test(hdrs)) continue;
    out.set(subject.slice(prefix.length), JSON.parse(Buffer.from(r.message.data ?? '', 'base64').toString()));
  }
  return out;
}
