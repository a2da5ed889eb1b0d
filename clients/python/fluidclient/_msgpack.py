"""_msgpack.py - the subset of MessagePack the fluid protocol uses, in pure
Python (the package depends on nothing beyond the standard library and
NumPy): nil, booleans, integers, float32/64, str, bin, arrays and maps.

`unpackb` returns `bin` values as memoryviews into the message (no copy: a
frame's payload goes to the decoder as it arrived); `packb` writes floats
as float64 and integers in their shortest form, as the server accepts.
"""
import struct

__all__ = ["packb", "unpackb", "MsgpackError"]


class MsgpackError(ValueError):
    """A message that is not the msgpack this protocol uses."""


_MAX_DEPTH = 16


def packb(obj):
    """Encodes obj (None, bool, int, float, str, bytes, list/tuple, dict)."""
    out = bytearray()
    _pack(obj, out, 0)
    return bytes(out)


def _pack(o, out, depth):
    if depth > _MAX_DEPTH:
        raise MsgpackError("nesting deeper than %d" % _MAX_DEPTH)
    if o is None:
        out.append(0xC0)
    elif o is True:
        out.append(0xC3)
    elif o is False:
        out.append(0xC2)
    elif isinstance(o, int):
        _pack_int(o, out)
    elif isinstance(o, float):
        out.append(0xCB)
        out += struct.pack(">d", o)
    elif isinstance(o, str):
        b = o.encode("utf-8")
        n = len(b)
        if n < 32:
            out.append(0xA0 | n)
        elif n < 256:
            out += bytes((0xD9, n))
        elif n < 65536:
            out += b"\xda" + struct.pack(">H", n)
        else:
            out += b"\xdb" + struct.pack(">I", n)
        out += b
    elif isinstance(o, (bytes, bytearray, memoryview)):
        b = bytes(o)
        n = len(b)
        if n < 256:
            out += bytes((0xC4, n))
        elif n < 65536:
            out += b"\xc5" + struct.pack(">H", n)
        else:
            out += b"\xc6" + struct.pack(">I", n)
        out += b
    elif isinstance(o, (list, tuple)):
        n = len(o)
        if n < 16:
            out.append(0x90 | n)
        elif n < 65536:
            out += b"\xdc" + struct.pack(">H", n)
        else:
            out += b"\xdd" + struct.pack(">I", n)
        for v in o:
            _pack(v, out, depth + 1)
    elif isinstance(o, dict):
        n = len(o)
        if n < 16:
            out.append(0x80 | n)
        elif n < 65536:
            out += b"\xde" + struct.pack(">H", n)
        else:
            out += b"\xdf" + struct.pack(">I", n)
        for k, v in o.items():
            _pack(k, out, depth + 1)
            _pack(v, out, depth + 1)
    elif hasattr(o, "tolist"):  # NumPy scalars and arrays
        _pack(o.tolist(), out, depth)
    else:
        raise MsgpackError("cannot encode %r" % type(o).__name__)


def _pack_int(v, out):
    if 0 <= v < 128:
        out.append(v)
    elif -32 <= v < 0:
        out.append(v & 0xFF)
    elif 0 <= v < 2**8:
        out += bytes((0xCC, v))
    elif 0 <= v < 2**16:
        out += b"\xcd" + struct.pack(">H", v)
    elif 0 <= v < 2**32:
        out += b"\xce" + struct.pack(">I", v)
    elif 0 <= v < 2**64:
        out += b"\xcf" + struct.pack(">Q", v)
    elif -(2**7) <= v:
        out += b"\xd0" + struct.pack(">b", v)
    elif -(2**15) <= v:
        out += b"\xd1" + struct.pack(">h", v)
    elif -(2**31) <= v:
        out += b"\xd2" + struct.pack(">i", v)
    elif -(2**63) <= v:
        out += b"\xd3" + struct.pack(">q", v)
    else:
        raise MsgpackError("integer %d does not fit 64 bits" % v)


# fixed-size heads: (struct format, size) for ints and floats
_FIXED = {
    0xCA: (">f", 4), 0xCB: (">d", 8),
    0xCC: (">B", 1), 0xCD: (">H", 2), 0xCE: (">I", 4), 0xCF: (">Q", 8),
    0xD0: (">b", 1), 0xD1: (">h", 2), 0xD2: (">i", 4), 0xD3: (">q", 8),
}


def unpackb(data):
    """Decodes one msgpack value that fills data exactly (bytes, bytearray or
    memoryview).  `bin` values come back as memoryviews into data."""
    mv = memoryview(data).cast("B") if not isinstance(data, memoryview) else data.cast("B")
    v, pos = _unpack(mv, 0, 0)
    if pos != len(mv):
        raise MsgpackError("%d bytes after the value" % (len(mv) - pos))
    return v


def _need(mv, pos, n):
    if pos + n > len(mv):
        raise MsgpackError("truncated: %d bytes needed at offset %d of %d" % (n, pos, len(mv)))


def _unpack(mv, pos, depth):
    if depth > _MAX_DEPTH:
        raise MsgpackError("nesting deeper than %d" % _MAX_DEPTH)
    _need(mv, pos, 1)
    b = mv[pos]
    pos += 1
    if b < 0x80:
        return b, pos
    if b >= 0xE0:
        return b - 256, pos
    if 0xA0 <= b <= 0xBF:
        return _str(mv, pos, b & 0x1F)
    if 0x90 <= b <= 0x9F:
        return _array(mv, pos, b & 0x0F, depth)
    if 0x80 <= b <= 0x8F:
        return _map(mv, pos, b & 0x0F, depth)
    if b == 0xC0:
        return None, pos
    if b == 0xC2:
        return False, pos
    if b == 0xC3:
        return True, pos
    if b in _FIXED:
        fmt, n = _FIXED[b]
        _need(mv, pos, n)
        return struct.unpack_from(fmt, mv, pos)[0], pos + n
    if b in (0xD9, 0xDA, 0xDB, 0xC4, 0xC5, 0xC6, 0xDC, 0xDD, 0xDE, 0xDF):
        width = {0xD9: 1, 0xC4: 1, 0xDA: 2, 0xC5: 2, 0xDC: 2, 0xDE: 2}.get(b, 4)
        _need(mv, pos, width)
        n = int.from_bytes(mv[pos:pos + width], "big")
        pos += width
        if b in (0xD9, 0xDA, 0xDB):
            return _str(mv, pos, n)
        if b in (0xC4, 0xC5, 0xC6):
            _need(mv, pos, n)
            return mv[pos:pos + n], pos + n
        if b in (0xDC, 0xDD):
            return _array(mv, pos, n, depth)
        return _map(mv, pos, n, depth)
    raise MsgpackError("unsupported msgpack type 0x%02x at offset %d" % (b, pos - 1))


def _str(mv, pos, n):
    _need(mv, pos, n)
    try:
        return str(mv[pos:pos + n], "utf-8"), pos + n
    except UnicodeDecodeError as e:
        raise MsgpackError("a str that is not UTF-8: %s" % e) from None


def _array(mv, pos, n, depth):
    _need(mv, pos, n)  # every element takes at least a byte
    out = []
    for _ in range(n):
        v, pos = _unpack(mv, pos, depth + 1)
        out.append(v)
    return out, pos


def _map(mv, pos, n, depth):
    _need(mv, pos, 2 * n)
    out = {}
    for _ in range(n):
        k, pos = _unpack(mv, pos, depth + 1)
        v, pos = _unpack(mv, pos, depth + 1)
        try:
            out[k] = v
        except TypeError:
            raise MsgpackError("a map key of type %s" % type(k).__name__) from None
    return out, pos
