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
from engine.query.parse import query_without
from engine.records import (
    CHANNEL_LABELS,
    Badge,
    Hit,
    IndexStatus,
    QueryReading,
    ReindexReport,
    SearchResults,
    WatchBatch,
)
from engine.vault.callouts import TONE_RGB, Callout, CalloutStyle
from engine.vault.links import WIKILINK, WikiParts, split_wikilink
from engine.vault.markup import (
    IMAGE_SUFFIXES,
    Embed,
    EmbedFn,
    LinkRef,
    LinkTable,
    RenderContext,
    cut_reason,
    footnote_number,
    obsidian_markdown,
    parse_markdown,
)
from engine.vault.parse import link_spans
from engine.vault.plain import plain_text

__all__ = [
    "CHANNEL_LABELS",
    "IMAGE_SUFFIXES",
    "NEAREST_SHOWN",
    "NO_CONFIDENT_MATCH",
    "QUERY_SYNTAX_HELP",
    "TONE_RGB",
    "WIKILINK",
    "Callout",
    "CalloutStyle",
    "Embed",
    "EmbedFn",
    "LinkRef",
    "LinkTable",
    "RenderContext",
    "WikiParts",
    "asked_kind_text",
    "badges",
    "colliding_titles",
    "cut_reason",
    "footnote_number",
    "highlighted",
    "link_spans",
    "obsidian_markdown",
    "one_line",
    "parse_markdown",
    "plain_text",
    "printable_path",
    "query_without",
    "reading_text",
    "reading_to_json",
    "reindex_to_json",
    "results_to_json",
    "split_hits",
    "split_wikilink",
    "status_to_json",
    "watch_line",
]


def colliding_titles(items: Sequence[tuple[str, str]]) -> set[str]:
    """The titles (casefolded) that two or more of these (path, title) share: where a list shows paths too.

    A note and its copy ("Form Builder" and "Form Builder (copy).md" with the same
    heading) would otherwise look the same.
    """
    seen: dict[str, str] = {}
    shared: set[str] = set()
    for path, title in items:
        key = title.casefold()
        if key in seen and seen[key] != path:
            shared.add(key)
        seen.setdefault(key, path)
    return shared


def results_to_json(results: SearchResults) -> dict[str, Any]:
    """The documented JSON shape of a search (also served by the web API)."""
    hits = []
    for hit in results.hits:
        channels: dict[str, Any] = {}
        for name, ev in hit.channels.items():
            entry: dict[str, Any] = {"rank": ev.rank, "score": round(ev.score, 4)}
            if name == "fulltext":
                entry["matched_terms"] = list(ev.matched_terms)
                entry["matched_words"] = list(ev.matched_words)
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
        "plan": reading_to_json(results.reading),
        "confident": results.confident,
        "ms": results.total_ms,
    }



QUERY_SYNTAX_HELP = """\
| type | finds |
| --- | --- |
| `offline sync` | notes about the words (full text, meaning and the entity graph together) |
| `"vector tiles"` | only notes holding the exact phrase (in a long question, quotes are words) |
| `-android`, `-"feature flag"` | leaves out notes holding the word or phrase |
| `sync OR merge` | notes holding either word |
| `tag:project` | notes tagged #project or #project/… |
| `path:Projects/Atlas`, `folder:"Daily Notes"` | notes under a path (quote spaces) |
| `file:kickoff` | notes whose file name holds the text |
| `[status]`, `[status:done]` | notes with a property (holding a value) |
| `task:call`, `task-todo:`, `task-done:review` | notes with a task (open, done) holding the text |
| `after:2026-01-01`, `before:2026-02-01` | notes dated after / before a day (a daily note's name, else its date property, else when it was changed) |
| `last week`, `yesterday's standup`, `in March` | a date filter, in a short query |

Filters alone (`tag:meeting last week`) list the matching notes, newest first. A word
the vault has never seen is read as the vault's word one typo away ("kikcoff" →
kickoff), and the chips above the results say how the query was read.
"""

# Below the last confident hit, this many nearest notes are shown under a divider.
NEAREST_SHOWN = 3
NO_CONFIDENT_MATCH = "no confident match — nearest notes"


def split_hits(results: SearchResults) -> tuple[tuple[Hit, ...], tuple[Hit, ...]]:
    """The hits with confident evidence, and the few nearest notes shown under a divider after them."""
    cut = results.confident
    return results.hits[:cut], results.hits[cut : cut + NEAREST_SHOWN]


def reading_to_json(reading: QueryReading) -> dict[str, Any]:
    """How the query was read, as `engine search --json` shows it under "plan"."""
    return {
        "words": list(reading.words),
        "stems": list(reading.stems),
        "prefix": reading.prefix,
        "chips": [
            {
                "kind": chip.kind,
                "text": chip.text,
                "written": chip.written,
                "negated": chip.negated,
                **({"without": chip.without} if chip.written else {}),
            }
            for chip in reading.chips
        ],
        "corrections": [{"typed": typed, "read_as": read} for typed, read in reading.corrections],
        "notes": list(reading.notes),
        "only_filters": reading.only_filters,
    }


def reading_text(reading: QueryReading) -> str:
    """One line on how a query was read ("" for plain words): chips and notes."""
    parts = [chip.text for chip in reading.chips]
    parts.extend(reading.notes)
    return " · ".join(parts)


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
        shown = ft.matched_words or ft.matched_terms
        terms = " ".join(f'"{t}"' for t in shown[:3])
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
    }




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
