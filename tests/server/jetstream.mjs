// jetstream.mjs - nats-server with JetStream for the fleet's tests: each
// broker on a port that was free a moment ago (another process may take it
// first: then another port), its store in a temporary folder removed with
// the brokers; and what the tests read of a fleet's directory.
import { spawn, spawnSync } from 'node:child_process';
import { createServer } from 'node:net';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { get, until } from './lib.mjs';

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
