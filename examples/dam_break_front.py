#!/usr/bin/env python3
"""Dam break through the REST API, with nothing but the standard library.

Loads the dam break paused, steps it 120 ticks, fetches every particle and
prints how far the surge front has run, in metres and in the units of Martin &
Moyce (1952): x/a against T = t * sqrt(2 g / a), a being the column's width.

    python3 examples/dam_break_front.py [--server http://127.0.0.1:8080] [--ticks 120] [--token T]
"""
import argparse
import json
import math
import sys
import urllib.error
import urllib.request


def call(server, method, path, body=None, token=None):
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(server + path, data=data, method=method)
    if data is not None:
        req.add_header("Content-Type", "application/json")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    try:
        with urllib.request.urlopen(req, timeout=60) as r:
            return json.load(r)
    except urllib.error.HTTPError as e:
        sys.exit("%s %s: %d %s" % (method, path, e.code, e.read().decode(errors="replace")))


def particles(server):
    """Every particle's position, 10000 at a time (the API's page limit)."""
    out, offset = [], 0
    while True:
        page = call(server, "GET", "/api/particles?offset=%d&limit=10000" % offset)
        out += page["positions"]
        offset += page["count"]
        if page["count"] == 0 or offset >= page["total"]:
            return out, page["tick"]


def front(positions, x0):
    """The surge front: the farthest x reached by at least 0.5% of the water
    (so a few splashed drops do not count), measured from the tank's wall."""
    xs = sorted(p[0] - x0 for p in positions)
    return xs[int(0.995 * (len(xs) - 1))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="http://127.0.0.1:8080")
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--particles", type=int, default=0, help="0: the scene's default")
    ap.add_argument("--token", default=None)
    a = ap.parse_args()
    s = a.server.rstrip("/")

    call(s, "POST", "/api/pause", {}, a.token)  # paused first, so the scene loads at tick 0 and waits
    scene = call(s, "POST", "/api/scene", {"name": "dam_break", "particles": a.particles}, a.token)
    start, _ = particles(s)
    x0 = min(p[0] for p in start)
    width = front(start, x0)  # the column's width a (its front before the collapse)
    stepped = 0
    while stepped < a.ticks:  # at most 1000 steps per request
        n = min(1000, a.ticks - stepped)
        call(s, "POST", "/api/step", {"steps": n}, a.token)
        stepped += n
    pos, tick = particles(s)
    stats = call(s, "GET", "/api/stats")
    t = stats["sim_time"]
    x = front(pos, x0)
    g = 9.81
    print("scene %s, %d particles, solver %s" % (scene["scene"], scene["particles"], stats["solver"]))
    print("column width a = %.3f m" % width)
    print("after %d ticks (t = %.3f s): front at x = %.3f m" % (tick, t, x))
    print("x/a = %.2f at T = t*sqrt(2g/a) = %.2f" % (x / width, t * math.sqrt(2 * g / width)))


if __name__ == "__main__":
    main()
