"""client.py - the REST side of the fluid server, one method per operation
of protocol/openapi.json (each named by its operationId), plus
`particles()` (the whole world as NumPy arrays through the binary PLY
export) and `stream()` (the WebSocket stream, stream.py)."""
import http.client
import json
import re
import time
from urllib.parse import quote, urlencode, urlsplit

import numpy as np

from .errors import FluidError

__all__ = ["Client", "Particles"]

# PROTOCOL.md, REST API: the PLY export's vertex, packed little-endian
# (x y z vx vy vz float, material uchar, temperature float, id uint).
PLY_VERTEX = np.dtype([("x", "<f4"), ("y", "<f4"), ("z", "<f4"), ("vx", "<f4"), ("vy", "<f4"), ("vz", "<f4"),
                       ("material", "u1"), ("temperature", "<f4"), ("id", "<u4")])
_PLY_PROPS = [("float", "x"), ("float", "y"), ("float", "z"), ("float", "vx"), ("float", "vy"), ("float", "vz"),
              ("uchar", "material"), ("float", "temperature"), ("uint", "id")]


class Particles:
    """The whole world at one tick, in id order: ``positions`` (n x 3,
    float32, metres), ``velocities`` (n x 3, float32, m/s), ``ids`` (uint32),
    ``materials`` (uint8, indices into ``Client.list_materials()``),
    ``temperatures`` (float32, deg C), and ``tick``."""

    __slots__ = ("tick", "ids", "positions", "velocities", "materials", "temperatures")

    def __init__(self, tick, ids, positions, velocities, materials, temperatures):
        self.tick, self.ids, self.positions, self.velocities = tick, ids, positions, velocities
        self.materials, self.temperatures = materials, temperatures

    def __len__(self):
        return len(self.ids)

    def __repr__(self):
        return "Particles(tick=%r, n=%d)" % (self.tick, len(self.ids))


def parse_ply(data):
    """The server's binary PLY export as a structured NumPy array (PLY_VERTEX);
    raises ValueError when the file is not that layout."""
    end = data.find(b"end_header\n")
    if not data.startswith(b"ply\n") or end < 0:
        raise ValueError("not a PLY file (no 'ply' line or no end_header)")
    head = data[:end].decode("ascii", "replace").split("\n")
    if "format binary_little_endian 1.0" not in head:
        raise ValueError("a PLY file that is not binary little-endian")
    count, props = None, []
    for line in head:
        w = line.split()
        if w[:2] == ["element", "vertex"]:
            count = int(w[2])
        elif w[:1] == ["property"] and count is not None:
            props.append((w[1], w[2]))
    if props != _PLY_PROPS or count is None:
        raise ValueError("a PLY vertex layout this client does not know: %r" % props)
    body = memoryview(data)[end + len(b"end_header\n"):]
    if len(body) != count * PLY_VERTEX.itemsize:
        raise ValueError("PLY body of %d bytes for %d vertices of %d" % (len(body), count, PLY_VERTEX.itemsize))
    return np.frombuffer(body, dtype=PLY_VERTEX, count=count)


