"""The vault's files besides notes: what kind each is, canvases read as their cards, and Obsidian's URI."""

from __future__ import annotations

import json
import math
import posixpath
from pathlib import Path
from typing import Any
from urllib.parse import quote

from engine.records import Canvas, CanvasCard, CanvasEdge, FileKind

IMAGE_SUFFIXES = (".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".bmp", ".avif")
AUDIO_SUFFIXES = (".mp3", ".ogg", ".wav", ".m4a", ".flac", ".webm", ".3gp", ".oga", ".opus")
VIDEO_SUFFIXES = (".mp4", ".ogv", ".mov", ".mkv")
# A canvas larger than this is not read (its text would not fit a page anyway).
MAX_CANVAS_BYTES = 4 * 1024 * 1024
MAX_CANVAS_CARDS = 500
_CARD_KINDS = ("text", "file", "link", "group")


def file_kind(path: str) -> FileKind:
    """What a vault file is by its name: a note, an image, a sound, a video, a PDF, a canvas, or other."""
    lower = path.lower()
    if lower.endswith(".md"):
        return "note"
    if lower.endswith(IMAGE_SUFFIXES):
        return "image"
    # Obsidian plays `.webm` as sound in an embed; as a file it may be either.
    if lower.endswith(AUDIO_SUFFIXES):
        return "audio"
    if lower.endswith(VIDEO_SUFFIXES):
        return "video"
    if lower.endswith(".pdf"):
        return "pdf"
    if lower.endswith(".canvas"):
        return "canvas"
    return "other"


def is_icon(fragment: str | None) -> bool:
    """Whether an image embed's fragment marks it as an inline icon (`![[lucide-cog.svg#icon]]`)."""
    return (fragment or "").strip().casefold() == "icon"


def obsidian_uri(vault: Path, path: str) -> str | None:
    """`obsidian://open?vault=…&file=…` for a vault file, or None when the vault is no Obsidian vault (no `.obsidian/`)."""
    if not (vault / ".obsidian").is_dir():
        return None
    shown = path[:-3] if path.lower().endswith(".md") else path
    return f"obsidian://open?vault={quote(vault.name, safe='')}&file={quote(shown, safe='')}"


def _number(value: Any) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value) else 0.0


def read_canvas(path: str, data: bytes, resolve: Any = None) -> Canvas:
    """A `.canvas` file's cards (text, notes, files, web links, groups) and arrows, or why it cannot be read.

    Args:
        path: its vault path.
        data: its bytes (JSON Canvas).
        resolve: a file card's path to the vault path it names (None keeps it as written).
    """
    if len(data) > MAX_CANVAS_BYTES:
        return Canvas(path, problem="the canvas is too large to show")
    try:
        document = json.loads(data.decode("utf-8-sig"))
    except (UnicodeDecodeError, ValueError, RecursionError) as exc:
        return Canvas(path, problem=f"not a canvas file ({type(exc).__name__})")
    if not isinstance(document, dict):
        return Canvas(path, problem="not a canvas file")
    nodes: list[Any] = document["nodes"] if isinstance(document.get("nodes"), list) else []
    cards: list[CanvasCard] = []
    index: dict[str, int] = {}
    for node in nodes[:MAX_CANVAS_CARDS]:
        if not isinstance(node, dict):
            continue
        kind = node.get("type")
        if kind not in _CARD_KINDS:
            continue
        target: str | None = None
        if kind == "text":
            text = str(node.get("text") or "")
        elif kind == "file":
            written = str(node.get("file") or "")
            target = resolve(written) if resolve is not None else written
            text = posixpath.basename(written)
        elif kind == "link":
            text = str(node.get("url") or "")
        else:
            text = str(node.get("label") or "")
        if isinstance(node.get("id"), str):
            index[node["id"]] = len(cards)
        cards.append(
            CanvasCard(
                kind,
                text,
                _number(node.get("x")),
                _number(node.get("y")),
                max(_number(node.get("width")), 1.0),
                max(_number(node.get("height")), 1.0),
                target,
                str(node.get("color") or ""),
            )
        )
    edges: list[CanvasEdge] = []
    raw_edges: list[Any] = document["edges"] if isinstance(document.get("edges"), list) else []
    for edge in raw_edges:
        if not isinstance(edge, dict):
            continue
        source, target_index = index.get(str(edge.get("fromNode"))), index.get(str(edge.get("toNode")))
        if source is not None and target_index is not None:
            edges.append(CanvasEdge(source, target_index, str(edge.get("label") or "")))
    return Canvas(path, tuple(cards), tuple(edges))
