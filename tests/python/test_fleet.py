"""test_fleet.py - the client against a fleet of two sim nodes on a
loopback nats-server with JetStream (docs/fleet.md, "REST through the
fleet"): a read that the node not holding the room cannot pass on to the
holder (a snapshot, an export, any read with a query string) is answered 421
``misdirected`` there, naming the holder's URL; the client asks the holder
for it, once, with the same path, query and token, and returns the holder's
answer (the same snapshot as at the holder, the whole world as NumPy arrays,
a CSV export, a page of particles); a wrong token is refused by the holder
(401), so the token went with the request.  And which 421 answers the client
follows (not from https to http, not without a misdirected code and URL)."""
import http.client
import json
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time

import pytest

import fluidclient
from conftest import WAIT, Server
from fluidclient.client import _misdirected_to

TOKEN = "py-fleet-admin"
ROOM = "py-far"

pytestmark = pytest.mark.skipif(shutil.which("nats-server") is None,
                                reason="nats-server is not installed (scripts/deps.sh test installs it)")


def _free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _until(check, what):
    """Waits for check() to be true (a deadline only turns a hang into a failure)."""
    deadline = time.monotonic() + WAIT
    while not check():
        if time.monotonic() > deadline:
            raise AssertionError("not within %d s: %s" % (WAIT, what))
        time.sleep(0.1)


class Broker:
    """nats-server -js on a loopback port, its store in a temporary folder."""

    def __init__(self):
        self.dir = tempfile.mkdtemp(prefix="fluid-pytest-js-")
        self.port = _free_port()
        self.proc = subprocess.Popen(["nats-server", "-js", "-sd", self.dir, "-a", "127.0.0.1", "-p", str(self.port)],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

        def listening():
            if self.proc.poll() is not None:
                raise RuntimeError("nats-server exited %s" % self.proc.returncode)
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                return True
            except OSError:
                return False
        try:
            _until(listening, "nats-server listens on %d" % self.port)
        except Exception:
            self.stop()
            raise
        self.url = "nats://127.0.0.1:%d" % self.port

    def stop(self):
        if self.proc.poll() is None:
            os.kill(self.proc.pid, signal.SIGKILL)
            self.proc.wait()
        shutil.rmtree(self.dir, ignore_errors=True)


@pytest.fixture(scope="module")
def fleet():
    """Two sim nodes of fleet 'fpy' with the administrator's token, and room
    ROOM placed on one of them: (holder, other)."""
    broker = Broker()
    nodes = {}
    try:
        for i in (1, 2):
            nodes[i] = Server(["--particles", "1500", "--threads", "1", "--nats", broker.url, "--fleet", "fpy",
                               "--node-id", str(i), "--token", TOKEN], records=False)
        admin = {i: fluidclient.Client(s.url, token=TOKEN) for i, s in nodes.items()}
        for c in admin.values():
            _until(lambda: sum(n["live"] for n in c.get_fleet()["nodes"]) == 2, "both nodes live in %s's view" % c.url)
        made = admin[1].create_room(ROOM, particles=1000)
        holder, other = nodes[made["node"]], nodes[3 - made["node"]]

        def held_in_other_view():
            rooms = admin[3 - made["node"]].get_fleet()["rooms"]
            return any(r["name"] == ROOM and r["node"] == made["node"] and r["claim"] >= 1 for r in rooms)
        _until(held_in_other_view, "the other node sees %s held" % ROOM)
        yield holder, other
    finally:
        for s in nodes.values():
            s.stop()
        broker.stop()


def _raw_get(server, path, token=TOKEN):
    """A GET without the client: (status, JSON body or None)."""
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=WAIT)
    try:
        conn.request("GET", path, headers={"Authorization": "Bearer " + token})
        r = conn.getresponse()
        body = r.read()
        ctype = r.getheader("Content-Type") or ""
        return r.status, json.loads(body) if ctype.startswith("application/json") else None
    finally:
        conn.close()


def test_the_other_node_answers_421_naming_the_holder(fleet):
    holder, other = fleet
    for path in ("/api/rooms/%s/snapshot" % ROOM, "/api/rooms/%s/particles?format=csv" % ROOM):
        status, j = _raw_get(other, path)
        assert status == 421, (path, j)
        assert j["code"] == "misdirected" and j["url"] == holder.url + "/", j


def test_a_read_the_other_node_cannot_pass_on_is_asked_of_the_holder(fleet):
    holder, other = fleet
    at_holder = fluidclient.Client(holder.url, token=TOKEN, room=ROOM)
    through_other = fluidclient.Client(other.url, token=TOKEN, room=ROOM)
    at_holder.pause()  # one world, so that both snapshots are of the same tick
    try:
        assert through_other.get_snapshot() == at_holder.get_snapshot()
        p = through_other.particles()
        n = at_holder.get_stats()["particles"]
        assert len(p) == n and p.positions.shape == (n, 3)
        assert p.tick == at_holder.get_stats()["tick"]
        csv = through_other.get_particles(format="csv").decode().splitlines()
        assert len(csv) == n + 1, csv[:2]
        page = through_other.get_particles(offset=0, limit=7)
        assert (page["offset"], page["count"], len(page["ids"]), page["total"]) == (0, 7, 7, n), page
        # reads the bus carries are answered by the other node itself, as before
        assert through_other.get_stats()["tick"] == at_holder.get_stats()["tick"]
    finally:
        at_holder.resume()


def test_the_token_goes_with_the_request_to_the_holder(fleet):
    _, other = fleet
    wrong = fluidclient.Client(other.url, token="not-the-token", room=ROOM)
    with pytest.raises(fluidclient.FluidError) as e:
        wrong.get_particles(offset=0, limit=1)  # the room's public role (player) may read it: the token was checked
    assert (e.value.status, e.value.code) == (401, "unauthorized"), e.value


def _answer(url, code="misdirected", status=421, ctype="application/json"):
    return status, ctype, json.dumps({"error": "misdirected: ...", "code": code, "node": 2, "url": url}).encode()


def test_which_421_answers_are_followed():
    u = _misdirected_to(*_answer("http://10.0.0.2:8080/"), "http")
    assert (u.scheme, u.hostname, u.port) == ("http", "10.0.0.2", 8080)
    assert _misdirected_to(*_answer("https://node2.example:8443/"), "https").hostname == "node2.example"
    assert _misdirected_to(*_answer("https://node2.example/"), "http").scheme == "https"
    assert _misdirected_to(*_answer("http://10.0.0.2:8080/"), "https") is None  # the token in the clear
    assert _misdirected_to(*_answer("ftp://10.0.0.2/"), "http") is None
    assert _misdirected_to(*_answer("http:///nohost"), "http") is None
    assert _misdirected_to(*_answer("http://10.0.0.2:port/"), "http") is None
    assert _misdirected_to(*_answer("http://10.0.0.2:8080/", code="busy"), "http") is None
    assert _misdirected_to(*_answer("http://10.0.0.2:8080/", status=503), "http") is None
    assert _misdirected_to(*_answer("http://10.0.0.2:8080/", ctype="text/plain"), "http") is None
    assert _misdirected_to(421, "application/json", b"not json", "http") is None
    assert _misdirected_to(421, "application/json", b"[1]", "http") is None
