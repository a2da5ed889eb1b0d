"""test_notebook.py - examples/dam_break_front.ipynb executed headlessly by
`jupyter nbconvert --to notebook --execute` (Debian's jupyter-nbconvert and
python3-ipykernel) against a live 20k dam break: every cell runs, the front
it prints follows Martin & Moyce within the sim tests' bar, and the plot is a
PNG."""
import base64
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

from conftest import ROOT, WAIT, Server

NOTEBOOK = os.path.join(ROOT, "examples", "dam_break_front.ipynb")
# Martin & Moyce's front up to x/a = 3: within 10% at each point, the bar of
# tests/sim/test_mps.c (the notebook reads 0.5-4.8% with the default solver)
FRONT_BAR = 0.10


def jupyter():
    """The jupyter beside the interpreter running the tests (Debian's, whose
    kernel is /usr/bin/python3 with NumPy), else the one on PATH."""
    here = os.path.join(os.path.dirname(sys.executable), "jupyter")
    return here if os.access(here, os.X_OK) else (shutil.which("jupyter") or "jupyter")


@pytest.fixture(scope="module")
def executed():
    s = Server(["--scene", "dam_break"])
    out = tempfile.mkdtemp(prefix="fluid-nb-")
    try:
        env = dict(os.environ, FLUID_URL=s.url, PYDEVD_DISABLE_FILE_VALIDATION="1")
        env.pop("FLUID_TOKEN", None)
        r = subprocess.run([jupyter(), "nbconvert", "--to", "notebook", "--execute", NOTEBOOK, "--output-dir", out,
                            "--ExecutePreprocessor.timeout=%d" % (10 * WAIT),
                            "--ExecutePreprocessor.startup_timeout=%d" % (10 * WAIT)],
                           env=env, capture_output=True, text=True, timeout=20 * WAIT)
        assert r.returncode == 0, "nbconvert failed (a cell raised):\n%s" % r.stderr[-4000:]
        import nbformat
        yield nbformat.read(os.path.join(out, os.path.basename(NOTEBOOK)), as_version=4)
    finally:
        s.stop()
        shutil.rmtree(out, ignore_errors=True)


def outputs(nb, kind):
    return [o for c in nb.cells if c.cell_type == "code" for o in c.get("outputs", []) if o.output_type == kind]


def test_every_cell_ran_without_error(executed):
    code = [c for c in executed.cells if c.cell_type == "code"]
    assert len(code) >= 4
    assert all(c.get("execution_count") for c in code), "a code cell did not run"
    assert outputs(executed, "error") == []


def test_followed_the_stream_for_three_seconds(executed):
    text = "".join(o.text for o in outputs(executed, "stream") if o.name == "stdout")
    print(text)
    m = re.search(r"dam_break: (\d+) particles, column width a = ([\d.]+) m", text)
    assert m and int(m.group(1)) > 10000 and float(m.group(2)) > 0, text
    m = re.search(r"(\d+) frames, t = ([\d.]+) s to ([\d.]+) s, last front x/a = ([\d.]+)", text)
    assert m, text
    frames, last_t, last_xa = int(m.group(1)), float(m.group(3)), float(m.group(4))
    assert frames >= 10, "frames decoded from the stream: %d" % frames
    assert 3.0 <= last_t < 3.5, "followed to t = %s s of simulated time" % last_t
    assert last_xa > 3.0, "the surge crossed the tank: x/a = %s" % last_xa


def test_front_follows_martin_and_moyce(executed):
    text = "".join(o.text for o in outputs(executed, "stream") if o.name == "stdout")
    rows = re.findall(r"T = ([\d.]+): front x/a = ([\d.]+), Martin & Moyce ([\d.]+) \(([+-][\d.]+)%\)", text)
    assert len(rows) == 4, text  # their points up to x/a = 3
    for T, z, mz, _ in rows:
        dev = abs(float(z) - float(mz)) / float(mz)
        assert dev < FRONT_BAR, "at T = %s the front is at x/a = %s, Martin & Moyce %s (%.1f%%)" % (T, z, mz, 100 * dev)
    m = re.search(r"largest deviation from Martin & Moyce up to x/a = 3: ([\d.]+)%", text)
    assert m and float(m.group(1)) < 100 * FRONT_BAR, text


def test_plot_is_a_png(executed):
    pngs = [base64.b64decode(o.data["image/png"]) for o in outputs(executed, "display_data")
            if "image/png" in o.get("data", {})]
    assert len(pngs) == 1
    assert pngs[0][:8] == b"\x89PNG\r\n\x1a\n" and len(pngs[0]) > 10000
