#!/usr/bin/env python3
"""A time series of a running server's particles for ParaView: fetches
GET /api/particles?format=vtp N times, one every --interval wall seconds,
writes OUT/frame_NNNN.vtp and OUT/series.pvd (the time series index, keyed
by simulated time).  The server bounds how many exports one address may
start a minute: past it the answer is 429 with Retry-After, and this waits
that long and asks again.  Standard library only.

    python3 examples/export_series.py [--server http://127.0.0.1:8080] [--count 10] [--interval 0.5] [--out series]
    paraview series/series.pvd
"""
import argparse
import json
import os
import sys
import time
import urllib.error
import urllib.request


class Later(Exception):
    """The server asked to try again in `after` seconds (429 or 503)."""

    def __init__(self, after):
        super().__init__(after)
        self.after = after


def get(url, token):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        if e.code in (429, 503) and e.headers.get("Retry-After", "").isdigit():
            raise Later(min(int(e.headers["Retry-After"]), 60))
        sys.exit("GET %s: %d %s" % (url, e.code, e.read().decode(errors="replace")))


def export(s, token):
    """The simulated time and the VTP file of one moment, waiting as told."""
    for _ in range(20):
        try:
            t = json.loads(get(s + "/api/stats", token))["sim_time"]
            return t, get(s + "/api/particles?format=vtp", token)
        except Later as later:
            time.sleep(later.after)
    sys.exit("the server kept refusing exports")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="http://127.0.0.1:8080")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--out", default="series")
    ap.add_argument("--token", default=None)
    a = ap.parse_args()
    s = a.server.rstrip("/")
    os.makedirs(a.out, exist_ok=True)
    entries = []
    for k in range(a.count):
        t, body = export(s, a.token)
        name = "frame_%04d.vtp" % k
        with open(os.path.join(a.out, name), "wb") as f:
            f.write(body)
        entries.append((t, name))
        if k + 1 < a.count:
            time.sleep(a.interval)
    with open(os.path.join(a.out, "series.pvd"), "w") as f:
        f.write('<?xml version="1.0"?>\n<VTKFile type="Collection" version="0.1">\n<Collection>\n')
        for t, name in entries:
            f.write('  <DataSet timestep="%.6f" part="0" file="%s"/>\n' % (t, name))
        f.write("</Collection>\n</VTKFile>\n")
    print("wrote %d .vtp files and %s" % (len(entries), os.path.join(a.out, "series.pvd")))


if __name__ == "__main__":
    main()
