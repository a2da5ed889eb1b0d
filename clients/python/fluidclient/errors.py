"""errors.py - the one exception the client raises for a refusal by the
server, over REST or the WebSocket (PROTOCOL.md, "Reply codes")."""

__all__ = ["FluidError", "STATUS_OF_CODE"]

# PROTOCOL.md, "Reply codes": the HTTP status each code comes with.
STATUS_OF_CODE = {
    "bad_request": 400, "unauthorized": 401, "forbidden": 403, "not_found": 404, "method_not_allowed": 405,
    "not_acceptable": 406, "conflict": 409, "length_required": 411, "too_large": 413, "rate_limited": 429,
    "internal": 500, "not_implemented": 501, "busy": 503, "no_space": 507,
    "timeout": 504, "misdirected": 421,
}
_CODE_OF_STATUS = {v: k for k, v in STATUS_OF_CODE.items()}


class FluidError(Exception):
    """The server refused a request or a command.

    status: the HTTP status (for a WebSocket reply, the status its code has
    over REST); code: the reply code (``"not_found"``, ``"conflict"``, ...;
    decide by it, not by the text); message: the server's sentence;
    retry_after: seconds from a ``Retry-After`` header, else None."""

    def __init__(self, status, code, message, retry_after=None):
        super().__init__("%s (%s %d)" % (message, code, status))
        self.status = int(status)
        self.code = code
        self.message = message
        self.retry_after = retry_after

    @classmethod
    def from_code(cls, code, message):
        """The error of a WebSocket reply's code, with the status it has over REST."""
        return cls(STATUS_OF_CODE.get(code, 500), code or "internal", message)

    @classmethod
    def from_status(cls, status, message, code=None, retry_after=None):
        """The error of a REST answer: its status, and its code when the
        body names none."""
        return cls(status, code or _CODE_OF_STATUS.get(status, "internal"), message, retry_after)
