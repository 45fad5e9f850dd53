"""The web view's Starlette app: pages, the small JSON API, and the guard in front of both."""

from __future__ import annotations

import contextlib
import errno
import json
import logging
import math
import mimetypes
import stat
from collections.abc import AsyncIterator, Callable, Mapping, Sequence
from http import HTTPStatus
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from starlette.applications import Starlette
from starlette.concurrency import run_in_threadpool
from starlette.exceptions import HTTPException
from starlette.requests import ClientDisconnect, Request
from starlette.responses import FileResponse, HTMLResponse, JSONResponse, Response
from starlette.routing import Mount, Route
from starlette.staticfiles import StaticFiles

from engine.config import MAX_GRAPH_WEIGHT
from engine.errors import (
    MAX_MESSAGE_CHARS,
    CairnError,
    EncodingMismatch,
    IndexLocked,
    NoteExists,
    NoteNotEditable,
    NoteNotFound,
    NoteNotSaved,
    SaveConflict,
    UnsafePath,
)
from engine.present import brief, results_to_json, status_to_json, vectors_text, why_to_json
from ui.web import pages
from ui.web.guard import Guard, security_headers
from ui.web.indexing import BackgroundIndexer
from ui.web.limits import BodyTooLarge, human_size, note_body_limit, read_body
from ui.web.render import IMAGE_SUFFIXES, LinkTable, render_note

if TYPE_CHECKING:
    from engine.api import Engine
    from engine.records import ChannelName, NoteText, SearchResults, VaultEntry, WhyReport

STATIC_DIR = Path(__file__).resolve().parent / "static"
CHANNELS: tuple[ChannelName, ...] = ("fulltext", "vectors", "graph")
FILE_CSP = "default-src 'none'; img-src 'self'; style-src 'unsafe-inline'; sandbox"
LIMIT_MESSAGE = "limit must be a whole number (1-200)"

log = logging.getLogger("cairn.web")


class BadPath(Exception):
    """A request path that names nothing in the vault the web view may touch."""


def build_app(
    engine: Engine, token: str, *, port: int | None = None, reindex: bool = True, watch: bool | None = None
) -> Starlette:
    """The web view over `engine`, reachable only with `token` on 127.0.0.1/localhost[:port].

    Args:
        engine: an open engine; the app never closes it.
        token: the access token (`Authorization: Bearer`, or `?token=` for /api/).
        port: the bound port the Host header must name (None accepts any port).
        reindex: run `engine.reindex()` in a background thread while the app runs.
        watch: then follow changes made on disk with the engine's watcher (default: `reindex`).
    """
    watching = reindex if watch is None else watch
    indexer = BackgroundIndexer(engine, watch=watching)
    views = _Views(engine, indexer)

    @contextlib.asynccontextmanager
    async def lifespan(_app: Starlette) -> AsyncIterator[None]:
        if reindex:
            indexer.start()
        elif watching:
            indexer.start_watching()
        try:
            yield
        finally:
            await run_in_threadpool(indexer.stop)

    routes = [
        Route("/", views.search_page),
        Route("/notes", views.notes_page),
        Route("/search/results", views.search_fragment),
        Route("/note/{path:path}", views.note_page),
        Route("/edit/{path:path}", views.edit_page),
        Route("/graph/{path:path}", views.graph_page),
        Route("/file/{path:path}", views.file),
        Route("/why", views.why_page),
        Route("/tags", views.tags_page),
        Route("/api/complete", views.api_complete),
        Route("/api/render", views.api_render, methods=["POST"]),
        Route("/api/search", views.api_search),
        Route("/api/why", views.api_why),
        Route("/api/status", views.api_status),
        Route("/api/notes", views.api_notes, methods=["GET"]),
        Route("/api/notes", views.api_note_create, methods=["POST"]),
        Route("/api/notes/{path:path}", views.api_note_get, methods=["GET"]),
        Route("/api/notes/{path:path}", views.api_note_put, methods=["PUT"]),
        Mount("/static", StaticFiles(directory=STATIC_DIR), name="static"),
    ]
    handlers = {HTTPException: views.http_error, CairnError: views.engine_error, Exception: views.server_error}
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers=handlers)
    # A trailing-slash redirect would be the only redirect: every URL answers where it is.
    app.router.redirect_slashes = False
    app.state.engine = engine
    app.state.indexer = indexer
    app.add_middleware(Guard, token=token, port=port, shell=pages.shell_page())
    return app


