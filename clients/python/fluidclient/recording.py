"""recording.py - a recording folder read offline (PROTOCOL.md,
"Recordings"): index.json and its segments seg-NNNNNN.fsrec, each the
signature ``FSREC\\0\\x01\\0`` then records (uint32 length, uint8 kind,
uint32 CRC-32 of the kind byte and the bytes, the bytes): 1 a hello, 2 a
frame message as the stream sends it, 3 a broadcast, 4 the end mark.  The
frames are decoded by the same C decoder as the stream's, one decoder per
segment (a segment opens with a keyframe)."""
import glob
import json
import os
import struct
import zlib

from . import _msgpack
from ._codec import DecodeError
from .frame import FrameDecoder

__all__ = ["Recording", "SegmentDamage"]

SIGNATURE = b"FSREC\x00\x01\x00"
MAX_RECORD = 64 << 20
KINDS = {1: "header", 2: "frame", 3: "broadcast", 4: "end"}


class SegmentDamage:
    """Where reading a segment stopped early: file, byte offset, reason."""

    def __init__(self, file, offset, reason):
        self.file, self.offset, self.reason = file, offset, reason

    def __repr__(self):
        return "SegmentDamage(%r, %d, %r)" % (self.file, self.offset, self.reason)


def read_records(data):
    """Yields (kind, offset, memoryview) of a segment's records; stops at the
    first damage by returning it as (None, offset, reason)."""
    if not data.startswith(SIGNATURE):
        yield None, 0, "not a recording segment (no FSREC version 1 signature)"
        return
    mv = memoryview(data)
    off = len(SIGNATURE)
    while off < len(data):
        if off + 9 > len(data):
            yield None, off, "record head truncated at byte %d" % off
            return
        length, kind, crc = struct.unpack_from("<IBI", data, off)
        if length > MAX_RECORD or off + 9 + length > len(data):
            yield None, off, "record of %d bytes at byte %d: past the file's end or the 64 MiB bound" % (length, off)
            return
        if kind not in KINDS:
            yield None, off, "record of unknown kind %d at byte %d" % (kind, off)
            return
        body = mv[off + 9:off + 9 + length]
        if zlib.crc32(body, zlib.crc32(bytes((kind,)))) != crc:
            yield None, off, "record damaged (CRC mismatch) at byte %d" % off
            return
        yield kind, off, body
        off += 9 + length


class Recording:
    """A recording folder (``path``), read without a server.

    ``index`` is its index.json (None when missing: the segments are then
    taken in name order); ``segments`` the segment files in order; iterate
    it (or ``frames()``) for Frames, as the stream gives them;
    ``broadcasts`` collects the broadcasts read so far; ``damage`` lists
    where a segment's reading stopped early (the frames before it are
    given)."""

    def __init__(self, path):
        self.path = os.fspath(path)
        if not os.path.isdir(self.path):
            raise FileNotFoundError("no recording folder at %s" % self.path)
        ip = os.path.join(self.path, "index.json")
        self.index = None
        if os.path.exists(ip):
            with open(ip, "rb") as f:
                self.index = json.load(f)
        if self.index and self.index.get("segments"):
            names = [s["file"] for s in self.index["segments"]]
            self.segments = [os.path.join(self.path, os.path.basename(n)) for n in names]
        else:
            self.segments = sorted(glob.glob(os.path.join(self.path, "seg-*.fsrec")))
        self.hello = None
        self.broadcasts = []
        self.damage = []

    def __iter__(self):
        return self.frames()

    def frames(self, segments=None):
        """Yields every frame of the recording (or of the given segment
        files), in order."""
        dec = None
        for seg in segments or self.segments:
            with open(seg, "rb") as f:
                data = f.read()
            if dec is not None:
                dec.reset()
            for kind, off, body in read_records(data):
                if kind is None:
                    self.damage.append(SegmentDamage(seg, off, body))
                    break
                if kind == 1:
                    self.hello = _msgpack.unpackb(body)
                    if dec is None:
                        dec = FrameDecoder(self.hello.get("capacity", 1))
                    else:
                        dec.hello(self.hello)
                elif kind == 2:
                    if dec is None:
                        self.damage.append(SegmentDamage(seg, off, "a frame before the segment's header"))
                        break
                    try:
                        yield dec.decode(_msgpack.unpackb(body))
                    except DecodeError as e:
                        self.damage.append(SegmentDamage(seg, off, "frame refused: %s" % e))
                        break
                elif kind == 3:
                    self.broadcasts.append(_msgpack.unpackb(body))
                # kind 4: the end mark, nothing follows it in a closed segment
