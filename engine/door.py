"""The door for agents: answers shaped to what an agent can afford to read.

An agent pays for every token a tool returns, so each answer comes in two forms: `brief`
(per note its path, title, the evidence in words and the passage with its heading and
line: what a person reads in the result list) and `full` (the JSON `engine search --json`
prints). Either form fits a token budget as printed (JSON, two-space indent, as an MCP
client receives the text): items drop from the end, and the answer says how many the
budget left out. A passage two notes share is sent once. When no note carries confident
evidence the answer says so before anything else, and the nearest notes follow as such.

The MCP server and `engine search/context --detail` both shape their answers here.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Literal

from engine.context import DEFAULT_MAX_TOKENS
from engine.errors import ConfigError

if TYPE_CHECKING:
    from engine.context import TokenCounter
    from engine.records import (
        Backlink,
        ContextBundle,
        Hit,
        NoteView,
        SaveResult,
        SearchResults,
        WhyReport,
    )

__all__ = [
    "BRIEF",
    "DETAILS",
    "DOOR_TOKENS",
    "FULL_CONTEXT_TOKENS",
    "Detail",
    "answer_text",
    "backlinks_answer",
    "brief_context",
    "brief_context_text",
    "context_answer",
    "note_answer",
    "said_first",
    "save_answer",
    "search_answer",
    "why_answer",
]

Detail = Literal["brief", "full"]
DETAILS: tuple[Detail, ...] = ("brief", "full")
BRIEF: Detail = "brief"
# What an MCP tool's brief answer takes when the agent names no budget: ten brief hits fit it.
DOOR_TOKENS = 2000
# A full context's budget when none is named, as `engine context` has it.
FULL_CONTEXT_TOKENS = DEFAULT_MAX_TOKENS
# How many more binary-search rounds a fit may take than the items it weighs need.
_FIT_ROUNDS = 64


def answer_text(payload: Mapping[str, Any]) -> str:
    """An answer as the client receives it, and as its tokens are counted."""
    return json.dumps(payload, ensure_ascii=False, indent=2)


def said_first(results: SearchResults) -> str:
    """The answer's first sentence: how many notes have confident evidence, or that none has."""
    from engine.present import one_line

    confident = max(0, min(results.confident, len(results.hits)))
    if confident:
        return f"{confident} note{'s' if confident != 1 else ''} with confident evidence"
    asked = one_line(results.query)[:120]
    if results.unnamed and results.hits:
        names = ", ".join(f"“{one_line(name)}”" for name in results.unnamed)
        return f"no note names {names}; the nearest notes follow"
    if not results.hits:
        return f"nothing in the vault matches “{asked}”"
    return f"no note answers “{asked}” with confident evidence; the nearest notes follow"


