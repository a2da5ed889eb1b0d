"""frame.py - one decoded frame of the stream or of a recording
(PROTOCOL.md, "frame" and "Frame payload, version 2")."""
import numpy as np

from ._codec import Decoder, DecodeError, _metres

__all__ = ["Frame", "FrameDecoder"]


class Frame:
    """The world as one frame carries it.

    tick, sim_time (simulated s), seq (the frame's number), key (a keyframe),
    paused, n; ids (uint32, increasing), positions (n x 3 float32, metres:
    origin + q * step, within step / 2 of the server's on each axis; made
    from the quantized positions q as decoded when first read, like
    temperatures),
    materials (uint8 indices into hello["materials"]), temperatures (float32
    deg C, whole degrees: -40 + byte; made from temperature_bytes when first
    read, so a frame whose temperatures are not read costs no pass over
    them), temperature_bytes (uint8);
    velocities: None (a frame carries no velocities: ``Client.particles()``
    has them); bodies and cursors (lists of dicts, as the message has them);
    probes (dict: each probe's name to its value at this tick, m for a
    height probe, Pa for a pressure sensor, in the order they were added;
    empty when the world has none: ``Client.list_probes()`` has their kinds);
    step (metres), origin (3), levels (3): the quantization grid; bounds;
    lod: None for the full world, else the frame's tier of detail as the
    message has it ({"tier", "keep", "step"}: about 1 in keep particles on
    a grid of that step; PROTOCOL.md, "Tiers of detail")."""

    __slots__ = ("tick", "sim_time", "seq", "key", "paused", "n", "ids", "_positions", "_q", "_grid", "velocities",
                 "materials", "_temperatures", "temperature_bytes", "bodies", "cursors", "probes", "step", "origin",
                 "levels", "bounds", "lod")

    @property
    def positions(self):
        """n x 3 float32 metres, origin + q * step (made when first read)."""
        if self._positions is None:
            self._positions = _metres(self._q, self._grid)
        return self._positions

    @positions.setter
    def positions(self, value):
        self._positions = value

    @property
    def temperatures(self):
        """float32 deg C, -40 + temperature_bytes (made when first read)."""
        if self._temperatures is None:
            self._temperatures = np.subtract(self.temperature_bytes, 40, dtype=np.float32)
        return self._temperatures

    def __repr__(self):
        return "Frame(tick=%d, seq=%d, n=%d, key=%s, step=%.3g)" % (self.tick, self.seq, self.n, self.key, self.step)


class FrameDecoder:
    """Decodes frame messages (dicts from msgpack) in order: a decoder sized
    by hello["capacity"], reset at every hello."""

    def __init__(self, capacity):
        self.capacity = int(capacity)
        self._dec = Decoder(self.capacity)

    def hello(self, hello):
        cap = int(hello.get("capacity", self.capacity))
        if cap != self.capacity:
            self._dec.close()
            self._dec = Decoder(cap)
            self.capacity = cap
        else:
            self._dec.reset()

    def reset(self):
        self._dec.reset()

    def decode(self, msg):
        """A Frame from a frame message; raises DecodeError when refused."""
        data = msg.get("data")
        if data is None:
            raise DecodeError("a frame message without data")
        d = self._dec._decode(data)
        f = Frame()
        f.tick = int(msg.get("tick", 0))
        f.sim_time = float(msg.get("time", 0.0))
        f.seq = d["seq"]
        f.key = bool(msg.get("key", False))
        f.paused = bool(msg.get("paused", False))
        f.n = d["n"]
        f.ids, f.materials = d["ids"], d["materials"]
        f._q, f._grid, f._positions = d["q"], d["grid"], None
        f.temperature_bytes = d["temperature_bytes"]
        f._temperatures = None
        f.velocities = None
        f.bodies = list(msg.get("bodies") or [])
        f.cursors = list(msg.get("cursors") or [])
        f.probes = {str(k): float(v) for k, v in (msg.get("probes") or {}).items()}
        f.step, f.origin, f.levels = d["step"], d["origin"], d["levels"]
        f.bounds = list(msg.get("bounds") or [])
        lod = msg.get("lod")
        f.lod = dict(lod) if lod else None
        return f
