#!/usr/bin/env python3
"""SPHERIC Test 2 (the MARIN dam break on a box) through the REST API.

Loads the scene `spheric2` paused at a given particle count and solver, steps
it --seconds of simulated time, reads the world's probes (H1-H4 water heights,
P1-P8 pressures on the box, measured by the server after every step) every
--every ticks, and compares them with the experiment's measurements
(Kleefsman et al. 2005; the CSV files of --data: t,value per probe, named as
the probes are).  It prints the mean absolute error of each height over the
run, H2's arrival (first above 2 cm; measured 0.368 s), P1's first impact
(first above 1 kPa; measured 0.394 s), its peak and its mean over 1 s to the
end, and the impulse of its first impact (the pressure sensors read the mean
over each step, so with --every 1 the sum of value x step is the impulse:
docs/validation.md, "P1's impulse"); with --plot FILE.png it draws every probe
against the measurement (matplotlib, Debian's python3-matplotlib).  With --from-csv FILE it reads a
run's series from a file instead of a server: the CSV bench_spheric2 writes
(tests/bench/bench_spheric2.c, BENCH_SERIES: t, H1-H4, P1-P8, front).  With
--front (and --from-csv: the series' `front` column, the leading particle's
edge) it prints when the front passes H1, H2 and the box's face against two
experiments: this one's first water at H1 and H2 (above 2 mm) and P1's first
impact, and the surge front of Lobovsky et al. 2014 (H = 0.3 m, a column 0.6 m
long: --lobovsky, its front distance from the gate over H against t sqrt(g/H)),
scaled to this column's 0.55 m: the front of a dam break depends on x / H and
t sqrt(g / H) alone until the wave that the release sends back reaches the
reservoir's wall (1.228 m at sqrt(g H) = 2.3 m/s: 0.53 s here).

    python3 examples/spheric2.py [--server http://127.0.0.1:8080] [--token T] [--solver mps]
                                 [--particles 20000] [--seconds 6] [--every 1]
                                 [--data ../shared/validation/spheric2] [--plot spheric2.png]
    python3 examples/spheric2.py --from-csv spheric2_mps_63000.csv [--plot spheric2.png] [--front]
"""
import argparse
import bisect
import os
import sys

try:
    import fluidclient
except ImportError:  # run from the source tree without installing the package
    sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "clients", "python"))
    import fluidclient

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_DATA = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "validation", "spheric2"))
DEFAULT_LOBOVSKY = os.path.normpath(os.path.join(HERE, "..", "..", "shared", "validation", "lobovsky2014",
                                                 "aquagpusph_H300_front.csv"))
GATE_X, DEPTH = 1.992, 0.55  # the gate's x and the column's depth (m); the water runs towards x = 0
STATIONS = [("H1", 1.488), ("H2", 0.992), ("box", 0.8245)]  # x of H1, H2 and the box's face to the gate
HEIGHTS = ["H1", "H2", "H3", "H4"]
PRESSURES = ["P1", "P2", "P3", "P4", "P5", "P6", "P7", "P8"]


def read_csv(path):
    """(times, values) of a measurement file: '#' comments, a 't,value' header, rows."""
    ts, vs = [], []
    with open(path) as f:
        for line in f:
            if line.startswith("#") or line.startswith("t,") or not line.strip():
                continue
            t, v = line.split(",")
            ts.append(float(t))
            vs.append(float(v))
    return ts, vs


def at(series, t):
    """The measurement at time t, linearly interpolated."""
    ts, vs = series
    k = bisect.bisect_left(ts, t)
    if k <= 0:
        return vs[0]
    if k >= len(ts):
        return vs[-1]
    w = (t - ts[k - 1]) / (ts[k] - ts[k - 1])
    return vs[k - 1] + w * (vs[k] - vs[k - 1])


def first_above(times, values, level):
    return next((t for t, v in zip(times, values) if v > level), None)


def crossing(times, values, level, rising=True):
    """The time values first passes level (rising or falling), interpolated between samples."""
    for k in range(1, len(times)):
        a, b = values[k - 1], values[k]
        if (a < level <= b) if rising else (a > level >= b):
            return times[k - 1] + (level - a) / (b - a) * (times[k] - times[k - 1])
    return None


IMPULSE_FROM, IMPULSE_LEVEL, IMPULSE_SPANS = 0.3, 2.0, (0.05, 0.1)  # s, Pa s (1 kPa for 2 ms), s


