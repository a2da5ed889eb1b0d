// robustness.test.mjs - bad input, limits and slow clients against the real
// binary: every bad message gets an error with a reason, the server keeps
// serving, and no client can stall the others or grow memory without bound.
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { startServer, stopAll, connect, get, http, sleep, encode, rawConnect, ROOT, until, WAIT } from './lib.mjs';

after(async () => { await stopAll(); });

test('every kind of bad WebSocket input gets an error reply with a reason and the server keeps serving', async () => {
  const s = await startServer(['--particles', '2000']);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const cases = [
    ['malformed msgpack', Buffer.from([0xc1]), /malformed/],
    ['truncated map', Buffer.from([0x83, 0xa4, 0x74, 0x79]), /malformed/],
    ['map declaring 4G entries', Buffer.from([0xdf, 0xff, 0xff, 0xff, 0xff]), /malformed/],
    ['string declaring 4 GB', Buffer.from([0x81, 0xdb, 0xff, 0xff, 0xff, 0xff, 0x61]), /malformed/],
    ['not a map', encode([1, 2, 3]), /expected a msgpack map/],
    ['deep nesting', Buffer.concat([Buffer.from([0x81, 0xa1, 0x7a]), Buffer.alloc(500, 0x91), Buffer.from([0xc0])]), /too deep/],
    ['unknown command', encode({ type: 'explode', rid: 11 }), /unknown command 'explode'/, 11],
    ['wrong type', encode({ type: 'push', rid: 12, point: 'here', radius: 1, strength: 1, direction: [0, 1, 0] }), /'point' must be an array of 3 numbers/, 12],
    ['missing field', encode({ type: 'push', rid: 13, point: [0, 0, 0], radius: 1, strength: 1 }), /missing field 'direction'/, 13],
    ['out of range', encode({ type: 'push', rid: 14, point: [0, 0, 0], radius: 500, strength: 1, direction: [0, 1, 0] }), /'radius' must be in/, 14],
    ['NaN', encode({ type: 'set_param', rid: 15, material: 'water', param: 'stiffness', value: NaN }), /finite/, 15],
    ['unknown field', encode({ type: 'pause', rid: 16, please: true }), /unknown field 'please'/, 16],
    ['unknown material', encode({ type: 'set_param', rid: 17, material: 'lava', param: 'stiffness', value: 1 }), /unknown material 'lava'/, 17],
    ['unknown parameter', encode({ type: 'set_param', rid: 18, material: 'water', param: 'spiciness', value: 1 }), /unknown parameter 'spiciness'/, 18],
    ['parameter out of its range', encode({ type: 'set_param', rid: 19, material: 'water', param: 'stiffness', value: -5 }), /outside/, 19],
    ['unknown scene', encode({ type: 'load_scene', rid: 20, name: 'moon' }), /unknown scene/, 20],
    ['oversized message', encode({ type: 'load_scene', rid: 21, name: 'x'.repeat(5000) }), /too large/],
  ];
  for (const [what, bytes, re, rid] of cases) {
    c.sendRaw(bytes);
    const r = await c.next((m) => m.type === 'reply');
    assert.equal(r.ok, false, what);
    assert.match(r.error, re, `${what}: ${r.error}`);
    if (rid !== undefined) assert.equal(r.rid, rid, `${what}: rid echoed`);
  }
  c.ws.send('{"type":"pause"}'); // text frame
  assert.match((await c.next((m) => m.type === 'reply')).error, /binary msgpack/);
  // Still serving: a valid command works and frames keep coming.
  const ok = await c.command({ type: 'push', point: [0.5, 0.2, 0.5], radius: 0.2, strength: 1, direction: [0, 1, 0] });
  assert.equal(ok.ok, true);
  await c.next((m) => m.type === 'frame');
  const stats = (await get(s, '/api/stats')).json;
  assert.ok(stats.bad_messages >= cases.length - 5, `bad_messages ${stats.bad_messages}`);
  // Logged once per kind, not once per message.
  for (let i = 0; i < 20; i++) c.sendRaw(Buffer.from([0xc1]));
  for (let i = 0; i < 20; i++) await c.next((m) => m.type === 'reply');
  assert.equal(s.stderr.split('\n').filter((l) => l.includes('expected a msgpack map')).length, 1, s.stderr);
  c.close();
  await s.stop();
});

