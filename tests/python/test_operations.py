"""test_operations.py - every operation of protocol/openapi.json has a
Client method of its operationId's name (documented with its method and
path), and every one is called through the client against a live server,
checking what it answers; refusals raise FluidError with the status and code
of PROTOCOL.md's table."""
import json
import os

import numpy as np
import pytest

import fluidclient
from conftest import ROOT

SPEC = json.load(open(os.path.join(ROOT, "protocol", "openapi.json")))
OPS = [(m.upper(), p, o.get("operationId")) for p, ops in SPEC["paths"].items() for m, o in ops.items()]


def test_every_operation_has_a_method_of_its_operation_id():
    assert len(OPS) >= 20
    missing = [(m, p, oid) for m, p, oid in OPS if not oid or not callable(getattr(fluidclient.Client, oid, None))]
    assert missing == [], "operations without a Client method: %r" % missing
    for m, p, oid in OPS:
        doc = getattr(fluidclient.Client, oid).__doc__ or ""
        assert doc.startswith("%s %s" % (m, p)), "%s's docstring names %s %s first: %r" % (oid, m, p, doc[:60])


def _cube_stl():
    """A closed unit cube about the origin as ASCII STL (12 outward triangles)."""
    v = [((k & 1) - 0.5, ((k >> 1) & 1) - 0.5, ((k >> 2) & 1) - 0.5) for k in range(8)]  # corner k: bits +x +y +z
    quads = [(0, 4, 6, 2), (1, 3, 7, 5), (0, 1, 5, 4), (2, 6, 7, 3), (0, 2, 3, 1), (4, 5, 7, 6)]  # counter-clockwise
    lines = ["solid cube"]
    for a, b, c_, d in quads:
        for t in ((a, b, c_), (a, c_, d)):
            lines.append("facet normal 0 0 0\nouter loop")
            lines += ["vertex %g %g %g" % v[i] for i in t]
            lines.append("endloop\nendfacet")
    lines.append("endsolid cube")
    return ("\n".join(lines) + "\n").encode()


class Tracking(fluidclient.Client):
    """A Client that notes which operations were called."""

    called = set()

    def __getattribute__(self, name):
        if name in {oid for _, _, oid in OPS}:
            Tracking.called.add(name)
        return super().__getattribute__(name)


def test_every_operation_through_the_client(server):
    c = Tracking(server.url)
    assert c.health() == {"ok": True}
    listed = c.list_endpoints()["endpoints"]
    assert len(listed) == len(OPS)
    assert c.pause()["paused"] is True
    scenes = c.list_scenes()
    assert "dam_break" in [s["name"] for s in scenes["scenes"]]
    r = c.load_scene("dam_break", particles=2000)
    assert (r["scene"], r["particles"]) == ("dam_break", 2000)
    assert c.get_stats()["particles"] == 2000
    mats = c.list_materials()["materials"]
    assert mats[0]["name"] == "water"
    stiff = mats[0]["params"]["stiffness"]
    r = c.set_material_params("water", stiffness=stiff["min"])
    assert r["params"]["stiffness"] == pytest.approx(stiff["min"])
    r = c.step(3)
    assert r["steps"] == 3
    tick = r["tick"]
    page = c.get_particles(offset=0, limit=10)
    assert (page["count"], page["total"], page["tick"]) == (10, 2000, tick)
    ply = c.get_particles(format="ply")
    assert ply.startswith(b"ply\n") and len(fluidclient.parse_ply(ply)) == 2000
    p = c.particles()
    assert (len(p), p.tick) == (2000, tick)
    full = c.get_particles(offset=0, limit=2000)
    np.testing.assert_array_equal(p.ids, full["ids"])
    np.testing.assert_allclose(p.positions, np.array(full["positions"], dtype=np.float32), atol=1e-6)
    assert c.push([0.5, 0.3, 0.3], 0.3, 1.0, [1, 0, 0])["touched"] > 0
    assert c.heat([0.5, 0.1, 0.3], 0.2, 50.0, duration=0.5)["ok"] is True
    assert c.set_heater(0, kind="floor", radius=0.1, rate=1.0, temperature=80.0)["slot"] == 0
    assert c.set_heater(0, enabled=False)["slot"] == 0
    assert c.set_emitter(1, pos=[0.3, 0.8, 0.3], direction=[1, 0, 0], speed=1.0, radius=0.05, rate=100)["slot"] == 1
    assert c.set_emitter(1, enabled=False)["slot"] == 1
    body = c.create_body("box", [0.05, 0.05, 0.05], [0.3, 0.6, 0.3])["id"]
    assert [b["id"] for b in c.list_bodies()["bodies"]] == [body]
    assert c.apply_body_impulse(body, [0.3, 0.6, 0.3], [0, 0.1, 0])["id"] == body
    assert c.delete_body(body)["id"] == body
    assert c.list_bodies()["bodies"] == []
    mesh = c.upload_mesh(_cube_stl(), "model/stl")
    assert (mesh["triangles"], mesh["vertices"], mesh["closed"]) == (12, 8, True)
    assert [m["id"] for m in c.list_meshes()["meshes"]] == [mesh["id"]]
    obstacle = c.add_obstacle(mesh["id"], pos=[0.5, 0.2, 0.3], scale=0.1)["id"]
    assert [o["id"] for o in c.list_obstacles()["obstacles"]] == [obstacle]
    assert c.get_obstacle_mesh(obstacle)[:4] == b"FSOM"
    assert c.delete_obstacle(obstacle)["id"] == obstacle
    assert c.list_obstacles()["obstacles"] == []
    assert c.add_probe("depth", "height", [0.3, 0, 0.3])["index"] == 0
    assert c.add_probe("floor", "pressure", [0.3, 0, 0.3], normal=[0, 1, 0], radius=0.1)["index"] == 1
    assert c.get_fleet() == {"fleet": None, "nodes": [], "rooms": []}  # a server of no fleet
    with pytest.raises(fluidclient.FluidError) as e:
        c.drain_node(1)  # ... has no node to drain
    assert (e.value.status, e.value.code) == (409, "conflict")
    with pytest.raises(fluidclient.FluidError) as e:
        c.cancel_drain(1)  # ... nor a drain to cancel
    assert (e.value.status, e.value.code) == (409, "conflict")
    probes = c.list_probes()["probes"]
    assert [(q["name"], q["kind"], q["unit"]) for q in probes] == [("depth", "height", "m"), ("floor", "pressure", "Pa")]
    assert c.delete_probe("depth")["ok"] is True
    assert [q["name"] for q in c.list_probes()["probes"]] == ["floor"]
    mb = c.create_body("mesh", pos=[0.5, 0.6, 0.3], mesh=mesh["id"], scale=0.1, density=500)["id"]
    (listed,) = c.list_bodies()["bodies"]
    assert (listed["id"], listed["shape"], round(listed["mass"], 4)) == (mb, "mesh", 0.5)  # 500 kg/m^3 x 0.001 m^3
    assert c.delete_body(mb)["id"] == mb
    solvers = c.list_solvers()
    other = [s["name"] for s in solvers["solvers"] if s["name"] != solvers["solver"]][0]
    assert c.set_solver(other)["solver"] == other
    assert c.list_clients()["count"] == 0
    assert "fluid_tick" in c.get_metrics()
    doc = c.get_snapshot()
    assert doc[:1] in (b"\x8a", b"\x8b", b"\xde")  # a msgpack map
    c.step(5)
    r = c.restore_snapshot(doc)
    assert (r["particles"], r["tick"]) == (2000, tick)
    assert c.get_stats()["tick"] == tick
    assert c.start_recording(name="ops-rec")["name"] == "ops-rec"
    c.step(2)
    c.stop_recording()
    recs = c.list_recordings()
    assert [r["name"] for r in recs["recordings"]] == ["ops-rec"]
    index = json.loads(c.get_recording_file("ops-rec/index.json"))
    seg = c.get_recording_file("ops-rec/" + index["segments"][0]["file"])
    assert seg.startswith(b"FSREC\x00\x01\x00")
    assert c.resume()["paused"] is False
    # the rooms: this server keeps recordings, so it holds its default room only
    assert [r["name"] for r in c.list_rooms()] == ["default"]
    assert c.get_room("default")["particles"] == 2000
    assert c.update_room("default", "player")["public_role"] == "player"
    for call in (lambda: c.create_room("lab"), lambda: c.delete_room("default")):
        with pytest.raises(fluidclient.FluidError) as e:
            call()
        assert (e.value.status, e.value.code) == (409, "conflict")
    inv = c.create_invite("default", "viewer", ttl_s=60)
    assert (inv["room"], inv["role"]) == ("default", "viewer") and inv["url"].startswith("/r/default/?invite=")
    assert c.rotate_room_key("default")["generation"] == 1
    with pytest.raises(fluidclient.FluidError) as e:
        c.kick_client("default", 999999)
    assert (e.value.status, e.value.code) == (404, "not_found")
    assert sorted(Tracking.called) == sorted(oid for _, _, oid in OPS)


