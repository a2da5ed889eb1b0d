#!/usr/bin/env python3
# url_reader.py - reads one answer with Python's own HTTP client
# (urllib.request, which decodes a chunked body) and prints one JSON line:
# the status, the Transfer-Encoding and Content-Length headers, the body's
# length and SHA-256.  Used by export.test.mjs: the server's chunked answers
# read by a third client besides Node's fetch and curl.
#   url_reader.py URL
import hashlib
import json
import sys
import urllib.error
import urllib.request

try:
    with urllib.request.urlopen(sys.argv[1], timeout=60) as r:
        status, headers, body = r.status, r.headers, r.read()
except urllib.error.HTTPError as e:
    status, headers, body = e.code, e.headers, e.read()
print(json.dumps({'status': status, 'transfer_encoding': headers.get('Transfer-Encoding'),
                  'content_length': headers.get('Content-Length'), 'length': len(body),
                  'sha256': hashlib.sha256(body).hexdigest()}))
