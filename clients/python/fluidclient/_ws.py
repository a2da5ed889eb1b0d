"""_ws.py - a minimal blocking WebSocket client (RFC 6455) on the standard
library's sockets: what the fluid stream needs and nothing more.

The opening handshake (with a subprotocol and extra headers), masked binary
messages out, messages in reassembled from fragments, pings answered, the
close handshake.  No extensions (the server offers none unless asked), no
text messages sent.  Why not a library: the package depends on nothing
beyond the standard library and NumPy, and Debian bookworm's
python3-websockets (10.4) has only an asyncio API, which a plain
`for frame in client.stream()` loop, or a Jupyter cell that already runs an
event loop, cannot drive without a thread.
"""
import base64
import hashlib
import os
import socket
import ssl
import struct
from urllib.parse import urlsplit

__all__ = ["WebSocket", "WebSocketClosed", "WebSocketError"]

_GUID = b"258EAFA5-E914-47DA-95CA-C5AB0DC85B11"
_MAX_MESSAGE = 256 << 20  # a bound on one reassembled message (a 16M-particle keyframe fits)


class WebSocketError(ConnectionError):
    """The peer broke the protocol, or the handshake was refused."""

    def __init__(self, message, status=None, body=b""):
        super().__init__(message)
        self.status = status
        self.body = body


class WebSocketClosed(ConnectionError):
    """The connection closed: the close code and reason the peer sent (1006
    when it went away without a close frame)."""

    def __init__(self, code, reason):
        super().__init__("WebSocket closed: %d %s" % (code, reason))
        self.code = code
        self.reason = reason


