"""How engine records are shown: the JSON shapes (CLI and web API), badges, one-line text,
and the link grammar the renderers read notes with (the indexer's own).

Every front end reads results through these functions, so a search looks the same in
`engine search --json`, the web API, the web page and the TUI.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

from engine.names import printable_path
from engine.records import (
    CHANNEL_LABELS,
    Badge,
    EmbeddingBacklog,
    Hit,
    IndexStatus,
    Progress,
    ReindexReport,
    SearchResults,
    WatchBatch,
)
from engine.vault.links import WIKILINK, WikiParts, split_wikilink
from engine.vault.parse import link_spans

__all__ = [
    "CHANNEL_LABELS",
    "WIKILINK",
    "WikiParts",
    "asked_kind_text",
    "backlog_to_json",
    "badges",
    "duration_text",
    "highlighted",
    "link_spans",
    "one_line",
    "printable_path",
    "progress_text",
    "reindex_to_json",
    "results_to_json",
    "split_wikilink",
    "status_to_json",
    "vectors_text",
    "watch_line",
]


def results_to_json(results: SearchResults) -> dict[str, Any]:
    """The documented JSON shape of a search (also served by the web API)."""
    hits = []
    for hit in results.hits:
        channels: dict[str, Any] = {}
        for name, ev in hit.channels.items():
            entry: dict[str, Any] = {"rank": ev.rank, "score": round(ev.score, 4)}
            if name == "fulltext":
                entry["matched_terms"] = list(ev.matched_terms)
            elif name == "vectors":
                entry["chunk_id"] = ev.chunk_id
            elif name == "graph":
                entry["path"] = list(ev.graph_path)
                entry["relation"] = ev.graph_relation
            channels[name] = entry
        hits.append(
            {
                "path": hit.path,
                "title": hit.title,
                "score": hit.score,
                "label": hit.label,
                "channels": channels,
                "snippet": {
                    "text": hit.snippet.text,
                    "heading": hit.snippet.heading,
                    "line": hit.snippet.line,
                    "highlights": [list(span) for span in hit.snippet.highlights],
                },
            }
        )
    return {
        # What was typed, as valid UTF-8 (a command-line argument may carry bytes that are not).
        "query": results.query.encode("utf-8", "backslashreplace").decode("utf-8"),
        "hits": hits,
        "channels": {
            name: {"status": st.status, "ms": st.ms, **({"message": st.message} if st.message else {})}
            for name, st in results.channels.items()
        },
        "entities": {
            "recognized": list(results.recognized_entities),
            "expanded": list(results.expanded_entities),
        },
        "asked_kind": results.asked_kind.label or None,
        "kind_hops": list(results.kind_hops),
        "ms": results.total_ms,
    }



def asked_kind_text(results: SearchResults, *, count: bool = False) -> str:
    """The kind a query asks for, for explain views ("" if none).

    "people (others rank lower; 3 linked from the best keyword match)"
    """
    kind = results.asked_kind
    if not kind.label:
        return ""
    parts = [f"{len(kind.notes)} notes"] if count else []
    parts.append("others rank lower")
    if results.kind_hops:
        parts.append(f"{len(results.kind_hops)} linked from the best keyword match")
    return f"{kind.label} ({'; '.join(parts)})"



def badges(hit: Hit) -> tuple[Badge, ...]:
    """Short per-channel evidence: `BM25 #2 "term"`, `VEC 0.83`, `GRAPH ← Alice`, one per channel that found the hit."""
    out: list[Badge] = []
    ft = hit.channels.get("fulltext")
    if ft is not None:
        terms = " ".join(f'"{t}"' for t in ft.matched_terms[:3])
        out.append(Badge("fulltext", f"BM25 #{ft.rank}{' ' + terms if terms else ''}"))
    vec = hit.channels.get("vectors")
    if vec is not None:
        out.append(Badge("vectors", f"VEC {vec.score:.2f}"))
    graph = hit.channels.get("graph")
    if graph is not None:
        via = graph.graph_path[-2] if len(graph.graph_path) > 1 else graph.graph_path[0] if graph.graph_path else ""
        out.append(Badge("graph", f"GRAPH ← {via}" if len(graph.graph_path) > 1 else f"GRAPH = {via}"))
    return tuple(out)


def status_to_json(status: IndexStatus) -> dict[str, Any]:
    """The documented JSON shape of an index status (also served by the web API)."""
    return {
        "vault": printable_path(status.vault),
        "index_dir": printable_path(status.index_dir),
        "notes": status.notes,
        "chunks": status.chunks,
        "links": status.links,
        "dangling_links": status.dangling_links,
        "entities": status.entities,
        "embedded_chunks": status.embedded_chunks,
        "embedded_fraction": round(status.embedded_fraction, 4),
        "model": status.model,
        "vectors": {"status": status.vectors.status, "message": status.vectors.message},
        "channel_counts": status.channel_counts,
        "index_bytes": status.index_bytes,
        "last_update": status.last_update,
        "skipped": [{"path": s.path, "reason": s.reason} for s in status.skipped],
        "backlog": backlog_to_json(status.backlog),
    }


def backlog_to_json(backlog: EmbeddingBacklog | None) -> dict[str, Any] | None:
    """The embedding backlog as the status JSON shows it (None when every chunk has its vector)."""
    if backlog is None:
        return None
    return {
        "texts": backlog.texts,
        "chars": backlog.chars,
        "chars_per_s": round(backlog.chars_per_s, 1) if backlog.chars_per_s else None,
        "eta_s": round(backlog.eta_s, 1) if backlog.eta_s is not None else None,
        "running": backlog.running,
        "order": backlog.order or None,
        "at_mtime": backlog.at_mtime,
    }


def vectors_text(status: IndexStatus) -> str:
    """How much of the vault has vectors, what is embedded now and how long the rest takes.

    "vectors 34% · embedding opened notes first · about 9 min left"
    """
    if status.vectors.status == "unavailable":
        return "vectors off"
    backlog = status.backlog
    if backlog is None or status.embedded_chunks >= status.chunks:
        return "vectors ready"
    parts = [f"vectors {status.embedded_fraction:.0%}"]
    if backlog.running:
        parts.append(_order_text(backlog.order, backlog.at_mtime))
    else:
        parts.append(f"{backlog.texts:,} chunks to embed")
    parts.append(_eta_text(backlog.eta_s, running=backlog.running))
    return " · ".join(parts)


def progress_text(progress: Progress) -> str:
    """A reindex step on one line: "embedding 1,204/64,922 · opened notes first · about 9 min left"."""
    if progress.phase != "embed":
        return f"indexing: {progress.phase} {progress.done}/{progress.total}"
    parts = [f"embedding {progress.done:,}/{progress.total:,}"]
    if progress.order:
        parts.append(_order_text(progress.order, None))
    parts.append(_eta_text(progress.eta_s, running=True))
    return " · ".join(parts)


def duration_text(seconds: float) -> str:
    """A rough duration for an ETA: "under a minute", "about 9 min", "about 2 h 10 min"."""
    if seconds < 60:
        return "under a minute"
    minutes = round(seconds / 60)
    if minutes < 60:
        return f"about {minutes} min"
    hours, rest = divmod(minutes, 60)
    return f"about {hours} h {rest} min" if rest else f"about {hours} h"


def _order_text(order: str, at_mtime: float | None) -> str:
    if order == "opened":
        return "embedding opened notes first"
    if at_mtime:
        return f"embedding newest first (notes of {time.strftime('%d %b %Y', time.localtime(at_mtime))})"
    return "embedding newest notes first"


def _eta_text(eta_s: float | None, *, running: bool) -> str:
    if eta_s is None:
        return "time left known after the first batches"
    return f"{duration_text(eta_s)} {'left' if running else 'to embed'}"




def reindex_to_json(report: ReindexReport) -> dict[str, Any]:
    """What one reindex did, as `engine reindex --json` prints it (without the totals the command adds)."""
    return {
        "added": list(report.added),
        "updated": list(report.updated),
        "removed": list(report.removed),
        "unchanged": report.unchanged,
        "skipped": [{"path": s.path, "reason": s.reason} for s in report.skipped],
        "warnings": [{"path": s.path, "reason": s.reason} for s in report.warnings],
        "embedded_chunks": report.embedded_chunks,
        "timings_s": report.timings,
    }


def one_line(text: str) -> str:
    """Text from a note on one line of a terminal: line breaks as spaces, other control characters escaped.

    A note may hold an ESC (they are allowed in text); printed raw, it would drive the
    terminal of whoever runs the search.
    """
    return printable_path(text.replace("\n", " "))



def highlighted(text: str, spans: Sequence[tuple[int, int]], tty: bool) -> str:
    if not spans:
        return one_line(text)
    on, off = ("\x1b[1;33m", "\x1b[0m") if tty else ("[", "]")
    pieces, last = [], 0
    for start, end in spans:
        pieces.extend([one_line(text[last:start]), on, one_line(text[start:end]), off])
        last = end
    pieces.append(one_line(text[last:]))
    return "".join(pieces)


def watch_line(batch: WatchBatch) -> str:
    """One line for a batch: what changed and how long it took."""
    clock = time.strftime("%H:%M:%S")
    if batch.error:
        scope = "vault rescan" if batch.rescan else f"{len(batch.paths)} paths changed"
        return (
            f"{clock} watch: {scope}; indexing failed: {batch.error}; still watching, "
            f"the whole vault is compared again in {batch.retry_in:.0f}s"
        )
    if batch.report is None:
        return f"{clock} watch: picked up changes written by another process ({batch.seconds:.2f}s)"
    report = batch.report
    scope = "vault rescan" if batch.rescan else f"{len(batch.paths)} files"
    if batch.recovered:
        scope = f"indexing works again, caught up by a {scope}"
    return (
        f"{clock} watch: {scope}: {len(report.added)} added, {len(report.updated)} updated, "
        f"{len(report.removed)} removed, {len(report.skipped)} skipped, "
        f"{report.embedded_chunks} chunks embedded in {batch.seconds:.2f}s"
    )
