// tls.test.mjs - the web client over https in headless Chromium, with the
// certificate verified: the test makes a CA and a server certificate for
// 127.0.0.1 with openssl and installs the CA into an NSS database under the
// browser's own HOME (certutil), which is where Chromium on Linux looks for
// locally trusted CAs.  No --ignore-certificate-errors: a browser whose HOME
// lacks the CA is refused.  The page, served over https, opens its stream on
// wss:// by itself and draws frames.
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { startServer, launchBrowser, openClient, waitFor, cleanup } from '../lib.mjs';

let dir, server;

function have(cmd) {
  try { execFileSync(cmd, ['--help'], { stdio: 'ignore' }); return true; } catch (e) { return e.code !== 'ENOENT'; }
}
const missing = ['openssl', 'certutil'].filter((c) => !have(c));

// A CA, a certificate for 127.0.0.1 and localhost that it signed, and two
// HOMEs for the browser: one whose NSS database trusts the CA, one empty.
function makePki() {
  const d = mkdtempSync(join(tmpdir(), 'fluid-web-tls-'));
  const f = (n) => join(d, n);
  const ossl = (...a) => execFileSync('openssl', a, { stdio: ['ignore', 'ignore', 'pipe'] });
  const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
  ossl('req', '-x509', ...ec, '-keyout', f('ca.key'), '-out', f('ca.pem'), '-days', '2', '-subj', '/CN=fluid web test CA');
  ossl('req', ...ec, '-keyout', f('server.key'), '-out', f('server.csr'), '-subj', '/CN=localhost');
  writeFileSync(f('ext.cnf'), 'subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n' +
    'keyUsage=digitalSignature\nextendedKeyUsage=serverAuth\n');
  ossl('x509', '-req', '-in', f('server.csr'), '-CA', f('ca.pem'), '-CAkey', f('ca.key'), '-CAcreateserial',
    '-out', f('server.pem'), '-days', '2', '-extfile', f('ext.cnf'));
  for (const home of ['home-trusting', 'home-empty']) {
    const db = join(d, home, '.pki', 'nssdb');
    mkdirSync(db, { recursive: true });
    execFileSync('certutil', ['-N', '-d', `sql:${db}`, '--empty-password'], { stdio: 'ignore' });
  }
  execFileSync('certutil', ['-A', '-d', `sql:${join(d, 'home-trusting', '.pki', 'nssdb')}`, '-n', 'fluid web test CA',
    '-t', 'C,,', '-i', f('ca.pem')], { stdio: 'ignore' });
  return d;
}

before(async () => {
  if (missing.length) throw new Error(`the TLS browser test needs ${missing.join(' and ')} (scripts/deps.sh test installs them)`);
  dir = makePki();
  server = await startServer(['--scene', 'dam_break', '--particles', '2000', '--quiet',
    '--tls-cert', join(dir, 'server.pem'), '--tls-key', join(dir, 'server.key')]);
});
after(async () => {
  await cleanup();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

test('over https with the CA trusted: the page loads, streams over wss:// and draws frames', async (t) => {
  assert.match(server.base, /^https:\/\/127\.0\.0\.1:\d+$/);
  const b = await launchBrowser({ env: { ...process.env, HOME: join(dir, 'home-trusting') } });
  const page = await openClient(b, server);
  await waitFor(page, () => window.__fluid && window.__fluid.connected && window.__fluid.frames > 3);
  const seen = await page.evaluate(() => ({
    protocol: location.protocol, ws: window.__fluid.conn.ws?.url, particles: window.__fluid.particles,
    frames: window.__fluid.frames,
  }));
  t.diagnostic(JSON.stringify(seen));
  assert.equal(seen.protocol, 'https:');
  assert.match(seen.ws, /^wss:\/\/127\.0\.0\.1:\d+\/$/);
  assert.ok(seen.particles > 1000, `${seen.particles} particles drawn`);
  assert.deepEqual(page.errors, []);
  await b.close();
});

test('a browser that does not trust the CA is refused (the certificate is verified)', async () => {
  const b = await launchBrowser({ env: { ...process.env, HOME: join(dir, 'home-empty') } });
  const page = await b.browser.newPage();
  const e = await page.goto(`${server.base}/`, { timeout: 20000 }).then(() => null, (err) => err);
  assert.ok(e, 'the page did not load');
  assert.match(String(e.message), /ERR_CERT_AUTHORITY_INVALID/);
  await b.close();
});