def test_refusals_raise_fluid_error_with_status_and_code(server):
    c = fluidclient.Client(server.url)
    with pytest.raises(fluidclient.FluidError) as e:
        c.load_scene("no_such_scene")
    assert (e.value.status, e.value.code) == (404, "not_found")
    assert "no_such_scene" in e.value.message
    with pytest.raises(fluidclient.FluidError) as e:
        c.push([0, 0, 0], 1000.0, 1.0, [1, 0, 0])
    assert (e.value.status, e.value.code) == (400, "bad_request")
    c.resume()
    with pytest.raises(fluidclient.FluidError) as e:
        c.step(1)
    assert (e.value.status, e.value.code) == (409, "conflict")


def test_a_room_prefixes_every_api_path():
    c = fluidclient.Client("http://127.0.0.1:1", room="lab-1")
    assert c._path("/api/stats") == "/api/rooms/lab-1/stats"
    assert c._path("/api/bodies/3/impulse") == "/api/rooms/lab-1/bodies/3/impulse"
    assert c._path("/metrics") == "/metrics"
    assert fluidclient.Client("http://127.0.0.1:1")._path("/api/stats") == "/api/stats"


def test_a_room_made_through_the_client_is_a_world_of_its_own(rooms_server):
    admin = fluidclient.Client(rooms_server.url)
    made = admin.create_room("py-lab", scene="drop", particles=1500)
    assert (made["name"], made["url"], made["scene"]) == ("py-lab", "/r/py-lab/", "drop")
    lab = fluidclient.Client(rooms_server.url, room="py-lab")
    st = lab.get_stats()
    assert (st["room"], st["scene"]) == ("py-lab", "drop")
    assert admin.get_stats()["room"] == "default"
    assert lab.pause()["paused"] is True
    assert admin.get_stats()["paused"] is False, "pausing the room left the default room running"
    with lab.stream() as s:
        assert s.hello["room"] == "py-lab"
        f = next(iter(s))
        assert len(f.ids) == st["particles"]
    assert len(lab.particles()) == st["particles"]
    assert admin.delete_room("py-lab") == {"ok": True, "name": "py-lab"}
    with pytest.raises(fluidclient.FluidError) as e:
        lab.get_stats()
    assert (e.value.status, e.value.code) == (404, "not_found")
