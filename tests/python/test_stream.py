"""test_stream.py - the WebSocket stream through the client, its payloads
decoded by the project's C decoder (build/libfluidcodec.so): 300 frames and
more of the 20k dam break (in 2 bands, and in one payload on a small world),
and at every pause every decoded position within the frame's quantization
step (half a step per axis, PROTOCOL.md "Quantization and error bound") of
the server's own at the same tick (GET /api/particles as PLY): the first
keyframe, deltas while running, an emitter adding particles, a stride change
and a keyframe asked for, a scene load (a new epoch).  Commands sent on the
same connection are answered by request id; frames read meanwhile are kept.
Frames carry the probes' values, those of GET /api/probes at their tick."""
import json
import os
import weakref

import numpy as np
import pytest

import fluidclient
from conftest import ROOT, Server

FRAMES = 300


def compare(c, s, label):
    """The frame at the world's tick (paused) against the server's particles."""
    p = c.particles()
    f = s.wait_tick(p.tick)
    # a stream opened just after a scene load may first get the last frame of
    # the world before it (a later tick of the old epoch): the paused world's
    # own frame follows
    for _ in range(10):
        if f.tick == p.tick:
            break
        f = s.next_frame()
    assert f.tick == p.tick, "%s: frame at tick %d, particles at %d" % (label, f.tick, p.tick)
    np.testing.assert_array_equal(f.ids, p.ids, err_msg=label)
    err = np.abs(f.positions.astype(np.float64) - p.positions.astype(np.float64)).max(initial=0.0)
    print("%s: tick %d, %d particles, max |p - p'| %.6f m, step %.6f m" % (label, f.tick, f.n, err, f.step))
    assert err <= f.step / 2 * (1 + 1e-5) + 1e-6, "%s: %.6f > step/2 %.6f" % (label, err, f.step / 2)
    np.testing.assert_array_equal(f.materials, p.materials, err_msg=label)
    t = np.clip(p.temperatures, -40, 215)
    assert np.abs(f.temperatures - t).max(initial=0.0) <= 0.5 + 1e-3, label
    return f


def until(s, pred, frames=60):
    """Whether one of the next `frames` frames satisfies pred (the stream
    shows a change within a few frames of its reply)."""
    return any(pred(s.next_frame()) for _ in range(frames))


def run_frames(c, s, count):
    """Resumes, decodes `count` frames, pauses; returns them."""
    s.drain()
    s.command("resume")
    got = [s.next_frame() for _ in range(count)]
    s.command("pause")
    ticks = [f.tick for f in got]
    assert ticks == sorted(ticks) and ticks[-1] > ticks[0]
    return got


def check_stream(url, frames_per_phase):
    c = fluidclient.Client(url)
    c.pause()
    loaded = c.load_scene("dam_break")
    decoded = 0
    with c.stream() as s:
        assert s.hello["version"] == 2 and s.hello["capacity"] >= loaded["particles"]
        f = compare(c, s, "keyframe after hello")
        decoded += 1
        body = c.create_body("sphere", [0.05, 0, 0], [0.5, 0.6, 0.3])["id"]
        decoded += len(run_frames(c, s, frames_per_phase))
        f = compare(c, s, "deltas while running")
        assert [b["id"] for b in f.bodies] == [b["id"] for b in c.list_bodies()["bodies"]] == [body]
        r = s.command("emitter", slot=0, pos=[0.6, 0.9, 0.3], direction=[1, 0, 0], speed=1.0, radius=0.06, rate=600.0)
        assert r["slot"] == 0
        got = run_frames(c, s, frames_per_phase)
        decoded += len(got)
        assert got[-1].n > loaded["particles"], "the emitter added particles"
        s.command("emitter", slot=0, enabled=False)
        compare(c, s, "after an emitter")
        s.pace(2)
        s.request_keyframe()
        got = run_frames(c, s, frames_per_phase)
        decoded += len(got)
        assert any(g.key for g in got), "a keyframe came after the stride change"
        compare(c, s, "stride 2 after a keyframe")
        s.pace(1)
        r = s.command("load_scene", name="dam_break")
        f = compare(c, s, "a new scene")
        assert f.key and f.n == r["particles"]
        decoded += 1
        assert s.refused == 0, s.last_refusal
    c.resume()
    return decoded


