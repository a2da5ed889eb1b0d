// tls.test.mjs - https and wss on the one port (--tls-cert/--tls-key), with a
// CA and a server certificate this test makes with openssl, and clients that
// verify the server against that CA: the page, REST reads and writes with a
// token, the stream, a snapshot out and back, and a big answer.  Clients that
// do not trust the CA, or expect another name, are refused; plain http on the
// TLS port gets nothing and harms nothing; bad TLS options stop the server at
// start with a message; --health-check works over TLS.  (FLUID_TEST_TLS=1
// runs every other integration test over TLS as well.)
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { rmSync, writeFileSync, chmodSync } from 'node:fs';
import { join, resolve } from 'node:path';
import net from 'node:net';
import tls from 'node:tls';
import { Agent } from 'undici';
import { startServer, stopAll, connect, get, http, decode, makeCerts, WebSocket, SERVER, ROOT, WAIT } from './lib.mjs';

const SAN = process.env.FLUID_SERVER_SAN ? resolve(ROOT, process.env.FLUID_SERVER_SAN) : null;
let pki, other;
before(() => {
  pki = makeCerts();
  other = makeCerts(['DNS:other.example']); // signed by another CA, for another name
});
after(async () => {
  await stopAll();
  for (const c of [pki, other]) if (c) rmSync(c.dir, { recursive: true, force: true });
});

const tlsArgs = (c) => ['--tls-cert', c.cert, '--tls-key', c.key];

// The error a refused TLS client reports, with its cause.
async function refusal(p) {
  const e = await p.then(() => null, (err) => err);
  assert.ok(e, 'the client was refused');
  return String(e.cause?.code ?? e.code ?? e.message);
}

