"""Search evidence in words people use: labels, strengths, matched words and reasons.

Every front end (TUI, web, CLI, MCP) shows a hit through these functions, so a hit reads
the same everywhere: "title match", "all your words", "similar meaning", "linked from
Atlas". The raw numbers (ranks, scores, votes, index terms) stay in the records and the
JSON, and behind each front end's raw toggle (`--explain --raw`, a TUI key, the web's
details fold).

Labels are a table keyed by the engine's evidence label; a label the table does not know
(ranking may name new kinds of evidence) reads as its own words, underscores as spaces.
"""

from __future__ import annotations

from collections.abc import Sequence

from engine.records import Badge, ChannelEvidence, ChannelName, Hit, Relation, SearchResults

__all__ = [
    "CHANNEL_WORDS",
    "LABEL_WORDS",
    "channel_word",
    "hit_label",
    "hit_reasons",
    "label_text",
    "meaning_strength",
    "ordinal",
    "phase_text",
    "plain_badges",
    "query_sentences",
    "strength_bar",
]

# What each evidence label means to someone who did not write the ranking.
LABEL_WORDS: dict[str, str] = {
    "exact_title_match": "title match",
    "alias_hit": "alias match",
    "keyword_exact": "all your words",
    "keyword_partial": "some of your words",
    "high_vector_match": "similar meaning",
    "graph_neighbor": "through links",
    "weak_semantic": "loosely related",
    "filter_match": "matches the filters",
    "flat_scan": "similar spelling",
}

# How each channel is named in plain text: what it compares.
CHANNEL_WORDS: dict[ChannelName, str] = {"fulltext": "words", "vectors": "meaning", "graph": "links"}

# Cosine similarity of two MiniLM-style sentence embeddings, read as words. The cut-offs
# are where, on the project's evaluation sets, a passage stops being about the query
# (under 0.3) and where it is plainly about it (0.55, the engine's high-match floor).
_MEANING_STEPS: tuple[tuple[float, str, int], ...] = (
    (0.55, "very close in meaning", 4),
    (0.42, "close in meaning", 3),
    (0.3, "related in meaning", 2),
    (float("-inf"), "loosely related", 1),
)
_BAR_CELLS = 4


# The phases of a reindex, as a progress line names them (the JSON keeps the engine's names).
PHASE_WORDS: dict[str, str] = {
    "scan": "finding notes",
    "read": "reading",
    "parse": "parsing",
    "catalog": "saving notes",
    "fulltext": "full text",
    "graph": "links",
    "embed": "embedding",
    "vectors": "vector index",
}


def phase_text(phase: str) -> str:
    """A reindex phase in words ("fulltext" → "full text"); an unknown one as written."""
    return PHASE_WORDS.get(phase, phase)


def label_text(label: str) -> str:
    """An evidence label in plain words ("keyword_exact" → "all your words"); unknown labels read as written."""
    return LABEL_WORDS.get(label) or label.replace("_", " ").strip() or "found"


def hit_label(hit: Hit) -> str:
    """A hit's label in plain words, as `label_text`, except where its evidence says less than the
    label: full text that matched only common words ("how", "do") is not "some of your words"."""
    fulltext = hit.channels.get("fulltext")
    if hit.label == "keyword_partial" and fulltext is not None and not fulltext.matched_words and fulltext.matched_terms:
        return "common words only"
    return label_text(hit.label)


def channel_word(channel: str) -> str:
    """A channel's plain name ("fulltext" → "words"); an unknown one as written."""
    return CHANNEL_WORDS.get(channel, channel)  # type: ignore[call-overload, no-any-return]


def ordinal(number: int) -> str:
    """1st, 2nd, 3rd, 4th … 11th, 12th, 13th, 21st."""
    suffix = "th" if 10 <= number % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(number % 10, "th")
    return f"{number}{suffix}"


def meaning_strength(cosine: float) -> tuple[str, int]:
    """How close in meaning a cosine says a passage is: words, and 1-4 cells of a bar."""
    for floor, words, cells in _MEANING_STEPS:
        if cosine >= floor:
            return words, cells
    return _MEANING_STEPS[-1][1], 1


def strength_bar(cells: int) -> str:
    """A small bar of `_BAR_CELLS` cells, `cells` of them filled: "●●●○"."""
    cells = max(0, min(_BAR_CELLS, cells))
    return "●" * cells + "○" * (_BAR_CELLS - cells)


def _quoted(words: Sequence[str], limit: int = 3) -> str:
    shown = [f"“{w}”" for w in words[:limit]]
    more = len(words) - limit
    return " ".join(shown) + (f" +{more}" if more > 0 else "")


def _graph_step(evidence: ChannelEvidence) -> str:
    """How the graph reached a note, from the note (or name) before it: "linked from Atlas"."""
    path = evidence.graph_path
    if len(path) < 2:
        return "named in your query" if path else "found through links"
    before = path[-2]
    relation = evidence.graph_relation or ""
    if relation == "links to":
        return f"linked from {before}"
    if relation == "linked from":
        return f"links to {before}"
    if relation == "tagged" or before.startswith("#"):
        return f"tagged {before}"
    if relation == "mentions":
        return f"mentions {before}" if not before.startswith("#") else f"tagged {before}"
    if relation == "co-occurs":
        return f"named beside {before}"
    if relation:
        return f"{relation} {before}"
    return f"near {before}"