class Client:
    """A fluid server's REST API and stream.

    url: the server, e.g. ``"http://127.0.0.1:8080"``; token: the server's
    ``--token`` (sent as ``Authorization: Bearer``), or None; room: a room's
    name: every ``/api/...`` path becomes ``/api/rooms/{room}/...`` (and the
    stream connects to ``/r/{room}/``), or None for the server's default room.
    timeout: seconds a request may wait for an answer.

    Every method raises FluidError (status, code, message) when the server
    refuses.  A Client keeps one HTTP connection and is not shared between
    threads (make one per thread)."""

    def __init__(self, url="http://127.0.0.1:8080", token=None, room=None, timeout=60.0):
        u = urlsplit(url)
        if u.scheme not in ("http", "https") or not u.hostname:
            raise ValueError("the server's URL starts with http:// or https://, not %r" % url)
        self.url = url.rstrip("/")
        self.token = token
        self.room = room
        self.timeout = timeout
        self._scheme, self._host, self._port = u.scheme, u.hostname, u.port or (443 if u.scheme == "https" else 80)
        self._conn = None

    # -- transport -------------------------------------------------------------
    def _path(self, path):
        if self.room is not None and path.startswith("/api/"):
            return "/api/rooms/%s/%s" % (quote(self.room, safe=""), path[5:])
        return path

    def _connection(self):
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._scheme == "https" else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self.timeout)
        return self._conn

    def close(self):
        """Closes the HTTP connection (the next request opens another)."""
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def request(self, method, path, body=None, query=None, content_type="application/json", accept=None,
                scoped=True):
        """One request; returns (status, headers, body bytes) of a 2xx answer,
        raises FluidError for any other.  body: a dict (sent as JSON) or bytes.
        scoped: a path of this client's room (False: the server's own, as
        the rooms' routes are).

        A GET answered 421 ``misdirected`` is asked again, once, of the
        server that answer names: a server of a fleet answers so a read of
        a room another sim node holds that it cannot pass on (a snapshot, an
        export, any read with a query string), with that node's REST URL
        (``url``).  The same path and query go there with the same
        Authorization (this client's token), on a connection of their own;
        its answer is the request's.  Not from https to an http URL (the
        token would travel in the clear): the 421 is raised then, as it is
        for any other method."""
        if scoped:
            path = self._path(path)
        if query:
            q = {k: v for k, v in query.items() if v is not None}
            if q:
                path += "?" + urlencode(q)
        headers = {}
        data = None
        if body is not None:
            data = body if isinstance(body, (bytes, bytearray)) else json.dumps(body).encode()
            headers["Content-Type"] = content_type
        elif method != "GET":
            data = b""
        if data is not None:
            headers["Content-Length"] = str(len(data))
        if accept:
            headers["Accept"] = accept
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        r, payload = self._exchange(method, path, data, headers)
        if r.status == 421 and method == "GET":
            holder = _misdirected_to(r.status, r.getheader("Content-Type") or "", payload, self._scheme)
            if holder is not None:
                r, payload = _ask_once(holder, path, headers, self.timeout)
        if r.status // 100 != 2:
            raise _error(r.status, r.getheader("Content-Type") or "", payload, r.getheader("Retry-After"))
        return r.status, r, payload

    def _exchange(self, method, path, data, headers):
        """The request on this client's connection: (response, body bytes)."""
        for attempt in (0, 1):
            conn = self._connection()
            fresh = conn.sock is None
            try:
                conn.request(method, path, body=data, headers=headers)
                r = conn.getresponse()
                payload = r.read()
                break
            except (http.client.RemoteDisconnected, BrokenPipeError, ConnectionResetError):
                self.close()
                if fresh or attempt:  # only a kept-alive connection the server closed meanwhile is retried
                    raise
        if r.will_close:
            self.close()
        return r, payload

    def _json(self, method, path, body=None, query=None, scoped=True):
        _, _, payload = self.request(method, path, body, query, scoped=scoped)
        return json.loads(payload)

    # -- operations of protocol/openapi.json (method name = operationId) --------
    def list_endpoints(self) -> dict:
        """GET /api: ``{"endpoints": [...], "spec"}``, every route this server answers."""
        return self._json("GET", "/api")

    def health(self) -> dict:
        """GET /api/health: ``{"ok": true}`` while the server runs."""
        return self._json("GET", "/api/health")

    def get_stats(self) -> dict:
        """GET /api/stats: tick, sim_time, particles, scene, solver, paused and
        the simulation's and network's counters (PROTOCOL.md, REST API)."""
        return self._json("GET", "/api/stats")

    def list_scenes(self) -> dict:
        """GET /api/scenes: ``{"current", "scenes": [{"name", "doc", "default_particles", "solver"}]}``."""
        return self._json("GET", "/api/scenes")

    def load_scene(self, name: str, particles: int = None, solver: str = None) -> dict:
        """POST /api/scene: resets the world to scene ``name`` (``particles``:
        0 or None for the scene's default; ``solver``: None for the scene's
        own).  Returns ``{"ok", "scene", "solver", "particles", "tick"}``."""
        return self._json("POST", "/api/scene", _fields(name=name, particles=particles, solver=solver))

    def list_materials(self) -> dict:
        """GET /api/materials: every material with its live parameters and their ranges."""
        return self._json("GET", "/api/materials")

    def set_material_params(self, name: str, params: dict = None, **more) -> dict:
        """PATCH /api/materials/{name}: sets parameters of material ``name``,
        all or nothing (``params`` and/or keywords: parameter -> value)."""
        body = dict(params or {}, **more)
        return self._json("PATCH", "/api/materials/" + quote(name, safe=""), body)

    def pause(self) -> dict:
        """POST /api/pause: stops stepping; ``{"ok", "paused", "tick"}``."""
        return self._json("POST", "/api/pause")

    def resume(self) -> dict:
        """POST /api/resume: resumes stepping; ``{"ok", "paused", "tick"}``."""
        return self._json("POST", "/api/resume")

    def step(self, steps: int = None) -> dict:
        """POST /api/step: while paused, runs ``steps`` steps (1..1000, default
        1) and answers once they ran: ``{"ok", "steps", "tick"}``; 409 while running."""
        return self._json("POST", "/api/step", _fields(steps=steps))

    def push(self, point, radius: float, strength: float, direction) -> dict:
        """POST /api/push: adds ``strength * dir * (1 - (r/radius)^2)`` m/s to
        the velocity of the particles within ``radius`` m of ``point``
        (``direction``: a non-zero 3-vector).  ``{"ok", "touched", "tick"}``."""
        return self._json("POST", "/api/push", _fields(point=_vec(point), radius=radius, strength=strength,
                                                       direction=_vec(direction)))

    def set_emitter(self, slot: int, enabled: bool = None, pos=None, direction=None, speed: float = None,
                    radius: float = None, rate: float = None, cap: int = None, material: str = None) -> dict:
        """POST /api/emitter: defines emitter ``slot`` (0..7: pos, direction,
        speed m/s, radius m, rate particles/s, optional cap and material) or
        just switches it (``enabled`` alone).  ``{"ok", "slot", "tick"}``."""
        return self._json("POST", "/api/emitter", _fields(slot=slot, enabled=enabled, pos=_vec(pos),
                                                          direction=_vec(direction), speed=speed, radius=radius,
                                                          rate=rate, cap=cap, material=material))

    def get_particles(self, offset: int = None, limit: int = None, format: str = None):
        """GET /api/particles: a JSON page (``offset``, ``limit`` 1..10000) as a
        dict, or with ``format`` ``"ply"``, ``"vtp"``, ``"vtu"`` or ``"csv"``
        the whole world as that file's bytes.  ``particles()`` gives NumPy arrays."""
        _, _, payload = self.request("GET", "/api/particles",
                                     query={"offset": offset, "limit": limit, "format": format})
        return json.loads(payload) if format in (None, "json") else payload

    def list_bodies(self) -> dict:
        """GET /api/bodies: ``{"tick", "bodies": [...]}``, every rigid body."""
        return self._json("GET", "/api/bodies")

    def create_body(self, shape: str, size=None, pos=None, rot=None, vel=None, ang_vel=None, density: float = None,
                    friction: float = None, static: bool = None, mesh: int = None, scale: float = None) -> dict:
        """POST /api/bodies: adds a rigid body (``shape`` sphere, box or
        capsule with ``size`` [3], or ``"mesh"`` with ``mesh``, a closed mesh's
        id from ``upload_mesh``, and optional ``scale``; ``pos`` [3]; optional
        ``rot`` [w, x, y, z], ``vel``, ``ang_vel``, ``density`` kg/m^3,
        ``friction``, ``static``).  ``{"ok", "id", "tick"}``."""
        return self._json("POST", "/api/bodies", _fields(shape=shape, size=_vec(size), pos=_vec(pos), rot=_vec(rot),
                                                         vel=_vec(vel), ang_vel=_vec(ang_vel), density=density,
                                                         friction=friction, static=static, mesh=mesh, scale=scale))

    def delete_body(self, id: int) -> dict:
        """DELETE /api/bodies/{id}: removes body ``id`` (404 unknown, 409 held)."""
        return self._json("DELETE", "/api/bodies/%d" % int(id))

    def apply_body_impulse(self, id: int, point, impulse) -> dict:
        """POST /api/bodies/{id}/impulse: an impulse (N s, 3-vector) at a world point."""
        return self._json("POST", "/api/bodies/%d/impulse" % int(id), {"point": _vec(point), "impulse": _vec(impulse)})

    def list_meshes(self) -> dict:
        """GET /api/meshes: ``{"meshes": [...], "max_meshes", "max_bytes",
        "max_file_bytes", "max_triangles"}``, the meshes this room holds."""
        return self._json("GET", "/api/meshes")

    def upload_mesh(self, data: bytes, content_type: str = "model/stl") -> dict:
        """POST /api/meshes: uploads a mesh file (``content_type`` model/stl,
        model/obj or model/gltf-binary; PLY is off).  ``{"id", "format",
        "triangles", "vertices", "bounds": {"min", "max"}, "closed"}``."""
        _, _, payload = self.request("POST", "/api/meshes", bytes(data), content_type=content_type)
        return json.loads(payload)

    def list_obstacles(self) -> dict:
        """GET /api/obstacles: ``{"tick", "obstacles": [...]}``, every static mesh obstacle."""
        return self._json("GET", "/api/obstacles")

    def add_obstacle(self, mesh: int, pos=None, rot=None, scale: float = None, fit: bool = None) -> dict:
        """POST /api/obstacles: places mesh ``mesh`` as a static obstacle at
        ``pos`` [3] (optional ``rot`` [w, x, y, z], ``scale``), or with
        ``fit=True`` scaled and centred into the domain's box (``pos``, if
        given, the centre).  ``{"ok", "id", "tick"}``."""
        return self._json("POST", "/api/obstacles", _fields(mesh=int(mesh), pos=_vec(pos), rot=_vec(rot), scale=scale,
                                                           fit=fit))

    def get_obstacle_mesh(self, id: int) -> bytes:
        """GET /api/obstacles/{id}/mesh: obstacle ``id``'s placed mesh as the
        page gets it (``application/x-fluid-mesh``: the ``FSOM`` layout of
        PROTOCOL.md, 16-bit positions over its bounds and a content hash)."""
        return self.request("GET", "/api/obstacles/%d/mesh" % int(id))[2]

    def delete_obstacle(self, id: int) -> dict:
        """DELETE /api/obstacles/{id}: removes obstacle ``id`` (404 unknown)."""
        return self._json("DELETE", "/api/obstacles/%d" % int(id))

    def list_probes(self) -> dict:
        """GET /api/probes: ``{"room", "tick", "probes": [{"name", "kind",
        "pos", "normal", "radius", "value", "unit", "tick"}]}``, each probe's
        latest value (a height in m, a pressure in Pa) and its tick."""
        return self._json("GET", "/api/probes")

    def get_fleet(self) -> dict:
        """GET /api/fleet: the fleet this sim node belongs to, ``{"fleet",
        "node", "lease_s", "connected", "nodes": [{"id", "url", "budget_ms",
        "used_ms", "free_ms", "rooms", "clients", "held", "age_s", "live"}],
        "rooms": [{"name", "node", "claim", "age_s", "orphaned", "here"}]}``;
        ``fleet`` is None (and both lists empty) on a server of no fleet."""
        return self._json("GET", "/api/fleet", scoped=False)

    def drain_node(self, id: int) -> dict:
        """POST /api/fleet/nodes/{id}/drain: drains sim node ``id`` of the
        fleet (administrator; at any sim node of it): it takes no new room,
        and each room it holds moves to another node at a tick boundary,
        nothing lost.  ``{"node", "draining": true, "rooms"}`` at once (202);
        the progress is in get_fleet().  An unknown node 404; a node not
        live, or a server of no fleet, 409."""
        return self._json("POST", "/api/fleet/nodes/%d/drain" % int(id), {}, scoped=False)

    def cancel_drain(self, id: int) -> dict:
        """DELETE /api/fleet/nodes/{id}/drain: cancels sim node ``id``'s
        drain (administrator; at any sim node of the fleet): the node takes
        new rooms and takeovers again; the rooms it already moved stay where
        they are.  ``{"node", "draining": false}`` at once (202); get_fleet()
        shows the node no longer draining.  A node not draining (or not in
        the fleet) 404; a server of no fleet 409."""
        return self._json("DELETE", "/api/fleet/nodes/%d/drain" % int(id), scoped=False)

    def add_probe(self, name: str, kind: str, pos, normal=None, radius: float = None) -> dict:
        """POST /api/probes: a named probe the world measures after every
        step: ``kind`` "height" (the water's height above ``pos``) or
        "pressure" (on the patch of a face at ``pos`` whose ``normal``
        points into the fluid); optional sampling ``radius`` (m).
        ``{"ok", "index", "tick"}``; a taken name 409."""
        return self._json("POST", "/api/probes", _fields(name=name, kind=kind, pos=_vec(pos), normal=_vec(normal),
                                                         radius=radius))

    def delete_probe(self, name: str) -> dict:
        """DELETE /api/probes/{name}: removes probe ``name`` (404 unknown)."""
        return self._json("DELETE", "/api/probes/%s" % quote(str(name), safe=""))

    def list_clients(self) -> dict:
        """GET /api/clients: the WebSocket clients connected and their counters."""
        return self._json("GET", "/api/clients")

    def list_solvers(self) -> dict:
        """GET /api/solvers: ``{"solver": current, "solvers": [{"name", "doc", "params"}]}``."""
        return self._json("GET", "/api/solvers")

    def set_solver(self, name: str) -> dict:
        """POST /api/solver: switches the solver (``clavet``, ``unified``,
        ``mps``), keeping the particles.  ``{"ok", "solver", "tick"}``."""
        return self._json("POST", "/api/solver", {"name": name})

    def heat(self, point, radius: float, rate: float, duration: float = None) -> dict:
        """POST /api/heat: heats (``rate`` > 0 K/s) or cools the particles
        within ``radius`` m of ``point`` for ``duration`` s (default 0.25)."""
        return self._json("POST", "/api/heat", _fields(point=_vec(point), radius=radius, rate=rate,
                                                       duration=duration))

    def get_snapshot(self) -> bytes:
        """GET /api/snapshot: the whole world as the server's msgpack snapshot
        document (bytes; ``restore_snapshot`` takes it back)."""
        return self.request("GET", "/api/snapshot")[2]

    def restore_snapshot(self, document: bytes) -> dict:
        """POST /api/snapshot: restores a document ``get_snapshot`` returned.
        ``{"ok", "scene", "solver", "particles", "tick"}``."""
        _, _, payload = self.request("POST", "/api/snapshot", bytes(document), content_type="application/msgpack")
        return json.loads(payload)

    def get_metrics(self) -> str:
        """GET /metrics: the Prometheus text exposition."""
        return self.request("GET", "/metrics")[2].decode("utf-8")

    def set_heater(self, slot: int, enabled: bool = None, kind: str = None, point=None, radius: float = None,
                   rate: float = None, temperature: float = None) -> dict:
        """POST /api/heater: defines fixed heat source ``slot`` (0..3: ``kind``
        ``"floor"`` with radius, rate, temperature, or ``"sphere"`` with point,
        radius, rate) or just switches it (``enabled`` alone)."""
        return self._json("POST", "/api/heater", _fields(slot=slot, enabled=enabled, kind=kind, point=_vec(point),
                                                         radius=radius, rate=rate, temperature=temperature))

    def list_recordings(self, offset: int = None, limit: int = None) -> dict:
        """GET /api/recordings: the recording running, the recordings' disk,
        and a page of every recording in the folder."""
        return self._json("GET", "/api/recordings", query={"offset": offset, "limit": limit})

    def start_recording(self, name: str = None, max_mb: float = None, max_seconds: float = None) -> dict:
        """POST /api/recordings: starts recording the stream (answered once
        its first frame is on disk): ``{"ok", "tick", "name"}``."""
        return self._json("POST", "/api/recordings", _fields(name=name, max_mb=max_mb, max_seconds=max_seconds))

    def stop_recording(self) -> dict:
        """POST /api/recordings/stop: stops the recording running."""
        return self._json("POST", "/api/recordings/stop")

    def get_recording_file(self, name: str) -> bytes:
        """GET /api/recordings/{name}: one file of a recording, ``name`` being
        ``"REC/index.json"`` or ``"REC/seg-000001.fsrec"`` (bytes)."""
        return self.request("GET", "/api/recordings/" + quote(name, safe="/"))[2]

    # the rooms themselves: their paths are the server's, whatever self.room
    def list_rooms(self) -> list:
        """GET /api/rooms: the rooms of this server, each ``{"name", "url",
        "public_role", "scene", "solver", "particles", "tick",
        "realtime_ratio", "paused", "clients", "state"}``."""
        return self._json("GET", "/api/rooms", scoped=False)["rooms"]

    def create_room(self, name: str, scene: str = None, particles: int = None, public_role: str = None) -> dict:
        """POST /api/rooms: makes room ``name`` (1 to 31 of a-z, 0-9, '-')
        with its first ``scene`` of ``particles`` (None: the server's) and its
        ``public_role`` (None: player); answers the room once it runs.
        ``Client(url, room=name)`` then speaks to it."""
        body = _fields(name=name, scene=scene, particles=particles, public_role=public_role)
        return self._json("POST", "/api/rooms", body, scoped=False)

    def get_room(self, name: str) -> dict:
        """GET /api/rooms/{name}: one room (404 when none of that name is listed)."""
        return self._json("GET", "/api/rooms/" + quote(name, safe=""), scoped=False)

    def update_room(self, name: str, public_role: str) -> dict:
        """PATCH /api/rooms/{name}: sets the room's ``public_role`` (viewer,
        player, editor or owner); answers the room."""
        return self._json("PATCH", "/api/rooms/" + quote(name, safe=""), {"public_role": public_role}, scoped=False)

    def delete_room(self, name: str) -> dict:
        """DELETE /api/rooms/{name}: ends the room; its viewers are closed
        with the reason (code 4004) and its name is free (409 for default)."""
        return self._json("DELETE", "/api/rooms/" + quote(name, safe=""), scoped=False)

    def create_invite(self, name: str, role: str, ttl_s: int = None) -> dict:
        """POST /api/rooms/{name}/invites: an invite to room ``name`` granting
        ``role`` for ``ttl_s`` seconds (None: a day), as ``{"token", "url",
        "room", "role", "exp"}``; ``Client(url, token=invite["token"],
        room=name)`` then has that role there (an owner's, or the administrator's)."""
        return self._json("POST", "/api/rooms/%s/invites" % quote(name, safe=""), _fields(role=role, ttl_s=ttl_s),
                          scoped=False)

    def rotate_room_key(self, name: str) -> dict:
        """POST /api/rooms/{name}/rotate-key: every earlier invite of the room
        is refused from now on; ``{"ok", "generation"}``."""
        return self._json("POST", "/api/rooms/%s/rotate-key" % quote(name, safe=""), scoped=False)

    def kick_client(self, name: str, id: int) -> dict:
        """POST /api/rooms/{name}/clients/{id}/kick: closes client ``id``'s
        connection to the room (code 4003, with the reason)."""
        return self._json("POST", "/api/rooms/%s/clients/%d/kick" % (quote(name, safe=""), int(id)), scoped=False)

    # -- beyond the operations ----------------------------------------------------
    def particles(self, wait: float = 60.0) -> Particles:
        """The whole world as NumPy arrays in one request, through the binary
        PLY export (``GET /api/particles?format=ply``: 33 bytes a particle,
        read with one ``np.frombuffer``).  Exports are bounded per party
        (429/503 with Retry-After): this waits as told, for at most ``wait`` s."""
        deadline = time.monotonic() + wait
        while True:
            try:
                _, r, payload = self.request("GET", "/api/particles", query={"format": "ply"})
                break
            except FluidError as e:
                if e.status not in (429, 503) or time.monotonic() + (e.retry_after or 1) > deadline:
                    raise
                time.sleep(e.retry_after or 1)
        v = parse_ply(payload)
        m = re.search(r'particles-(\d+)\.ply', r.getheader("Content-Disposition") or "")
        tick = int(m.group(1)) if m else None
        if len(v) > 1 and not np.all(v["id"][1:] > v["id"][:-1]):
            v = v[np.argsort(v["id"], kind="stable")]
        pos = np.empty((len(v), 3), dtype=np.float32)
        vel = np.empty((len(v), 3), dtype=np.float32)
        for a, (p, q) in enumerate((("x", "vx"), ("y", "vy"), ("z", "vz"))):
            pos[:, a], vel[:, a] = v[p], v[q]
        return Particles(tick, v["id"].copy(), pos, vel, v["material"].copy(), v["temperature"].copy())

    def stream(self, timeout: float = 60.0, max_pending: int = 64):
        """Opens the WebSocket stream (authenticated with the token) and
        returns a Stream: iterate it for decoded frames; it sends commands
        (push, grab, set_param, ...) and waits for their replies."""
        from .stream import Stream
        return Stream(self, timeout=timeout, max_pending=max_pending)

    def ws_url(self) -> str:
        """The stream's URL (ws:// or wss://)."""
        scheme = "wss" if self._scheme == "https" else "ws"
        path = "/" if self.room is None else "/r/%s/" % quote(self.room, safe="")
        return "%s://%s:%d%s" % (scheme, self._host, self._port, path)


