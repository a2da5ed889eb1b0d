"""test_install.py - a fresh environment: `pip install` of clients/python
into a clean virtual environment (Debian's python3 with its NumPy, offline,
Debian's setuptools), then the first script of clients/python/README.md run
against a live server with nothing of the source tree on its path: the
package decodes the stream with the decoder it compiled itself."""
import os
import re
import subprocess
import sys

from conftest import ROOT, WAIT


def test_pip_install_then_the_readme_first_script(server, tmp_path):
    readme = open(os.path.join(ROOT, "clients", "python", "README.md")).read()
    m = re.search(r"<!-- first-script -->\s*```python\n(.*?)```\s*<!-- /first-script -->", readme, re.S)
    assert m, "the README's first script is marked <!-- first-script -->"
    script = tmp_path / "first.py"
    script.write_text(m.group(1))
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--system-site-packages", str(venv)], check=True, timeout=WAIT)
    py = str(venv / "bin" / "python")
    pip = subprocess.run([py, "-m", "pip", "install", "--no-build-isolation", "--no-index", "--quiet",
                          os.path.join(ROOT, "clients", "python")], capture_output=True, text=True, timeout=10 * WAIT)
    assert pip.returncode == 0, pip.stdout + pip.stderr
    env = {k: v for k, v in os.environ.items() if k not in ("FLUID_CODEC_LIB", "PYTHONPATH")}
    env["FLUID_URL"] = server.url
    out = subprocess.run([py, str(script)], capture_output=True, text=True, timeout=WAIT, env=env, cwd=str(tmp_path))
    print(out.stdout[-800:])
    assert out.returncode == 0, out.stdout + out.stderr
    lines = out.stdout.splitlines()
    assert re.match(r"tick \d+ particles \d+ mean height", lines[0]), lines[0]
    frames = [l for l in lines if l.startswith("tick ") and "front at x" in l]
    assert len(frames) == 30
    where = subprocess.run([py, "-c", "import fluidclient; print(fluidclient.library_path())"], capture_output=True,
                           text=True, timeout=WAIT, env=env, cwd=str(tmp_path))
    assert str(venv) in where.stdout, where.stdout + where.stderr