def _relation_sentence(relation: Relation) -> str:
    """A named relation as a sentence: "Priya Kumar attended Atlas 2026 Kickoff"."""
    return f"{relation.source} {relation.relation} {relation.target}"


def plain_badges(hit: Hit) -> tuple[Badge, ...]:
    """One short piece of evidence per channel that found the hit, in plain words.

    `words “atlas” “kickoff”`, `meaning ●●●○`, `linked from Atlas`. Only the words as
    typed are shown (never index terms or stop words); full text that matched no such
    word (only common words) has no badge.
    """
    out: list[Badge] = []
    fulltext = hit.channels.get("fulltext")
    if fulltext is not None and fulltext.matched_words:
        # Without words as typed, full text matched only common words: nothing worth a badge.
        out.append(Badge("fulltext", f"words {_quoted(fulltext.matched_words)}"))
    vectors = hit.channels.get("vectors")
    if vectors is not None:
        _words, cells = meaning_strength(vectors.score)
        out.append(Badge("vectors", f"meaning {strength_bar(cells)}"))
    graph = hit.channels.get("graph")
    if graph is not None:
        named = next((r for r in graph.relations if hit.title in (r.source, r.target)), None)
        out.append(Badge("graph", _relation_sentence(named) if named is not None else _graph_step(graph)))
    return tuple(out)


def hit_reasons(hit: Hit) -> list[str]:
    """Why a hit is in the results, as sentences, the strongest reason first."""
    out: list[str] = []
    if hit.label == "exact_title_match":
        out.append("Its title is what you typed.")
    elif hit.label == "alias_hit":
        out.append("One of its aliases is what you typed.")
    fulltext = hit.channels.get("fulltext")
    if fulltext is not None:
        place = "the best match for your words" if fulltext.rank == 1 else f"{ordinal(fulltext.rank)} best for your words"
        if fulltext.matched_words:
            every = "all of " if hit.label == "keyword_exact" else ""
            out.append(f"It holds {every}{_quoted(fulltext.matched_words, 6)}: {place}.")
        else:
            out.append(f"Search by words found it through common words only ({ordinal(fulltext.rank)}).")
    vectors = hit.channels.get("vectors")
    if vectors is not None:
        words, _cells = meaning_strength(vectors.score)
        to = f"to “{vectors.clause}”" if vectors.clause else "to your query"
        place = "the closest" if vectors.rank == 1 else f"the {ordinal(vectors.rank)} closest"
        out.append(f"A passage of it is {words} {to} ({place}).")
    graph = hit.channels.get("graph")
    if graph is not None:
        path = graph.graph_path
        if len(path) == 2:
            out.append(f"It is {_graph_step(graph)}.")
        elif len(path) > 2:
            out.append(f"It is {_graph_step(graph)}, {len(path) - 1} links away from {path[0]}.")
        elif path:
            out.append(f"Your query names {path[0]}.")
        out.extend(f"{_relation_sentence(r)}." for r in graph.relations[:3])
    if hit.flat_scan:
        out.append(
            "No search found it; its title or a word in it is spelt like yours: " + ", ".join(hit.flat_scan) + "."
        )
    if hit.label == "filter_match":
        out.append("It matches every filter of the query.")
    if not out:
        out.append(f"It is here as {label_text(hit.label)}.")
    return out


def query_sentences(results: SearchResults) -> list[str]:
    """What the engine read in a query, as sentences: the names it saw, what it walked to, what it asks for."""
    out: list[str] = []
    named = [f"{text} ({because})" for text, because in results.named_because]
    if named:
        out.append("Names in your query: " + "; ".join(named) + ".")
    elif results.recognized_entities:
        out.append("Names in your query: " + ", ".join(results.recognized_entities) + ".")
    out.extend(f"“{text}” is read as a plain word, not a name: {because}." for text, because in results.not_names)
    if results.expanded_entities:
        shown = ", ".join(results.expanded_entities[:6])
        more = len(results.expanded_entities) - 6
        out.append(f"Also followed their links to: {shown}" + (f" and {more} more" if more > 0 else "") + ".")
    if results.asked_kind.label:
        out.append(f"It asks for {results.asked_kind.label}; other notes rank lower.")
    if results.clauses:
        out.append("Also searched by meaning: " + "; ".join(f"“{c}”" for c in results.clauses) + ".")
    if results.trace.record("structure") is not None:
        out.append("This vault files people or organisations (or types its links), so who-questions and kinds of note weigh in.")
    for stage in ("confidence", "folders"):
        record = results.trace.record(stage)
        if record is not None:
            out.extend(sentence[0].upper() + sentence[1:] + "." for sentence in record.said if "cover" in sentence or "folder" in sentence)
    for name, status in results.channels.items():
        if status.status != "ok":
            state = "is unavailable" if status.status == "unavailable" else "is not complete"
            detail = f" ({status.message})" if status.message else ""
            out.append(f"Search by {channel_word(name)} {state}{detail}.")
    return out