GRAPH_SEEDINGS = ("query", "chunks", "both")
_T = TypeVar("_T", int, float)


def _number(params: Mapping[str, str], name: str, kind: Callable[[str], _T], maximum: float = math.inf) -> _T | None:
    """An optional non-negative number parameter (`graph_weight=2`, `max_hops=1`); a 400 when it is not one."""
    raw = params.get(name)
    if raw is None or raw == "":
        return None
    try:
        value = kind(raw)
    except ValueError:
        raise HTTPException(400, f"{name} must be a number of at least 0") from None
    if not math.isfinite(value) or value < 0:
        raise HTTPException(400, f"{name} must be a number of at least 0")
    if value > maximum:
        raise HTTPException(400, f"{name} must be at most {maximum:g}")
    return value


def _graph_knobs(params: Mapping[str, str]) -> dict[str, Any]:
    """`graph_weight`, `max_hops` and `graph_seeding` for one search (or why), as `Engine.search` takes them; a 400 when one is bad."""
    seeding = params.get("graph_seeding") or None
    if seeding is not None and seeding not in GRAPH_SEEDINGS:
        raise HTTPException(400, f"graph_seeding must be one of {', '.join(GRAPH_SEEDINGS)}")
    return {
        "graph_weight": _number(params, "graph_weight", float, MAX_GRAPH_WEIGHT),
        "max_hops": _number(params, "max_hops", int),
        "graph_seeding": seeding,
    }


def vault_path(raw: str) -> str:
    """A request path as a vault-relative POSIX path; refuses absolute, empty, `.`/`..` and hidden parts.

    Hidden parts (`.cairn/`, `.obsidian/`, `.git/`) are the index and tool folders, never notes.
    """
    if not raw or raw.startswith(("/", "\\")) or "\\" in raw or "\x00" in raw:
        raise BadPath(f"not a vault path: {raw!r}")
    parts = raw.split("/")
    if any(not part or part.startswith(".") for part in parts):
        raise BadPath(f"not a vault path: {raw!r}")
    return raw


