#!/usr/bin/env python3
"""bench_python.py - the Python client's speed (clients/python, fluidclient)
at 100k particles, against a live server on 127.0.0.1:

(a) decoding the stream: the live 100k dam break's frame messages are
    captured as they arrive (raw WebSocket messages, first BENCH_PY_FRAMES),
    the world paused, then decoded in order on one core (the process pinned
    to one CPU), alternately
      - through fluidclient: msgpack unpack of the message, the C decoder
        through ctypes, the frame copied out into NumPy arrays (a Frame:
        ids, quantized positions, materials, temperature bytes; positions
        in metres are made when first read), what Stream does with each
        message it reads;
      - the C decoder alone: fc_ffi_decode on the same payloads from ctypes,
        no copy out (the payloads extracted beforehand);
      - (for the breakdown) the decoder and its copy out, fc_ffi_copy of
        what a Frame keeps into arrays allocated once; and fluidclient
        with every frame's positions read (metres made);
    CPU time of this thread a frame; bars: fluidclient <= 33.3 ms a frame
    (keeps up with 30 frames/s) and <= 1.10x the decoder alone.
(b) the whole world as arrays: client.particles() (the binary PLY export)
    against paging the JSON view (get_particles(offset, 10000) until total,
    then the same five NumPy arrays), alternately on the paused world; wall
    time a call; bar: the paging takes >= 5x as long.

    /usr/bin/python3 tests/bench/bench_python.py      (make bench-python)
Knobs: BENCH_PY_PARTICLES (100000), BENCH_PY_FRAMES (90), BENCH_PY_ROUNDS
(7, decoding), BENCH_PY_WORLD_ROUNDS (4, exports are bounded per party:
at most 8 in a row), FLUID_SERVER, FLUID_CODEC_LIB.  Prints the machine's
load average before and after: the machine may be shared."""
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time

import numpy as np

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "clients", "python"))
os.environ.setdefault("FLUID_CODEC_LIB", os.path.join(ROOT, "build", "libfluidcodec.so"))

import fluidclient  # noqa: E402
from fluidclient import _codec, _msgpack  # noqa: E402
from fluidclient._ws import WebSocket  # noqa: E402
from fluidclient.frame import FrameDecoder  # noqa: E402
from fluidclient.stream import SUBPROTOCOL  # noqa: E402

SERVER = os.path.abspath(os.environ.get("FLUID_SERVER", os.path.join(ROOT, "build", "fluid-server")))
PARTICLES = int(os.environ.get("BENCH_PY_PARTICLES", "100000"))
FRAMES = int(os.environ.get("BENCH_PY_FRAMES", "90"))
ROUNDS = int(os.environ.get("BENCH_PY_ROUNDS", "7"))
WORLD_ROUNDS = int(os.environ.get("BENCH_PY_WORLD_ROUNDS", "4"))


def load():
    la = os.getloadavg()
    return "load average %.2f %.2f %.2f on %d CPUs" % (la[0], la[1], la[2], os.cpu_count())


def start_server(tmp):
    web = os.path.join(tmp, "web")
    os.makedirs(web)
    with open(os.path.join(web, "index.html"), "w") as f:
        f.write("<!doctype html>\n")
    log = open(os.path.join(tmp, "server.log"), "w+")
    proc = subprocess.Popen([SERVER, "--port", "0", "--bind", "127.0.0.1", "--web-root", web, "--scene", "dam_break",
                             "--particles", str(PARTICLES)], stdout=log, stderr=subprocess.STDOUT,
                            env=dict(os.environ, FLUID_STEP_BUDGET="0"))
    deadline = time.monotonic() + 60
    while True:
        log.seek(0)
        m = re.search(r"listening on http://[\d.]+:(\d+)/", log.read())
        if m:
            return proc, log, "http://127.0.0.1:%s" % m.group(1)
        if proc.poll() is not None or time.monotonic() > deadline:
            log.seek(0)
            raise SystemExit("fluid-server did not start: %s" % log.read()[-2000:])
        time.sleep(0.05)


def capture(c):
    """The first FRAMES frame messages of the live stream, as received, and
    the hello's capacity."""
    ws = WebSocket(c.ws_url(), subprotocol=SUBPROTOCOL, timeout=60)
    hello, raw = None, []
    try:
        while len(raw) < FRAMES:
            op, data = ws.recv()
            if op != 2:
                continue
            msg = _msgpack.unpackb(data)
            if msg.get("type") == "hello":
                if hello is not None:
                    raise SystemExit("a second hello while capturing")
                hello = msg
            elif msg.get("type") == "frame" and hello is not None:
                raw.append(bytes(data))
    finally:
        ws.close()
    return int(hello["capacity"]), raw