def impact_impulse(times, values, means):
    """P1's first impact as an impulse: I(t), the integral of p from 0.3 s, linear between samples (means:
    each value is the mean over the step before it, as the server's pressure sensors read; else samples,
    trapezoids); the impact starts where I reaches 2 Pa s.  (start, [I over the 50 and 100 ms after it])."""
    cum = [0.0]
    for k in range(1, len(times)):
        a, b = max(times[k - 1], IMPULSE_FROM), max(times[k], IMPULSE_FROM)
        cum.append(cum[-1] + (b - a) * (values[k] if means else 0.5 * (values[k - 1] + values[k])))
    t0 = crossing(times, cum, IMPULSE_LEVEL)
    if t0 is None:
        return None, [None for _ in IMPULSE_SPANS]
    return t0, [at((times, cum), t0 + d) - IMPULSE_LEVEL if t0 + d <= times[-1] else None for d in IMPULSE_SPANS]


def front_report(a, times, front, data):
    """When the front passes each station: the run, this experiment, and Lobovsky's front scaled."""
    lob = read_csv(a.lobovsky) if os.path.exists(a.lobovsky) else None
    scale = (9.81 / DEPTH) ** 0.5  # t sqrt(g / H) per second
    first = {n: crossing(*data[n], 0.002) for n in ("H1", "H2") if n in data}
    if "P1" in data:
        first["box"] = crossing(*data["P1"], 1000.0)
    fmt = lambda t: "%.3f s" % t if t is not None else "  -    "
    print("front (leading particle's edge) | run | this experiment (H > 2 mm; P1 > 1 kPa) | Lobovsky 2014, scaled")
    for name, x in STATIONS:
        tl = crossing(lob[0], lob[1], (GATE_X - x) / DEPTH) / scale if lob else None
        print("  at %-3s (%.3f m from the gate) | %s | %s | %s" %
              (name, GATE_X - x, fmt(crossing(times, front, x, rising=False)), fmt(first.get(name)), fmt(tl)))


def run(c, a):
    c.pause()
    scene = c.load_scene("spheric2", particles=a.particles, solver=a.solver)
    stats = c.get_stats()
    names = [q["name"] for q in c.list_probes()["probes"]]
    times, series = [], {n: [] for n in names}

    def sample():
        p = c.list_probes()
        st = c.get_stats()
        times.append(st["sim_time"])
        for q in p["probes"]:
            series.setdefault(q["name"], []).append(q["value"])

    sample()
    while times[-1] < a.seconds - 1e-6:
        c.step(a.every)
        sample()
    return scene, stats["solver"], times, series


def from_csv(path):
    """A series bench_spheric2 wrote: a '# ... solver S, N particles, ...' line, a header, rows."""
    solver, n, names, times, series = "?", 0, None, [], {}
    with open(path) as f:
        for line in f:
            if line.startswith("#"):
                words = line.replace(",", " ").split()
                if "solver" in words:
                    solver = words[words.index("solver") + 1]
                if "particles" in words:
                    n = int(words[words.index("particles") - 1])
                continue
            cells = line.strip().split(",")
            if names is None:
                names = cells[1:]
                series = {c: [] for c in names}
                continue
            times.append(float(cells[0]))
            for c, v in zip(names, cells[1:]):
                if c in series:
                    series[c].append(float(v))
    if not times:
        sys.exit("%s: no rows" % path)
    return {"scene": "spheric2", "particles": n}, solver, times, series


