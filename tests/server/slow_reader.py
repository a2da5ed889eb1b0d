#!/usr/bin/env python3
# slow_reader.py - an HTTP client that reads an answer slowly, as a phone on a
# poor link does: GET PORT PATH, read at most RATE bytes a second through a
# small receive buffer, optionally stopping for STALL seconds once AFTER bytes
# of the body have come.  Prints one JSON line: the status, the declared
# length, the bytes of the body received and their SHA-256.  Used by
# export.test.mjs (a download slower than the server's stall timeout).
#   slow_reader.py PORT PATH RATE [AFTER STALL]
import hashlib
import json
import socket
import sys
import time

port, path, rate = int(sys.argv[1]), sys.argv[2], float(sys.argv[3])
after = int(sys.argv[4]) if len(sys.argv) > 5 else -1
stall = float(sys.argv[5]) if len(sys.argv) > 5 else 0
s = socket.socket()
s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)  # the kernel holds little for us: the server waits on us
s.connect(('127.0.0.1', port))
s.sendall(('GET %s HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n' % path).encode())
buf, start, base = b'', time.monotonic(), 0  # base: bytes held when the pace (re)started
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
    # pace: no faster than RATE bytes a second since the start (or the stall's end)
    ahead = (len(buf) - base) / rate - (time.monotonic() - start)
    if ahead > 0:
        time.sleep(ahead)
head, _, body = buf.partition(b'\r\n\r\n')
lines = head.split(b'\r\n')
length = next((int(l.split(b':')[1]) for l in lines[1:] if l.lower().startswith(b'content-length:')), None)
print(json.dumps({'status': lines[0].decode(errors='replace'), 'length': length, 'received': len(body),
                  'sha256': hashlib.sha256(body).hexdigest()}))