def decode_client(capacity, raw):
    """fluidclient's path: a FrameDecoder, unpack + decode + copy a message."""
    fd = FrameDecoder(capacity)
    t0 = time.thread_time_ns()
    n = 0
    for data in raw:
        n += fd.decode(_msgpack.unpackb(data)).n
    t = time.thread_time_ns() - t0
    return t, n


def decode_client_positions(capacity, raw):
    """fluidclient's path with each frame's positions read (made in metres)."""
    fd = FrameDecoder(capacity)
    t0 = time.thread_time_ns()
    for data in raw:
        fd.decode(_msgpack.unpackb(data)).positions
    return time.thread_time_ns() - t0


def decode_alone(lib, capacity, payloads):
    """The C decoder alone: fc_ffi_decode on each payload, nothing copied out."""
    h = lib.fc_ffi_create(capacity)
    try:
        t0 = time.thread_time_ns()
        n = 0
        for ptr, size in payloads:
            k = lib.fc_ffi_decode(h, ptr, size)
            if k < 0:
                raise SystemExit("the decoder refused a payload: %s" % lib.fc_ffi_error(h).decode())
            n += k
        t = time.thread_time_ns() - t0
    finally:
        lib.fc_ffi_destroy(h)
    return t, n


def decode_copy(lib, capacity, payloads):
    """The C decoder and its copy out (fc_ffi_copy of ids, quantized
    positions, materials and temperature bytes, what a Frame keeps) into
    arrays allocated once: what fluidclient adds beyond the two C calls is
    the rest."""
    h = lib.fc_ffi_create(capacity)
    ids = np.empty(capacity, dtype=np.uint32)
    q = np.empty((capacity, 3), dtype=np.uint16)
    mat = np.empty(capacity, dtype=np.uint8)
    temp = np.empty(capacity, dtype=np.uint8)
    try:
        t0 = time.thread_time_ns()
        for ptr, size in payloads:
            if lib.fc_ffi_decode(h, ptr, size) < 0:
                raise SystemExit("the decoder refused a payload: %s" % lib.fc_ffi_error(h).decode())
            lib.fc_ffi_copy(h, ids.ctypes.data, None, q.ctypes.data, mat.ctypes.data, temp.ctypes.data)
        t = time.thread_time_ns() - t0
    finally:
        lib.fc_ffi_destroy(h)
    return t