def report(a, scene, solver, times, series):
    print("scene %s, %d particles, solver %s, %.2f s simulated, %d samples" %
          (scene["scene"], scene["particles"], solver, times[-1], len(times)))
    data = {}
    for n in HEIGHTS + PRESSURES:
        path = os.path.join(a.data, n + ".csv")
        if os.path.exists(path):
            data[n] = read_csv(path)
    for n in HEIGHTS:
        if n not in data or n not in series:
            continue
        err = [abs(v - at(data[n], t)) for t, v in zip(times, series[n])]
        print("%s: mean absolute error %.4f m over 0-%.1f s" % (n, sum(err) / len(err), times[-1]))
    if "H2" in series:
        arr = first_above(times, series["H2"], 0.02)
        print("H2 arrival (first above 0.02 m): %s (measured 0.368 s)" % ("%.3f s" % arr if arr else "never"))
    if "P1" in series:
        imp = first_above(times, series["P1"], 1000.0)
        peak = max(series["P1"])
        late = [v for t, v in zip(times, series["P1"]) if t >= 1.0]
        meas = [at(data["P1"], t) for t in times if t >= 1.0] if "P1" in data else []
        print("P1 first impact (first above 1 kPa): %s (measured 0.394 s); peak %.0f Pa (measured 11239 Pa)" %
              ("%.3f s" % imp if imp else "never", peak))
        if late and meas:
            print("P1 mean over 1 s to the end: %.0f Pa (measured %.0f Pa)" %
                  (sum(late) / len(late), sum(meas) / len(meas)))
        t0, j = impact_impulse(times, series["P1"], a.every == 1)
        m0, mj = impact_impulse(*data["P1"], False) if "P1" in data else (None, [None, None])
        fmt = lambda x, f: f % x if x is not None else "-"
        print("P1 impact impulse (the integral of p from 0.3 s reaching 2 Pa s): from %s s (measured %s s); "
              "over 50 / 100 ms %s / %s Pa s (measured %s / %s Pa s)%s" %
              (fmt(t0, "%.3f"), fmt(m0, "%.3f"), fmt(j[0], "%.0f"), fmt(j[1], "%.0f"), fmt(mj[0], "%.0f"),
               fmt(mj[1], "%.0f"), "" if a.every == 1 else " (every %d ticks: sampled, not summed)" % a.every))
    for n in PRESSURES[1:]:
        if n in series and n in data:
            err = [abs(v - at(data[n], t)) for t, v in zip(times, series[n])]
            print("%s: peak %.0f Pa (measured %.0f Pa), mean absolute error %.0f Pa" %
                  (n, max(series[n]), max(data[n][1]), sum(err) / len(err)))
    return data


def plot(path, times, series, data, title, dpi=90):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    fig, axes = plt.subplots(4, 3, figsize=(14, 12), constrained_layout=True)
    for ax, n in zip(axes.flat, HEIGHTS + PRESSURES):
        if n in data:
            ts = [t for t in data[n][0] if t <= times[-1]]
            ax.plot(ts, data[n][1][:len(ts)], "-", color="0.6", lw=0.8, label="measured")
        if n in series:
            ax.plot(times, series[n], "-", lw=1.2, label="fluid-server")
        ax.set_title(n)
        ax.set_xlabel("t (s)")
        ax.set_ylabel("m" if n.startswith("H") else "Pa")
    axes.flat[0].legend()
    fig.suptitle(title)
    fig.savefig(path, dpi=dpi)
    print("wrote %s" % path)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--server", default="http://127.0.0.1:8080")
    ap.add_argument("--token", default=None)
    ap.add_argument("--solver", default="mps", help="clavet, unified or mps")
    ap.add_argument("--particles", type=int, default=20000)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--every", type=int, default=1, help="ticks between samples")
    ap.add_argument("--data", default=DEFAULT_DATA, help="the measurements: H1.csv .. P8.csv")
    ap.add_argument("--plot", default=None, help="a PNG of every probe against the measurement")
    ap.add_argument("--dpi", type=int, default=90, help="the plot's resolution (dots per inch)")
    ap.add_argument("--from-csv", default=None, help="read a run's series from this file (bench_spheric2's CSV)")
    ap.add_argument("--front", action="store_true", help="the front's passing times against both experiments (--from-csv)")
    ap.add_argument("--lobovsky", default=DEFAULT_LOBOVSKY, help="Lobovsky et al. 2014's surge front (t sqrt(g/H), x/H)")
    a = ap.parse_args()
    if a.front and not a.from_csv:
        sys.exit("--front reads the front from a bench series: give --from-csv")
    if a.from_csv:
        scene, solver, times, series = from_csv(a.from_csv)
    else:
        c = fluidclient.Client(a.server, token=a.token)
        try:
            scene, solver, times, series = run(c, a)
        except fluidclient.FluidError as e:
            sys.exit("%s: %s" % (a.server, e))
    front = series.pop("front", None)
    data = report(a, scene, solver, times, series)
    if a.front:
        if front is None:
            sys.exit("%s: no front column" % a.from_csv)
        front_report(a, times, front, data)
    if a.plot:
        plot(a.plot, times, series, data, "SPHERIC Test 2, %s, %d particles" % (solver, scene["particles"]), a.dpi)


if __name__ == "__main__":
    main()
