#!/usr/bin/env python3
"""make_scene_meshes.py - the meshes of the built-in scenes `funnel` and
`harbour`, made here and written twice: as binary STL files in
examples/meshes/ (for trying POST /api/meshes) and as the C tables the core
compiles in (server/sim/scene_meshes.c and .h; the core reads no files).

  glass.stl       an open cup (a thin shell): a cylinder with a bottom, no top
  funnel.stl      an open funnel (a thin shell): a cone into a spout, open at both ends
  breakwater.stl  a closed breakwater: a wall whose seaward face curves back
                  into a wave-return lip at its crest, extruded along z, with a
                  footing and an end that go into the floor and the tank's wall

Units: the scenes scale each mesh by their tank's size (scenes.c): the glass
and the funnel are in widths of the funnel scene's tank, the breakwater in
the harbour scene's column width a.  Triangles run counter-clockwise seen
from outside (the closed one: every edge borders two triangles that run along
it in opposite directions; checked here).

Deterministic: every coordinate is rounded to 6 decimals and then to float32
before it is written, so the same files come out on every machine.

  python3 scripts/make_scene_meshes.py          writes the files
  python3 scripts/make_scene_meshes.py --check  compares them with what it would write
                                                (make test runs this)
"""
import math
import os
import struct
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
SCRIPT = "scripts/make_scene_meshes.py"


def f32(x):
    """x rounded to 6 decimals, then to the nearest float32."""
    return struct.unpack("<f", struct.pack("<f", round(x, 6) + 0.0))[0]


class Mesh:
    def __init__(self, name, doc):
        self.name, self.doc = name, doc
        self.v, self.t = [], []

    def vert(self, x, y, z):
        self.v.append((f32(x), f32(y), f32(z)))
        return len(self.v) - 1

    def tri(self, a, b, c):
        self.t.append((a, b, c))

    def quad(self, a, b, c, d):
        """a b c d counter-clockwise seen from outside."""
        self.tri(a, b, c)
        self.tri(a, c, d)


def ring(m, y, r, nu):
    return [m.vert(r * math.cos(2 * math.pi * j / nu), y, r * math.sin(2 * math.pi * j / nu)) for j in range(nu)]


def join_rings(m, lo, hi):
    """The band between two rings (lo below hi), facing away from the axis."""
    nu = len(lo)
    for j in range(nu):
        k = (j + 1) % nu
        m.quad(lo[j], hi[j], hi[k], lo[k])


def glass(nu=48):
    """An open cup: radius 0.2, height 0.32, its bottom at y = 0 (centred on
    the y axis); the bottom a disc of two rings and a centre."""
    m = Mesh("glass", "an open cup (a thin shell): radius 0.2, height 0.32, open at the top")
    R, H = 0.2, 0.32
    rings = [ring(m, H * i / 6, R, nu) for i in range(7)]
    for i in range(6):
        join_rings(m, rings[i], rings[i + 1])
    inner = ring(m, 0.0, 0.5 * R, nu)
    centre = m.vert(0.0, 0.0, 0.0)
    for j in range(nu):  # the bottom faces down: rings run inwards
        k = (j + 1) % nu
        m.quad(rings[0][j], rings[0][k], inner[k], inner[j])
        m.tri(inner[j], inner[k], centre)
    return m


def funnel(nu=48):
    """An open funnel: a spout of radius 0.08 from y = 0 to 0.1, then a cone
    widening to radius 0.3 at y = 0.3 (centred on the y axis)."""
    m = Mesh("funnel", "an open funnel (a thin shell): a spout of radius 0.08 under a cone to radius 0.3")
    Rs, Rm = 0.08, 0.3
    heights = [0.0, 0.05, 0.1] + [0.1 + 0.2 * i / 6 for i in range(1, 7)]
    radii = [Rs, Rs, Rs] + [Rs + (Rm - Rs) * i / 6 for i in range(1, 7)]
    rings = [ring(m, y, r, nu) for y, r in zip(heights, radii)]
    for i in range(len(rings) - 1):
        join_rings(m, rings[i], rings[i + 1])
    return m


