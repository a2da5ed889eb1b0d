// net.js - the WebSocket connection: msgpack in and out, request ids and
// round-trip times, byte counting, reconnection with backoff, and the
// server's message limits (hello.limits): a command larger than max_msg is
// refused here, and the commands answered only when refused (cursor,
// body_drag; the next one supersedes them) are left unsent while the rate
// budget (rate_per_s, rate_burst) is spent.
// Commands that get a reply carry the page's session id (sid) with their
// request id; one still unanswered when the connection drops is sent again,
// the same bytes, once the next connection (another relay, or this server
// again) says hello.  The server applies a (sid, rid) once and answers a
// repeat with the first answer ("duplicate": true).
import { encode } from '@msgpack/msgpack';
import { decodeMessage } from './decode.js';
import { SUBPROTOCOL, checkHello, backoffDelay, NO_REPLY } from './protocol.js';
import { DEFAULT_LIMITS, readLimits, RateBudget, commandCost } from './limits.js';

// 16 random bytes as 22 characters of URL-safe base64: the page's session id.
export function newSessionId() {
  const b = new Uint8Array(16);
  globalThis.crypto.getRandomValues(b);
  return btoa(String.fromCharCode(...b)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export class Connection {
  // url: ws://... ; handlers: onMessage(msg, bytes), onStatus({state, text}),
  // onDecodeTime(ms)
  constructor(url, handlers = {}) {
    this.url = url;
    this.h = handlers;
    this.ws = null;
    this.rid = 1;
    this.sid = newSessionId();  // names this page's commands across connections
    this.pending = new Map();   // rid -> {t0, cmd, resolve, bytes, conn}
    this.conn = 0;              // connections opened so far (the current one's number)
    this.resent = 0;            // commands sent again after a reconnection
    this.lastRtt = null;        // ms, last command's round trip
    this.bytesIn = 0;           // total bytes received
    this.messagesIn = 0;
    this.attempt = 0;
    this.timer = null;
    this.stopped = false;
    this.fatal = null;          // a reason not to reconnect (protocol version)
    this.hello = null;
    this.limits = DEFAULT_LIMITS;
    this.budget = new RateBudget();
    this.skipped = 0;           // cursor / body_drag left unsent (rate budget)
    this.relays = null;         // hello.relays as WebSocket URLs: where to go when this one drops
    this.relayTries = 0;
  }

  start() { this.stopped = false; this._open(); }
  stop() {
    this.stopped = true;
    this._failPending('connection closed');
    clearTimeout(this.timer);
    if (this.ws) try { this.ws.close(1000, 'bye'); } catch { /* closed */ }
  }
  get connected() { return !!(this.ws && this.ws.readyState === 1 && this.hello); }

  _status(state, text) { this.h.onStatus?.({ state, text }); }

  _open() {
    clearTimeout(this.timer);
    this._status('connecting', this.attempt ? `reconnecting (attempt ${this.attempt + 1})…` : 'connecting…');
    let ws;
    try { ws = new WebSocket(this.url, SUBPROTOCOL); } catch (e) { this._retry(String(e)); return; }
    ws.binaryType = 'arraybuffer';
    this.ws = ws;
    this.conn++;
    this.hello = null;
    ws.onopen = () => {
      if (ws.protocol && ws.protocol !== SUBPROTOCOL) {
        this._fatal(`The server answered with WebSocket subprotocol "${ws.protocol}", not "${SUBPROTOCOL}".`);
      }
    };
    ws.onmessage = (ev) => this._message(ev.data);
    ws.onclose = (ev) => {
      if (this.ws !== ws) return;
      this.ws = null;
      this.hello = null;
      // Unanswered commands wait (within their 10 s) for the next hello.
      if (this.fatal) { this._failPending('connection closed'); this._status('fatal', this.fatal); return; }
      if (this.stopped) { this._failPending('connection closed'); this._status('closed', 'disconnected'); return; }
      // Closed for good (PROTOCOL.md, "Rooms and roles"): kicked by the room's
      // owner, or the room is not there; coming back would be refused again.
      if (ev.code === 4003 || ev.code === 4004) {
        this._fatal(ev.reason || (ev.code === 4003 ? 'closed by the room\'s owner' : 'no such room'));
        this._failPending('connection closed');
        return;
      }
      let why = `connection closed (${ev.code}${ev.reason ? ' ' + ev.reason : ''})`;
      if (ev.code === 1013) why = `server full: ${ev.reason || 'try again later'}`;
      this._retry(why);
    };
    ws.onerror = () => { /* onclose follows */ };
  }

  // The relays' URLs (hello.relays) as WebSocket URLs, keeping this page's
  // query (the token) on each.
  _learnRelays(list) {
    if (!Array.isArray(list) || !list.length) return;
    const q = new URL(this.url).search;
    this.relays = list.map((u) => { const x = new URL(u); x.protocol = x.protocol === 'https:' ? 'wss:' : 'ws:'; x.search = q; return x.toString(); });
  }

  _retry(why) {
    // Behind relays: the next relay at once, each once, before waiting.
    if (this.relays && this.relays.length > 1 && this.relayTries < this.relays.length - 1) {
      const at = this.relays.findIndex((u) => u === this.url);
      this.url = this.relays[(at + 1) % this.relays.length];
      this.relayTries++;
      this._status('connecting', `${why} — moving to ${new URL(this.url).host}`);
      this._open();
      return;
    }
    this.relayTries = 0;
    const d = backoffDelay(this.attempt++);
    const until = performance.now() + d;
    const tick = () => {
      const left = Math.max(0, until - performance.now());
      this._status('waiting', `${why} — reconnecting in ${(left / 1000).toFixed(1)} s`);
      if (left > 0) this.timer = setTimeout(tick, Math.min(250, left));
      else this._open();
    };
    tick();
  }

  _failPending(error) {
    for (const p of this.pending.values()) { clearTimeout(p.timer); p.resolve({ ok: false, error }); }
    this.pending.clear();
  }

  // After a hello: the commands sent on an earlier connection and not yet
  // answered go again, unchanged (same sid and rid).
  _resendPending() {
    for (const p of this.pending.values()) {
      if (p.conn === this.conn) continue;
      p.conn = this.conn;
      this.resent++;
      this._raw(null, p.bytes);
    }
  }

  _fatal(text) {
    this.fatal = text;
    this._status('fatal', text);
    try { this.ws?.close(1000, 'protocol mismatch'); } catch { /* closed */ }
  }

  _message(data) {
    if (!(data instanceof ArrayBuffer)) return;   // text is not part of the protocol
    this.bytesIn += data.byteLength;
    this.messagesIn++;
    const t0 = performance.now();
    let m;
    try { m = decodeMessage(new Uint8Array(data)); } catch (e) {
      console.warn('undecodable message', e);
      return;
    }
    const decodeMs = performance.now() - t0;
    if (m.type === 'hello') {
      const bad = checkHello(m);
      if (bad) { this._fatal(bad); return; }
      this._learnRelays(m.relays);
      this.relayTries = 0;
      this.hello = m;
      this.limits = readLimits(m);
      this.budget.setLimits(this.limits);
      this.attempt = 0;
      this._status('connected', 'connected');
      this._resendPending();
    } else if (m.type === 'reply') {
      const p = this.pending.get(m.rid);
      if (p) {
        clearTimeout(p.timer);
        this.pending.delete(m.rid);
        this.lastRtt = performance.now() - p.t0;
        p.resolve(m);
      }
    }
    this.h.onMessage?.(m, data, decodeMs);
  }

  // Sends a command; resolves with its reply ({ok:false,...} if not
  // connected, larger than the server takes, or a cursor / body_drag left
  // unsent for the rate limit).
  send(command) {
    if (!this.ws || this.ws.readyState !== 1) return Promise.resolve({ ok: false, error: 'not connected' });
    const noReply = NO_REPLY.has(command.type);
    const rid = noReply ? 0 : this.rid;
    const msg = noReply ? { ...command, rid } : { ...command, rid, sid: this.sid };
    let bytes;
    try { bytes = encode(msg); } catch (e) { return Promise.resolve({ ok: false, error: `cannot encode: ${e.message}` }); }
    if (bytes.byteLength > this.limits.max_msg)
      return Promise.resolve({ ok: false, error: `message too large: ${bytes.byteLength} bytes, the server takes at most ${this.limits.max_msg}` });
    const now = performance.now(), cost = commandCost(command.type);
    if (noReply) {
      if (!this.budget.take(cost, now)) { this.skipped++; return Promise.resolve({ ok: false, error: 'rate limited: not sent' }); }
      this._raw(msg, bytes);
      return Promise.resolve({ ok: true });
    }
    this.budget.charge(cost, now);
    this.rid++;
    if (this.rid > 0xffffffff) this.rid = 1;
    return new Promise((resolve) => {
      // Bound the wait (reconnections included) so callers never hang on a lost reply.
      const timer = setTimeout(() => { if (this.pending.delete(rid)) resolve({ ok: false, error: 'no reply within 10 s' }); }, 10000);
      this.pending.set(rid, { t0: performance.now(), cmd: command.type, resolve, bytes, conn: this.conn, timer });
      this._raw(msg, bytes);
    });
  }

  _raw(obj, bytes = encode(obj)) { try { this.ws.send(bytes); } catch (e) { console.warn('send failed', e); } }
}
