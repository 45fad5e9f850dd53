"""How engine records are shown: the JSON shapes (CLI and web API), badges, one-line text,
and the link grammar the renderers read notes with (the indexer's own).

Every front end reads results through these functions, so a search looks the same in
`engine search --json`, the web API, the web page and the TUI.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from engine.names import brief, printable_path
from engine.query.parse import query_without
from engine.records import (
    CHANNEL_LABELS,
    Backlink,
    Badge,
    ContextBundle,
    EmbeddingBacklog,
    Hit,
    IndexStatus,
    NoteView,
    Progress,
    QueryReading,
    ReindexReport,
    Relation,
    SaveResult,
    SearchResults,
    WatchBatch,
    WhyReport,
)
from engine.vault.callouts import TONE_RGB, Callout, CalloutStyle
from engine.vault.files import file_kind
from engine.vault.links import WIKILINK, WikiParts, split_wikilink
from engine.vault.parse import link_spans
from engine.vault.plain import find_in_text, plain_text
from engine.vocabulary import (
    CHANNEL_WORDS,
    LABEL_WORDS,
    channel_word,
    hit_label,
    hit_reasons,
    label_text,
    meaning_strength,
    ordinal,
    phase_text,
    plain_badges,
    query_sentences,
    strength_bar,
)

if TYPE_CHECKING:
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

# Rendering a note (markdown-it and its plugins) is imported when a front end first renders
# one: the CLI's search, the agents' tools and a first keystroke never do.
_RENDERING = frozenset(
    {
        "IMAGE_SUFFIXES", "Embed", "EmbedFn", "LinkRef", "LinkTable", "RenderContext",
        "cut_reason",
    "file_kind",
    "find_in_text", "footnote_number", "obsidian_markdown", "parse_markdown",
    }
)


def __getattr__(name: str) -> Any:
    if name in _RENDERING:
        from engine.vault import markup

        value = getattr(markup, name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

__all__ = [
    "CHANNEL_LABELS",
    "CHANNEL_WORDS",
    "IMAGE_SUFFIXES",
    "LABEL_WORDS",
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
    "backlink_to_json",
    "backlog_to_json",
    "badges",
    "brief",
    "channel_word",
    "colliding_titles",
    "context_text",
    "context_to_json",
    "count_text",
    "cut_reason",
    "duration_text",
    "file_kind",
    "find_in_text",
    "footnote_number",
    "highlighted",
    "hit_label",
    "hit_reasons",
    "hit_to_json",
    "label_text",
    "link_spans",
    "meaning_strength",
    "note_to_json",
    "obsidian_markdown",
    "one_line",
    "ordinal",
    "parse_markdown",
    "phase_text",
    "plain_badges",
    "plain_text",
    "printable_path",
    "progress_text",
    "query_sentences",
    "query_without",
    "reading_text",
    "reading_to_json",
    "reindex_to_json",
    "relation_from",
    "relation_text",
    "relation_to_json",
    "results_to_json",
    "save_to_json",
    "split_hits",
    "split_wikilink",
    "status_to_json",
    "strength_bar",
    "typed_as_text",
    "vectors_text",
    "watch_line",
    "why_lines",
    "why_to_json",
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


def relation_text(relation: Relation) -> str:
    """A named relation on one line: `Priya Kumar —attended→ Atlas 2026 Kickoff`."""
    return f"{relation.source} —{relation.relation}→ {relation.target}"


def relation_from(relation: Relation, title: str) -> str:
    """A named relation as seen from the note titled `title`: `attended →` (it is the subject) or `← owner`."""
    return f"{relation.relation} →" if relation.source == title else f"← {relation.relation}"


def relation_to_json(relation: Relation) -> dict[str, Any]:
    """A named relation as the JSON shapes write it."""
    return {
        "source": relation.source,
        "relation": relation.relation,
        "target": relation.target,
        "explicit": relation.explicit,
    }


def hit_to_json(hit: Hit) -> dict[str, Any]:
    """One hit of `results_to_json`."""
    channels: dict[str, Any] = {}
    for name, ev in hit.channels.items():
        entry: dict[str, Any] = {"rank": ev.rank, "score": round(ev.score, 4)}
        if name == "fulltext":
            entry["matched_terms"] = list(ev.matched_terms)
            entry["matched_words"] = list(ev.matched_words)
        elif name == "vectors":
            entry["chunk_id"] = ev.chunk_id
            if ev.clause is not None:
                entry["clause"] = ev.clause
        elif name == "graph":
            entry["path"] = list(ev.graph_path)
            entry["relation"] = ev.graph_relation
            entry["relations"] = [relation_to_json(r) for r in ev.relations]
        channels[name] = entry
    vectors, graph = hit.channels.get("vectors"), hit.channels.get("graph")
    out: dict[str, Any] = {
        "path": hit.path,
        "title": hit.title,
        "score": hit.score,
        "label": hit.label,
        "channels": channels,
        "vector_score": round(vectors.score, 4) if vectors is not None else None,
        "graph_boost": round(hit.votes.get("graph", 0.0), 4),
        "traversed": list(graph.graph_path) if graph is not None else [],
        "create_safety": hit.create_safety,
        "snippet": {
            "text": hit.snippet.text,
            "heading": hit.snippet.heading,
            "line": hit.snippet.line,
            "highlights": [list(span) for span in hit.snippet.highlights],
        },
    }
    if hit.label == "flat_scan":
        out["flat_scan"] = list(hit.flat_scan)
    # The same evidence in the words the front ends show (engine/vocabulary.py).
    out["plain"] = {
        "label": hit_label(hit),
        "evidence": [badge.text for badge in plain_badges(hit)],
        "why": hit_reasons(hit),
    }
    return out


def results_to_json(results: SearchResults) -> dict[str, Any]:
    """The documented JSON shape of a search (also served by the web API)."""
    hits = [hit_to_json(hit) for hit in results.hits]
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
            "named_because": [{"text": text, "because": why} for text, why in results.named_because],
            "not_names": [{"text": text, "because": why} for text, why in results.not_names],
        },
        "asked_kind": results.asked_kind.label or None,
        "kind_hops": list(results.kind_hops),
        "clauses": list(results.clauses),
        "plan": reading_to_json(results.reading),
        "confident": results.confident,
        "stages": [{"stage": record.stage, "said": list(record.said)} for record in results.trace.stages],
        "ms": results.total_ms,
    }



QUERY_SYNTAX_HELP = """\
| type | finds |
| --- | --- |
| `offline sync` | notes about the words (full text, meaning and the entity graph together) |
| `"vector tiles"`, `"in your vault"` | only notes holding the exact phrase, stop words and all (in a long question, quotes are words; a phrase with no letter or digit is ignored, and the chips say so) |
| `-android`, `-"feature flag"` | leaves out notes holding the word or phrase |
| `sync OR merge`, `tag:atlas OR path:Maps`, `(tag:a -draft) OR "a phrase"` | notes holding either side: `OR` joins any two parts, parentheses group parts, `-(a b)` leaves out notes holding all of them |
| `tag:project` | notes tagged #project or #project/… |
| `path:Projects/Atlas`, `folder:"Daily Notes"` | notes under a path (quote spaces) |
| `file:kickoff` | notes whose file name holds the text |
| `[status]`, `[status:done]` | notes with a property (holding a value) |
| `task:call`, `task-todo:`, `task-done:review` | notes with a task (open, done) holding the text |
| `after:2026-01-01`, `before:2026-02-01` | notes dated after / before a day (a daily note's name, else its date property, else when it was changed) |
| `last week`, `yesterday's standup`, `in March` | a date filter, in a short query |

Filters alone (`tag:meeting last week`) list the matching notes, newest first. A word
the vault has never seen (of 4 to 24 letters) is read as the vault's word one typo away
("kikcoff" → kickoff), and the chips above the results say how the query was read. So is
a word still being typed that begins no word at all: from its fifth letter, it is read as
the word that one edit of it begins ("kikcof" → kickoff). One that begins a word the vault
lacks ("discon", of disconnected) stays as typed.
"""

# Below the last confident hit, this many nearest notes are shown under a divider.
NEAREST_SHOWN = 3
NO_CONFIDENT_MATCH = "no confident match — nearest notes"


def split_hits(results: SearchResults) -> tuple[tuple[Hit, ...], tuple[Hit, ...]]:
    """The hits with confident evidence, and the few nearest notes shown under a divider after them."""
    cut = results.confident
    return results.hits[:cut], results.hits[cut : cut + NEAREST_SHOWN]


def count_text(results: SearchResults) -> str:
    """How many results a list shows: "3 results", or "1 result · 3 nearest" where the
    confident hits end and the nearest notes under the divider follow."""
    confident, nearest = split_hits(results)
    text = f"{len(confident)} result{'s' if len(confident) != 1 else ''}"
    return f"{text} · {len(nearest)} nearest" if nearest else text


def reading_to_json(reading: QueryReading) -> dict[str, Any]:
    """How the query was read, as `engine search --json` shows it under "plan"."""
    return {
        "words": list(reading.words),
        "stems": list(reading.stems),
        "prefix": reading.prefix,
        "typed_as": reading.typed_as or None,
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


def typed_as_text(reading: QueryReading) -> str:
    """How the word being typed was searched by meaning ("" when it was not read as another word)."""
    if not reading.typed_as or not reading.prefix:
        return ""
    typed = reading.typed_as[: len(reading.prefix)]  # as written: the plan's prefix is in lower case
    if typed.casefold() != reading.prefix.casefold():
        typed = reading.prefix
    if typed.casefold() == reading.typed_as.casefold():
        return ""  # searched as typed: nothing to say
    return f"“{typed}” searched by meaning as “{reading.typed_as}”"


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
        "backlog": backlog_to_json(status.backlog),
        "structure": status.structure,
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
        count = f" {progress.done:,}/{progress.total:,}" if progress.total else ""
        return f"indexing: {phase_text(progress.phase)}{count}"
    parts = [f"embedding {progress.done:,}/{progress.total:,}"]
    if progress.order:
        parts.append(_order_text(progress.order, None).removeprefix("embedding "))
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
        try:
            day = time.strftime("%d %b %Y", time.localtime(at_mtime))
        except (OverflowError, OSError, ValueError):  # a file time past what the C library counts
            day = "a date beyond the calendar"
        return f"embedding newest first (notes of {day})"
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


def why_to_json(report: WhyReport) -> dict[str, Any]:
    """The JSON shape of `engine search --why` (and the web's and the MCP server's)."""
    return {
        "query": report.query,
        "path": report.path,
        "title": report.title,
        "rank": report.rank,
        "score": report.score,
        "shown": report.shown,
        "cutoff": report.cutoff,
        "channels": {
            c.channel: {
                "rank": c.rank,
                "score": None if c.score is None else round(c.score, 4),
                "listed": c.listed,
                "counted": c.counted,
                "factor": c.factor,
                "vote": c.vote,
                "status": c.status,
            }
            for c in report.channels
        },
        "floors": list(report.floors),
        "reasons": list(report.reasons),
    }


def why_lines(report: WhyReport, *, raw: bool = False) -> list[str]:
    """`engine search --why` as text: the note's place, each channel's view of it, the reasons.

    In plain words by default; `raw` adds the fused score, each channel's raw score, the
    factor fusion applied and its vote (what `--explain --raw` shows).
    """
    if raw:
        return _why_lines_raw(report)
    place = report.reasons[0] if report.reasons else (
        f"{ordinal(report.rank)} of the results" if report.rank is not None else "not in the results"
    )
    lines = [f"{one_line(report.title)} ({one_line(report.path)}): {one_line(place)}"]
    for c in report.channels:
        name = channel_word(c.channel)
        if c.status == "unavailable":
            lines.append(f"  by {name:<8} did not run")
        elif c.rank is None:
            lines.append(f"  by {name:<8} not found" + (f" (it found {c.listed} others)" if c.listed else ""))
        else:
            lines.append(f"  by {name:<8} {ordinal(c.rank)} of {c.listed} found")
    lines.extend(f"  - {one_line(reason)}" for reason in report.reasons[1:])
    return lines


def _why_lines_raw(report: WhyReport) -> list[str]:
    place = f"#{report.rank}" if report.rank is not None else "not ranked"
    lines = [f"{one_line(report.title)} ({one_line(report.path)}): {place}, fused score {report.score:.4f} "
             f"(the last of {report.shown} shown: {report.cutoff:.4f})"]
    for c in report.channels:
        label = CHANNEL_LABELS[c.channel]
        if c.status == "unavailable":
            lines.append(f"  {label:<5} unavailable")
            continue
        if c.rank is not None:
            where = f"rank {c.rank} of {c.listed}"
        else:  # "not among its 0" said nothing: the channel returned no note at all
            where = f"not among its {c.listed}" if c.listed else "found no note"
        score = f", score {c.score:.4f}" if c.score is not None else ""
        lines.append(f"  {label:<5} {where}{score}; fusion counts {c.counted}, factor {c.factor:g}, vote {c.vote:.4f}")
    lines.extend(f"  - {one_line(reason)}" for reason in report.reasons)
    return lines


def context_to_json(bundle: ContextBundle) -> dict[str, Any]:
    """The JSON shape of `engine context --json` (and the MCP server's `context` tool)."""
    return {
        "question": bundle.question,
        "sources": [
            {"id": s.id, "path": s.path, "title": s.title, "heading": s.heading, "line": s.line,
             "text": s.text, "rank": s.rank, "tokens": s.tokens}
            for s in bundle.sources
        ],
        "entities": [
            {"name": e.name, "kind": e.kind, "path": e.path, "description": e.description,
             "rank": e.rank, "hop": e.hop, "score": round(e.score, 4), "tokens": e.tokens}
            for e in bundle.entities
        ],
        "relationships": [
            {"source": r.source, "target": r.target, "relation": r.relation, "evidence": r.evidence,
             "sentence": r.sentence, "weight": r.weight, "rank": r.rank, "hop": r.hop, "tokens": r.tokens}
            for r in bundle.relationships
        ],
        "counts": {
            "chunks": bundle.counts.chunks,
            "entities": bundle.counts.entities,
            "relationships": bundle.counts.relationships,
            "neighbours": bundle.counts.neighbours,
            "left_out": bundle.counts.left_out,
        },
        "confident": bundle.confident,
        "budgets": bundle.budgets,
        "used": bundle.used,
        "tokenizer": bundle.tokenizer,
        "depth": bundle.depth,
        "notes": list(bundle.notes),
        "channels": {
            name: {"status": st.status, **({"message": st.message} if st.message else {})}
            for name, st in bundle.channels.items()
        },
    }


def context_json_text(bundle: ContextBundle) -> str:
    """`engine context --json` as printed (and as the MCP server's `context` tool is counted)."""
    return json.dumps(context_to_json(bundle), ensure_ascii=False, indent=2)


def context_text(bundle: ContextBundle) -> str:
    """`engine context` as plain text: three sections and the counts, ready to paste."""
    out = [f"# Context for: {one_line(bundle.question)}", "", "## Sources"]
    for s in bundle.sources:
        heading = f" > {s.heading}" if s.heading else ""
        out.extend([f"[{s.rank}] {s.title}{heading} ({s.path}, line {s.line}, chunk {s.id})", s.text, ""])
    if not bundle.sources:
        out.extend(["(none)", ""])
    out.append("## Entities")
    out.extend(
        f"{e.rank}. {e.name} ({e.kind}{', ' + str(e.hop) + ' hop' + ('s' if e.hop > 1 else '') if e.hop else ''})"
        + (f": {e.description}" if e.description else "")
        for e in bundle.entities
    )
    if not bundle.entities:
        out.append("(none)")
    out.extend(["", "## Relationships"])
    for r in bundle.relationships:
        how = r.relation or r.evidence
        said = f": “{r.sentence}”" if r.sentence else ""
        out.append(f"{r.rank}. {r.source} —{how}→ {r.target} (weight {r.weight:g}){said}")
    if not bundle.relationships:
        out.append("(none)")
    counts = bundle.counts
    out.extend([
        "",
        f"counts: {counts.chunks} chunks, {counts.entities} entities ({counts.neighbours} neighbours), "
        f"{counts.relationships} relationships; tokens {bundle.used['total']}/{bundle.budgets['total']} "
        f"(sources {bundle.used['sources']}/{bundle.budgets['sources']}, entities {bundle.used['entities']}/"
        f"{bundle.budgets['entities']}, relationships {bundle.used['relationships']}/{bundle.budgets['relationships']})"
        + (f"; all of this {bundle.used['printed']}/{bundle.budgets['total']}" if "printed" in bundle.used else ""),
        f"confident: {bundle.confident}",
        f"tokens counted as: {bundle.tokenizer}",
    ])
    out.extend(f"note: {note}" for note in bundle.notes)
    return "\n".join(out) + "\n"


def note_to_json(view: NoteView, backlinks: Sequence[Backlink]) -> dict[str, Any]:
    """A note as the MCP server's `read` returns it: its record, text, links and backlinks."""
    info = view.info
    return {
        "found": True,
        "path": info.path,
        "title": info.title,
        "aliases": list(info.aliases),
        "tags": list(info.tags),
        "headings": [{"level": h.level, "text": h.text, "line": h.line} for h in info.headings],
        "text": view.text,
        "links": [
            {
                "target": link.target,
                "display": link.display,
                "heading": link.heading,
                "line": link.line,
                "property": link.property,
                "resolved": resolved,
            }
            for link, resolved in view.links
        ],
        "backlinks": [backlink_to_json(b) for b in backlinks],
    }


def backlink_to_json(backlink: Backlink) -> dict[str, Any]:
    """A backlink: the linking note and the line that links."""
    return {"path": backlink.path, "title": backlink.title, "line": backlink.line, "context": backlink.context}


def save_to_json(result: SaveResult) -> dict[str, Any]:
    """What a write did: the note's path and sha, and whether the index took it in."""
    return {"path": result.path, "sha": result.sha, "indexed": result.indexed, "warnings": list(result.warnings)}