test('random garbage gets error replies, then a clean 1008 close; other clients are unaffected', async () => {
  const s = await startServer(['--particles', '2000']);
  const good = await connect(s);
  await good.next((m) => m.type === 'hello');
  const bad = await connect(s);
  await bad.next((m) => m.type === 'hello');
  for (let i = 0; i < 60 && !bad.closed; i++) bad.sendRaw(randomBytes(1 + (i * 37) % 300));
  const closed = await bad.closedWithin();
  assert.ok(closed, 'garbage sender closed');
  assert.equal(closed.code, 1008);
  assert.match(closed.reason, /bad messages/);
  assert.ok(bad.messages.filter((m) => m.type === 'reply' && !m.ok).length >= 10, 'errors were replied first');
  // the other client still gets frames, decodable, the tick advancing
  const g0 = good.messages.filter((m) => m.type === 'frame').pop() || await good.next((m) => m.type === 'frame');
  const g1 = await good.next((m) => m.type === 'frame' && m.tick > g0.tick);
  const g2 = await good.next((m) => m.type === 'frame' && m.tick > g1.tick);
  assert.ok(g1.ids && g2.ids && g2.seq > g1.seq, 'the other client still gets frames');
  good.close();
  assert.equal((await get(s, '/api/health')).json.ok, true);
  await s.stop();
});

test('the per-client command rate limit answers "rate limited" and later recovers', async () => {
  // 2 a second after a burst of 20: of 60 sent at once, at least 30 are
  // refused however slowly they are read (unless that takes 5 s)
  const s = await startServer(['--particles', '2000', '--rate', '2', '--burst', '20']);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  // (a cursor that passes has no reply; a refused one has, echoing its rid;
  // the closing pause's reply, refused or not, comes after all of them)
  for (let i = 1; i <= 60; i++) c.send({ type: 'cursor', rid: i, pos: [0.1, 0.1, 0.1] });
  c.send({ type: 'pause', rid: 1000 });
  const replies = [];
  while (!replies.some((r) => r.rid === 1000)) replies.push(await c.next((m) => m.type === 'reply'));
  const limited = replies.filter((r) => r.rid <= 60 && /rate limited/.test(r.error));
  assert.ok(limited.length >= 30, `rate-limited replies: ${limited.length}`);
  assert.equal(new Set(limited.map((r) => r.rid)).size, limited.length, 'each echoes its own rid');
  await sleep(1200); // a token back (at least: waiting longer only refills more)
  assert.equal((await c.command({ type: 'pause' })).ok, true, 'recovers after a second');
  assert.ok((await get(s, '/api/stats')).json.rate_limited >= 30);
  c.close();
  await s.stop();
});

test('--max-clients refuses the extra client with close code 1013 and a reason', async () => {
  const s = await startServer(['--particles', '1000', '--max-clients', '2']);
  const a = await connect(s), b = await connect(s);
  await a.next((m) => m.type === 'hello');
  await b.next((m) => m.type === 'hello');
  const c = await connect(s);
  const closed = await c.closedWithin();
  assert.equal(closed?.code, 1013);
  assert.match(closed.reason, /server full/);
  b.close();
  await until(async () => (await get(s, '/api/stats')).json.clients === 1, 'the server to see b leave');
  const d = await connect(s);
  await d.next((m) => m.type === 'hello');
  a.close(); d.close();
  await s.stop();
});

// A raw TCP client that completes the WebSocket handshake and never reads.
function nonReader(port) {
  return new Promise((resolve, reject) => {
    const sock = rawConnect(port, () => {
      sock.write(`GET / HTTP/1.1\r\nHost: 127.0.0.1:${port}\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n` +
        `Sec-WebSocket-Key: ${randomBytes(16).toString('base64')}\r\nSec-WebSocket-Version: 13\r\n` +
        'Sec-WebSocket-Protocol: fluid.v2\r\n\r\n');
      sock.once('data', (d) => {
        sock.pause(); // never read again: the kernel buffers fill up
        if (/ 101 /.test(d.toString().split('\r\n')[0])) resolve(sock); else reject(new Error(d.toString()));
      });
    });
    sock.on('error', () => {});
    sock.setTimeout(2 * WAIT);
  });
}