def breakwater(nu=24, nz=10):
    """A closed breakwater: base 0.45 (x 0 .. 0.45) by height 0.6 above its
    footing, length 1.1 along z (0 .. 1.1).  The seaward face (x small)
    leans back and then curves forward into a lip 0.0675 over the toe at the
    crest, x(u) = B (0.6 u - 0.75 u^2) at height u H; the lee face stands
    upright at x = B.  Each cross-section is a strip of trapezoids between
    the two faces at the same height, so the end caps close it without a cap
    polygon.  Its footing goes 0.15 below y = 0 and its end 0.15 beyond
    z = 0, into the floor and the wall the scene sets it against: a particle
    that gets into the wall near them is then nearest to a face the fluid
    meets, and is pushed back out, not into the floor or the tank's wall."""
    m = Mesh("breakwater", "a closed breakwater 0.45 x 0.6 x 1.1 with a curved, wave-return seaward face")
    B, H, W, D = 0.45, 0.6, 1.1, 0.15
    heights = [-D] + [H * i / nu for i in range(nu + 1)]
    sea = [0.0] + [B * (0.6 * (i / nu) - 0.75 * (i / nu) ** 2) for i in range(nu + 1)]
    top = len(heights) - 1
    S, R = [], []  # S[k][i], R[k][i]: the seaward and lee points at height i, section k
    for k in range(nz + 1):
        z = -D + (W + D) * k / nz
        S.append([m.vert(x, y, z) for x, y in zip(sea, heights)])
        R.append([m.vert(B, y, z) for y in heights])
    for k in range(nz):
        for i in range(top):
            m.quad(S[k][i], S[k + 1][i], S[k + 1][i + 1], S[k][i + 1])  # seaward face
            m.quad(R[k][i], R[k][i + 1], R[k + 1][i + 1], R[k + 1][i])  # lee face
        m.quad(S[k][0], R[k][0], R[k + 1][0], S[k + 1][0])  # bottom
        m.quad(S[k][top], S[k + 1][top], R[k + 1][top], R[k][top])  # crest
    for i in range(top):
        m.quad(S[0][i], S[0][i + 1], R[0][i + 1], R[0][i])  # the end at z = -D
        m.quad(S[nz][i], R[nz][i], R[nz][i + 1], S[nz][i + 1])  # the end at z = W
    return m


# ---- checks ------------------------------------------------------------------------
def signed_volume(m):
    s = 0.0
    for a, b, c in m.t:
        (ax, ay, az), (bx, by, bz), (cx, cy, cz) = m.v[a], m.v[b], m.v[c]
        s += ax * (by * cz - bz * cy) - ay * (bx * cz - bz * cx) + az * (bx * cy - by * cx)
    return s / 6


def check(m, closed):
    """Every directed edge once; closed: each with its reverse, and the
    volume positive (outward).  No triangle degenerate."""
    edges = {}
    for t in m.t:
        for e in ((t[0], t[1]), (t[1], t[2]), (t[2], t[0])):
            assert e not in edges, "%s: edge %s twice the same way" % (m.name, e)
            edges[e] = True
        a, b, c = (m.v[i] for i in t)
        u = [b[i] - a[i] for i in range(3)]
        w = [c[i] - a[i] for i in range(3)]
        cr = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
        assert math.sqrt(sum(x * x for x in cr)) > 1e-8, "%s: a degenerate triangle %s" % (m.name, t)
    if closed:
        for a, b in edges:
            assert (b, a) in edges, "%s: edge %d-%d borders one triangle" % (m.name, a, b)
        assert signed_volume(m) > 0, "%s: faces inwards" % m.name
    else:
        assert any((b, a) not in edges for a, b in edges), "%s: closed, not a shell" % m.name


