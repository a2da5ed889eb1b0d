#!/usr/bin/env python3
"""A time series of a running server's particles for ParaView: fetches
GET /api/particles?format=vtp N times, one every --interval wall seconds,
writes OUT/frame_NNNN.vtp and OUT/series.pvd (the time series index, keyed
by simulated time).  The server bounds how many exports one address may
start a minute: past it the answer is 429 with Retry-After, and this waits
that long and asks again.  On the Python client (clients/python, fluidclient).

    python3 examples/export_series.py [--server http://127.0.0.1:8080] [--count 10] [--interval 0.5] [--out series]
    paraview series/series.pvd
"""
import argparse
import os
import sys
import time

try:
    import fluidclient
except ImportError:  # run from the source tree without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
    import fluidclient


def export(c):
    """The simulated time and the VTP file of one moment, waiting as told."""
    for _ in range(20):
        try:
            return c.get_stats()["sim_time"], c.get_particles(format="vtp")
        except fluidclient.FluidError as e:
            if e.status not in (429, 503) or e.retry_after is None:
                raise
            time.sleep(min(e.retry_after, 60))
    sys.exit("the server kept refusing exports")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="http://127.0.0.1:8080")
    ap.add_argument("--count", type=int, default=10)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--out", default="series")
    ap.add_argument("--token", default=None)
    a = ap.parse_args()
    c = fluidclient.Client(a.server, token=a.token)
    os.makedirs(a.out, exist_ok=True)
    entries = []
    for k in range(a.count):
        try:
            t, body = export(c)
        except (fluidclient.FluidError, OSError) as e:
            sys.exit("%s: %s" % (a.server, e))
        entries.append((t, "frame_%04d.vtp" % k))
        with open(os.path.join(a.out, entries[-1][1]), "wb") as f:
            f.write(body)
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
