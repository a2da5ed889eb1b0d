// tiers_cpu.test.mjs - a viewer whose link keeps up keeps the full world when
// the server's own network thread is the one that is late: the server runs
// on one CPU beside a busy loop, its network thread at nice 19 (--net-nice),
// so it wakes frames late while its loopback socket has drained everything.
// Such late picks are the host's, not the link's (PROTOCOL.md, "Tiers of
// detail"): no frame may come in a coarser tier.  (Counted against the link,
// as they were, they moved this viewer to tier 1 or 2 within a second: 146
// of 150 frames coarse.)  Counts only, never a time.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { startServer, stopAll, connect, get } from './lib.mjs';

const hog = [];
after(async () => {
  for (const h of hog) h.kill('SIGKILL');
  await stopAll();
});

const taskset = spawnSync('taskset', ['-p', String(process.pid)], { encoding: 'utf8' });
const cannot = taskset.status !== 0 ? `taskset is not available: ${(taskset.stderr || taskset.error || '').toString().trim()}` : null;

test('a loopback viewer of a server whose network thread the CPU runs late keeps the full world', { skip: cannot ?? false }, async () => {
  const s = await startServer(['--particles', '8000', '--net-nice', '19']);
  const busy = spawn('sh', ['-c', 'while :; do :; done'], { stdio: 'ignore' });
  hog.push(busy);
  for (const [pid, all] of [[s.proc.pid, true], [busy.pid, false]]) {
    const r = spawnSync('taskset', [...(all ? ['-a'] : []), '-p', '-c', '0', String(pid)], { encoding: 'utf8' });
    assert.equal(r.status, 0, `taskset ${pid}: ${r.stderr}`);
  }
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const particles = (await get(s, '/api/stats')).json.particles;
  const frames = [];
  while (frames.length < 150) frames.push(await c.next((m) => m.type === 'frame'));
  busy.kill('SIGKILL');
  const coarse = frames.filter((f) => f.lod);
  assert.equal(coarse.length, 0, `${coarse.length} of ${frames.length} frames in a coarser tier (first: tier ${coarse[0]?.lod?.tier}, seq ${coarse[0]?.seq})`);
  assert.ok(frames.every((f) => f.ids && f.n === particles), 'every frame decodes to every particle');
  assert.equal(c.refused, 0);
  c.close();
});