class WebSocket:
    """One client connection.  url: ws://host:port/path or wss://...;
    headers: extra request headers (name -> value)."""

    def __init__(self, url, subprotocol=None, headers=None, timeout=60.0, ssl_context=None):
        u = urlsplit(url)
        if u.scheme not in ("ws", "wss"):
            raise ValueError("a WebSocket URL starts with ws:// or wss://, not %r" % url)
        port = u.port or (443 if u.scheme == "wss" else 80)
        self._sock = socket.create_connection((u.hostname, port), timeout=timeout)
        self._sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if u.scheme == "wss":
            ctx = ssl_context or ssl.create_default_context()
            self._sock = ctx.wrap_socket(self._sock, server_hostname=u.hostname)
        self._buf = bytearray()
        self.closed = None
        self.subprotocol = None
        self._handshake(u, port, subprotocol, headers or {})

    # -- handshake -----------------------------------------------------------
    def _handshake(self, u, port, subprotocol, headers):
        key = base64.b64encode(os.urandom(16)).decode()
        path = (u.path or "/") + ("?" + u.query if u.query else "")
        host = u.hostname if port in (80, 443) else "%s:%d" % (u.hostname, port)
        lines = ["GET %s HTTP/1.1" % path, "Host: %s" % host, "Upgrade: websocket", "Connection: Upgrade",
                 "Sec-WebSocket-Key: %s" % key, "Sec-WebSocket-Version: 13"]
        if subprotocol:
            lines.append("Sec-WebSocket-Protocol: %s" % subprotocol)
        lines += ["%s: %s" % kv for kv in headers.items()]
        self._sock.sendall(("\r\n".join(lines) + "\r\n\r\n").encode("latin-1"))
        while b"\r\n\r\n" not in self._buf:
            if len(self._buf) > 65536:
                raise WebSocketError("handshake answer headers longer than 64 KiB")
            self._fill()
        head, _, rest = bytes(self._buf).partition(b"\r\n\r\n")
        self._buf = bytearray(rest)
        status_line, *hdr_lines = head.decode("latin-1").split("\r\n")
        parts = status_line.split(" ", 2)
        status = int(parts[1]) if len(parts) > 1 and parts[1].isdigit() else 0
        hdrs = {}
        for line in hdr_lines:
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        if status != 101:
            body = bytes(self._buf)
            raise WebSocketError("WebSocket upgrade refused: %s" % status_line, status=status, body=body)
        want = base64.b64encode(hashlib.sha1(key.encode() + _GUID).digest()).decode()
        if hdrs.get("sec-websocket-accept") != want:
            raise WebSocketError("WebSocket upgrade: Sec-WebSocket-Accept does not match the key")
        self.subprotocol = hdrs.get("sec-websocket-protocol")

    # -- reading -------------------------------------------------------------
    def _fill(self):
        try:
            chunk = self._sock.recv(1 << 20)
        except socket.timeout:
            raise TimeoutError("no data from the server within the timeout") from None
        if not chunk:
            self.closed = (1006, "connection lost")
            raise WebSocketClosed(1006, "the connection was closed without a close frame")
        self._buf += chunk

    def _take(self, n):
        while len(self._buf) < n:
            self._fill()
        out = self._buf[:n]
        del self._buf[:n]
        return out

    def _frame(self):
        b0, b1 = self._take(2)
        fin, opcode, masked, n = b0 & 0x80, b0 & 0x0F, b1 & 0x80, b1 & 0x7F
        if b0 & 0x70:
            raise WebSocketError("a frame with reserved bits set (no extension was negotiated)")
        if n == 126:
            n = struct.unpack(">H", self._take(2))[0]
        elif n == 127:
            n = struct.unpack(">Q", self._take(8))[0]
        if n > _MAX_MESSAGE:
            raise WebSocketError("a frame of %d bytes, more than this client takes" % n)
        mask = self._take(4) if masked else None
        payload = self._take(n)
        if mask:
            payload = _mask(payload, mask)
        return bool(fin), opcode, payload

    def recv(self):
        """The next data message as (opcode, bytearray): 2 binary, 1 text.
        Pings are answered on the way; a close raises WebSocketClosed."""
        if self.closed:
            raise WebSocketClosed(*self.closed)
        msg, op = None, None
        while True:
            fin, opcode, payload = self._frame()
            if opcode == 0x8:
                code = struct.unpack(">H", payload[:2])[0] if len(payload) >= 2 else 1005
                reason = bytes(payload[2:]).decode("utf-8", "replace")
                self.closed = (code, reason)
                try:
                    self._send(0x8, bytes(payload[:2]))
                except OSError:
                    pass
                raise WebSocketClosed(code, reason)
            if opcode == 0x9:
                self._send(0xA, bytes(payload))
                continue
            if opcode == 0xA:
                continue
            if opcode in (0x1, 0x2):
                if msg is not None:
                    raise WebSocketError("a new message began before the last one ended")
                msg, op = payload, opcode
            elif opcode == 0x0:
                if msg is None:
                    raise WebSocketError("a continuation frame outside a message")
                if len(msg) + len(payload) > _MAX_MESSAGE:
                    raise WebSocketError("a message of more than %d bytes" % _MAX_MESSAGE)
                msg += payload
            else:
                raise WebSocketError("unknown opcode %d" % opcode)
            if fin:
                return op, msg

    # -- writing -------------------------------------------------------------
    def _send(self, opcode, data):
        n = len(data)
        head = bytearray([0x80 | opcode])
        if n < 126:
            head.append(0x80 | n)
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self._sock.sendall(bytes(head) + mask + _mask(data, mask))

    def send_binary(self, data):
        if self.closed:
            raise WebSocketClosed(*self.closed)
        self._send(0x2, data)

    def close(self, code=1000, reason=""):
        """Sends a close frame (once) and closes the socket."""
        if not self.closed:
            self.closed = (code, reason)
            try:
                self._send(0x8, struct.pack(">H", code) + reason.encode("utf-8")[:120])
            except OSError:
                pass
        try:
            self._sock.close()
        except OSError:
            pass


def _mask(data, mask):
    n = len(data)
    if n == 0:
        return b""
    k = int.from_bytes((mask * (n // 4 + 1))[:n], "little")
    return (int.from_bytes(data, "little") ^ k).to_bytes(n, "little")
