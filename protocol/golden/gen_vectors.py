#!/usr/bin/env python3
"""Writes protocol/golden/vectors.json: the meaning of every golden vector.

An independent (Python) reading of PROTOCOL.md: for each server-to-client
vector it derives the decoded message ("expect") from the inputs, which the C
test feeds to the encoder.  The .msgpack bytes are written by
`build/test_server_wire_san --write-golden protocol/golden`; the C test then
checks the encoder still produces exactly those bytes, and the JavaScript test
checks that @msgpack/msgpack decodes them to "expect".
"""
import json
import math
import struct

def f32(x):
    return struct.unpack('<f', struct.pack('<f', x))[0]

def num(x):  # pk_num: float32, then its shortest 7-significant-digit decimal
    return float('%.7g' % f32(x))

PARAMS = [  # name, unit, doc, min, max, flag (a small stand-in table)
    ("rest_density", "kernel sum", "rho0", 0.1, 100.0, False),
    ("stiffness", "h/s^2", "k", 0.0, 2000.0, False),
    ("near_stiffness", "h/s^2", "k_near", 0.0, 20000.0, False),
    ("viscosity_linear", "1/s", "sigma", 0.0, 60.0, False),
    ("viscosity_quadratic", "s/h", "beta", 0.0, 10.0, False),
    ("springs", "flag", "springs", 0.0, 1.0, True),
    ("spring_add", "flag", "alg 4", 0.0, 1.0, True),
    ("spring_stiffness", "1/s^2", "k_spring", 0.0, 5000.0, False),
    ("plasticity", "1/s", "alpha", 0.0, 100.0, False),
    ("yield_stretch", "ratio", "gamma+", 0.0, 1.0, False),
    ("yield_compress", "ratio", "gamma-", 0.0, 1.0, False),
    ("spring_break", "h", "break", 1.0, 10.0, False),
    ("friction", "ratio", "mu", 0.0, 1.0, False),
    ("mass_density", "kg/m^3", "mass", 100.0, 20000.0, False),
    ("stick_distance", "h", "d_stick", 0.0, 0.5, False),
    ("stick_strength", "1/s^2", "k_stick", 0.0, 20000.0, False),
    ("heat_diffusivity", "m^2/s", "c", 0.0, 0.05, False),
    ("phase_change", "flag", "phase", 0.0, 1.0, True),
    ("solid_point", "C", "solid", -100.0, 1000.0, False),
    ("melt_point", "C", "melt", -100.0, 1000.0, False),
    ("kinematic_viscosity", "m^2/s", "nu", 0.0, 10.0, False),
    ("surface_tension", "N/m", "sigma_s", 0.0, 10.0, False),
    ("young_modulus", "Pa", "E", 0.0, 1e9, False),
    ("poisson_ratio", "ratio", "nu_p", 0.0, 0.49, False),
    ("solid_viscosity", "m^2/s", "nu_s", 0.0, 10.0, False),
    ("rigid", "flag", "rigid", 0.0, 1.0, True),
    ("elastic_limit", "strain", "e_lim", 0.0, 1.0, False),
    ("plastic_limit", "strain", "p_lim", 0.0, 10.0, False),
    ("fracture_stretch", "ratio", "frac", 1.0, 10.0, False),
]
WATER = [3.6, 150, 600, 0, 0.3, 0, 0, 0, 0, 0, 0, 2, 0.05, 1000, 0.25, 0, 0.01, 1, -0.5, 0.5, 1e-6, 0.0728, 0, 0.3, 0.02, 1, 0.05, 0, 1.5]
GOO = [3.6, 60, 300, 0.5, 0.5, 1, 1, 300, 3, 0.1, 0.1, 3, 0.2, 1100, 0.3, 500, 0.01, 0, -10, 0, 0.5, 0.05, 2e5, 0.45, 0.05, 0, 0.1, 1, 2]
WORLD = {
    "box_min": [0, 0, 0], "box_max": [1, 2, 4], "gravity": [0, -9.8, 0], "h": 0.05, "spacing": 0.025,
    "dt": 1 / 60, "frame_step": 0.01, "scene": "dam_break", "solver": "clavet", "particles": 6, "scene_particles": 8, "capacity": 65536, "paused": False,
    "materials": [{"name": "water", "params": WATER}, {"name": "goo", "params": GOO}],
}
STATIC = {"scenes": ["dam_break", "drop"], "tick_hz": 60.0, "frame_hz": 30.0, "solvers": ["clavet", "unified", "mps"],
          "auth_required": False, "max_msg": 4096, "rate_per_s": 120, "rate_burst": 240}