test('clients that connect and never read stall no one and do not grow the server\'s memory past a bound', async (t) => {
  // 20000 particles: frames of about 150 KB at 30 Hz (4.5 MB/s per client).
  const s = await startServer(['--particles', '20000', '--frame-hz', '30']);
  const watcher = await connect(s);
  const hello = await watcher.next((m) => m.type === 'hello');
  for (let i = 0; i < 10; i++) await watcher.next((m) => m.type === 'frame'); // the server's memory settles
  const rss0 = s.rssKiB();
  let rssMax = rss0, sampling = true;
  const sampler = (async () => { while (sampling) { rssMax = Math.max(rssMax, s.rssKiB()); await sleep(50); } })();
  const stuck = await Promise.all([nonReader(s.port), nonReader(s.port), nonReader(s.port)]);
  // Until the server has skipped 30 frames for each stuck client (their
  // buffers are full) and the watcher has read 150 frames meanwhile (5 s of
  // the stream), each decoded, in order, the tick advancing.
  const stats = async () => (await get(s, '/api/stats')).json;
  const skipped = async () => (await get(s, '/api/clients')).json.clients.filter((k) => k.id !== hello.client_id).map((k) => k.frames_dropped);
  let prev = await watcher.next((m) => m.type === 'frame'), read = 0, dropped = [];
  while (read < 150 || !(dropped.length === 3 && dropped.every((d) => d >= 30))) {
    const f = await watcher.next((m) => m.type === 'frame');
    assert.ok(f.ids, `frame ${f.seq} decodes: ${f._refused}`);
    assert.ok(f.seq > prev.seq && f.tick > prev.tick, `the watcher's frames advance: ${prev.seq}@${prev.tick} -> ${f.seq}@${f.tick}`);
    prev = f;
    if (++read % 10 === 0) dropped = await skipped();
  }
  sampling = false;
  await sampler;
  const st = await stats();
  // Bound: each stuck client holds at most one frame plus one fragment.
  const growthMiB = (rssMax - rss0) / 1024;
  t.diagnostic(`3 non-reading clients while the watcher read ${read} frames: RSS +${growthMiB.toFixed(1)} MiB, frame ${st.frame_bytes} B, frames_dropped ${dropped}`);
  assert.ok(growthMiB < 40, `RSS grew ${growthMiB.toFixed(1)} MiB with 3 non-reading clients (frame ${st.frame_bytes} B)`);
  assert.ok(st.frames_dropped >= 90, 'frames were skipped for the stuck clients');
  assert.equal((await get(s, '/api/health')).status, 200);
  for (const k of stuck) k.destroy();
  watcher.close();
  await s.stop();
});

test('a client flooding commands gets every reply (back-pressure, nothing dropped)', async () => {
  const s = await startServer(['--particles', '1000', '--rate', '5000', '--burst', '5000']);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  for (let i = 1; i <= 600; i++) c.send({ type: i % 2 ? 'pause' : 'resume', rid: i });
  const seen = new Set();
  while (seen.size < 600) {
    const r = await c.next((m) => m.type === 'reply');
    assert.equal(r.ok, true, r.error);
    assert.ok(!seen.has(r.rid), `one reply for ${r.rid}`);
    seen.add(r.rid);
  }
  assert.equal(seen.size, 600);
  assert.equal((await get(s, '/api/stats')).json.replies_dropped, 0);
  c.close();
  await s.stop();
});