# ---- writing -------------------------------------------------------------------------
def stl(m):
    head = ("%s, made by %s" % (m.name, SCRIPT)).encode().ljust(80, b" ")[:80]
    out = [head, struct.pack("<I", len(m.t))]
    for t in m.t:
        a, b, c = (m.v[i] for i in t)
        u = [b[i] - a[i] for i in range(3)]
        w = [c[i] - a[i] for i in range(3)]
        n = (u[1] * w[2] - u[2] * w[1], u[2] * w[0] - u[0] * w[2], u[0] * w[1] - u[1] * w[0])
        ln = math.sqrt(sum(x * x for x in n))
        out.append(struct.pack("<12fH", *[f32(x / ln) for x in n], *a, *b, *c, 0))
    return b"".join(out)


def cnum(x):
    s = "%.9g" % x
    if "." not in s and "e" not in s:
        s += ".0"
    return s + "f"


def c_source(meshes):
    lines = ["/* scene_meshes.c - the meshes of the built-in scenes funnel and harbour (see scene_meshes.h).",
             " * Generated by %s: do not edit; change the script and run it again" % SCRIPT,
             " * (make test checks that it gives this file). */",
             '#include "scene_meshes.h"', "", "/* clang-format off */"]
    for m in meshes:
        lines.append("static const fs_vec3 %s_v[%d] = {" % (m.name, len(m.v)))
        lines += ["    {%s, %s, %s}," % tuple(cnum(x) for x in v) for v in m.v]
        lines.append("};")
        lines.append("static const uint32_t %s_t[%d] = {" % (m.name, 3 * len(m.t)))
        for i in range(0, len(m.t), 4):
            lines.append("    " + " ".join("%d, %d, %d," % t for t in m.t[i:i + 4]))
        lines.append("};")
    lines.append("/* clang-format on */")
    lines.append("")
    for m in meshes:
        lines.append("const fs_mesh fs__scene_mesh_%s = {%s_v, %d, %s_t, %d};" % (m.name, m.name, len(m.v), m.name,
                                                                                 len(m.t)))
    return "\n".join(lines) + "\n"


def c_header(meshes):
    lines = ["/* scene_meshes.h - the meshes of the built-in scenes funnel and harbour, compiled in",
             " * (the core reads no files).  Generated by %s with scene_meshes.c" % SCRIPT,
             " * and the STL files of examples/meshes/: do not edit. */",
             "#ifndef FS_SCENE_MESHES_H", "#define FS_SCENE_MESHES_H", "", '#include "fluid_sim.h"', ""]
    for m in meshes:
        lines.append("/* %s:" % m.doc)
        lines.append(" * %d vertices, %d triangles */" % (len(m.v), len(m.t)))
        lines.append("extern const fs_mesh fs__scene_mesh_%s;" % m.name)
    lines += ["", "#endif"]
    return "\n".join(lines) + "\n"


def outputs():
    meshes = [(glass(), False), (funnel(), False), (breakwater(), True)]
    for m, closed in meshes:
        check(m, closed)
    ms = [m for m, _ in meshes]
    files = {os.path.join("examples", "meshes", m.name + ".stl"): stl(m) for m in ms}
    files["server/sim/scene_meshes.c"] = c_source(ms).encode()
    files["server/sim/scene_meshes.h"] = c_header(ms).encode()
    return files


def main():
    files = outputs()
    if sys.argv[1:] == ["--check"]:
        bad = 0
        for path, data in sorted(files.items()):
            try:
                with open(os.path.join(ROOT, path), "rb") as f:
                    same = f.read() == data
            except OSError:
                same = False
            print("%s  %s" % ("ok  " if same else "FAIL", path))
            bad += not same
        if bad:
            print("the files differ from what %s writes: run it and commit them" % SCRIPT)
        print("scene-meshes: %d passed, %d failed" % (len(files) - bad, bad))
        return 1 if bad else 0
    for path, data in sorted(files.items()):
        full = os.path.join(ROOT, path)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        with open(full, "wb") as f:
            f.write(data)
        print("wrote %s (%d bytes)" % (path, len(data)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