class _Views:
    """Request handlers; engine calls run in the thread pool."""

    def __init__(self, engine: Engine, indexer: BackgroundIndexer) -> None:
        self.engine = engine
        self.indexer = indexer

    # -- helpers -------------------------------------------------------------------
    def _page(
        self, title: str, content: str, *, script: str | Sequence[str] | None = None, status: int = 200, body_class: str = ""
    ) -> HTMLResponse:
        html = pages.page(title, content, vault=self.engine.vault, script=script, body_class=body_class)
        return HTMLResponse(html, status_code=status)

    def _error(self, request: Request, status: int, code: str, message: str) -> Response:
        message = brief(message, MAX_MESSAGE_CHARS)  # a message that repeats a pasted name keeps its ends
        if request.url.path.startswith("/api/"):
            return JSONResponse({"error": code, "message": message}, status_code=status)
        return self._page(code.replace("_", " "), pages.error_page(code.replace("_", " ").capitalize(), message),
                          status=status)

    # -- errors no handler caught --------------------------------------------------
    async def http_error(self, request: Request, exc: Exception) -> Response:
        """An HTTPException (a bad parameter, an unknown route or method) as JSON or an error page."""
        assert isinstance(exc, HTTPException)
        try:
            code = HTTPStatus(exc.status_code).phrase.lower().replace(" ", "_").replace("-", "_")
        except ValueError:
            code = "http_error"
        return self._error(request, exc.status_code, code, str(exc.detail))

    async def engine_error(self, request: Request, exc: Exception) -> Response:
        """An engine error outside `_guarded` (say, a damaged index during a search), with its title."""
        assert isinstance(exc, CairnError)
        log.warning("%s %s: %s: %s", request.method, brief(request.url.path), exc.title, exc)
        statuses = ((NoteNotFound, 404), (UnsafePath, 400), (NoteNotEditable, 422), (IndexLocked, 503))
        status = next((code for kind, code in statuses if isinstance(exc, kind)), 500)
        return self._error(request, status, "engine_error", f"{exc.title}: {exc}")

    async def server_error(self, request: Request, exc: Exception) -> Response:
        """Any other exception: a 500 that shows no internals; Starlette re-raises it, so the server logs it."""
        message = "Cairn hit an unexpected error; the terminal running `cairn web` has the details."
        response = self._error(request, 500, "internal", message)
        # This runs outside the guard (Starlette's outermost layer), so it adds the headers itself.
        response.headers.update(security_headers())
        return response

    async def _guarded(self, request: Request, handler: Callable[[str], Response]) -> Response:
        """Run `handler(path)` in the thread pool, mapping path, note and file errors to 400/403/404."""
        raw = request.path_params["path"]
        try:
            path = vault_path(raw)
            return await run_in_threadpool(self._resolvable_then, handler, path)
        except (BadPath, UnsafePath) as exc:
            return self._error(request, 400, "unsafe_path", str(exc))
        except NoteNotFound as exc:
            return self._error(request, 404, "not_found", f"No note at {exc}")
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError) as exc:
            return self._error(request, 404, "not_found", f"No file: {exc.filename}")
        except PermissionError:
            return self._error(request, 403, "forbidden", f"Cairn may not open {raw!r} (permission denied)")
        except OSError as exc:
            if exc.errno in (errno.ELOOP, errno.ENAMETOOLONG):
                return self._error(request, 400, "unsafe_path", f"cannot open {raw!r}: {exc.strerror}")
            raise

    def _resolvable_then(self, handler: Callable[[str], Response], path: str) -> Response:
        """Refuse a path that cannot be resolved (a symlink loop) or is no file or folder, then run `handler`."""
        try:
            target = self.engine.resolve_path(path)
        except RuntimeError as exc:  # pathlib's "Symlink loop" (Python < 3.13 raises no OSError)
            raise BadPath(f"{path!r} is a symlink loop") from exc
        try:
            mode: int | None = target.stat().st_mode
        except (FileNotFoundError, NotADirectoryError):
            mode = None  # nothing there yet: a note may be created
        if mode is not None and not (stat.S_ISREG(mode) or stat.S_ISDIR(mode)):
            # Reading a FIFO or a device would block this thread for good.
            raise BadPath(f"{path!r} is not a regular file")
        return handler(path)

    def _read(self, path: str) -> NoteText:
        """A note as it is on disk now: LF text, decoded as the indexer reads it, and the sha of its bytes."""
        note = self.engine.read_note(path)
        if note.sha is None:
            raise NoteNotFound(path)
        return note

    def _search(self, request: Request, *, typing: bool) -> SearchResults:
        params = request.query_params
        query = params.get("q", "")
        try:
            limit = max(1, min(200, int(params.get("limit") or "20")))
        except ValueError:
            raise HTTPException(400, LIMIT_MESSAGE) from None
        names = [c.strip() for c in params.get("channels", "").split(",") if c.strip()]
        unknown = [c for c in names if c not in CHANNELS]
        if unknown:
            raise HTTPException(400, f"unknown channel(s): {', '.join(unknown)}")
        as_you_type = params.get("typing", "1" if typing else "0") not in ("0", "false", "")
        # Naming no channel (`channels=`, `channels=,`) asks for no restriction: all of them.
        channels = tuple(c for c in CHANNELS if c in names) or CHANNELS
        return self.engine.search(query, limit=limit, channels=channels, as_you_type=as_you_type, **_graph_knobs(params))

    # -- pages ---------------------------------------------------------------------
    async def search_page(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        results = await run_in_threadpool(self._search, request, typing=False) if query.strip() else None
        recent = await run_in_threadpool(self.engine.recent_notes, 8)
        content = pages.search_page(query, pages.results_fragment(results), recent)
        return self._page(query or "Search", content, script="search.js", body_class="page-search")

    async def notes_page(self, request: Request) -> Response:
        def build() -> tuple[list[VaultEntry], list[tuple[str, str]]]:
            return self.engine.vault_files(), self.engine.recent_notes(12)

        notes, recent = await run_in_threadpool(build)
        return self._page("Notes", pages.notes_page(notes, recent), script="notes.js", body_class="page-notes")

    async def search_fragment(self, request: Request) -> Response:
        query = request.query_params.get("q", "")
        results = await run_in_threadpool(self._search, request, typing=True) if query.strip() else None
        return HTMLResponse(pages.results_fragment(results))

    async def note_page(self, request: Request) -> Response:
        def build(path: str) -> Response:
            view = self.engine.note(path)
            rendered = self._render(path, view.text, LinkTable.from_links(view.links))
            content = pages.note_page(
                path=path,
                title=view.info.title,
                rendered=rendered,
                backlinks=self.engine.backlinks(path),
                related=self.engine.related(path, limit=8),
                neighbors=self.engine.neighbors(path, limit=12),
                links=self.engine.outgoing_links(path),
                same_title=view.same_title,
                outline=self.engine.outline(path),
                obsidian=self.engine.obsidian_uri(path),
                tags=view.info.tags,
            )
            return self._page(view.info.title, content, script=("enhance.js", "note.js"), body_class="page-note")

        return await self._guarded(request, build)

    def _render(self, path: str, text: str, links: LinkTable) -> str:
        """A note's text as HTML, with its embeds, canvases and links read by the engine."""
        return render_note(
            text,
            path=path,
            links=links,
            embed=self.engine.embed_section,
            canvas=self.engine.canvas,
            resolve=self.engine.resolve_link,
        )

    async def tags_page(self, request: Request) -> Response:
        tags = await run_in_threadpool(self.engine.tags)
        return self._page("Tags", pages.tags_page(tags), script="notes.js", body_class="page-tags")

    async def api_complete(self, request: Request) -> Response:
        """`GET /api/complete?q=…&path=…`: the ways to finish a `[[` link (`q` is what follows `[[`)."""
        params = request.query_params
        typed, source = params.get("q", ""), params.get("path") or None
        if source is not None:
            try:
                vault_path(source)
            except BadPath as exc:
                return self._error(request, 400, "unsafe_path", str(exc))
        found = await run_in_threadpool(lambda: self.engine.complete_link(typed, source=source))
        return JSONResponse(
            {"completions": [{"link": c.link, "label": c.label, "detail": c.detail, "path": c.path, "kind": c.kind} for c in found]}
        )

    async def api_render(self, request: Request) -> Response:
        """`POST /api/render` {path, text}: the text as the note page shows it (the editor's preview)."""
        try:
            raw = await read_body(request, note_body_limit(self.engine.config.max_file_bytes))
            body = json.loads(raw)
        except BodyTooLarge:
            return self._error(request, 413, "too_large", "the request body is too large")
        except ClientDisconnect:
            return Response(status_code=400)
        except (ValueError, UnicodeDecodeError, RecursionError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("text"), str) or not isinstance(body.get("path"), str):
            return self._error(request, 400, "bad_request", "the body must be JSON {path, text}")
        try:
            path = vault_path(body["path"])
        except BadPath as exc:
            return self._error(request, 400, "unsafe_path", str(exc))
        text: str = body["text"]

        def render() -> str:
            try:
                links = LinkTable.from_links(self.engine.note(path).links)
            except NoteNotFound:
                links = LinkTable()
            # Links typed since the last save are not in the index's table: resolve those now.
            return render_note(
                text, path=path, links=links, embed=self.engine.embed_section, canvas=self.engine.canvas,
                resolve=self.engine.resolve_link,
            )

        return JSONResponse({"html": await run_in_threadpool(render)})

    async def edit_page(self, request: Request) -> Response:
        def build(path: str) -> Response:
            view = self.engine.note(path)
            note = self._read(path)
            content = pages.edit_page(path=path, title=view.info.title, text=note.text, sha=note.sha or "",
                                      encoding=note.format.label)
            return self._page(
                f"Edit {view.info.title}", content, script=("vendor/cairn-editor.min.js", "enhance.js", "edit.js"), body_class="page-edit"
            )

        return await self._guarded(request, build)

    async def graph_page(self, request: Request) -> Response:
        def build(path: str) -> Response:
            view = self.engine.note(path)
            content = pages.graph_page(path=path, title=view.info.title, graph=self.engine.local_graph(path))
            return self._page(f"Graph · {view.info.title}", content, body_class="page-graph")

        return await self._guarded(request, build)

    async def file(self, request: Request) -> Response:
        def build(path: str) -> Response:
            target = self.engine.resolve_path(path)
            if not target.is_file():
                return self._error(request, 404, "not_found", f"No file at {path}")
            headers = {"content-security-policy": FILE_CSP}
            if target.suffix.lower() in IMAGE_SUFFIXES:
                media = mimetypes.guess_type(target.name)[0] or "application/octet-stream"
                return FileResponse(target, media_type=media, headers=headers)
            # Anything else downloads, so a vault file can never run as a page or script here.
            return FileResponse(target, media_type="application/octet-stream", filename=target.name, headers=headers)

        return await self._guarded(request, build)

    def _why(self, request: Request) -> WhyReport:
        params = request.query_params
        query, note = params.get("q", ""), params.get("note", "")
        if not query.strip() or not note.strip():
            raise HTTPException(400, "name a search (q) and a note (note)")
        try:
            limit = max(1, min(200, int(params.get("limit") or "20")))
        except ValueError:
            raise HTTPException(400, LIMIT_MESSAGE) from None
        return self.engine.why(query, note, limit=limit, **_graph_knobs(params))

    async def why_page(self, request: Request) -> Response:
        try:
            report = await run_in_threadpool(self._why, request)
        except NoteNotFound as exc:  # a typo: offer the nearest notes, not an error page
            query = brief(request.query_params.get("q", ""), MAX_MESSAGE_CHARS)
            name = brief(exc.name, MAX_MESSAGE_CHARS)  # a pasted 100 KB name is not echoed whole
            content = pages.why_missing_page(query, name, exc.nearest)
            return self._page(f"No note named {name}", content, status=404, script="search.js")
        return self._page(f"Why {report.title}", pages.why_page(report))

    # -- API -----------------------------------------------------------------------
    async def api_why(self, request: Request) -> Response:
        try:
            report = await run_in_threadpool(self._why, request)
        except NoteNotFound as exc:
            nearest = [{"path": path, "title": title} for path, title in exc.nearest]
            body = {"error": "not_found", "message": str(exc), "nearest": nearest}
            return JSONResponse(body, status_code=404)
        return JSONResponse(why_to_json(report))

    async def api_search(self, request: Request) -> Response:
        results = await run_in_threadpool(self._search, request, typing=False)
        return JSONResponse(results_to_json(results))

    async def api_status(self, request: Request) -> Response:
        def build() -> dict[str, Any]:
            status = self.engine.status()
            return {**status_to_json(status), "vectors_text": vectors_text(status), "indexing": self.indexer.state.to_json()}

        return JSONResponse(await run_in_threadpool(build))

    async def api_notes(self, request: Request) -> Response:
        typed = request.query_params.get("q")
        if typed is not None:  # a note picker's choices for what was typed
            choices = await run_in_threadpool(lambda: self.engine.note_choices(typed, limit=8))
            return JSONResponse(
                {"choices": [{"path": c.path, "title": c.title, "matched": c.matched, "how": c.how} for c in choices]}
            )
        notes = await run_in_threadpool(self.engine.notes)
        return JSONResponse({"notes": [{"path": p, "title": t} for p, t in notes]})

    async def api_note_create(self, request: Request) -> Response:
        """`POST /api/notes` {title, folder}: a new note through `Engine.create_note` (201, or 409 if it exists)."""
        try:
            raw = await read_body(request, 64 * 1024)
            body = json.loads(raw)
        except BodyTooLarge:
            return self._error(request, 413, "too_large", "the request body is too large")
        except ClientDisconnect:
            return Response(status_code=400)
        except (ValueError, UnicodeDecodeError, RecursionError):
            body = None
        if not isinstance(body, dict) or not isinstance(body.get("title"), str) or not isinstance(body.get("folder", ""), str):
            return self._error(request, 400, "bad_request", "the body must be JSON {title, folder}")
        title, folder = body["title"].strip(), str(body.get("folder", "")).strip().strip("/")
        if not title:
            return self._error(request, 400, "bad_request", "a new note needs a title")
        try:
            if folder:
                vault_path(folder)
        except BadPath as exc:
            return self._error(request, 400, "unsafe_path", str(exc))

        def create() -> Response:
            try:
                result = self.engine.create_note(folder, title)
            except NoteExists as exc:
                return self._error(request, 409, "exists", str(exc))
            except NoteNotSaved as exc:
                return self._error(request, 500, "not_saved", f"{exc.title}: {exc}")
            except UnsafePath as exc:
                return self._error(request, 400, "unsafe_path", str(exc))
            answer: dict[str, Any] = {"path": result.path, "sha": result.sha, "reindexed": result.indexed}
            if result.warnings:
                answer["warning"] = "; ".join(result.warnings)
            return JSONResponse(answer, status_code=201)

        return await run_in_threadpool(create)

    async def api_note_get(self, request: Request) -> Response:
        def build(path: str) -> Response:
            view = self.engine.note(path)
            note = self._read(path)
            return JSONResponse(
                {
                    "path": path,
                    "title": view.info.title,
                    "text": note.text,
                    "sha": note.sha,
                    "encoding": note.format.label,
                    "newline": note.format.newline,
                    "links": [
                        {
                            "target": link.target,
                            "display": link.display,
                            "heading": link.heading,
                            "embed": link.embed,
                            "line": link.line,
                            "kind": link.kind,
                            "resolved": resolved,
                        }
                        for link, resolved in view.links
                    ],
                    "backlinks": [
                        {"path": b.path, "title": b.title, "line": b.line, "context": b.context}
                        for b in self.engine.backlinks(path)
                    ],
                }
            )

        return await self._guarded(request, build)

    async def api_note_put(self, request: Request) -> Response:
        max_note = self.engine.config.max_file_bytes
        too_large = f"a note may be at most {human_size(max_note)} (the index's max_file_bytes)"
        try:
            raw = await read_body(request, note_body_limit(max_note))
        except BodyTooLarge:
            return self._error(request, 413, "too_large", f"the request body is too large: {too_large}")
        except ClientDisconnect:
            # The client left mid-body: nothing to save and nobody to answer; not a server error.
            return Response(status_code=400)
        try:
            body = json.loads(raw)
        except (ValueError, UnicodeDecodeError, RecursionError):
            return self._error(request, 400, "bad_request", "the body must be JSON {text, expected_sha}")
        if not isinstance(body, dict) or not isinstance(body.get("text"), str) or "expected_sha" not in body:
            return self._error(request, 400, "bad_request", "the body must be JSON {text, expected_sha}")
        expected = body["expected_sha"]
        if expected is not None and not isinstance(expected, str):
            return self._error(request, 400, "bad_request", "expected_sha must be a string or null")
        text: str = body["text"]
        as_utf8 = body.get("as_utf8", False) is True
        try:
            text.encode("utf-8")
        except UnicodeEncodeError:
            return self._error(request, 400, "bad_request", "the text is not valid Unicode")

        def save(path: str) -> Response:
            try:
                result = self.engine.save_note(path, text, expected_sha=expected, as_utf8=as_utf8)
            except SaveConflict as exc:
                return self._conflict(path, exc)
            except EncodingMismatch as exc:
                return JSONResponse({"error": "encoding", "title": exc.title, "message": str(exc)}, status_code=422)
            except NoteNotSaved as exc:
                return self._error(request, 500, "not_saved", f"{exc.title}: {exc}")
            except UnsafePath as exc:
                return self._error(request, 400, "unsafe_path", str(exc))
            answer: dict[str, Any] = {
                "path": path,
                "sha": result.sha,
                "reindexed": result.indexed,
                "added": list(result.report.added),
                "updated": list(result.report.updated),
            }
            if result.warnings:
                answer["warning"] = "; ".join(result.warnings)
            return JSONResponse(answer)

        return await self._guarded(request, save)

    def _conflict(self, path: str, exc: SaveConflict) -> Response:
        try:
            current = self.engine.read_note(path)
            current_text, current_sha = current.text, current.sha
        except CairnError:
            current_text, current_sha = "", exc.current_sha
        return JSONResponse(
            {
                "error": "conflict",
                "title": exc.title,
                "message": str(exc),
                "path": path,
                "current_sha": current_sha,
                "current_text": current_text,
                "copy_path": self.engine.conflict_copy_path(path),
            },
            status_code=409,
        )
