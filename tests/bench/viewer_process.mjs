// viewer_process.mjs - a benchmark's well-behaved viewer in a process of its
// own (isolation_viewer.mjs), as a browser on another machine would be:
// viewer(url, nice) returns {opened, report(), reset(), quit()}; report()
// resolves with {frames, keyframes, bytes} since the last reset().
import { spawn } from 'node:child_process';
import { setPriority } from 'node:os';
import { join, dirname } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));

export function viewer(url, nice = 0) {
  const p = spawn(process.execPath, [join(here, 'isolation_viewer.mjs'), url], { stdio: ['pipe', 'pipe', 'inherit'] });
  if (nice) try { setPriority(p.pid, nice); } catch { /* not permitted */ }
  let buf = '';
  const waiters = [];
  p.stdout.on('data', (d) => { buf += d; let i; while ((i = buf.indexOf('\n')) >= 0) { const l = buf.slice(0, i); buf = buf.slice(i + 1); const w = waiters.shift(); if (w) w(l); } });
  const line = () => new Promise((res, rej) => { const t = setTimeout(() => rej(new Error('viewer did not answer')), 60000); waiters.push((l) => { clearTimeout(t); res(l); }); });
  return {
    opened: line(),
    async report() { p.stdin.write('report\n'); return JSON.parse(await line()); },
    reset() { p.stdin.write('reset\n'); },
    quit() { p.stdin.write('quit\n'); setTimeout(() => p.kill('SIGKILL'), 2000).unref(); },
  };
}