def colour(cid):
    pal = [0xe6194b, 0x3cb44b, 0xffe119, 0x4363d8, 0xf58231, 0x911eb4,
           0x46f0f0, 0xf032e6, 0xbcf60c, 0xfabebe, 0x008080, 0xe6beff]
    return '#%06x' % pal[cid % 12]

def bounds(w):
    return [num(v) for v in w["box_min"] + w["box_max"]]

def mat_params(m):
    return {p[0]: num(v) for p, v in zip(PARAMS, m["params"])}

vectors = []

# ---- server to client ----------------------------------------------------
parts = [  # in id order; the C test feeds them in a shuffled internal order
    {"id": 0, "pos": [0.1, 0.2, 0.3], "mat": 0, "temp": 20.0},
    {"id": 1, "pos": [0.9, 1.9, 3.9], "mat": 0, "temp": -60.0},   # below the frame's range: clamped
    {"id": 2, "pos": [0.0, 2.0, 4.0], "mat": 1, "temp": 36.6},
    {"id": 5, "pos": [-1.0, 3.0, 0.7], "mat": 1, "temp": 300.0},  # outside the box and the range: clamped
    {"id": 6, "pos": [0.33, 0.77, 1.23], "mat": 0, "temp": -0.4},
    {"id": 9, "pos": [0.618, 1.414, 2.718], "mat": 1, "temp": 99.4},
]
TEMP_LO, TEMP_HI = -40, 215

def temp_byte(t):  # T = TEMP_LO + byte, rounded half away from zero (lrintf: half to even; no ties here)
    if not t > TEMP_LO:
        return 0
    if t >= TEMP_HI:
        return TEMP_HI - TEMP_LO
    return int(round(f32(t) - TEMP_LO))
lo, hi = WORLD["box_min"], WORLD["box_max"]
STEP = 0.01  # the frames' quantization step in these vectors (metres)

def grid(lo, hi, step):  # fc_grid_make: levels = ceil(span / step) + 1 per axis
    st = f32(step)
    return {"origin": [f32(v) for v in lo], "step": st,
            "levels": [int(math.ceil((f32(h) - f32(l)) / st)) + 1 for l, h in zip(lo, hi)]}

def fc_quant(p, origin, step, levels):  # frame_encoder.c quantize(): lround in double
    t = (f32(p) - origin) / step
    if not t > 0:
        return 0
    if t >= levels - 1:
        return levels - 1
    return int(math.floor(t + 0.5))

GRID = grid(lo, hi, STEP)
bodies = [
    {"id": 0, "shape": 1, "size": [0.1, 0.2, 0.3], "pos": [0.5, 0.25, 1.5], "rot": [1.0, 0.0, 0.0, 0.0],
     "static": False, "grabbed_by": 3},
    {"id": 4, "shape": 0, "size": [0.125, 0.0, 0.0], "pos": [0.25, 1.0, 2.0], "rot": [0.5, 0.5, 0.5, 0.5],
     "static": True, "grabbed_by": 0},
]
SHAPES = ["sphere", "box", "capsule"]
frame_in = {"tick": 42, "time": 0.7, "paused": False, "bounds": lo + hi, "step": STEP, "particles": parts,
            "cursors": [{"id": 3, "pos": [0.5, 1.0, 2.0]}], "bodies": bodies}

def decoded(ps):  # what the v2 payload decodes to (fc_decode, and its oracle tests/web/oracle/frame_decoder.js)
    return {"ids": [p["id"] for p in ps],
            "q": [fc_quant(p["pos"][a], GRID["origin"][a], GRID["step"], GRID["levels"][a]) for p in ps for a in range(3)],
            "mat": [p["mat"] for p in ps], "temp": [temp_byte(p["temp"]) for p in ps], "grid": GRID}

