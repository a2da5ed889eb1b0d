#!/usr/bin/env python3
"""A time series of a running server's particles for ParaView: fetches
GET /api/particles?format=vtp N times, one every --interval wall seconds,
writes OUT/frame_NNNN.vtp and OUT/series.pvd (the time series index, keyed
by simulated time).  Standard library only.

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


def get(url, token):
    req = urllib.request.Request(url)
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return r.read()
    except urllib.error.HTTPError as e:
        sys.exit("GET %s: %d %s" % (url, e.code, e.read().decode(errors="replace")))


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
        t = json.loads(get(s + "/api/stats", a.token))["sim_time"]
        body = get(s + "/api/particles?format=vtp", a.token)
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