def _fields(**kw):
    return {k: v for k, v in kw.items() if v is not None}


def _vec(v):
    if v is None:
        return None
    return [float(x) for x in (v.tolist() if hasattr(v, "tolist") else v)]


def _misdirected_to(status, ctype, payload, scheme):
    """Where a 421 ``misdirected`` answer (status, its Content-Type, its
    body bytes) sends a read: the holder's URL split (urllib's SplitResult),
    or None when the answer is not one, names no http(s) URL with a host,
    or would take a request made over https (``scheme``) to http."""
    if status != 421 or not ctype.startswith("application/json"):
        return None
    try:
        j = json.loads(payload)
    except ValueError:
        return None
    url = j.get("url") if isinstance(j, dict) and j.get("code") == "misdirected" else None
    if not isinstance(url, str):
        return None
    try:
        u = urlsplit(url)
        u.port  # a port that is not a number raises here
    except ValueError:
        return None
    if u.scheme not in ("http", "https") or not u.hostname or (scheme == "https" and u.scheme != "https"):
        return None
    return u


def _ask_once(u, path, headers, timeout):
    """One GET of path (with its query) at the server u names (a split URL;
    its own path, if any, comes first), on a connection closed after it:
    (response, body bytes)."""
    cls = http.client.HTTPSConnection if u.scheme == "https" else http.client.HTTPConnection
    conn = cls(u.hostname, u.port or (443 if u.scheme == "https" else 80), timeout=timeout)
    try:
        conn.request("GET", u.path.rstrip("/") + path, headers=headers)
        r = conn.getresponse()
        return r, r.read()
    finally:
        conn.close()


def _error(status, ctype, payload, retry_after):
    ra = None
    if retry_after:
        try:
            ra = float(retry_after)
        except ValueError:
            pass
    if ctype.startswith("application/json"):
        try:
            j = json.loads(payload)
            return FluidError.from_status(status, j.get("error", ""), j.get("code"), ra)
        except (ValueError, AttributeError):
            pass
    return FluidError.from_status(status, payload[:500].decode("utf-8", "replace"), None, ra)