vectors.append({
    "file": "s2c_frame.msgpack", "direction": "server_to_client",
    "doc": "a keyframe (seq 1, stream 1) of 6 particles with ids 0-2, 5-6, 9, one cursor and two bodies (one held by "
           "client 3); `data` is the v2 payload, `decoded` what it decodes to",
    "input": frame_in,
    "expect": {"type": "frame", "tick": 42, "time": 0.7, "paused": False, "n": 6, "bounds": bounds(WORLD),
               "cursors": [{"id": 3, "colour": colour(3), "pos": [0.5, 1.0, 2.0]}],
               "bodies": [{"id": b["id"], "shape": SHAPES[b["shape"]], "size": [f32(v) for v in b["size"]],
                           "pos": [f32(v) for v in b["pos"]], "rot": [f32(v) for v in b["rot"]],
                           "static": b["static"], "grabbed_by": b["grabbed_by"]} for b in bodies],
               "seq": 1, "key": True, "temp_range": [TEMP_LO, TEMP_HI], "decoded": decoded(parts)},
})
vectors.append({
    "file": "s2c_frame_empty.msgpack", "direction": "server_to_client", "doc": "a keyframe of an empty world",
    "input": {"tick": 0, "time": 0.0, "paused": True, "bounds": lo + hi, "step": STEP, "particles": [],
              "cursors": [], "bodies": []},
    "expect": {"type": "frame", "tick": 0, "time": 0.0, "paused": True, "n": 0, "bounds": bounds(WORLD),
               "cursors": [], "bodies": [], "seq": 1, "key": True, "temp_range": [TEMP_LO, TEMP_HI],
               "decoded": decoded([])},
})
vectors.append({
    "file": "s2c_hello.msgpack", "direction": "server_to_client", "doc": "hello to client 5",
    "input": {"client_id": 5, "room": "lab", "role": "admin", "world": WORLD, "static": STATIC,
              "params": [{"name": p[0], "unit": p[1], "doc": p[2], "min": p[3], "max": p[4], "flag": p[5]}
                         for p in PARAMS]},
    "expect": {
        "type": "hello", "version": 2, "client_id": 5, "room": "lab", "role": "admin", "colour": colour(5), "bounds": bounds(WORLD),
        "frame_step": num(WORLD["frame_step"]), "tick_hz": 60.0, "frame_hz": 30.0, "dt": num(1 / 60), "h": num(0.05), "spacing": num(0.025),
        "gravity": [num(v) for v in WORLD["gravity"]], "scene": "dam_break", "scenes": STATIC["scenes"],
        "particles": 6, "scene_particles": 8, "capacity": 65536, "paused": False, "solver": "clavet", "solvers": STATIC["solvers"],
        "auth_required": False, "relays": [],
        "limits": {"max_msg": 4096, "rate_per_s": 120, "rate_burst": 240, "push_strength": 50.0, "push_radius": 100.0,
                   "heat_rate": 1000.0, "heat_radius": 10.0, "heat_duration": 10.0, "steps": 1000},
        "params": [{"name": p[0], "unit": p[1], "doc": p[2], "min": num(p[3]), "max": num(p[4]), "flag": p[5]}
                   for p in PARAMS],
        "materials": [{"index": i, "name": m["name"], "params": mat_params(m)}
                      for i, m in enumerate(WORLD["materials"])],
    },
})
vectors.append({
    "file": "s2c_param.msgpack", "direction": "server_to_client", "doc": "goo's parameters changed by client 2",
    "input": {"world": WORLD, "material": 1, "by": 2, "tick": 100},
    "expect": {"type": "param", "material": "goo", "index": 1, "params": mat_params(WORLD["materials"][1]),
               "by": 2, "tick": 100},
})
vectors.append({
    "file": "s2c_scene.msgpack", "direction": "server_to_client", "doc": "a scene was loaded over REST (by 0)",
    "input": {"world": WORLD, "by": 0, "tick": 7},
    "expect": {"type": "scene", "scene": "dam_break", "solver": "clavet", "particles": 6, "scene_particles": 8,
               "bounds": bounds(WORLD),
               "by": 0, "tick": 7},
})
vectors.append({
    "file": "s2c_solver.msgpack", "direction": "server_to_client", "doc": "client 3 switched the solver",
    "input": {"solver": "mps", "by": 3, "tick": 11},
    "expect": {"type": "solver", "solver": "mps", "by": 3, "tick": 11},
})
vectors.append({
    "file": "s2c_state.msgpack", "direction": "server_to_client", "doc": "paused by client 4",
    "input": {"paused": True, "by": 4, "tick": 9},
    "expect": {"type": "state", "paused": True, "by": 4, "tick": 9},
})
vectors.append({
    "file": "s2c_reply_push.msgpack", "direction": "server_to_client", "doc": "push applied, 17 particles touched",
    "input": {"rid": 7, "cmd": "push", "ok": True, "tick": 1234, "value": 17},
    "expect": {"type": "reply", "rid": 7, "cmd": "push", "ok": True, "tick": 1234, "touched": 17},
})
vectors.append({
    "file": "s2c_reply_error.msgpack", "direction": "server_to_client", "doc": "a refused set_param",
    "input": {"rid": 8, "cmd": "set_param", "ok": False, "error": "set_param: stiffness=-1 outside [0, 2000]",
              "code": "bad_request"},
    "expect": {"type": "reply", "rid": 8, "cmd": "set_param", "ok": False,
               "error": "set_param: stiffness=-1 outside [0, 2000]", "code": "bad_request"},
})
OBSTACLES = [
    {"id": 3, "hash": "0123456789abcdef", "lo": [0.25, 0, 0.5], "hi": [0.75, 0.3, 1.125], "triangles": 12,
     "vertices": 8, "closed": True},
    {"id": 5, "hash": "fedcba9876543210", "lo": [0.1, 0.2, 0.3], "hi": [0.4, 0.5, 0.6], "triangles": 1,
     "vertices": 3, "closed": False},
]
vectors.append({
    "file": "s2c_obstacles.msgpack", "direction": "server_to_client",
    "doc": "the obstacles after client 6 added one (a shell beside a closed cube)",
    "input": {"obstacles": OBSTACLES, "version": 4, "by": 6, "tick": 300},
    "expect": {"type": "obstacles", "version": 4,
               "obstacles": [{"id": o["id"], "hash": o["hash"], "bounds": [num(x) for x in o["lo"] + o["hi"]],
                              "triangles": o["triangles"], "vertices": o["vertices"], "closed": o["closed"]}
                             for o in OBSTACLES],
               "by": 6, "tick": 300},
})