test('over TLS with a verified certificate: page, REST (reads; writes with a token), stream and snapshot', async (t) => {
  const opts = SAN
    ? { binary: SAN, env: { ASAN_OPTIONS: 'detect_leaks=1:exitcode=23', UBSAN_OPTIONS: 'halt_on_error=1' } }
    : {};
  const s = await startServer(['--particles', '3000', '--token', 's3cret', ...tlsArgs(pki)], { ...opts, ca: pki.caPem });
  assert.match(s.stdout, /listening on https:\/\/127\.0\.0\.1:\d+\//);
  assert.match(s.base, /^https:/);
  assert.match(s.wsUrl, /^wss:/);

  // The page and a static file.
  const page = await http(s, 'GET', '/', { raw: true });
  assert.equal(page.status, 200);
  assert.match(page.text, /fluid test/);
  assert.match(page.headers.get('content-type'), /text\/html/);
  // REST reads need no token; writes need it (over TLS the token is not in the clear).
  assert.deepEqual((await get(s, '/api/health')).json, { ok: true });
  const st = await get(s, '/api/stats');
  assert.equal(st.status, 200);
  const n = st.json.particles;
  assert.ok(n > 2000, `${n} particles`);
  assert.equal((await http(s, 'POST', '/api/pause')).status, 403, 'without the token: a player, who may not pause');
  const auth = { authorization: 'Bearer s3cret' };
  assert.equal((await http(s, 'POST', '/api/pause', { headers: auth })).status, 200);
  assert.equal((await get(s, '/api/stats')).json.paused, true);
  const patched = await http(s, 'PATCH', '/api/materials/water', { body: { viscosity_linear: 2.5 }, headers: auth });
  assert.equal(patched.status, 200, patched.text);
  const water = (await get(s, '/api/materials')).json.materials.find((m) => m.name === 'water');
  assert.equal(water.params.viscosity_linear.value, 2.5);
  // A big answer (about 1 MB) arrives whole through TLS records.
  const big = await get(s, '/api/particles?limit=10000');
  assert.equal(big.status, 200);
  assert.equal(big.json.count, n);
  assert.equal(big.json.positions.length, n);

  // The stream over wss: hello, frames, and a command once authenticated.
  const c = await connect(s, { url: `${s.wsUrl}?token=s3cret` });
  const hello = await c.next((m) => m.type === 'hello');
  assert.equal(hello.auth_required, true);
  assert.equal((await c.command({ type: 'resume' })).ok, true);
  const f = await c.next((m) => m.type === 'frame');
  assert.equal(f.n, n);
  assert.equal(f.q.length, n * 3, 'the v2 payload decodes to every particle');

  // Snapshot out (binary GET) and back in (binary POST) over TLS.
  assert.equal((await http(s, 'POST', '/api/pause', { headers: auth })).status, 200);
  const snap = await fetch(s.base + '/api/snapshot', { dispatcher: s.dispatcher, signal: AbortSignal.timeout(WAIT) });
  assert.equal(snap.status, 200);
  const bytes = new Uint8Array(await snap.arrayBuffer());
  const doc = decode(bytes);
  assert.equal(doc.type, 'snapshot');
  assert.equal(doc.particles, n);
  assert.equal((await http(s, 'POST', '/api/scene', { body: { name: 'drop', particles: 1000 }, headers: auth })).status, 200);
  const back = await fetch(s.base + '/api/snapshot', {
    method: 'POST', body: bytes, dispatcher: s.dispatcher, signal: AbortSignal.timeout(WAIT),
    headers: { 'content-type': 'application/msgpack', ...auth },
  });
  const backJson = await back.json();
  assert.equal(back.status, 200, JSON.stringify(backJson));
  assert.equal(backJson.tick, doc.tick);
  await c.next((m) => m.type === 'scene' && m.scene === doc.scene); // the clients hear of it
  assert.equal((await get(s, '/api/stats')).json.particles, n);
  t.diagnostic(`over TLS: page ${page.text.length} B, particles ${big.text.length} B, snapshot ${bytes.length} B, ` +
    `frame ${f._bytes.byteLength} B${SAN ? ' (ASan build)' : ''}`);
  c.close();
  const r = await s.stop('SIGTERM');
  const report = s.stderr.split('\n').filter((l) => /Sanitizer|runtime error|SUMMARY/.test(l));
  assert.deepEqual(report, [], s.stderr.slice(-4000));
  assert.deepEqual(r, { code: 0, signal: null }, s.stderr.slice(-4000));
});

test('over TLS a client flooding commands gets every reply, and the server keeps serving others', async () => {
  // libwebsockets 4.1.6 could spin forever when it paused reading a TLS
  // client (back-pressure) with decrypted bytes still in OpenSSL (net_create).
  const s = await startServer(['--particles', '500', '--rate', '5000', '--burst', '5000', ...tlsArgs(pki)], { ca: pki.caPem });
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  for (let i = 1; i <= 600; i++) c.send({ type: i % 2 ? 'pause' : 'resume', rid: i });
  const seen = new Set();
  while (seen.size < 600) {
    const r = await c.next((m) => m.type === 'reply');
    assert.equal(r.ok, true, r.error);
    seen.add(r.rid);
  }
  assert.deepEqual((await get(s, '/api/health')).json, { ok: true });
  assert.equal((await get(s, '/api/stats')).json.replies_dropped, 0);
  c.close();
  await s.stop();
});

test('clients that do not trust the CA, or want another name, are refused; plain http on the port gets nothing', async () => {
  const s = await startServer(['--particles', '500', ...tlsArgs(pki)], { ca: pki.caPem });
  // The system's roots only (not the test CA): refused by fetch and by ws.
  const noCa = new Agent({ connect: { rejectUnauthorized: true } });
  const why = await refusal(fetch(s.base + '/api/health', { dispatcher: noCa, signal: AbortSignal.timeout(WAIT) }));
  assert.match(why, /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE/, why);
  const ws = new WebSocket(s.wsUrl, 'fluid.v2', { ca: undefined, rejectUnauthorized: true });
  const wsWhy = await refusal(new Promise((res, rej) => { ws.once('open', res); ws.once('error', rej); }));
  assert.match(wsWhy, /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_GET_ISSUER_CERT|UNABLE_TO_VERIFY_LEAF_SIGNATURE/, wsWhy);
  // Another CA's certificate is not accepted either.
  const otherCa = new Agent({ connect: { ca: other.caPem, rejectUnauthorized: true } });
  await refusal(fetch(s.base + '/api/health', { dispatcher: otherCa, signal: AbortSignal.timeout(WAIT) }));
  // The right CA but a name the certificate does not carry.
  const wrongName = await refusal(new Promise((res, rej) => {
    const k = tls.connect({ host: '127.0.0.1', port: s.port, ca: pki.caPem, servername: 'other.example', rejectUnauthorized: true,
      checkServerIdentity: (host, cert) => tls.checkServerIdentity('other.example', cert) }, () => { k.destroy(); res(); });
    k.once('error', rej);
  }));
  assert.match(wrongName, /ERR_TLS_CERT_ALTNAME_INVALID/, wrongName);
  // Plain HTTP to the TLS port: no HTTP answer (the handshake fails), and the server goes on.
  const plain = await new Promise((res) => {
    let data = '';
    const k = net.connect(s.port, '127.0.0.1', () => k.write('GET /api/health HTTP/1.1\r\nHost: x\r\n\r\n'));
    k.on('data', (d) => { data += d; });
    k.setTimeout(WAIT, () => k.destroy());
    k.on('close', () => res(data));
    k.on('error', () => {});
  });
  assert.doesNotMatch(plain, /HTTP\/1\.1 200/);
  assert.deepEqual((await get(s, '/api/health')).json, { ok: true }, 'still serving over TLS');
  await s.stop();
});

test('bad TLS options stop the server at start with a message naming the file', async () => {
  const run = (args, env = {}) => spawnSync(SERVER, ['--port', '0', '--bind', '127.0.0.1', '--particles', '300', ...args],
    { encoding: 'utf8', timeout: WAIT, env: { ...process.env, ...env } });
  const only = run(['--tls-cert', pki.cert]);
  assert.equal(only.status, 2);
  assert.match(only.stderr, /--tls-cert and --tls-key .* go together/);
  const onlyEnv = run([], { FLUID_TLS_KEY: pki.key });
  assert.equal(onlyEnv.status, 2);
  assert.match(onlyEnv.stderr, /go together: --tls-key is set, --tls-cert is not/);
  const missing = run(['--tls-cert', join(pki.dir, 'nope.pem'), '--tls-key', pki.key]);
  assert.equal(missing.status, 2);
  assert.match(missing.stderr, /--tls-cert: cannot read '.*nope\.pem': No such file/);
  const dir = run(['--tls-cert', pki.cert, '--tls-key', pki.dir]);
  assert.equal(dir.status, 2);
  assert.match(dir.stderr, /--tls-key: cannot read '.*': Is a directory/);
  const locked = join(pki.dir, 'locked.key');
  writeFileSync(locked, 'x');
  chmodSync(locked, 0);
  if (process.getuid?.() !== 0) { // root reads any file
    const r = run(['--tls-cert', pki.cert, '--tls-key', locked]);
    assert.equal(r.status, 2);
    assert.match(r.stderr, /cannot read .*Permission denied/);
  }
  // Readable but not a certificate, and a key that is not the certificate's.
  const junk = join(pki.dir, 'junk.pem');
  writeFileSync(junk, 'not a certificate\n');
  const notPem = run(['--tls-cert', junk, '--tls-key', pki.key]);
  assert.notEqual(notPem.status, 0);
  assert.match(notPem.stderr, /cannot listen on 127\.0\.0\.1:0 over TLS with the certificate '.*junk\.pem'/);
  assert.doesNotMatch(notPem.stdout, /listening/);
  const mismatch = run(['--tls-cert', pki.cert, '--tls-key', other.key]);
  assert.notEqual(mismatch.status, 0);
  assert.match(mismatch.stderr, /key values mismatch|over TLS/);
});

test('--health-check asks the server for /api/health, over TLS or plain http', async () => {
  const hc = (args) => spawnSync(SERVER, ['--health-check', '--bind', '127.0.0.1', ...args], { encoding: 'utf8', timeout: WAIT });
  const s = await startServer(['--particles', '300', ...tlsArgs(pki)], { ca: pki.caPem });
  const ok = hc(['--port', String(s.port), ...tlsArgs(pki)]);
  assert.equal(ok.status, 0, ok.stderr);
  assert.match(ok.stdout, /https:\/\/127\.0\.0\.1:\d+\/api\/health answered 200/);
  // Plain http against the TLS port is not healthy.
  assert.equal(hc(['--port', String(s.port)]).status, 1);
  await s.stop();
  const gone = hc(['--port', String(s.port), ...tlsArgs(pki)]);
  assert.equal(gone.status, 1);
  assert.ok(gone.stderr.length > 0);
  const p = await startServer(['--particles', '300', '--tls-cert', '', '--tls-key', '']);
  const plain = hc(['--port', String(p.port)]);
  assert.equal(plain.status, 0, plain.stderr);
  assert.match(plain.stdout, /http:\/\/127\.0\.0\.1:\d+\/api\/health answered 200/);
  await p.stop();
  // A port that accepts and never answers: unhealthy, and the check ends by itself.
  const mute = net.createServer(() => {});
  await new Promise((res) => mute.listen(0, '127.0.0.1', res));
  const hung = await new Promise((res) => {
    const k = spawn(SERVER, ['--health-check', '--bind', '127.0.0.1', '--port', String(mute.address().port)]);
    let err = '';
    k.stderr.on('data', (d) => { err += d; });
    const t = setTimeout(() => k.kill('SIGKILL'), WAIT);
    k.on('exit', (code, signal) => { clearTimeout(t); res({ code, signal, err }); });
  });
  mute.close();
  assert.deepEqual([hung.code, hung.signal], [1, null], hung.err);
  assert.match(hung.err, /no answer within \d+ s/);
});
