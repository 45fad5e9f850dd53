"""ASGI middleware that keeps the web view private: Host, token, same-origin, security headers.

The token never rides on a cookie: cookies ignore ports, so a cookie for 127.0.0.1:PORT
is also sent to every other server on 127.0.0.1, and anything a browser attaches to a
navigation by itself can be replayed by such a server. Requests prove themselves with
`Authorization: Bearer`, which only this origin's scripts can set; page URLs opened
without it get the public shell page, whose script adds it (see static/shell.js).
"""

from __future__ import annotations

import secrets

from starlette.datastructures import Headers, QueryParams
from starlette.responses import HTMLResponse, JSONResponse, PlainTextResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PREFIXES = ("/static/",)
PAGE_PREFIXES = ("/note/", "/edit/", "/graph/")
PAGE_PATHS = ("/", "/notes", "/why", "/tags")
LOCAL_HOSTNAMES = ("127.0.0.1", "localhost")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data: blob:; "
    "font-src 'self'; media-src blob:; frame-src blob:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
    # No other origin gets a handle on our windows or may embed our responses.
    (b"cross-origin-opener-policy", b"same-origin"),
    (b"cross-origin-resource-policy", b"same-origin"),
)


def security_headers() -> dict[str, str]:
    """The headers every response carries, for responses built outside the middleware."""
    pairs = [(b"content-security-policy", CONTENT_SECURITY_POLICY.encode()), (b"cache-control", b"no-store")]
    return {name.decode(): value.decode() for name, value in (*pairs, *SECURITY_HEADERS)}


def is_page(path: str) -> bool:
    """Whether `path` is a page a person opens (answered with the shell when it lacks the token)."""
    return path in PAGE_PATHS or path.startswith(PAGE_PREFIXES)


class Guard:
    """Refuses foreign hosts, requests without the token and cross-origin writes; adds headers."""

    def __init__(self, app: ASGIApp, *, token: str, port: int | None, shell: str) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.shell = shell

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "websocket":
            # The web view has no websockets; closing before accepting answers 403.
            await send({"type": "websocket.close", "code": 1008})
            return
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        secured = _secure(send)
        refusal = self._check(scope)
        if refusal is not None:
            await refusal(scope, receive, secured)
            return
        await self.app(scope, receive, secured)

    def _check(self, scope: Scope) -> Response | None:
        headers = Headers(scope=scope)
        host = headers.get("host", "")
        if not self._host_allowed(host):
            return PlainTextResponse("Refused: unexpected Host header.", status_code=403)
        path: str = scope["path"]
        if path.startswith(PUBLIC_PREFIXES):
            return None
        bearer = _bearer(headers)
        if bearer is None and scope["method"] in ("GET", "HEAD") and is_page(path):
            # A navigation: the shell (no vault data) fetches this URL again with the header.
            return HTMLResponse(self.shell)
        offered = bearer
        if offered is None and path.startswith("/api/"):
            # API clients may pass `?token=`; pages never take it (the shell strips it).
            offered = QueryParams(scope.get("query_string", b"")).get("token")
        if not self._token_ok(offered):
            return _refuse(path, 401, "unauthorized", "Open the URL that `cairn web` printed: it carries the access token.")
        if scope["method"] not in SAFE_METHODS and not _same_origin(headers, host):
            return _refuse(path, 403, "cross_origin", "Refused: state-changing requests must come from this page.")
        return None

    def _host_allowed(self, host: str) -> bool:
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "")
        if name not in LOCAL_HOSTNAMES:
            return False
        if self.port is None:
            return True
        return port == str(self.port)

    def _token_ok(self, offered: str | None) -> bool:
        return offered is not None and secrets.compare_digest(offered.encode(), self.token.encode())


def _bearer(headers: Headers) -> str | None:
    auth = headers.get("authorization")
    if auth is None or not auth.lower().startswith("bearer "):
        return None
    return auth[7:].strip()


def _same_origin(headers: Headers, host: str) -> bool:
    """Whether a state-changing request provably comes from this origin."""
    origin = f"http://{host}"
    if "origin" in headers:
        return headers["origin"] == origin
    site = headers.get("sec-fetch-site")
    if site is not None:
        return site == "same-origin"
    referer = headers.get("referer")
    return referer is not None and (referer == origin or referer.startswith(origin + "/"))


def _refuse(path: str, status: int, code: str, message: str) -> Response:
    if path.startswith("/api/"):
        return JSONResponse({"error": code, "message": message}, status_code=status)
    return PlainTextResponse(message, status_code=status)


def _local_location(value: bytes) -> bool:
    """Whether a Location header stays on this origin (`//host` and `/\\host` leave it)."""
    return value.startswith(b"/") and not value.startswith((b"//", b"/\\"))


def _secure(send: Send) -> Send:
    """A `send` that adds the security headers to every response and stops off-origin redirects."""

    async def patched(message: Message) -> None:
        if message["type"] == "http.response.start":
            raw = list(message.get("headers", []))
            names = {name.lower() for name, _ in raw}
            if b"content-security-policy" not in names:
                raw.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
            if b"cache-control" not in names:
                raw.append((b"cache-control", b"no-store"))
            raw.extend(h for h in SECURITY_HEADERS if h[0] not in names)
            status = message["status"]
            if any(name.lower() == b"location" and not _local_location(value) for name, value in raw):
                # No route redirects today; this keeps a future one from sending a visitor elsewhere.
                raw = [(name, value) for name, value in raw if name.lower() != b"location"]
                status = 500
            message = {**message, "status": status, "headers": raw}
        await send(message)

    return patched