# ---- client to server (every command kind) -------------------------------
c2s = [
    ("push", {"type": "push", "rid": 1, "point": [0.5, 0.25, 0.125], "radius": 0.1, "strength": 2.5,
              "direction": [0, 1, 0]}),
    ("set_param", {"type": "set_param", "rid": 2, "material": "water", "param": "stiffness", "value": 200}),
    ("set_params", {"type": "set_param", "rid": 3, "material": "goo",
                    "params": {"viscosity_linear": 1.5, "plasticity": 0.25}}),
    ("load_scene", {"type": "load_scene", "rid": 4, "name": "drop", "particles": 5000, "solver": "clavet"}),
    ("set_solver", {"type": "set_solver", "rid": 16, "name": "clavet"}),
    ("heat", {"type": "heat", "rid": 17, "point": [0.5, 0.25, 0.5], "radius": 0.2, "rate": -40, "duration": 0.5}),
    ("heater", {"type": "heater", "rid": 18, "slot": 0, "kind": "floor", "radius": 0.16, "rate": 2,
                "temperature": 5, "enabled": True}),
    ("pause", {"type": "pause", "rid": 5}),
    ("resume", {"type": "resume", "rid": 6}),
    ("step", {"type": "step", "rid": 7, "steps": 10}),
    ("emitter", {"type": "emitter", "rid": 8, "slot": 0, "pos": [0.5, 1.5, 0.5], "direction": [0, -1, 0],
                 "speed": 2, "radius": 0.05, "rate": 500, "cap": 1000, "material": "water", "enabled": True}),
    ("emitter_off", {"type": "emitter", "rid": 9, "slot": 0, "enabled": False}),
    ("cursor", {"type": "cursor", "rid": 0, "pos": [0.25, 0.5, 0.75]}),
    ("cursor_hide", {"type": "cursor", "rid": 0, "pos": None}),
    ("auth", {"type": "auth", "rid": 10, "token": "s3cret"}),
    ("body_create", {"type": "body_create", "rid": 11, "shape": "box", "size": [0.1, 0.05, 0.1],
                     "pos": [0.5, 0.6, 0.5], "rot": [1, 0, 0, 0], "density": 500, "friction": 0.4}),
    ("body_destroy", {"type": "body_destroy", "rid": 12, "id": 3}),
    ("body_impulse", {"type": "body_impulse", "rid": 13, "id": 3, "point": [0.5, 0.6, 0.5], "impulse": [0, 2.5, 0]}),
    ("body_grab", {"type": "body_grab", "rid": 14, "id": 3, "point": [0.5, 0.6, 0.5], "target": [0.5, 0.8, 0.5]}),
    ("body_drag", {"type": "body_drag", "rid": 0, "id": 3, "target": [0.25, 0.8, 0.5]}),
    ("body_release", {"type": "body_release", "rid": 15, "id": 3}),
]
for name, obj in c2s:
    vectors.append({"file": "c2s_%s.msgpack" % name, "direction": "client_to_server",
                    "doc": "a %s command" % obj["type"], "input": obj, "expect": obj})