def bench_decode(c):
    capacity, raw = capture(c)
    c.pause()
    keys = sum(1 for d in raw if _msgpack.unpackb(d).get("key"))
    bufs = [np.frombuffer(_msgpack.unpackb(d)["data"], dtype=np.uint8) for d in raw]
    payloads = [(b.ctypes.data, len(b)) for b in bufs]
    lib = _codec._load()
    msg_bytes = sum(len(d) for d in raw)
    cpu = sorted(os.sched_getaffinity(0))[-1]
    os.sched_setaffinity(0, {cpu})
    print("(a) %d frame messages of the live %d-particle dam break (%d keyframes), %.1f KB a message on average; "
          "decoded on CPU %d" % (len(raw), PARTICLES, keys, msg_bytes / len(raw) / 1e3, cpu))
    fc, al, cp, fp = [], [], [], []
    for _ in range(ROUNDS):
        t, n1 = decode_client(capacity, raw)
        fc.append(t)
        t, n2 = decode_alone(lib, capacity, payloads)
        al.append(t)
        cp.append(decode_copy(lib, capacity, payloads))
        fp.append(decode_client_positions(capacity, raw))
        if n1 != n2:
            raise SystemExit("the two paths decoded %d and %d particles" % (n1, n2))
    per = [t / 1e6 / len(raw) for t in fc]
    per_c = [t / 1e6 / len(raw) for t in al]
    ratio = sum(fc) / sum(al)
    print("    %d particles a frame on average" % (n1 // len(raw)))
    print("    fluidclient (unpack + decode + copy into arrays): %.2f ms a frame (median of %d rounds; %.2f-%.2f), "
          "%.0f frames/s on one core  [bar: <= 33.3 ms, 30 frames/s]" % (statistics.median(per), ROUNDS, min(per),
                                                                        max(per), 1000 / statistics.median(per)))
    print("    the C decoder alone (fc_ffi_decode from ctypes, no copy): %.2f ms a frame (%.2f-%.2f)"
          % (statistics.median(per_c), min(per_c), max(per_c)))
    per_cp = [t / 1e6 / len(raw) for t in cp]
    print("    the C decoder and its copy out (fc_ffi_decode + fc_ffi_copy from ctypes, arrays allocated once): "
          "%.2f ms a frame (%.2f-%.2f)" % (statistics.median(per_cp), min(per_cp), max(per_cp)))
    print("    fluidclient / (decoder + copy out): %.3f (sums of the rounds)" % (sum(fc) / sum(cp)))
    per_fp = [t / 1e6 / len(raw) for t in fp]
    print("    fluidclient with every frame's positions read (metres made): %.2f ms a frame (%.2f-%.2f), %.3f of the "
          "decoder alone (not a bar)" % (statistics.median(per_fp), min(per_fp), max(per_fp), sum(fp) / sum(al)))
    rr = sorted(a / b for a, b in zip(fc, al))
    print("    fluidclient / decoder alone: %.3f (sums of the rounds; a round %.3f-%.3f)  [bar: <= 1.10]"
          % (ratio, rr[0], rr[-1]))
    os.sched_setaffinity(0, set(range(os.cpu_count())))
    return statistics.median(per) <= 1000 / 30 and ratio <= 1.10


def paged(c, limit=10000):
    """The whole world through the JSON view, page by page, into the arrays
    particles() gives."""
    ids, pos, vel, mat, temp = [], [], [], [], []
    off, total = 0, None
    while total is None or off < total:
        p = c.get_particles(offset=off, limit=limit)
        total = p["total"]
        if p["count"] == 0:
            break
        ids += p["ids"]
        pos += p["positions"]
        vel += p["velocities"]
        mat += p["materials"]
        temp += p["temperatures"]
        off += p["count"]
    return (np.array(ids, dtype=np.uint32), np.array(pos, dtype=np.float32), np.array(vel, dtype=np.float32),
            np.array(mat, dtype=np.uint8), np.array(temp, dtype=np.float32))


def bench_world(c):
    c.pause()
    ex, pg = [], []
    for _ in range(WORLD_ROUNDS):
        t0 = time.perf_counter()
        p = c.particles()
        ex.append(time.perf_counter() - t0)
        t0 = time.perf_counter()
        ids, pos, _, _, _ = paged(c)
        pg.append(time.perf_counter() - t0)
        if len(ids) != len(p) or not np.array_equal(ids, p.ids) or np.abs(pos - p.positions).max() > 1e-5:
            raise SystemExit("the export and the pages disagree (%d and %d particles)" % (len(p), len(ids)))
    ratio = sum(pg) / sum(ex)
    print("(b) the whole world as arrays, %d particles (tick %d), %d rounds, wall time:" % (len(p), p.tick, WORLD_ROUNDS))
    print("    client.particles() (PLY export): %.0f ms (median; %.0f-%.0f)" % (1e3 * statistics.median(ex),
                                                                           1e3 * min(ex), 1e3 * max(ex)))
    print("    get_particles pages of 10,000 (JSON): %.0f ms (median; %.0f-%.0f)" % (1e3 * statistics.median(pg),
                                                                                1e3 * min(pg), 1e3 * max(pg)))
    print("    paging / particles(): %.2f (sums of the rounds)  [bar: >= 5]" % ratio)
    return ratio >= 5


def main():
    print("bench-python: %s, %s" % (load(), _codec.library_path()))
    tmp = tempfile.mkdtemp(prefix="fluid-bench-py-")
    proc, log, url = start_server(tmp)
    try:
        c = fluidclient.Client(url)
        ok_a = bench_decode(c)
        ok_b = bench_world(c)
    finally:
        os.kill(proc.pid, signal.SIGTERM)
        try:
            proc.wait(60)
        except subprocess.TimeoutExpired:
            os.kill(proc.pid, signal.SIGKILL)
            proc.wait()
        log.close()
        shutil.rmtree(tmp, ignore_errors=True)
    print("bench-python: %s; bars: decoding %s, particles() %s" % (load(), "met" if ok_a else "NOT met",
                                                                   "met" if ok_b else "NOT met"))


if __name__ == "__main__":
    main()
