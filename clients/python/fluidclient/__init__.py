"""fluidclient - a Python client of the fluid server: its REST API (one
method per operation of protocol/openapi.json), the whole world as NumPy
arrays, the live WebSocket stream decoded by the project's own C frame
decoder, and recordings read offline.

    import fluidclient
    c = fluidclient.Client("http://127.0.0.1:8080")
    p = c.particles()              # positions, velocities, ids, materials, temperatures
    with c.stream() as s:
        for frame in s.frames(30):
            print(frame.tick, frame.positions.mean(axis=0))
"""
from ._codec import CodecMissing, DecodeError, Decoder, library_path
from .client import Client, Particles, parse_ply
from .errors import FluidError
from .frame import Frame
from .recording import Recording, SegmentDamage
from .stream import Stream

__version__ = "0.1.0"
__all__ = ["Client", "Particles", "Stream", "Frame", "Recording", "SegmentDamage", "FluidError", "Decoder",
           "DecodeError", "CodecMissing", "library_path", "parse_ply"]
