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

import numpy as np

__all__ = ["Decoder", "DecodeError", "CodecMissing", "library_path"]

_ABI = 1  # FC_FFI_ABI of frame_ffi.h this binding speaks


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
        buf = np.frombuffer(payload, dtype=np.uint8)
        n = self._lib.fc_ffi_decode(self._h, buf.ctypes.data if len(buf) else None, len(buf))
        if n < 0:
            raise DecodeError(self._lib.fc_ffi_error(self._h).decode("utf-8", "replace"))
        seq = ctypes.c_uint32()
        grid = np.zeros(4, dtype=np.float32)
        levels = np.zeros(3, dtype=np.uint16)
        self._lib.fc_ffi_info(self._h, ctypes.addressof(seq), grid.ctypes.data, levels.ctypes.data)
        ids = np.empty(n, dtype=np.uint32)
        pos = np.empty((n, 3), dtype=np.float32)
        mat = np.empty(n, dtype=np.uint8)
        temp = np.empty(n, dtype=np.uint8)
        self._lib.fc_ffi_copy(self._h, ids.ctypes.data, pos.ctypes.data, None, mat.ctypes.data, temp.ctypes.data)
        return {"seq": seq.value, "n": n, "ids": ids, "positions": pos, "materials": mat, "temperature_bytes": temp,
                "origin": grid[:3].astype(np.float64), "step": float(grid[3]), "levels": levels}