test('a slow reader skips to the newest frame instead of receiving a backlog', async () => {
  const s = await startServer(['--particles', '20000', '--frame-hz', '30']);
  const c = await connect(s);
  const hello = await c.next((m) => m.type === 'hello');
  await c.next((m) => m.type === 'frame');
  const stats = async () => (await get(s, '/api/stats')).json;
  const me = async () => (await get(s, '/api/clients')).json.clients.find((k) => k.id === hello.client_id);
  const pub0 = (await stats()).frames_published;
  // Stop reading: kernel buffers fill, the server holds one frame.  Until it
  // has skipped 60 frames for this client, and most of those published since.
  c.ws._socket.pause();
  let mine = null, published = 0;
  await until(async () => {
    mine = await me();
    published = (await stats()).frames_published - pub0;
    return mine.frames_dropped >= 60 && mine.frames_dropped >= published / 2;
  }, () => `frames skipped for the paused reader: ${mine?.frames_dropped} of ${published} published`, { everyMs: 200 });
  const at = await stats();
  published = at.frames_published - pub0;
  c.messages.length = 0;
  const f0 = c.frames;
  c.ws._socket.resume();
  // what it reads until a frame of the tick it resumed at (or a later one):
  // the frames in the buffers and the one held, not the ones skipped
  const caught = await c.next((m) => m.type === 'frame' && m.tick >= at.tick);
  const got = c.frames - f0;
  assert.ok(caught.ids, `the newest frame decodes: ${caught._refused}`);
  assert.ok(got < published * 0.85, `read ${got} frames to reach tick ${at.tick}, of ${published} published while paused: older ones were skipped`);
  assert.ok(at.frames_dropped > 0);
  c.close();
  await s.stop();
});

test('a command sent in several WebSocket fragments is reassembled; an oversized fragmented one is refused', async () => {
  const s = await startServer(['--particles', '1000']);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  const bytes = encode({ type: 'push', rid: 77, point: [0.5, 0.1, 0.5], radius: 0.2, strength: 1, direction: [0, 1, 0] });
  const cut = [5, 17, 30];
  let at = 0;
  for (const k of [...cut, bytes.length]) {
    c.ws.send(bytes.subarray(at, k), { binary: true, fin: k === bytes.length });
    at = k;
  }
  const r = await c.next((m) => m.type === 'reply' && m.rid === 77);
  assert.equal(r.ok, true, r.error);
  const big = Buffer.alloc(6000, 0x20);
  c.ws.send(big.subarray(0, 2000), { binary: true, fin: false });
  c.ws.send(big.subarray(2000, 4000), { binary: true, fin: false });
  c.ws.send(big.subarray(4000), { binary: true, fin: true });
  assert.match((await c.next((m) => m.type === 'reply')).error, /too large/);
  assert.equal((await c.command({ type: 'pause' })).ok, true, 'still serving');
  c.close();
  await s.stop();
});

test('expensive commands cost more of the rate limit: a client cannot reload the scene in a loop', async () => {
  const s = await startServer(['--particles', '1000', '--rate', '60', '--burst', '45']);
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  for (let i = 1; i <= 10; i++) c.send({ type: 'load_scene', rid: i, name: 'drop', particles: 500 });
  const replies = [];
  while (replies.length < 10) replies.push(await c.next((m) => m.type === 'reply'));
  const ok = replies.filter((r) => r.ok).length, limited = replies.filter((r) => /rate limited/.test(r.error)).length;
  assert.equal(ok + limited, 10);
  assert.ok(replies.some((r) => /load_scene costs 30/.test(r.error)), 'the reason names the cost');
  assert.deepEqual(replies.map((r) => r.rid).sort((a, b) => a - b), [1, 2, 3, 4, 5, 6, 7, 8, 9, 10], 'every refusal echoes its rid');
  assert.ok(ok >= 1 && ok <= 3, `${ok} scene loads accepted out of 10 sent at once (burst 45, 30 each)`);
  c.close();
  await s.stop();
});

test('REST clients that ask for big answers and never read them do not stall the server', async (t) => {
  const s = await startServer(['--particles', '20000']);
  const rss0 = s.rssKiB();
  // (a poll may find its kept-alive connection closed while the network
  // thread writes those answers: it asks again)
  const stats = async () => (await get(s, '/api/stats').catch(() => get(s, '/api/stats'))).json;
  const h0 = (await stats()).http_requests;
  const socks = await Promise.all(Array.from({ length: 8 }, () => new Promise((res) => {
    const k = rawConnect(s.port, () => {
      k.write('GET /api/particles?limit=10000 HTTP/1.1\r\nHost: x\r\n\r\n');
      k.pause(); // never read the ~1 MB answer
      res(k);
    });
    k.on('error', () => {});
  })));
  // the 8 requests arrived (each poll counts itself too), and 10 ticks went
  // by: the sim thread made their answers, the network thread wrote what it could
  let polls = 0, st = null;
  await until(async () => { st = await stats(); polls++; return st.http_requests - h0 - polls >= 8; },
    () => `the 8 requests to arrive (${st?.http_requests - h0 - polls})`);
  const tick0 = st.tick;
  await until(async () => (await stats()).tick >= tick0 + 10, 'ten ticks');
  const c = await connect(s);
  await c.next((m) => m.type === 'frame');
  const r = await get(s, '/api/particles?limit=10');
  assert.equal(r.status, 200);
  const growth = (s.rssKiB() - rss0) / 1024;
  t.diagnostic(`8 unread 10000-particle answers: RSS +${growth.toFixed(1)} MiB`);
  assert.ok(growth < 64, `RSS grew ${growth.toFixed(1)} MiB`);
  for (const k of socks) k.destroy();
  c.close();
  await s.stop();
});