# ---- client to server, refused --------------------------------------------
bad = [
    ("not_a_map", "c1", "malformed message"),
    ("truncated_map", "83a474797065", "malformed message"),
    ("huge_map", "dfffffffff", "malformed message"),
    ("huge_str_key", "81dbffffffff", "malformed message"),
    ("huge_array", "82a474797065a470757368a5706f696e74ddffffffff", "malformed message"),
    ("deep", "82a474797065a470757368a161" + "91" * 40 + "c0", "malformed message"),
    ("unknown_cmd", "82a474797065a3666f6fa372696401", "unknown command 'foo'"),
    ("wrong_type", "83a474797065a473746570a372696402a57374657073a374656e", "step: 'steps' must be"),
]
for name, hexs, err in bad:
    vectors.append({"file": None, "direction": "client_to_server_bad", "doc": name, "hex": hexs, "error": err})

# ---- an obstacle's placed mesh (PROTOCOL.md, "Obstacles on the page") ------
# The bytes are written here, from the layout alone; the C test checks that
# obstacle_mesh_encode produces exactly them, the JavaScript tests that the
# page's decoder reads them back to "expect".
def fnv1a64(b):
    h = 0xcbf29ce484222325
    for i, x in enumerate(b):
        if 40 <= i < 48:
            continue
        h = ((h ^ x) * 0x100000001b3) & 0xffffffffffffffff
    return h

def obstacle_mesh(V, T):
    lo = [f32(min(v[k] for v in V)) for k in range(3)]
    hi = [f32(max(v[k] for v in V)) for k in range(3)]
    def quant(x, k):  # in double, half away from zero, clamped
        if not hi[k] > lo[k]:
            return 0
        q = (f32(x) - lo[k]) / (hi[k] - lo[k]) * 65535
        return max(0, min(65535, int(math.floor(q + 0.5))))
    q = [quant(v[k], k) for v in V for k in range(3)]
    wide = len(V) > 65536
    head = b'FSOM' + struct.pack('<HHII', 1, 1 if wide else 0, len(V), len(T)) + struct.pack('<3f', *lo) + \
        struct.pack('<3f', *hi) + b'\0' * 8
    body = struct.pack('<%dH' % len(q), *q)
    body += b'\0' * ((-(len(head) + len(body))) % 4)
    body += struct.pack('<%d%s' % (3 * len(T), 'I' if wide else 'H'), *[i for t in T for i in t])
    b = bytearray(head + body)
    h = fnv1a64(b)
    b[40:48] = struct.pack('<Q', h)
    step = [(hi[k] - lo[k]) / 65535 for k in range(3)]
    expect = {"hash": '%016x' % h, "length": len(b), "lo": lo, "hi": hi, "q": q,
              "indices": [i for t in T for i in t], "wide": wide,
              "positions": [lo[i % 3] + q[i] * step[i % 3] for i in range(len(q))]}
    return bytes(b), expect

# a tetrahedron, one vertex off the grid of its box (rounded), and a flat triangle (no extent along z)
meshes = []
for name, V, T in [
        ("obstacle_mesh_tet.bin", [[0.5, 0.25, 0.5], [1.5, 0.25, 0.5], [0.5, 1.25, 0.5], [0.8, 0.6, 1.75]],
         [[0, 2, 1], [0, 1, 3], [1, 2, 3], [0, 3, 2]]),
        ("obstacle_mesh_flat.bin", [[-1, 0, 2], [1, 0, 2], [0.3, 3, 2]], [[0, 1, 2]])]:
    b, expect = obstacle_mesh(V, T)
    open(name, 'wb').write(b)
    meshes.append({"file": name, "input": {"vertices": V, "triangles": T}, "expect": expect})

json.dump({"protocol_version": 2, "vectors": vectors, "obstacle_meshes": meshes}, open('vectors.json', 'w'), indent=1)
print("wrote %d vectors" % len(vectors))
