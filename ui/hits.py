"""How a search hit reads on screen: badges per channel, evidence label, highlighted snippet."""

from __future__ import annotations

import posixpath

from textual.content import Content

from engine.present import (
    CHANNEL_LABELS,
    asked_kind_text,
    badges,
    channel_word,
    hit_label,
    hit_reasons,
    plain_badges,
    query_sentences,
    relation_text,
    typed_as_text,
)
from engine.records import CHANNEL_NAMES, ChannelName, Hit, SearchResults

CHANNEL_STYLE: dict[ChannelName, str] = {
    "fulltext": "bold $text on $primary-muted",
    "vectors": "bold $text on $success-muted",
    "graph": "bold $text on $warning-muted",
}
HIGHLIGHT_STYLE = "bold $text-accent underline"


def folder_of(path: str) -> str:
    """The folder a note lives in, shown next to its title ('/' for the vault root)."""
    folder = posixpath.dirname(path)
    return f"{folder}/" if folder else "/"


def badge_content(hit: Hit, *, raw: bool = False) -> Content:
    """One styled badge per channel that found the hit, with its evidence in short: in plain
    words, or `raw` as the engine has it (`BM25 #2 "term"`, `VEC 0.83`)."""
    parts: list[Content | str] = []
    for badge in badges(hit) if raw else plain_badges(hit):
        if parts:
            parts.append(" ")
        parts.append(Content.styled(f" {badge.text} ", CHANNEL_STYLE[badge.channel]))
    return Content.assemble(*parts)


def snippet_content(hit: Hit, max_chars: int = 220) -> Content:
    """The snippet on one line, with the query terms highlighted."""
    text = hit.snippet.text
    content = Content(text)
    for start, end in hit.snippet.highlights:
        if 0 <= start < end <= len(text):
            content = content.stylize(HIGHLIGHT_STYLE, start, end)
    flat = Content(" ").join(part for part in content.split("\n") if part.plain.strip()) if "\n" in text else content
    if len(flat) > max_chars:
        flat = flat[:max_chars] + "…"
    return flat


def hit_content(
    hit: Hit, number: int, width: int = 0, snippet_lines: int = 2, *, show_path: bool = False, raw: bool = False
) -> Content:
    """The lines of a result: title, folder (the path, when another hit has the title) and label; badges;
    the snippet indented under them.

    With a `width`, the snippet is wrapped to it (hanging indent) and cut to `snippet_lines`.
    """
    indent = "    "
    heading = f"{hit.snippet.heading} · " if hit.snippet.heading else ""
    head = Content.assemble(
        (f"{number:>2}. ", "$text-muted"),
        (hit.title, "bold"),
        "  ",
        (hit.path if show_path else folder_of(hit.path), "$text-muted"),
        "  ",
        (hit.label if raw else hit_label(hit), "italic $text-secondary"),
    )
    snippet = Content.assemble((f"{heading}line {hit.snippet.line}: ", "$text-muted"), snippet_content(hit))
    if width > len(indent) + 10:
        lines = snippet.wrap(width - len(indent))
        if len(lines) > snippet_lines:
            lines = [*lines[: snippet_lines - 1], lines[snippet_lines - 1].rstrip() + "…"]
        snippet = Content("\n").join(Content(indent) + line for line in lines)
    else:
        snippet = Content(indent) + snippet
    return Content.assemble(head, "\n", indent, badge_content(hit, raw=raw), "\n", snippet)


def _ms(value: float, show_timings: bool) -> str:
    return f" {value:.0f} ms" if show_timings else ""


def channel_summary(results: SearchResults, show_timings: bool, *, raw: bool = False) -> Content:
    """`words ok 12 ms · meaning ok 40 ms · links ok 1 ms` — status of every channel asked
    (`raw`: by the engine's names, `BM25 ok · VEC ok · GRAPH ok`)."""
    parts: list[Content | str] = []
    for name, status in results.channels.items():
        if parts:
            parts.append(" · ")
        style = "$text-success" if status.status == "ok" else "$text-warning" if status.status == "degraded" else "$text-error"
        shown = CHANNEL_LABELS[name] if raw else channel_word(name)
        parts.append(Content.assemble((shown, "bold"), " ", (status.status, style), _ms(status.ms, show_timings)))
    if show_timings:
        parts.append(f" · total{_ms(results.total_ms, True)}")
    return Content.assemble(*parts)


