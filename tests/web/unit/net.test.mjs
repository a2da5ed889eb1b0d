// net.test.mjs - the connection's retries: commands that get a reply carry
// the page's session id, one unanswered when the connection drops is sent
// again (the same bytes: same sid and rid) after the next hello, once; one
// already answered is not; a duplicate answer resolves the caller's promise;
// stop() fails what is still waiting.  A stand-in WebSocket, no server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { webcrypto } from 'node:crypto';
import { encode, decode } from '@msgpack/msgpack';
import { Connection, newSessionId } from '../../../web-client/src/net.js';
import { SUBPROTOCOL } from '../../../web-client/src/protocol.js';

const golden = decode(readFileSync(new URL('../../../protocol/golden/s2c_hello.msgpack', import.meta.url)));

class FakeSocket {
  static all = [];
  constructor(url, proto) { this.url = url; this.protocol = proto; this.readyState = 1; this.sent = []; FakeSocket.all.push(this); }
  send(bytes) { this.sent.push(decode(bytes)); }
  close() { this.readyState = 3; }
  recv(obj) { const b = encode(obj); this.onmessage({ data: b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength) }); }
  drop() { this.readyState = 3; this.onclose({ code: 1006, reason: '' }); }
}
globalThis.WebSocket = FakeSocket;
// The browser's Web Crypto, which Node has as a global from 19 on; Node 18
// (Debian bookworm's) keeps it in node:crypto.
globalThis.crypto ??= webcrypto;
assert.equal(SUBPROTOCOL, 'fluid.v2');

const hello = { ...golden, relays: ['http://127.0.0.1:1/', 'http://127.0.0.2:1/'] };

test('net: session ids are 22 URL-safe characters, different per page', () => {
  const a = newSessionId(), b = newSessionId();
  assert.match(a, /^[A-Za-z0-9_-]{22}$/);
  assert.notEqual(a, b);
});

test('net: an unanswered command is sent again after the next hello, once; an answered one is not', async () => {
  FakeSocket.all = [];
  const c = new Connection('ws://127.0.0.1:1/');
  c.start();
  const ws1 = FakeSocket.all[0];
  ws1.recv(hello);
  assert.ok(c.connected);
  const answered = c.send({ type: 'pause' });
  const lost = c.send({ type: 'push', point: [0, 0, 0], direction: [1, 0, 0], radius: 0.1, strength: 1 });
  c.send({ type: 'cursor', pos: [0, 0, 0] });
  assert.equal(ws1.sent.length, 3);
  const [m1, m2, m3] = ws1.sent;
  assert.equal(m1.sid, c.sid);
  assert.equal(m2.sid, c.sid);
  assert.ok(m1.rid > 0 && m2.rid > m1.rid);
  assert.equal(m3.sid, undefined, 'commands without a reply carry no sid');
  ws1.recv({ type: 'reply', rid: m1.rid, cmd: 'pause', ok: true, tick: 5 });
  assert.equal((await answered).ok, true);

  ws1.drop(); // the relay went away: the page moves to the next one at once
  assert.equal(FakeSocket.all.length, 2);
  const ws2 = FakeSocket.all[1];
  assert.equal(ws2.url, 'ws://127.0.0.2:1/');
  assert.equal(ws2.sent.length, 0, 'nothing is sent before the hello');
  ws2.recv(hello);
  assert.equal(ws2.sent.length, 1, 'only the unanswered command goes again');
  assert.deepEqual(ws2.sent[0], m2, 'the same command: same sid, same rid');
  assert.equal(c.resent, 1);
  ws2.recv({ type: 'reply', rid: m2.rid, cmd: 'push', ok: true, tick: 9, touched: 3, duplicate: true });
  const r = await lost;
  assert.equal(r.ok, true);
  assert.equal(r.duplicate, true);
  assert.equal(c.pending.size, 0);

  const late = c.send({ type: 'resume' });
  c.stop();
  assert.deepEqual(await late, { ok: false, error: 'connection closed' });
});

test('net: kicked (4003) or its room gone (4004), the page does not come back, and says why', () => {
  for (const [code, reason] of [[4003, "kicked by the owner of room 'lab'"], [4004, "room 'lab' was deleted"]]) {
    FakeSocket.all = [];
    const seen = [];
    const c = new Connection('ws://127.0.0.1:1/r/lab/', { onStatus: (st) => seen.push(st) });
    c.start();
    const ws = FakeSocket.all[0];
    ws.recv(golden);
    assert.ok(c.connected);
    ws.readyState = 3;
    ws.onclose({ code, reason });
    assert.equal(FakeSocket.all.length, 1, `${code}: no new connection`);
    assert.equal(c.fatal, reason);
    assert.deepEqual(seen.at(-1), { state: 'fatal', text: reason }, 'the page is told why');
    c.stop();
  }
});
