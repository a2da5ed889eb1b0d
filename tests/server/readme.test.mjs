// readme.test.mjs - the README's commands work as written: every curl line and
// example script in its sh blocks runs against a live server (with the port
// the test server got), and its options table matches `--help` both ways.
// (make run/test are CI's own commands; the docker lines are run by
// `make test-docker`.)
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { startServer, stopAll, tempDir, ROOT, SERVER, childEnv } from './lib.mjs';

const run = promisify(execFile);
const readme = readFileSync(join(ROOT, 'README.md'), 'utf8');
after(async () => { await stopAll(); });

function shLines() {
  const out = [];
  for (const m of readme.matchAll(/```sh\n([\s\S]*?)```/g))
    for (const line of m[1].split('\n')) if (line.trim()) out.push(line.replace(/\s+#.*$/, ''));
  return out;
}

// FLUID_TEST_SLOW=0 (the bookworm pass, whose point is Node 18): left out, as
// curl and Python run the README's lines, not Node.
test('every curl command and example script in the README runs against a live server',
  { skip: process.env.FLUID_TEST_SLOW === '0' && 'FLUID_TEST_SLOW=0: runs in make test on the host' }, async (t) => {
  const cwd = tempDir('readme-');
  // --data-dir: the default room's recordings in its folder, and every other room a folder of its own
  const s = await startServer(['--particles', '2000', '--data-dir', join(cwd, 'data')]);
  const lines = shLines().filter((l) => /^(curl|python3 examples|sh examples)/.test(l));
  assert.ok(lines.length >= 12, `${lines.length} commands`);
  for (const line of lines) {
    const cmd = line.replace(/(https?:\/\/)?(localhost|127\.0\.0\.1):8080/g, s.base)
      .replace(/^curl /, 'curl --fail-with-body ').replaceAll('examples/', `${ROOT}/examples/`)
      // Debian's python3 (python3-matplotlib for --plot), where a pyenv or venv python comes first on PATH
      .replace(/^python3 /, existsSync('/usr/bin/python3') ? '/usr/bin/python3 ' : 'python3 ');
    const r = await run('sh', ['-c', cmd], { cwd, timeout: 120000, env: childEnv() }).catch((e) => e);
    assert.equal(r.code ?? 0, 0, `${line}\n${r.stdout}${r.stderr}`);
    assert.ok(!/"error"\s*:/.test(r.stdout), `${line}\n${r.stdout}`); // a JSON error (a metric label may say "error")
    t.diagnostic(`${line.slice(0, 70)} -> ${String(r.stdout).trim().split('\n').pop().slice(0, 80)}`);
  }
  await s.stop();
});

test("the README's options table lists exactly the options of --help", async () => {
  const { stdout } = await run(SERVER, ['--help']);
  const help = new Set([...stdout.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]).filter((o) => o !== '--help' && o !== '--quiet'));
  const table = readme.slice(readme.indexOf('### Options'), readme.indexOf('### Scripts'));
  const documented = new Set([...table.matchAll(/^\| `(--[a-z-]+)`(?:, `(--[a-z-]+)`)?/gm)].flatMap((m) => [m[1], m[2]]).filter(Boolean));
  assert.deepEqual([...documented].sort(), [...help].sort());
  // and each environment variable is the one --help names
  for (const m of stdout.matchAll(/^ {2}--([a-z-]+)\s+(FLUID_[A-Z_]+)/gm))
    assert.ok(table.includes(`\`${m[2]}\``), m[2]);
});
