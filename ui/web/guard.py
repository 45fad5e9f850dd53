"""ASGI middleware that keeps the web view private: Host, token, same-origin, security headers."""

from __future__ import annotations

import secrets
from urllib.parse import quote, urlencode

from starlette.datastructures import Headers, QueryParams
from starlette.responses import JSONResponse, PlainTextResponse, RedirectResponse, Response
from starlette.types import ASGIApp, Message, Receive, Scope, Send

SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
PUBLIC_PREFIXES = ("/static/",)
LOCAL_HOSTNAMES = ("127.0.0.1", "localhost")

CONTENT_SECURITY_POLICY = (
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; "
    "connect-src 'self'; form-action 'self'; base-uri 'none'; frame-ancestors 'none'"
)
SECURITY_HEADERS = (
    (b"x-content-type-options", b"nosniff"),
    (b"referrer-policy", b"same-origin"),
    (b"x-frame-options", b"DENY"),
)


def cookie_name(port: int | None) -> str:
    """The token cookie's name; cookies ignore ports, so each port gets its own."""
    return f"cairn_token_{port}" if port else "cairn_token"


class Guard:
    """Refuses foreign hosts, requests without the token and cross-origin writes; adds headers."""

    def __init__(self, app: ASGIApp, *, token: str, port: int | None) -> None:
        self.app = app
        self.token = token
        self.port = port
        self.cookie = cookie_name(port)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
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
        query = QueryParams(scope.get("query_string", b""))
        from_query = query.get("token")
        if not self._token_ok(headers, query):
            return _refuse(path, 401, "unauthorized", "Open the URL that `cairn web` printed: it carries the access token.")
        if scope["method"] not in SAFE_METHODS and not _same_origin(headers, host):
            return _refuse(path, 403, "cross_origin", "Refused: state-changing requests must come from this page.")
        if from_query is not None and scope["method"] == "GET" and not path.startswith("/api/"):
            # Move the token from the address bar into an HttpOnly cookie.
            rest = [(k, v) for k, v in query.multi_items() if k != "token"]
            location = quote(path) + (f"?{urlencode(rest)}" if rest else "")
            response = RedirectResponse(location, status_code=303)
            response.set_cookie(self.cookie, self.token, httponly=True, samesite="strict", path="/")
            return response
        return None

    def _host_allowed(self, host: str) -> bool:
        name, _, port = host.rpartition(":") if ":" in host else (host, "", "")
        if name not in LOCAL_HOSTNAMES:
            return False
        if self.port is None:
            return True
        return port == str(self.port)

    def _token_ok(self, headers: Headers, query: QueryParams) -> bool:
        candidates = [query.get("token"), _cookie(headers, self.cookie)]
        auth = headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            candidates.append(auth[7:].strip())
        expected = self.token.encode()
        return any(c is not None and secrets.compare_digest(c.encode(), expected) for c in candidates)


def _cookie(headers: Headers, name: str) -> str | None:
    for part in headers.get("cookie", "").split(";"):
        key, _, value = part.strip().partition("=")
        if key == name:
            return value
    return None


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


def _secure(send: Send) -> Send:
    """A `send` that adds the security headers to every response."""

    async def patched(message: Message) -> None:
        if message["type"] == "http.response.start":
            raw = list(message.get("headers", []))
            names = {name.lower() for name, _ in raw}
            if b"content-security-policy" not in names:
                raw.append((b"content-security-policy", CONTENT_SECURITY_POLICY.encode()))
            if b"cache-control" not in names:
                raw.append((b"cache-control", b"no-store"))
            raw.extend(h for h in SECURITY_HEADERS if h[0] not in names)
            message = {**message, "headers": raw}
        await send(message)

    return patched
