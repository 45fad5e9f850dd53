"""The answers of `engine search`, `context` and `status`, rendered from an open engine.

The command line renders them from the engine it opens (the cold path), and a running
Cairn renders them for it over the answering socket (engine/serve.py): both call
`answer`, so an answer reads the same byte for byte whichever process gave it. A
question travels as `Ask.to_json()`; everything in it is checked again on arrival.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

from engine.console import Exit, exit_code
from engine.errors import CairnError, NoteNotFound

if TYPE_CHECKING:
    from engine.api import Engine
    from engine.records import Hit, SearchResults

__all__ = ["Answer", "Ask", "AskError", "answer", "answer_request"]

Command = Literal["search", "context", "status"]
Output = Literal["text", "json", "vimgrep", "files"]
_COMMANDS = ("search", "context", "status")
_OUTPUTS = ("text", "json", "vimgrep", "files")
_CHANNELS = ("fulltext", "vectors", "graph")
_SEEDINGS = ("query", "chunks", "both")
# Why vectors are off in a search asked without the model (the engine's own words for it).
_NO_MODEL = "no embedder configured"
# A `--vimgrep` line shows at most this much of the note's line (ripgrep shows all of it;
# a note may be one line of megabytes).
_LINE_CHARS = 500
# How far below a passage's first line its first highlighted word is looked for.
_LINES_LOOKED_AT = 40

# ANSI styles, as ripgrep colours its own output: paths magenta, line numbers green, matches bold.
_STYLE = {
    "path": "35",
    "number": "32",
    "match": "1;31",
    "title": "1",
    "label": "36",
    "muted": "2",
    "highlight": "1;33",
}


class AskError(ValueError):
    """A question that is not one `answer` takes (a field missing or of the wrong kind)."""


@dataclass(frozen=True)
class Ask:
    """One question to an engine, as the command line asks it.

    `vault` is the vault folder (resolved), `shown_vault` the vault as it was typed: paths
    in `--vimgrep` and `--files-with-matches` lines begin with it, as ripgrep's begin
    with the folder it was given. `config` is the TOML table of `--config` (None: the
    defaults) and `today` the `--today` day; an engine answers only with the same ones.
    """

    command: Command
    vault: str
    shown_vault: str = ""
    config: Mapping[str, Any] | None = None
    today: str | None = None
    no_model: bool = False
    output: Output = "text"
    color: bool = False
    # search
    query: str = ""
    limit: int = 10
    explain: bool = False
    raw: bool = False
    channels: tuple[str, ...] = _CHANNELS
    typing: bool = False
    why: str | None = None
    graph_weight: float | None = None
    max_hops: int | None = None
    graph_seeding: str | None = None
    # The JSON's shape (engine.door): "full" as documented, or "brief"; search's budget (None: no cut).
    detail: str = "full"
    search_tokens: int | None = None
    # status: with the channels' counts over real use (engine/usage.py)
    usage: bool = False
    # context
    max_tokens: int = 4000
    max_source_tokens: int | None = None
    max_entity_tokens: int | None = None
    depth: int = 2
    top_k: int | None = None

    def to_json(self) -> dict[str, Any]:
        """The question as JSON values."""
        data = dataclasses.asdict(self)
        data["channels"] = list(self.channels)
        data["config"] = dict(self.config) if self.config is not None else None
        return data

    @classmethod
    def from_json(cls, data: object) -> Ask:
        """A question read back from `to_json`; raises AskError on anything else."""
        if not isinstance(data, dict):
            raise AskError("a question is a JSON object")
        fields = {f.name: f for f in dataclasses.fields(cls)}
        unknown = set(data) - set(fields)
        if unknown:
            raise AskError(f"unknown fields: {', '.join(sorted(unknown))}")
        values: dict[str, Any] = {}
        for name, value in data.items():
            values[name] = _checked(name, value)
        if "command" not in values or "vault" not in values:
            raise AskError("a question names its command and vault")
        return cls(**values)


def _checked(name: str, value: Any) -> Any:
    """One field of a question, checked for its kind (bool is not a number here)."""

    def need(ok: bool) -> None:
        if not ok:
            raise AskError(f"{name}: {value!r} is not allowed")

    if name == "command":
        need(value in _COMMANDS)
    elif name == "output":
        need(value in _OUTPUTS)
    elif name in ("vault", "shown_vault", "query"):
        need(isinstance(value, str))
    elif name in ("today", "why"):
        need(value is None or isinstance(value, str))
    elif name == "graph_seeding":
        need(value is None or value in _SEEDINGS)
    elif name == "detail":
        need(value in ("brief", "full"))
    elif name in ("no_model", "color", "explain", "raw", "typing", "usage"):
        need(isinstance(value, bool))
    elif name in ("limit", "max_tokens", "depth"):
        need(isinstance(value, int) and not isinstance(value, bool) and value >= (1 if name != "depth" else 0))
    elif name in ("top_k", "search_tokens"):
        need(value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 1))
    elif name in ("max_hops", "max_source_tokens", "max_entity_tokens"):
        need(value is None or (isinstance(value, int) and not isinstance(value, bool) and value >= 0))
    elif name == "graph_weight":
        need(value is None or (isinstance(value, (int, float)) and not isinstance(value, bool)))
        return None if value is None else float(value)
    elif name == "channels":
        need(isinstance(value, list) and bool(value) and all(c in _CHANNELS for c in value))
        return tuple(value)
    elif name == "config":
        need(value is None or isinstance(value, dict))
    return value


@dataclass(frozen=True)
class Answer:
    """What a command prints (stdout is data, stderr notes and errors) and its exit code."""

    stdout: str = ""
    stderr: str = ""
    code: int = int(Exit.OK)

    def to_json(self) -> dict[str, Any]:
        """The answer as JSON values."""
        return {"stdout": self.stdout, "stderr": self.stderr, "code": self.code}


def answer_request(engine: Engine, request: object) -> dict[str, Any]:
    """The answering socket's handler: the answer to a question, or why this engine declines it.

    It declines what it cannot answer as the asking command would by itself: another
    vault, other settings, vectors it does not have. The command then answers alone.
    """
    try:
        ask = Ask.from_json(request)
    except (AskError, TypeError) as exc:
        return {"declined": f"not a question: {exc}"}
    declined = _mismatch(engine, ask)
    if declined:
        return {"declined": declined}
    return answer(engine, ask).to_json()


def _mismatch(engine: Engine, ask: Ask) -> str:
    from engine.config import EngineConfig

    if os.path.normcase(ask.vault) != os.path.normcase(str(engine.vault)):
        return "another vault"
    try:
        config = EngineConfig.from_dict(dict(ask.config or {}))
    except (CairnError, TypeError, ValueError):
        return "settings this engine cannot read"
    if ask.today is not None:
        config = dataclasses.replace(config, today=ask.today)
    if config != engine.config:
        return "other settings"
    if ask.command == "search":
        # A search without the model leaves vectors out (see `_search`), whoever answers.
        if not ask.no_model and "vectors" in ask.channels and not engine.has_model:
            return "no embedding model here"
    elif ask.no_model == engine.has_model:
        # A context counts its tokens with the model's tokenizer, a status names the model.
        return "no embedding model here" if engine.has_model is False else "the embedding model is loaded here"
    return ""


def answer(engine: Engine, ask: Ask) -> Answer:
    """Answer `ask` from `engine` as the command line prints it."""
    try:
        if ask.command == "status":
            return _status(engine, ask)
        if ask.command == "context":
            return _context(engine, ask)
        return _search(engine, ask)
    except NoteNotFound as exc:
        return Answer(stderr=_not_found_text(exc), code=exit_code(exc))
    except CairnError as exc:
        return Answer(stderr=f"error: {exc.title}: {exc}\n", code=exit_code(exc))


def _not_found_text(exc: NoteNotFound) -> str:
    from engine.present import one_line

    lines = [f"engine: no note is named “{one_line(exc.name)}”" if exc.name else f"engine: {one_line(str(exc))}"]
    if exc.nearest:
        lines.append("did you mean:")
        lines.extend(f"  {one_line(title)}  ({one_line(path)})" for path, title in exc.nearest)
    else:
        lines.append("name a note by its title, an alias or its path in the vault")
    return "\n".join(lines) + "\n"


# -- styles ---------------------------------------------------------------------------
def _style(text: str, kind: str, color: bool) -> str:
    return f"\x1b[{_STYLE[kind]}m{text}\x1b[0m" if color and text else text


def _marked(text: str, spans: tuple[tuple[int, int], ...], color: bool, kind: str = "highlight") -> str:
    """`text` on one line with its spans marked: coloured, or in [brackets] where there is no colour."""
    from engine.present import one_line

    if not spans:
        return one_line(text)
    pieces, last = [], 0
    for start, end in spans:
        if start < last:
            continue
        word = one_line(text[start:end])
        pieces.extend([one_line(text[last:start]), _style(word, kind, True) if color else f"[{word}]"])
        last = end
    pieces.append(one_line(text[last:]))
    return "".join(pieces)


# -- search ---------------------------------------------------------------------------
def _search(engine: Engine, ask: Ask) -> Answer:
    from engine.present import results_to_json, why_lines, why_to_json

    knobs: dict[str, Any] = {
        "graph_weight": ask.graph_weight,
        "max_hops": ask.max_hops,
        "graph_seeding": ask.graph_seeding,
    }
    channels: Any = ask.channels
    without_model = ask.no_model and "vectors" in ask.channels
    if without_model:
        # Asked without the model: words and links only, and vectors said to be off, the same
        # whether this engine loaded the model or not.
        channels = tuple(c for c in ask.channels if c != "vectors")
    if ask.why is not None:
        report = engine.why(ask.query, ask.why, limit=ask.limit, channels=channels, as_you_type=ask.typing, **knobs)
        if without_model:
            from engine.records import ChannelWhy

            off = ChannelWhy("vectors", None, None, 0, 0, 1.0, 0.0, status="unavailable")
            whys = sorted((*report.channels, off), key=lambda c: _CHANNELS.index(c.channel))
            reasons = (*report.reasons[:1], f"search by meaning did not run ({_NO_MODEL})", *report.reasons[1:])
            report = dataclasses.replace(report, channels=tuple(whys), reasons=reasons)
        if ask.output == "json":
            return Answer(json.dumps(why_to_json(report), ensure_ascii=False, indent=2) + "\n")
        return Answer("\n".join(why_lines(report, raw=ask.raw)) + "\n")
    results = engine.search(ask.query, limit=ask.limit, channels=channels, as_you_type=ask.typing, **knobs)
    if without_model:
        from engine.records import ChannelStatus

        statuses = {**results.channels, "vectors": ChannelStatus("unavailable", 0.0, _NO_MODEL)}
        ordered = {name: statuses[name] for name in _CHANNELS if name in statuses}
        results = dataclasses.replace(results, channels=ordered)  # type: ignore[arg-type]
    err: list[str] = []
    if not results.hits and not engine.notes():
        err.append("note: the index is empty; run `engine reindex VAULT` first")
    if ask.output != "json" and not ask.explain:
        for name, st in results.channels.items():
            if st.status == "ok" or (name == "vectors" and ask.no_model):
                continue
            err.append(f"note: {_channel_note(name, st.status, st.message)}")
    stderr = "".join(f"{line}\n" for line in err)
    if ask.output == "json" and (ask.detail != "full" or ask.search_tokens is not None):
        from engine.door import answer_text, search_answer

        shaped = search_answer(
            results, detail="brief" if ask.detail == "brief" else "full", counter=engine.token_counter(), max_tokens=ask.search_tokens
        )
        return Answer(answer_text(shaped) + "\n", stderr)
    if ask.output == "json":
        return Answer(json.dumps(results_to_json(results), ensure_ascii=False, indent=2) + "\n", stderr)
    if ask.output in ("vimgrep", "files"):
        return Answer(_grep_lines(engine, results, ask), stderr)
    return Answer(_results_text(results, ask), stderr)


def _channel_note(name: str, status: str, message: str) -> str:
    from engine.present import channel_word

    state = "unavailable" if status == "unavailable" else "incomplete"
    return f"search by {channel_word(name)} is {state}" + (f": {message}" if message else "")


def _shown_path(ask: Ask, path: str) -> str:
    from engine.present import one_line

    return one_line(os.path.join(ask.shown_vault, path) if ask.shown_vault else path)


def _grep_lines(engine: Engine, results: SearchResults, ask: Ask) -> str:
    """`--vimgrep` (`path:line:column:text`, as ripgrep prints it) or `--files-with-matches` (paths)."""
    confident = results.hits[: results.confident]
    out: list[str] = []
    for hit in confident:
        path = _style(_shown_path(ask, hit.path), "path", ask.color)
        if ask.output == "files":
            out.append(path)
            continue
        line, column, text, spans = _match_line(engine, hit)
        numbers = f"{_style(str(line), 'number', ask.color)}:{_style(str(column), 'number', ask.color)}"
        shown = _marked(text, spans, ask.color, "match") if ask.color else _plain_line(text)
        out.append(f"{path}:{numbers}:{shown}")
    return "".join(f"{line}\n" for line in out)


def _plain_line(text: str) -> str:
    from engine.present import one_line

    return one_line(text)


def _match_line(engine: Engine, hit: Hit) -> tuple[int, int, str, tuple[tuple[int, int], ...]]:
    """The file line, 1-based byte column and text of the hit's first highlighted word (its
    passage's first line when no word is highlighted or the note changed), and the spans
    of every highlighted word in that line."""
    snippet = hit.snippet
    words = sorted({snippet.text[s:e] for s, e in snippet.highlights if 0 <= s < e <= len(snippet.text)}, key=len, reverse=True)
    try:
        lines = engine.read_note(hit.path).text.split("\n")
    except (CairnError, OSError):
        lines = []
    first = max(1, snippet.line)
    pattern = re.compile("|".join(re.escape(w) for w in words), re.IGNORECASE) if words else None
    if pattern is not None:
        for number in range(first, min(len(lines), first + _LINES_LOOKED_AT - 1) + 1):
            text = lines[number - 1][:_LINE_CHARS]
            found = pattern.search(text)
            if found is not None:
                column = len(text[: found.start()].encode("utf-8", "surrogatepass")) + 1
                spans = tuple((m.start(), m.end()) for m in pattern.finditer(text))
                return number, column, text, spans
    text = lines[first - 1][:_LINE_CHARS] if first <= len(lines) else snippet.text[:_LINE_CHARS]
    return first, 1, text, ()


def _results_text(results: SearchResults, ask: Ask) -> str:
    """The hits as people read them: title and path, evidence in words, the passage; `--explain` adds why."""
    from engine.present import (
        NO_CONFIDENT_MATCH,
        badges,
        hit_label,
        hit_reasons,
        one_line,
        plain_badges,
        query_sentences,
        reading_text,
        split_hits,
        typed_as_text,
    )

    color = ask.color
    out: list[str] = []
    read_as = reading_text(results.reading)
    if read_as:
        out.append(f"read as: {one_line(read_as)}")
    typed_as = typed_as_text(results.reading)
    if ask.explain and typed_as:
        out.append(f"typing: {one_line(typed_as)}")
    confident, nearest = split_hits(results)
    for number, hit in enumerate((*confident, *nearest), start=1):
        if number == len(confident) + 1 and nearest:
            out.append(_style(f"    -- {NO_CONFIDENT_MATCH} --", "muted", color))
        title = _style(one_line(hit.title), "title", color)
        out.append(f"{number:>2}. {title}  ({_style(one_line(hit.path), 'path', color)})")
        if ask.raw:
            evidence = f"{hit.label}  " + "  ".join(f"[{b}]" for b in badges(hit))
        else:
            evidence = " · ".join([hit_label(hit), *(b.text for b in plain_badges(hit))])
        out.append(f"    {_style(one_line(evidence), 'label', color)}")
        heading = f"{one_line(hit.snippet.heading)} · " if hit.snippet.heading else ""
        where = _style(f"{heading}line {hit.snippet.line}:", "muted", color)
        out.append(f"    {where} {_marked(hit.snippet.text, hit.snippet.highlights, color)}")
        if ask.explain and ask.raw:
            out.extend(_raw_hit_lines(hit))
        elif ask.explain:
            out.extend(f"      - {one_line(sentence)}" for sentence in hit_reasons(hit))
    if not results.hits:
        out.append("no results")
    if ask.explain and ask.raw:
        out.extend(_raw_query_lines(results))
    elif ask.explain:
        out.extend(one_line(sentence) for sentence in query_sentences(results))
    return "".join(f"{line}\n" for line in out)


def _raw_hit_lines(hit: Hit) -> list[str]:
    from engine.present import one_line, relation_text

    out: list[str] = []
    for name, ev in hit.channels.items():
        detail = ""
        if ev.matched_terms:
            detail = f" terms={','.join(ev.matched_terms)}"
        if ev.graph_path:
            detail = f" path={' → '.join(ev.graph_path)}" + (f" ({ev.graph_relation})" if ev.graph_relation else "")
            detail += "".join(f"; {relation_text(r)}" for r in ev.relations)
        if ev.chunk_id is not None:
            detail += f" chunk={ev.chunk_id}"
        if ev.clause is not None:
            detail += f" clause={ev.clause!r}"
        out.append(f"      {name:<8} rank {ev.rank:<3} score {round(ev.score, 4):<8}{one_line(detail)}")
    votes = ", ".join(f"{name} {vote:.4f}" for name, vote in hit.votes.items())
    out.append(f"      fused score {hit.score} ({votes or 'no channel'}); create_safety {hit.create_safety}")
    if hit.flat_scan:
        out.append(f"      flat scan: {one_line(', '.join(hit.flat_scan))}")
    return out


def _raw_query_lines(results: SearchResults) -> list[str]:
    from engine.present import asked_kind_text, one_line

    channels = ", ".join(
        f"{name} {st.status} {st.ms:.1f}ms" + (f" ({st.message})" if st.message else "")
        for name, st in results.channels.items()
    )
    named = "; ".join(
        [*(f"{text}: {why}" for text, why in results.named_because), *(f"{text}: not a name, {why}" for text, why in results.not_names)]
    )
    return [
        f"channels: {channels}; total {results.total_ms:.1f}ms",
        f"entities recognized: {one_line(', '.join(results.recognized_entities)) or '-'}",
        f"names, and why:      {one_line(named) or '-'}",
        f"entities expanded:   {one_line(', '.join(results.expanded_entities)) or '-'}",
        f"clauses searched:    {one_line('; '.join(results.clauses)) or '-'}",
        f"asks for:            {asked_kind_text(results, count=True) or '-'}",
        *(
            f"stage {record.stage + ':':<12} {one_line('; '.join(record.said)) or 'weighed'}"
            for record in results.trace.stages
        ),
    ]


# -- context --------------------------------------------------------------------------
def _context(engine: Engine, ask: Ask) -> Answer:
    from engine.door import brief_context_text
    from engine.present import context_json_text, context_text

    render = context_text if ask.output != "json" else brief_context_text if ask.detail == "brief" else context_json_text
    bundle = engine.context(
        ask.query,
        max_tokens=ask.max_tokens,
        max_source_tokens=ask.max_source_tokens,
        max_entity_tokens=ask.max_entity_tokens,
        depth=ask.depth,
        top_k=ask.top_k,
        render=render,
    )
    err = "" if bundle.sources or engine.notes() else "note: the index is empty; run `engine reindex VAULT` first\n"
    # Printed exactly as counted: the budget bounds these characters.
    return Answer(render(bundle) + ("\n" if ask.output == "json" else ""), err)


# -- status ---------------------------------------------------------------------------
def _status(engine: Engine, ask: Ask) -> Answer:
    import time

    from engine.present import one_line, status_to_json, vectors_text

    status = engine.status()
    writer = engine.writer
    pending = engine.pending()
    payload = {**status_to_json(status), "writer": writer, "pending": list(pending)}
    if ask.usage:
        payload["channel_usage"] = engine.channel_usage()
    if ask.output == "json":
        return Answer(json.dumps(payload, ensure_ascii=False, indent=2) + "\n")
    out: list[str] = []
    last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(status.last_update)) if status.last_update else "never"
    out.append(f"vault:      {one_line(status.vault)}")
    out.append(f"index:      {one_line(status.index_dir)} ({status.index_bytes / 1e6:.1f} MB)")
    out.append(f"notes:      {status.notes} ({status.chunks} chunks, {status.links} links, {status.dangling_links} dangling)")
    out.append(f"entities:   {status.entities}")
    out.append(f"embedded:   {status.embedded_chunks}/{status.chunks} chunks ({status.embedded_fraction:.0%})")
    if status.backlog is not None:
        rate = status.backlog.chars_per_s
        measured = f" at {rate:,.0f} characters/s, measured here" if rate else ""
        out.append(f"backlog:    {vectors_text(status)}{measured}")
    vectors = status.vectors
    out.append(f"model:      {status.model} — vectors {vectors.status}{': ' + vectors.message if vectors.message else ''}")
    out.append(f"channels:   {', '.join(f'{k} {v}' for k, v in status.channel_counts.items())}")
    out.append(f"structure:  {status.structure or '-'} (who-questions and kinds of note)")
    out.append(f"updated:    {last}")
    out.append(f"writer:     {writer or 'none'}")
    out.append(f"pending:    {len(pending)} notes changed on disk since indexed")
    out.append(f"skipped:    {len(status.skipped)}")
    out.extend(f"  {s.path}: {s.reason}" for s in status.skipped)
    if ask.usage:
        out.extend(_usage_lines(payload["channel_usage"]))
    return Answer("".join(f"{line}\n" for line in out))


def _usage_lines(usage: Mapping[str, Any]) -> list[str]:
    """The channels' counts over real use, one line each."""
    from engine.present import channel_word

    searches = usage["searches"]
    off = " (counting is off: [search] count_channels = false)" if usage.get("off") else ""
    out = [f"use:        {searches} searches counted{off}; of their first five notes, each channel placed:"]
    for name in ("fulltext", "vectors", "graph"):
        placing = usage["searches_placing"][name]
        share = f"{placing / searches:.0%}" if searches else "-"
        out.append(
            f"  {name:<9} in {placing} searches ({share}), {usage['hits_placed'][name]} notes, "
            f"{usage['unique_hits'][name]} found by {channel_word(name)} alone"
        )
    return out
