"""Request body limits: a body is refused as soon as it is known to be too large, never read whole first."""

from __future__ import annotations

from starlette.requests import Request

# The most JSON may spend on one byte of a note's UTF-8: `\u0001` is six bytes for one, and a
# client that escapes everything but ASCII (Python's json.dumps) spends six on "é"'s two.
JSON_EXPANSION = 6
JSON_OVERHEAD_BYTES = 64 * 1024


class BodyTooLarge(Exception):
    """The request body is, or announces that it is, larger than the limit."""


def note_body_limit(max_note_bytes: int) -> int:
    """The largest PUT body that can carry a note of `max_note_bytes` as JSON."""
    return JSON_EXPANSION * max_note_bytes + JSON_OVERHEAD_BYTES


def human_size(size: int) -> str:
    """A byte count as people write it: `8 MiB`, `64 KiB`, `1000 bytes`."""
    for unit, scale in (("MiB", 1024 * 1024), ("KiB", 1024)):
        if size >= scale and size % scale == 0:
            return f"{size // scale} {unit}"
    return f"{size} bytes"


async def read_body(request: Request, limit: int) -> bytes:
    """The request body, or BodyTooLarge once its Content-Length or the bytes streamed so far exceed `limit`."""
    declared = request.headers.get("content-length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > limit:
        raise BodyTooLarge(f"{declared} bytes announced")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > limit:
            raise BodyTooLarge(f"more than {limit} bytes sent")
    return bytes(body)
