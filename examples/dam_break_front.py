#!/usr/bin/env python3
"""Dam break through the Python client (clients/python, fluidclient).

Loads the dam break paused, steps it 120 ticks, fetches every particle and
prints how far the surge front has run, in metres and in the units of Martin &
Moyce (1952): x/a against T = t * sqrt(2 g / a), a being the column's width.
With --plot FILE.png it also measures the front and the residual column height
every --every ticks, from the live stream's frames, and draws both against
time beside Martin & Moyce's measurements (matplotlib, Debian's
python3-matplotlib).

    python3 examples/dam_break_front.py [--server http://127.0.0.1:8080] [--ticks 120] [--token T]
                                        [--plot front.png] [--every 6]
"""
import argparse
import contextlib
import math
import os
import sys

import numpy as np

try:
    import fluidclient
except ImportError:  # run from the source tree without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
    import fluidclient


def front(positions, x0):
    """The surge front: the farthest x reached by at least 0.5% of the water
    (so a few splashed drops do not count), measured from the tank's wall."""
    xs = np.sort(positions[:, 0].astype(np.float64) - x0)
    return float(xs[int(0.995 * (len(xs) - 1))])


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
    ys = positions[positions[:, 0] - x0 < band, 1]
    return float(ys.max() - y0) if len(ys) else 0.0


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
    c = fluidclient.Client(a.server, token=a.token)
    try:
        run(c, a)
    except fluidclient.FluidError as e:
        sys.exit("%s: %s" % (a.server, e))


def run(c, a):
    c.pause()  # paused first, so the scene loads at tick 0 and waits
    scene = c.load_scene("dam_break", particles=a.particles)
    start = c.particles().positions
    x0, y0 = float(start[:, 0].min()), float(start[:, 1].min())
    width = front(start, x0)  # the column's width a (its front before the collapse)
    band = 0.1 * width
    h0 = residual_height(start, x0, y0, band)
    samples = [(0.0, width, h0)]
    # the front every --every ticks for --plot, from the stream's frames (within half a step of the world)
    stepped = 0
    with c.stream() if a.plot else contextlib.nullcontext() as s:
        while stepped < a.ticks:  # at most 1000 steps per request
            stepped = c.step(min(a.every if a.plot else 1000, a.ticks - stepped))["tick"]
            if a.plot:
                f = s.wait_tick(stepped)
                samples.append((f.sim_time, front(f.positions, x0), residual_height(f.positions, x0, y0, band)))
    p = c.particles()
    stats = c.get_stats()
    t = stats["sim_time"]
    x = front(p.positions, x0)
    tick = p.tick
    g = 9.81
    print("scene %s, %d particles, solver %s" % (scene["scene"], scene["particles"], stats["solver"]))
    print("column width a = %.3f m" % width)
    print("after %d ticks (t = %.3f s): front at x = %.3f m" % (tick, t, x))
    print("x/a = %.2f at T = t*sqrt(2g/a) = %.2f" % (x / width, t * math.sqrt(2 * g / width)))
    if a.plot:
        plot(a.plot, width, h0, samples)


if __name__ == "__main__":
    main()