def explain_content(hit: Hit | None, results: SearchResults, show_timings: bool, *, raw: bool = False) -> Content:
    """Why the hit was found and how the query was read, in sentences; `raw`: per-channel ranks,
    scores and votes, and the query's channels and entities."""
    if raw:
        return _raw_explain(hit, results, show_timings)
    lines: list[Content] = []
    if hit is not None:
        lines.append(Content.assemble((hit.title, "bold"), "  ", (hit.path, "$text-muted")))
        lines.append(Content.assemble(("why here: ", "bold"), (hit_label(hit), "italic")))
        lines.extend(Content(f"• {sentence}") for sentence in hit_reasons(hit))
    lines.extend(Content.styled(sentence, "$text-muted") for sentence in query_sentences(results))
    typed_as = typed_as_text(results.reading)
    if typed_as:
        lines.append(Content.styled(f"While you type: {typed_as}.", "$text-muted"))
    lines.append(Content.styled("F9: raw scores · F3: why isn't a note here?", "$text-muted italic"))
    return Content("\n").join(lines)


def _raw_explain(hit: Hit | None, results: SearchResults, show_timings: bool) -> Content:
    lines: list[Content] = []
    if hit is not None:
        lines.append(Content.assemble((hit.title, "bold"), "  ", (hit.path, "$text-muted")))
        lines.append(Content.assemble("evidence ", (hit.label, "italic"), f" · fused score {hit.score:.4f}"))
        for name in CHANNEL_NAMES:
            evidence = hit.channels.get(name)
            label = Content.styled(f" {CHANNEL_LABELS[name]:<5} ", CHANNEL_STYLE[name])
            if evidence is None:
                lines.append(Content.assemble(label, ("  not found by this channel", "$text-muted")))
                continue
            detail = ""
            if evidence.matched_terms:
                detail = "terms " + ", ".join(evidence.matched_terms)
            if evidence.graph_path:
                detail = "path " + " → ".join(evidence.graph_path)
                if evidence.graph_relation:
                    detail += f" ({evidence.graph_relation})"
            if evidence.chunk_id is not None:
                detail += f"{'  ' if detail else ''}chunk {evidence.chunk_id}"
            if evidence.clause is not None:
                detail += f"  by the clause “{evidence.clause}”"
            lines.append(Content.assemble(label, f"  rank {evidence.rank:<3} score {evidence.score:<9.4f} {detail}"))
            lines.extend(Content.styled(f"        {relation_text(r)}", "italic") for r in evidence.relations)
        votes = " · ".join(f"{CHANNEL_LABELS[name]} {vote:.4f}" for name, vote in hit.votes.items())
        lines.append(Content.assemble(("votes ", "bold"), votes or "-", ("  create safety ", "bold"), hit.create_safety))
        if hit.flat_scan:
            lines.append(Content.assemble(("flat scan ", "bold"), ", ".join(hit.flat_scan)))
    lines.append(Content.assemble(("channels ", "bold"), channel_summary(results, show_timings, raw=True)))
    lines.append(Content.assemble(("recognized ", "bold"), ", ".join(results.recognized_entities) or "-"))
    expanded = ", ".join(results.expanded_entities[:12])
    more = len(results.expanded_entities) - 12
    lines.append(Content.assemble(("expanded ", "bold"), (expanded or "-") + (f" (+{more} more)" if more > 0 else "")))
    if results.asked_kind.label:
        lines.append(Content.assemble(("asks for ", "bold"), asked_kind_text(results)))
    if results.clauses:
        lines.append(Content.assemble(("clauses ", "bold"), "; ".join(f"“{c}”" for c in results.clauses)))
    typed_as = typed_as_text(results.reading)
    if typed_as:
        lines.append(Content.assemble(("typing ", "bold"), typed_as))
    return Content("\n").join(lines)
