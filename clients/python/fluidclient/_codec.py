"""_codec.py - the project's v2 frame decoder (server/wire/frame_codec.h),
the C code the server's tests and fuzzers check, loaded through ctypes from
its stable entry point (server/wire/frame_ffi.h).

The library is looked for, in order: the file named by the environment
variable FLUID_CODEC_LIB; the copy built into this package by
`pip install` (setup.py compiles the decoder's C files); build/libfluidcodec.so
of the source tree this package sits in (`make` builds it).
"""
import ctypes
import glob
import os
import sys

import numpy as np

__all__ = ["Decoder", "DecodeError", "CodecMissing", "library_path"]

_ABI = 2  # FC_FFI_ABI of frame_ffi.h this binding speaks
_POOL = 4  # blocks a Decoder keeps for reuse (each one frame's ids, q, materials, temperature bytes)


class CodecMissing(RuntimeError):
    """The frame decoder's shared library was not found or does not fit."""


class DecodeError(ValueError):
    """A payload the decoder refused (its reason, from the C decoder)."""


def _candidates():
    env = os.environ.get("FLUID_CODEC_LIB")
    if env:
        yield env
        return
    here = os.path.dirname(os.path.abspath(__file__))
    for p in sorted(glob.glob(os.path.join(here, "_fluidcodec*.so"))):
        yield p
    yield os.path.normpath(os.path.join(here, "..", "..", "..", "build", "libfluidcodec.so"))


_lib = None
_lib_path = None


def _load():
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    tried = []
    for path in _candidates():
        tried.append(path)
        if not os.path.isfile(path):
            continue
        try:
            lib = ctypes.CDLL(path)
            abi = lib.fc_ffi_abi
        except (OSError, AttributeError) as e:
            raise CodecMissing("%s is not the fluid frame decoder library: %s" % (path, e)) from None
        abi.restype = ctypes.c_int
        if abi() != _ABI:
            raise CodecMissing("%s speaks frame_ffi ABI %d, this package %d: rebuild it (make, or pip install "
                               "./clients/python again)" % (path, abi(), _ABI))
        _bind(lib)
        _lib, _lib_path = lib, path
        return lib
    raise CodecMissing("the fluid frame decoder library was not found (looked at: %s). Build it with `make` in the "
                       "fluid-server source tree (build/libfluidcodec.so), install this package with "
                       "`pip install ./clients/python` (which compiles it), or set FLUID_CODEC_LIB to its path"
                       % ", ".join(tried))


def _bind(lib):
    vp, c_int, c_size = ctypes.c_void_p, ctypes.c_int, ctypes.c_size_t
    sigs = {
        "fc_ffi_payload_version": (c_int, []),
        "fc_ffi_create": (vp, [c_int]),
        "fc_ffi_destroy": (None, [vp]),
        "fc_ffi_reset": (None, [vp]),
        "fc_ffi_decode": (c_int, [vp, vp, c_size]),
        "fc_ffi_error": (ctypes.c_char_p, [vp]),
        "fc_ffi_info": (c_int, [vp, vp, vp, vp]),
        "fc_ffi_copy": (c_int, [vp, vp, vp, vp, vp, vp]),
        "fc_ffi_positions": (c_int, [vp, c_int, vp, vp]),
    }
    for name, (res, args) in sigs.items():
        f = getattr(lib, name)
        f.restype, f.argtypes = res, args


def library_path():
    """The path of the decoder library in use (loading it if needed)."""
    _load()
    return _lib_path


