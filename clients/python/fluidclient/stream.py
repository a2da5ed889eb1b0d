"""stream.py - the WebSocket stream (PROTOCOL.md, "WebSocket stream"): the
hello, frames decoded by the project's C decoder as they arrive, broadcasts,
and commands sent over the same connection with their replies awaited by
request id."""
import collections
import itertools
import time

from . import _msgpack
from ._codec import DecodeError
from ._ws import WebSocket
from .errors import FluidError
from .frame import FrameDecoder

__all__ = ["Stream"]

SUBPROTOCOL = "fluid.v2"


class Stream:
    """One connection to the stream.  Iterate it for Frames (blocking, in
    order); ``hello`` is the server's last hello; ``broadcasts`` the latest
    broadcasts (``param``, ``scene``, ``solver``, ``state``, ``status``).

    Every frame is decoded as it is read, also while a command waits for its
    reply (the decoder must see every payload in order); frames read then are
    kept, at most ``max_pending``, oldest dropped first (``dropped`` counts
    them), and iteration yields them first.  A payload the decoder refuses is
    answered as PROTOCOL.md says: one ``keyframe`` request, and the frames
    until a keyframe decodes are skipped (``refused`` counts them)."""

    def __init__(self, client, timeout=60.0, max_pending=64):
        headers = {"Authorization": "Bearer " + client.token} if client.token else {}
        self.timeout = timeout
        self._ws = WebSocket(client.ws_url(), subprotocol=SUBPROTOCOL, headers=headers, timeout=timeout)
        self._rids = itertools.count(1)
        self._replies = {}
        self._frames = collections.deque()
        self.max_pending = max_pending
        self.broadcasts = collections.deque(maxlen=256)
        self.dropped = 0
        self.refused = 0
        self.last_refusal = None
        self._want_key = False
        self.hello = None
        self._dec = None
        while self.hello is None:
            self._read_one()

    # -- reading -------------------------------------------------------------
    def _read_one(self):
        """Reads and handles one message; returns a Frame or None."""
        op, data = self._ws.recv()
        if op != 2:
            return None  # the server sends binary messages only
        msg = _msgpack.unpackb(data)
        if not isinstance(msg, dict):
            return None
        t = msg.get("type")
        if t == "hello":
            self.hello = msg
            if self._dec is None:
                self._dec = FrameDecoder(msg.get("capacity", 1))
            else:
                self._dec.hello(msg)
            self._want_key = False
            return None
        if t == "frame":
            return self._frame(msg)
        if t == "reply":
            self._replies[msg.get("rid", 0)] = msg
            while len(self._replies) > 1024:  # replies nobody waits for (rid 0 refusals) do not pile up
                self._replies.pop(next(iter(self._replies)))
            return None
        self.broadcasts.append(msg)
        return None

    def _frame(self, msg):
        if self._dec is None:
            return None
        if self._want_key and not msg.get("key"):
            self.refused += 1
            return None
        try:
            f = self._dec.decode(msg)
        except DecodeError as e:
            self.refused += 1
            self.last_refusal = str(e)
            if not self._want_key:
                self._want_key = True
                self._send({"type": "keyframe", "rid": 0})
            return None
        self._want_key = False
        return f

    def _keep(self, f):
        if f is None:
            return
        self._frames.append(f)
        while len(self._frames) > self.max_pending:
            self._frames.popleft()
            self.dropped += 1

    def next_frame(self, timeout=None):
        """The next frame (a kept one first); raises TimeoutError when none
        comes within timeout (default: the stream's)."""
        if self._frames:
            return self._frames.popleft()
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while time.monotonic() < deadline:
            f = self._read_one()
            if f is not None:
                return f
        raise TimeoutError("no frame within %.0f s" % (timeout if timeout is not None else self.timeout))

    def __iter__(self):
        while True:
            yield self.next_frame()

    def frames(self, count=None):
        """Yields frames; ``count`` of them, or forever."""
        for i in itertools.count():
            if count is not None and i >= count:
                return
            yield self.next_frame()

    def drain(self):
        """Forgets the frames kept while commands waited: the next frame
        read is a new one."""
        self._frames.clear()

    def wait_tick(self, tick, timeout=None):
        """The first frame at ``tick`` or later (earlier ones are passed over)."""
        deadline = time.monotonic() + (timeout if timeout is not None else self.timeout)
        while True:
            f = self.next_frame(max(0.001, deadline - time.monotonic()))
            if f.tick >= tick:
                return f

    # -- commands ------------------------------------------------------------
    def _send(self, msg):
        self._ws.send_binary(_msgpack.packb(msg))

    def command(self, type, **fields):
        """Sends command ``type`` with ``fields`` and waits for its reply (a
        dict with ``tick`` and the command's own keys); raises FluidError
        when the server refuses it.  Frames that arrive meanwhile are decoded
        and kept for iteration."""
        rid = next(self._rids) & 0xFFFFFFFF or next(self._rids)
        msg = {"type": type, "rid": rid}
        msg.update({k: v for k, v in fields.items() if v is not None})
        self._send(msg)
        deadline = time.monotonic() + self.timeout
        while rid not in self._replies:
            if time.monotonic() > deadline:
                raise TimeoutError("no reply to %s (rid %d) within %.0f s" % (type, rid, self.timeout))
            self._keep(self._read_one())
        r = self._replies.pop(rid)
        if not r.get("ok"):
            raise FluidError.from_code(r.get("code"), r.get("error", ""))
        return r

    def send(self, type, **fields):
        """Sends a command that is answered only when refused (``cursor``,
        ``body_drag``, ``keyframe``, ``pace``) with rid 0; no wait."""
        msg = {"type": type, "rid": 0}
        msg.update({k: v for k, v in fields.items() if v is not None})
        self._send(msg)

    def push(self, point, radius, strength, direction):
        """Adds ``strength * dir * (1 - (r/radius)^2)`` m/s to the particles
        within ``radius`` of ``point``; the reply's ``touched`` counts them."""
        return self.command("push", point=_vec(point), radius=float(radius), strength=float(strength),
                            direction=_vec(direction))

    def grab(self, id, point, target):
        """Takes hold of body ``id`` at ``point`` (on the body) and pulls it
        towards ``target`` (``body_grab``); ``drag`` moves the target,
        ``release`` lets go."""
        return self.command("body_grab", id=int(id), point=_vec(point), target=_vec(target))

    def drag(self, id, target):
        """Moves the target of the body this connection holds (no reply)."""
        self.send("body_drag", id=int(id), target=_vec(target))

    def release(self, id):
        """Lets go of body ``id``."""
        return self.command("body_release", id=int(id))

    def set_param(self, material, param=None, value=None, params=None):
        """Sets one parameter (``param``, ``value``) or several (``params``
        dict) of ``material``, all or nothing."""
        if params is not None:
            return self.command("set_param", material=material, params={k: float(v) for k, v in params.items()})
        return self.command("set_param", material=material, param=param, value=float(value))

    def pace(self, stride):
        """Asks for every ``stride``-th frame only (1, 2 or 4)."""
        self.send("pace", stride=int(stride))

    def request_keyframe(self):
        """Asks for a keyframe (the next frame sent is one, at most one a second)."""
        self.send("keyframe")

    # -- closing -------------------------------------------------------------
    def close(self):
        """Closes the connection and frees the decoder (``with`` does it)."""
        self._ws.close()
        if self._dec is not None:
            self._dec._dec.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()


def _vec(v):
    return [float(x) for x in (v.tolist() if hasattr(v, "tolist") else v)]