// The reproducers of the hardening report (docs/hardening.md "The defects
// reported, and where each is fixed"), against the ASan build when there is
// one (it sees the overflow and the use-after-free that the optimised build
// hides or dies of), with a token set: both ran before any token check.
const SAN = process.env.FLUID_SERVER_SAN ? resolve(ROOT, process.env.FLUID_SERVER_SAN) : null;

test('hostile input: a duplicate params map, PATCH with an unknown key and an overlong Origin are refused, and the server lives', async () => {
  const s = await startServer(['--particles', '1000', '--token', 'sesame'], {
    binary: SAN || undefined,
    env: { ASAN_OPTIONS: 'detect_leaks=1:abort_on_error=0:exitcode=23', UBSAN_OPTIONS: 'print_stacktrace=1:halt_on_error=1' },
  });
  const c = await connect(s);
  await c.next((m) => m.type === 'hello');
  // The 810-byte set_param: `params` twice, 29 entries (p00..p28 = 1.0) each.
  const params = Object.fromEntries(Array.from({ length: 29 }, (_, i) => [`p${String(i).padStart(2, '0')}`, 1.5]));
  const one = encode({ type: 'set_param', rid: 31, material: 'water', params });
  // Splice a second copy of the `params` entry in: a map of 4 -> 5 entries.
  const key = encode('params'), at = Buffer.from(one).indexOf(Buffer.from(key));
  const entry = Buffer.from(one).subarray(at);
  const twice = Buffer.concat([Buffer.from([0x85]), Buffer.from(one).subarray(1), entry]);
  assert.ok(twice.length > 700 && twice.length < 900, `${twice.length} bytes`);
  for (let i = 0; i < 3; i++) {
    c.sendRaw(twice);
    const r = await c.next((m) => m.type === 'reply');
    assert.equal(r.ok, false);
    assert.equal(r.rid, 31);
    assert.match(r.error, /^set_param: field 'params' given twice$/);
  }
  // One copy holds 29 unknown names: refused by name, not by overflow.
  c.sendRaw(one);
  assert.match((await c.next((m) => m.type === 'reply')).error, /needs the editor role|unknown parameter/);
  // PATCH with an unknown key: the key is quoted exactly, no freed bytes (with the token:
  // without it the body is refused unread, 401).
  for (const [body, want] of [['{"bogus":1}', "unknown parameter 'bogus'"], ['{"stiffness":"x"}', "'stiffness' must be a number"]]) {
    const r = await http(s, 'PATCH', '/api/materials/water', { body, headers: { authorization: 'Bearer sesame' } });
    assert.equal(r.status, 400);
    assert.deepEqual(r.json, { error: want, code: 'bad_request' });
  }
  // An Origin longer than any allowed one is a foreign page, not "no Origin".
  const far = await http(s, 'POST', '/api/pause', { headers: { origin: `http://${'a'.repeat(600)}.example`, authorization: 'Bearer sesame' } });
  assert.equal(far.status, 403, far.text);
  assert.equal((await http(s, 'POST', '/api/pause', { headers: { authorization: 'Bearer sesame' } })).status, 200);
  assert.equal((await get(s, '/api/health')).json.ok, true);
  c.close();
  const r = await s.stop('SIGTERM');
  const report = s.stderr.split('\n').filter((l) => /Sanitizer|runtime error|SUMMARY/.test(l));
  assert.deepEqual(report, [], s.stderr.slice(-4000));
  assert.deepEqual(r, { code: 0, signal: null }, s.stderr.slice(-4000));
});
