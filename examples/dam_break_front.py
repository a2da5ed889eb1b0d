#!/usr/bin/env python3
"""Dam break through the REST API, with nothing but the standard library.

Loads the dam break paused, steps it 120 ticks, fetches every particle and
prints how far the surge front has run, in metres and in the units of Martin &
Moyce (1952): x/a against T = t * sqrt(2 g / a), a being the column's width.
With --plot FILE.png it also measures the front and the residual column height
every --every ticks and draws both against time beside Martin & Moyce's
measurements (matplotlib, Debian's python3-matplotlib).

    python3 examples/dam_break_front.py [--server http://127.0.0.1:8080] [--ticks 120] [--token T]
                                        [--plot front.png] [--every 6]
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


# Martin & Moyce (1952), n^2 = 2: the surge front x/a against T = t sqrt(2g/a)
# (their Fig. 3, a = 2.25 in, as PySPH's pysph/examples/db_exp_data.py
# transcribes it) and the residual column height h/H against
# tau = t sqrt(g/a) (as jax-sph's validation/ref/dambreak_data.py does).
MM_FRONT = [(0.832, 1.217), (1.219, 1.474), (1.997, 2.292), (2.547, 2.995), (3.345, 4.134), (4.034, 4.944),
            (4.418, 5.881), (5.091, 6.980)]
MM_HEIGHT = [(0.0, 1.0), (0.80, 0.89), (1.29, 0.78), (1.74, 0.67), (2.15, 0.56), (2.57, 0.44), (3.08, 0.33),
             (4.27, 0.22), (6.29, 0.11)]


def residual_height(positions, x0, y0, band):
    """The column's height at the back wall: the highest particle within
    `band` of it, above the floor."""
    ys = [p[1] for p in positions if p[0] - x0 < band]
    return (max(ys) - y0) if ys else 0.0


def plot(path, a, h0, samples):
    """samples: (t, x, h) in seconds and metres."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    g = 9.81
    fig, (ax1, ax2) = plt.subplots(2, 1, figsize=(7, 8), constrained_layout=True)
    ax1.plot([t * math.sqrt(2 * g / a) for t, _, _ in samples], [x / a for _, x, _ in samples], "-", label="fluid-server")
    ax1.plot([p[0] for p in MM_FRONT], [p[1] for p in MM_FRONT], "^", label="Martin & Moyce 1952")
    ax1.set_xlabel("T = t sqrt(2g/a)")
    ax1.set_ylabel("surge front x / a")
    ax1.set_title("Dam break: surge front")
    ax1.legend()
    ax2.plot([t * math.sqrt(g / a) for t, _, _ in samples], [h / h0 for _, _, h in samples], "-", label="fluid-server")
    ax2.plot([p[0] for p in MM_HEIGHT], [p[1] for p in MM_HEIGHT], "^", label="Martin & Moyce 1952")
    ax2.set_xlabel("tau = t sqrt(g/a)")
    ax2.set_ylabel("residual column height h / H")
    ax2.set_title("Dam break: residual column")
    ax2.legend()
    fig.savefig(path, dpi=100)
    print("wrote %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="http://127.0.0.1:8080")
    ap.add_argument("--ticks", type=int, default=120)
    ap.add_argument("--particles", type=int, default=0, help="0: the scene's default")
    ap.add_argument("--token", default=None)
    ap.add_argument("--plot", default=None, help="a PNG of the front and the residual height against time")
    ap.add_argument("--every", type=int, default=6, help="ticks between samples for --plot")
    a = ap.parse_args()
    s = a.server.rstrip("/")

    call(s, "POST", "/api/pause", {}, a.token)  # paused first, so the scene loads at tick 0 and waits
    scene = call(s, "POST", "/api/scene", {"name": "dam_break", "particles": a.particles}, a.token)
    start, _ = particles(s)
    x0 = min(p[0] for p in start)
    y0 = min(p[1] for p in start)
    width = front(start, x0)  # the column's width a (its front before the collapse)
    band = 0.1 * width
    h0 = residual_height(start, x0, y0, band)
    samples = [(0.0, width, h0)]
    stepped = 0
    while stepped < a.ticks:  # at most 1000 steps per request
        n = min(1000 if not a.plot else a.every, a.ticks - stepped)
        call(s, "POST", "/api/step", {"steps": n}, a.token)
        stepped += n
        if a.plot:
            pos, _ = particles(s)
            t = call(s, "GET", "/api/stats")["sim_time"]
            samples.append((t, front(pos, x0), residual_height(pos, x0, y0, band)))
    pos, tick = particles(s)
    stats = call(s, "GET", "/api/stats")
    t = stats["sim_time"]
    x = front(pos, x0)
    g = 9.81
    print("scene %s, %d particles, solver %s" % (scene["scene"], scene["particles"], stats["solver"]))
    print("column width a = %.3f m" % width)
    print("after %d ticks (t = %.3f s): front at x = %.3f m" % (tick, t, x))
    print("x/a = %.2f at T = t*sqrt(2g/a) = %.2f" % (x / width, t * math.sqrt(2 * g / width)))
    if a.plot:
        plot(a.plot, width, h0, samples)


if __name__ == "__main__":
    main()