def test_stream_300_frames_of_the_20k_dam_break_in_bands_within_half_a_step():
    srv = Server(["--scene", "dam_break", "--frame-bands", "2", "--exports-per-min", "600"])
    try:
        n = check_stream(srv.url, FRAMES // 3)
        assert n >= FRAMES
    finally:
        srv.stop()


def test_stream_one_payload_per_frame_within_half_a_step(server):
    assert check_stream(server.url, 30) >= 90


def test_commands_on_the_stream_are_answered_by_request_id(server):
    c = fluidclient.Client(server.url)
    c.pause()
    c.load_scene("dam_break", particles=2000)
    body = c.create_body("box", [0.05, 0.05, 0.05], [0.5, 0.5, 0.3])["id"]
    with c.stream() as s, c.stream() as other:
        r = s.push([0.3, 0.1, 0.3], 0.3, 1.0, [0, 1, 0])
        assert r["cmd"] == "push" and r["touched"] > 0
        assert s.grab(body, [0.5, 0.5, 0.3], [0.5, 0.7, 0.3])["cmd"] == "body_grab"
        assert until(s, lambda f: [b["grabbed_by"] for b in f.bodies] == [s.hello["client_id"]])
        s.drag(body, [0.5, 0.8, 0.3])
        with pytest.raises(fluidclient.FluidError) as e:
            other.grab(body, [0.5, 0.5, 0.3], [0.5, 0.7, 0.3])
        assert e.value.code == "conflict"
        assert s.release(body)["cmd"] == "body_release"
        stiff = s.hello["materials"][0]["params"]["stiffness"]
        r = s.set_param("water", "stiffness", stiff)
        assert r["cmd"] == "set_param"
        with pytest.raises(fluidclient.FluidError) as e:
            s.set_param("water", "stiffness", -1)
        assert (e.value.status, e.value.code) == (400, "bad_request")
        assert until(s, lambda f: [b["grabbed_by"] for b in f.bodies] == [0])
    c.resume()


def raw_frames(url, count):
    """The hello's capacity and the next `count` frame messages as received."""
    from fluidclient._ws import WebSocket
    ws = WebSocket(fluidclient.Client(url).ws_url(), subprotocol=fluidclient.stream.SUBPROTOCOL, timeout=60)
    cap, raw = None, []
    try:
        while len(raw) < count:
            op, data = ws.recv()
            msg = fluidclient._msgpack.unpackb(data) if op == 2 else {}
            if msg.get("type") == "hello":
                cap = msg["capacity"]
            elif msg.get("type") == "frame" and cap is not None:
                raw.append(bytes(data))
    finally:
        ws.close()
    return cap, raw


def test_frames_kept_or_written_to_stay_their_own_while_blocks_are_reused(server):
    """A frame's arrays are views of blocks the decoder reuses once nothing
    references them: frames read one at a time take two blocks in turn (the
    frame in hand and the next), while frames (and arrays) kept hold their
    values however many frames follow, writing into a kept frame changes no
    later one, and positions made when first read (late) are the frame's."""
    c = fluidclient.Client(server.url)
    c.resume()
    cap, raw = raw_frames(server.url, 24)
    ref_dec = fluidclient.frame.FrameDecoder(cap)
    ref = []
    for data in raw:
        f = ref_dec.decode(fluidclient._msgpack.unpackb(data))
        ref.append((f.ids.copy(), f.positions.copy(), f.materials.copy(), f.temperature_bytes.copy()))
    dec = fluidclient.frame.FrameDecoder(cap)
    blocks = []  # the memory of each frame dropped after reading it (weakly: a reference keeps a block busy)
    for k, data in enumerate(raw):
        f = dec.decode(fluidclient._msgpack.unpackb(data))
        np.testing.assert_array_equal(f.ids, ref[k][0])
        np.testing.assert_array_equal(f.positions, ref[k][1])
        np.testing.assert_array_equal(f.temperatures, np.float32(ref[k][3]) - 40)
        blocks.append(weakref.ref(f.ids.base))
    live = [b() for b in blocks]
    assert all(b is not None for b in live), "a dropped frame's block was freed, not kept for reuse"
    assert len({id(b) for b in live}) <= 2, "%d blocks for %d frames read one at a time" % (len(set(map(id, live))),
                                                                                            len(raw))
    del live, f
    dec = fluidclient.frame.FrameDecoder(cap)
    kept, ids_only = {}, {}
    for k, data in enumerate(raw):
        f = dec.decode(fluidclient._msgpack.unpackb(data))
        if k % 5 == 0:
            kept[k] = f
        elif k % 5 == 1:
            ids_only[k] = f.ids
        if k == 6:
            kept[5].ids[:] = 0
            kept[5].temperature_bytes[:] = 255
            kept[5].positions[:] = -1.0
    assert sum(1 for f in kept.values() if f.n) >= 4
    for k, f in kept.items():
        if k == 5:
            assert not f.ids.any() and (f.temperature_bytes == 255).all() and (f.positions == -1.0).all()
            continue
        np.testing.assert_array_equal(f.ids, ref[k][0])
        np.testing.assert_array_equal(f.positions, ref[k][1])
        np.testing.assert_array_equal(f.materials, ref[k][2])
        np.testing.assert_array_equal(f.temperature_bytes, ref[k][3])
    for k, ids in ids_only.items():
        np.testing.assert_array_equal(ids, ref[k][0])


def test_golden_frame_message_decodes_to_its_meaning():
    vec = {v["file"]: v for v in json.load(open(os.path.join(ROOT, "protocol", "golden", "vectors.json")))["vectors"]
           if v.get("file")}
    for name in ("s2c_frame.msgpack", "s2c_frame_empty.msgpack"):
        msg = fluidclient._msgpack.unpackb(open(os.path.join(ROOT, "protocol", "golden", name), "rb").read())
        want = vec[name]["expect"]
        f = fluidclient.frame.FrameDecoder(64).decode(msg)
        assert (f.tick, f.key, f.n) == (want["tick"], want["key"], want["n"])
        d = want.get("decoded")
        if d:
            np.testing.assert_array_equal(f.ids, d["ids"])
            q = np.array(d["q"], dtype=np.float64).reshape(-1, 3)
            g = d["grid"]
            np.testing.assert_allclose(f.positions, np.float32(np.array(g["origin"]) + q * g["step"]), rtol=1e-6)
            np.testing.assert_array_equal(f.materials, d["mat"])
            np.testing.assert_array_equal(f.temperature_bytes, d["temp"])
            assert [b["id"] for b in f.bodies] == [b["id"] for b in want["bodies"]]


def test_golden_tier_payloads_decode_to_their_meaning():
    """A tier of detail's keyframe and delta (1 in 2 particles, twice the
    step): ordinary payloads, decoded by the same decoder to the golden
    state, their lod as the message carries it."""
    meaning = json.load(open(os.path.join(ROOT, "protocol", "golden", "frame_v2.json")))
    dec = fluidclient.frame.FrameDecoder(64)
    for name in ("frame_v2_tier_key", "frame_v2_tier_delta"):
        data = open(os.path.join(ROOT, "protocol", "golden", name + ".bin"), "rb").read()
        want = meaning[name]
        lod = {"tier": 1, "keep": 2, "step": want["step"]}
        f = dec.decode({"type": "frame", "tick": 1, "key": name.endswith("key"), "n": want["n"], "lod": lod,
                        "data": data})
        assert f.n == want["n"] and f.lod == lod
        np.testing.assert_array_equal(f.ids, want["ids"])
        assert abs(f.step - want["step"]) < 1e-9 and list(f.levels) == want["levels"]
        np.testing.assert_array_equal(f._q.reshape(-1, 3) if f._q is not None else None, np.array(want["q"]).reshape(-1, 3))


def test_msgpack_codec_reads_and_writes_the_golden_vectors():
    vectors = json.load(open(os.path.join(ROOT, "protocol", "golden", "vectors.json")))["vectors"]
    n = 0
    for v in vectors:
        if not v.get("file") or v["direction"] != "client_to_server":
            continue
        raw = open(os.path.join(ROOT, "protocol", "golden", v["file"]), "rb").read()
        assert fluidclient._msgpack.unpackb(raw) == v["expect"], v["file"]
        assert fluidclient._msgpack.unpackb(fluidclient._msgpack.packb(v["input"])) == v["expect"], v["file"]
        n += 1
    assert n >= 15


def test_frames_carry_the_probes_values(server):
    """A world with probes: each frame's probes (name to value) are GET
    /api/probes' at the frame's tick (which gives 7 significant digits of the
    float32 the frame carries); a world without: an empty dict."""
    c = fluidclient.Client(server.url)
    c.pause()
    c.load_scene("spheric2", particles=2000)
    try:
        with c.stream() as s:
            p = c.list_probes()
            f = s.wait_tick(p["tick"])
            assert f.tick == p["tick"]
            assert list(f.probes) == [q["name"] for q in p["probes"]] == ["H1", "H2", "H3", "H4", "P1", "P2", "P3",
                                                                          "P4", "P5", "P6", "P7", "P8"]
            for q in p["probes"]:
                assert float("%.7g" % f.probes[q["name"]]) == q["value"], (q["name"], f.probes[q["name"]], q["value"])
            assert f.probes["H4"] > 0.4, "the column stands at H4: %r" % f.probes["H4"]
            c.load_scene("dam_break", particles=2000)
            assert until(s, lambda g: g.probes == {}), "the frames of a world without probes carry none"
    finally:
        c.resume()
