"""conftest.py - the Python client's tests (tests/python/): the package from
the source tree (clients/python), the frame decoder library make built
(FLUID_CODEC_LIB, else build/libfluidcodec.so), and live servers started
on loopback by the tests and stopped by their PID."""
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
os.environ.setdefault("FLUID_CODEC_LIB", os.path.join(ROOT, "build", "libfluidcodec.so"))

SERVER = os.path.abspath(os.environ.get("FLUID_SERVER", os.path.join(ROOT, "build", "fluid-server")))
WAIT = 60.0  # a deadline that only turns a hang into a failure


class Server:
    """A fluid-server child on 127.0.0.1 with a port of its own; a
    recordings folder and a web root in a temporary folder."""

    def __init__(self, args=(), env=None, records=True):
        self.dir = tempfile.mkdtemp(prefix="fluid-pytest-")
        self.web = os.path.join(self.dir, "web")
        self.records = os.path.join(self.dir, "rec")
        os.makedirs(self.web)
        with open(os.path.join(self.web, "index.html"), "w") as f:
            f.write("<!doctype html><title>fluid</title>\n")
        self.log = open(os.path.join(self.dir, "server.log"), "w+")
        e = dict(os.environ, FLUID_STEP_BUDGET="0", **(env or {}))
        files = ["--record-dir", self.records] if records else []  # (a server keeping files has no other rooms)
        self.proc = subprocess.Popen([SERVER, "--port", "0", "--bind", "127.0.0.1", "--web-root", self.web]
                                     + files + list(args),
                                     stdout=self.log, stderr=subprocess.STDOUT, env=e)
        deadline = time.monotonic() + WAIT
        while True:
            self.log.seek(0)
            m = re.search(r"listening on (https?)://[\d.]+:(\d+)/", self.log.read())
            if m:
                break
            if self.proc.poll() is not None or time.monotonic() > deadline:
                self.stop()
                self.log.seek(0)
                raise RuntimeError("fluid-server did not start: %s" % self.log.read()[-2000:])
            time.sleep(0.05)
        self.port = int(m.group(2))
        self.url = "http://127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(WAIT)
            except subprocess.TimeoutExpired:
                os.kill(self.proc.pid, signal.SIGKILL)
                self.proc.wait()
        self.log.close()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def server():
    """A small world (3000 particles of the default scene) for the REST tests."""
    s = Server(["--particles", "3000"])
    yield s
    s.stop()


@pytest.fixture(scope="module")
def dam20k():
    """The 20k dam break (its own size), for the stream's tests."""
    s = Server(["--scene", "dam_break"])
    yield s
    s.stop()


@pytest.fixture(scope="module")
def rooms_server():
    """A server that may hold rooms (it keeps no files)."""
    s = Server(["--particles", "2000"], records=False)
    yield s
    s.stop()
