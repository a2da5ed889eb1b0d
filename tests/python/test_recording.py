"""test_recording.py - fluidclient.Recording reads a recording folder the
server wrote, without a server: every frame its index.json counts, decoded
by the same C decoder, ticks in order, the last one within half a step of
the world it recorded (paused at that tick); the same frames as
`fluid-rec check` replays; a truncated segment gives the frames before the
damage and says where it is."""
import os
import re
import shutil
import subprocess

import numpy as np

import fluidclient
from conftest import ROOT, WAIT

FLUID_REC = os.environ.get("FLUID_REC", os.path.join(ROOT, "build", "fluid-rec"))


def record(server, name):
    c = fluidclient.Client(server.url)
    c.pause()
    c.load_scene("dam_break", particles=3000)
    with c.stream() as s:
        assert c.start_recording(name=name, max_mb=64)["name"] == name
        c.resume()
        s.drain()
        s.wait_tick(90)
        c.pause()
        c.step(7)
        p = c.particles()
        s.wait_tick(p.tick)
        s.next_frame()  # one more frame sent (a heartbeat) after the one at p.tick: that one is recorded too
    c.stop_recording()
    c.resume()
    return p


def test_recording_read_back_offline(server):
    p = record(server, "py-rec")
    rec = fluidclient.Recording(os.path.join(server.records, "py-rec"))
    frames = list(rec)
    assert rec.damage == []
    assert rec.hello["type"] == "hello" and rec.hello["capacity"] >= 3000
    assert len(frames) == sum(s["frames"] for s in rec.index["segments"]) > 30
    assert frames[0].key
    ticks = [f.tick for f in frames]
    assert ticks == sorted(ticks) and ticks[-1] == p.tick
    last = frames[-1]
    np.testing.assert_array_equal(last.ids, p.ids)
    err = np.abs(last.positions.astype(np.float64) - p.positions).max()
    assert err <= last.step / 2 * (1 + 1e-5) + 1e-6, err
    if os.path.exists(FLUID_REC):
        out = subprocess.run([FLUID_REC, "check", rec.path], capture_output=True, text=True, timeout=WAIT)
        assert out.returncode == 0, out.stdout + out.stderr
        print(out.stdout.strip())
        m = re.search(r"(\d+) frames", out.stdout)
        assert m and int(m.group(1)) == len(frames), out.stdout


def test_recording_with_a_truncated_segment_stops_at_the_damage(server, tmp_path):
    record(server, "py-rec-cut")
    src = os.path.join(server.records, "py-rec-cut")
    dst = tmp_path / "cut"
    shutil.copytree(src, dst)
    whole = list(fluidclient.Recording(dst))
    seg = os.path.join(dst, sorted(f for f in os.listdir(dst) if f.endswith(".fsrec"))[-1])
    size = os.path.getsize(seg)
    with open(seg, "r+b") as f:
        f.truncate(size - 20)
    rec = fluidclient.Recording(dst)
    cut = list(rec)
    assert 0 < len(cut) < len(whole)
    assert len(rec.damage) == 1 and rec.damage[0].file == seg and 8 <= rec.damage[0].offset < size - 20
    assert [f.tick for f in cut] == [f.tick for f in whole[:len(cut)]]