class Decoder:
    """One frame decoder: decodes a connection's (or a recording segment's)
    payloads in order.  Not shared between threads.

    decode(payload) returns a dict of NumPy arrays and the grid; see
    clients/python/README.md for how they relate to PROTOCOL.md."""

    def __init__(self, capacity):
        lib = _load()
        if not 1 <= int(capacity) <= 1 << 24:
            raise ValueError("capacity %r: must be in 1..16777216" % capacity)
        self.capacity = int(capacity)
        self._lib = lib
        self._h = lib.fc_ffi_create(self.capacity)
        if not self._h:
            raise MemoryError("no memory for a frame decoder of %d particles" % self.capacity)
        # fc_ffi_info's answers, read back into each frame's own values
        self._seq = np.zeros(1, dtype=np.uint32)
        self._grid = np.zeros(4, dtype=np.float32)
        self._levels = np.zeros(3, dtype=np.uint16)
        self._info_at = (self._seq.ctypes.data, self._grid.ctypes.data, self._levels.ctypes.data)
        # Blocks the frames' arrays are views of, reused once no frame (and
        # no array taken from one) references them: a frame's arrays are its
        # own, and a stream does not allocate (and fault in) fresh memory for
        # every frame.  At most _POOL, each at most 12 bytes a particle.
        self._pool = []

    def close(self):
        """Frees the decoder (also when the object is collected)."""
        if self._h:
            self._lib.fc_ffi_destroy(self._h)
            self._h = None

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    def reset(self):
        """Forgets every frame held (a new hello, a new segment)."""
        self._lib.fc_ffi_reset(self._h)

    def decode(self, payload):
        """Decodes one payload (bytes, bytearray or memoryview); raises
        DecodeError with the decoder's reason when it refuses it."""
        d = self._decode(payload)
        d["positions"] = _metres(d.pop("q"), d.pop("grid"))
        return d

    def _decode(self, payload):
        """decode's dict with the quantized positions as decoded (q, n x 3
        uint16) and the grid (float32 origin x y z, step) in place of
        positions: a Frame makes metres of them when they are read."""
        buf = np.frombuffer(payload, dtype=np.uint8)
        size = len(buf)
        n = self._lib.fc_ffi_decode(self._h, buf.__array_interface__["data"][0] if size else None, size)
        if n < 0:
            raise DecodeError(self._lib.fc_ffi_error(self._h).decode("utf-8", "replace"))
        self._lib.fc_ffi_info(self._h, *self._info_at)
        grid = self._grid.copy()
        blk = self._block(12 * n)
        at = blk.__array_interface__["data"][0]
        self._lib.fc_ffi_copy(self._h, at, None, at + 4 * n, at + 10 * n, at + 11 * n)
        return {"seq": int(self._seq[0]), "n": n, "ids": blk[:4 * n].view(np.uint32),
                "q": blk[4 * n:10 * n].view(np.uint16).reshape(n, 3), "materials": blk[10 * n:11 * n],
                "temperature_bytes": blk[11 * n:12 * n], "grid": grid, "origin": grid[:3].astype(np.float64),
                "step": float(grid[3]), "levels": self._levels.copy()}

    def _block(self, need):
        """A block of at least need bytes that nothing else references: a
        pooled one when one is idle, else a new one (pooled in place of a
        busy or smaller one when the pool is full)."""
        pool = self._pool
        for i in range(len(pool)):
            if len(pool[i]) >= need and _free_block(pool, i):
                return pool[i]
        blk = np.empty(max(64, min(12 * self.capacity, need + need // 8)), dtype=np.uint8)
        if len(pool) < _POOL:
            pool.append(blk)
        else:
            idle = [i for i in range(len(pool)) if _free_block(pool, i)]
            del pool[idle[0] if idle else 0]
            pool.append(blk)
        return blk


def _refs(pool, i):
    return sys.getrefcount(pool[i]) if hasattr(sys, "getrefcount") else None


# What _refs counts for a block only the pool's list references (measured
# here, as the interpreter counts it); None without reference counts.
_IDLE_REFS = _refs([np.empty(1)], 0)


def _free_block(pool, i):
    """Whether pool[i] is referenced by nothing but the pool (no frame, no
    view of one).  Without reference counts (not CPython): never."""
    return _IDLE_REFS is not None and _refs(pool, i) == _IDLE_REFS


def _metres(q, grid):
    """Metres (n x 3 float32) from quantized positions q (n x 3 uint16, C
    order) on grid (float32 origin x y z, step, as decode gives it): origin +
    q * step per axis, computed in double by the C library (fc_ffi_positions)."""
    lib = _load()
    q = np.ascontiguousarray(q, dtype=np.uint16).reshape(-1, 3)
    grid = np.ascontiguousarray(grid, dtype=np.float32)
    if grid.shape != (4,):
        raise ValueError("grid: origin x y z and step (4 values), not shape %r" % (grid.shape,))
    out = np.empty(q.shape, dtype=np.float32)
    if lib.fc_ffi_positions(q.ctypes.data, len(q), grid.ctypes.data, out.ctypes.data) < 0:
        raise ValueError("fc_ffi_positions refused %d positions" % len(q))
    return out