# -- fitting a budget ---------------------------------------------------------------
def fitted(
    head: Mapping[str, Any],
    key: str,
    items: Sequence[Any],
    counter: TokenCounter,
    max_tokens: int | None,
    *,
    tail: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """`head` with as many leading `items` under `key` as fit `max_tokens` printed, then `tail`.

    The answer counts itself (`tokens`) and says how many items the budget left out
    (`left_out`); without a budget it holds every item and no count.

    Raises:
        ConfigError: not even the answer with no items fits the budget.
    """

    def build(kept: int, used: int) -> dict[str, Any]:
        payload = {**head, key: list(items[:kept]), **(tail or {})}
        if max_tokens is not None:
            if kept < len(items):
                payload["left_out"] = {
                    key: len(items) - kept,
                    "because": f"the budget of {max_tokens} tokens; ask with a larger max_tokens for more",
                }
            payload["tokens"] = used
        return payload

    if max_tokens is None:
        return build(len(items), 0)

    def printed(kept: int) -> tuple[int, dict[str, Any]]:
        # The answer prints its own count: counted again until the count holds (digits rarely change it).
        used = 0
        for _ in range(4):
            payload = build(kept, used)
            count = counter([answer_text(payload)])[0]
            if count == used:
                break
            used = count
        return used, build(kept, used)

    low, high = 0, len(items)
    best: dict[str, Any] | None = None
    count, payload = printed(high)
    if count <= max_tokens:
        return payload
    for _ in range(
        _FIT_ROUNDS
    ):  # the most leading items that fit: prefix sizes are monotone in tokens
        if low > high:
            break
        middle = (low + high) // 2
        count, payload = printed(middle)
        if count <= max_tokens:
            best, low = payload, middle + 1
        else:
            high = middle - 1
    if best is None:
        empty, _ = printed(0)
        raise ConfigError(
            f"a budget of {max_tokens} tokens cannot hold this answer's frame: it prints as {empty} tokens"
        )
    return best


# -- search, related ----------------------------------------------------------------
def _brief_hit(hit: Hit, *, nearest: bool, sent: dict[str, str]) -> dict[str, Any]:
    from engine.present import hit_label, plain_badges

    out: dict[str, Any] = {
        "path": hit.path,
        "title": hit.title,
        "evidence": " · ".join([hit_label(hit), *(b.text for b in plain_badges(hit))]),
    }
    if nearest:
        out["nearest"] = True
    passage = hit.snippet.text.strip()
    out["heading"] = hit.snippet.heading
    out["line"] = hit.snippet.line
    if passage and passage in sent:
        out["passage"] = f"(the same passage as {sent[passage]})"
    else:
        out["passage"] = passage
        if passage:
            sent[passage] = hit.path
    if hit.create_safety == "exists" and hit.label in ("exact_title_match", "alias_hit"):
        out["named"] = (
            True  # the note's title or alias is what was asked: writing one would duplicate it
        )
    return out


def search_answer(
    results: SearchResults,
    *,
    detail: Detail,
    counter: TokenCounter,
    max_tokens: int | None,
    extra: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """A search (or `related`) as the door sends it.

    `brief`: what was found said first, then the confident notes and after them (marked
    `nearest`) the few nearest ones, in the order a person sees them. `full`: the JSON
    `engine search --json` prints, its hits cut to the budget. `extra` (e.g. the vault's
    name) leads the answer.
    """
    from engine.present import results_to_json, split_hits

    lead = dict(extra or {})
    if detail == "full":
        whole = {**lead, **results_to_json(results)}
        if max_tokens is None:
            return whole
        hits = whole.pop("hits")
        return fitted({}, "hits", hits, counter, max_tokens, tail=whole)
    confident, nearest = split_hits(results)
    sent: dict[str, str] = {}
    hits = [_brief_hit(h, nearest=False, sent=sent) for h in confident]
    hits += [_brief_hit(h, nearest=True, sent=sent) for h in nearest]
    head: dict[str, Any] = {**lead, "said": said_first(results), "confident": len(confident)}
    from engine.present import reading_text

    read_as = reading_text(results.reading)
    if read_as:
        head["read_as"] = read_as
    return fitted(head, "hits", hits, counter, max_tokens)


# -- context --------------------------------------------------------------------------
def brief_context(bundle: ContextBundle) -> dict[str, Any]:
    """A context in brief: the sources' place and text, entities and relationships as one line each."""
    sent: dict[str, int] = {}
    sources: list[dict[str, Any]] = []
    for s in bundle.sources:
        text = s.text.strip()
        source: dict[str, Any] = {
            "path": s.path,
            "title": s.title,
            "heading": s.heading,
            "line": s.line,
        }
        if text in sent:
            source["text"] = f"(the same text as source {sent[text]})"
        else:
            source["text"] = text
            sent[text] = s.rank
        sources.append(source)
    out: dict[str, Any] = {}
    if not bundle.confident:
        out["said"] = (
            f"no note answers “{bundle.question[:120]}” with confident evidence: no sources are given"
        )
    else:
        out["said"] = (
            f"{len(sources)} source{'s' if len(sources) != 1 else ''} from notes with confident evidence"
        )
    out["sources"] = sources
    out["entities"] = [
        f"{e.name} ({e.kind})" + (f": {e.description}" if e.description else "")
        for e in bundle.entities
    ]
    out["relationships"] = [
        f"{r.source} —{r.relation or r.evidence}→ {r.target}"
        + (f": “{r.sentence}”" if r.sentence else "")
        for r in bundle.relationships
    ]
    left = {k: v for k, v in bundle.counts.left_out.items() if v}
    if left:
        out["left_out"] = {**left, "because": f"the budget of {bundle.budgets['total']} tokens"}
    if "printed" in bundle.used:
        out["tokens"] = bundle.used["printed"]
    return out


def brief_context_text(bundle: ContextBundle) -> str:
    """The brief context as sent (the form `Engine.context` fits to its budget)."""
    return answer_text(brief_context(bundle))


def context_answer(bundle: ContextBundle, *, detail: Detail) -> dict[str, Any]:
    """A context as the door sends it (assembled with `render` of the same detail)."""
    from engine.present import context_to_json

    return brief_context(bundle) if detail == "brief" else context_to_json(bundle)


def context_render(detail: Detail) -> Callable[[ContextBundle], str]:
    """The printed form `Engine.context` fits to the budget, for a detail level."""
    from engine.present import context_json_text

    return brief_context_text if detail == "brief" else context_json_text


# -- read, backlinks, why, writes -----------------------------------------------------
def note_answer(
    view: NoteView,
    backlinks: Sequence[Backlink],
    *,
    detail: Detail,
    counter: TokenCounter,
    max_tokens: int | None,
) -> dict[str, Any]:
    """A note as the door sends it: in brief its text (whole lines, as many as fit), the
    paths it links to and the notes that link to it; in full `read`'s JSON."""
    from engine.present import note_to_json

    if detail == "full":
        whole = note_to_json(view, backlinks)
        lines = whole.pop("text").split("\n")
        tail = {"backlinks": whole.pop("backlinks")}
        return _joined(fitted(whole, "lines", lines, counter, max_tokens, tail=tail))
    info = view.info
    head = {
        "found": True,
        "path": info.path,
        "title": info.title,
        "links": sorted({resolved for _link, resolved in view.links if resolved}),
        "linked_from": sorted({b.path for b in backlinks}),
    }
    return _joined(fitted(head, "lines", view.text.split("\n"), counter, max_tokens))


def _joined(answer: dict[str, Any]) -> dict[str, Any]:
    """The note's kept lines as one text, and where it was cut (a reader asks again from there)."""
    lines = answer.pop("lines")
    out = {
        **{k: v for k, v in answer.items() if k not in ("left_out", "tokens")},
        "text": "\n".join(lines),
    }
    if "left_out" in answer:
        out["left_out"] = {
            "lines": answer["left_out"]["lines"],
            "because": answer["left_out"]["because"],
            "cut_after_line": len(lines),
        }
    if "tokens" in answer:
        out["tokens"] = answer["tokens"]
    return out


def backlinks_answer(
    path: str,
    backlinks: Sequence[Backlink],
    *,
    detail: Detail,
    counter: TokenCounter,
    max_tokens: int | None,
) -> dict[str, Any]:
    """The notes linking to `path`, each with the line that links, to the budget."""
    from engine.present import backlink_to_json

    if detail == "full":
        items = [backlink_to_json(b) for b in backlinks]
    else:
        items = [{"path": b.path, "line": b.line, "context": b.context} for b in backlinks]
    return fitted({"path": path}, "backlinks", items, counter, max_tokens)


def why_answer(
    report: WhyReport, *, detail: Detail, counter: TokenCounter, max_tokens: int | None
) -> dict[str, Any]:
    """Why a note is where it is: in brief its place and the reasons, in full every channel's numbers."""
    from engine.present import why_to_json

    if detail == "full":
        whole = why_to_json(report)
        reasons = whole.pop("reasons")
        return fitted(whole, "reasons", reasons, counter, max_tokens)
    head = {"path": report.path, "title": report.title, "rank": report.rank, "shown": report.shown}
    return fitted(head, "reasons", list(report.reasons), counter, max_tokens)


def save_answer(result: SaveResult, *, searchable_by_meaning: bool) -> dict[str, Any]:
    """A write as the door reports it: where it went, and whether a search finds it yet.

    `searchable` says whether a search by its words (and by meaning) finds the new text now;
    when not, `warnings` say why (another process holds the index: it indexes the note soon).
    """
    from engine.present import save_to_json

    out = save_to_json(result)
    out["searchable"] = {
        "words": result.indexed,
        "meaning": result.indexed and searchable_by_meaning,
    }
    return out
