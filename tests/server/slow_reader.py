#!/usr/bin/env python3
# slow_reader.py - an HTTP/1.1 client that reads an answer slowly, as a phone
# on a poor link does: GET PORT PATH, read at most RATE bytes a second through
# a small receive buffer, optionally stopping for STALL seconds once AFTER
# bytes of the answer have come.  A chunked body is decoded here (its framing
# checked byte by byte, without a library).  Prints one JSON line at the end:
# the status line, the declared length (null when chunked), whether it was
# chunked and complete (a chunked body ended by its empty chunk, or as long
# as its Content-Length), the bytes of the body received and their SHA-256.
# With --head it also prints, as soon as the headers have come, a JSON line
# {"head": status line}.  Used by export.test.mjs (downloads slower than the
# server's stall timeout; readers that hold an export under way).
#   slow_reader.py PORT PATH RATE [AFTER STALL] [--bind ADDR] [--head]
import argparse
import hashlib
import json
import socket
import sys
import time

ap = argparse.ArgumentParser()
ap.add_argument('port', type=int)
ap.add_argument('path')
ap.add_argument('rate', type=float)
ap.add_argument('after', type=int, nargs='?', default=-1)
ap.add_argument('stall', type=float, nargs='?', default=0)
ap.add_argument('--bind', default=None, help='the source address (a loopback one: 127.0.0.2, ...)')
ap.add_argument('--head', action='store_true', help='print the status line once the headers have come')
a = ap.parse_args()
after, stall = (a.after, a.stall) if a.stall else (-1, 0)

s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds little for us: the server waits on us
if a.bind:
    s.bind((a.bind, 0))
s.connect(('127.0.0.1', a.port))
s.sendall(('GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' % a.path).encode())
buf, start, base, head_told = b'', time.monotonic(), 0, False  # base: bytes held when the pace (re)started
while True:
    if after >= 0 and len(buf) >= after:
        time.sleep(stall)
        after, start, base = -1, time.monotonic(), len(buf)
    try:
        d = s.recv(2048)
    except ConnectionResetError:
        break
    if not d:
        break
    buf += d
    if a.head and not head_told and b'\r\n\r\n' in buf:
        print(json.dumps({'head': buf.split(b'\r\n', 1)[0].decode(errors='replace')}), flush=True)
        head_told = True
    # pace: no faster than RATE bytes a second since the start (or the stall's end)
    ahead = (len(buf) - base) / a.rate - (time.monotonic() - start)
    if ahead > 0:
        time.sleep(ahead)
head, _, raw = buf.partition(b'\r\n\r\n')
lines = head.split(b'\r\n')
fields = {}
for line in lines[1:]:
    name, _, value = line.partition(b':')
    fields[name.strip().lower().decode()] = value.strip().decode(errors='replace')


def dechunk(raw):
    """The body of a chunked answer, and whether its empty last chunk came;
    raises ValueError on any framing error."""
    body, at = bytearray(), 0
    while True:
        eol = raw.find(b'\r\n', at)
        if eol < 0:
            return bytes(body), False  # cut inside a size line
        size_line = raw[at:eol].split(b';')[0]
        if not size_line or any(c not in b'0123456789abcdefABCDEF' for c in size_line):
            raise ValueError('bad chunk size line %r at byte %d' % (raw[at:eol][:20], at))
        size = int(size_line, 16)
        at = eol + 2
        if size == 0:
            if raw[at:] != b'\r\n':
                raise ValueError('%d bytes after the last chunk, not CRLF' % len(raw[at:]))
            return bytes(body), True
        body += raw[at:at + size]
        if len(raw) < at + size + 2:
            return bytes(body), False  # cut inside a chunk
        if raw[at + size:at + size + 2] != b'\r\n':
            raise ValueError('chunk at byte %d not followed by CRLF' % at)
        at += size + 2


chunked = fields.get('transfer-encoding', '').lower() == 'chunked'
length = int(fields['content-length']) if 'content-length' in fields else None
error = None
if chunked:
    try:
        body, complete = dechunk(raw)
    except ValueError as e:
        body, complete, error = b'', False, str(e)
else:
    body = raw
    complete = length is not None and len(body) == length
print(json.dumps({'status': lines[0].decode(errors='replace'), 'length': length, 'chunked': chunked,
                  'complete': complete, 'framing_error': error, 'received': len(body),
                  'sha256': hashlib.sha256(body).hexdigest()}))
sys.exit(0)
