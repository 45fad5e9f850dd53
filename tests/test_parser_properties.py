"""Property tests: the parser and chunker never crash and keep their span/line invariants."""

from __future__ import annotations

import re
import time

from hypothesis import HealthCheck, assume, example, given, settings
from hypothesis import strategies as st

from engine.chunking import chunk_note
from engine.entities import EntityDictionary, extract_names
from engine.records import Heading, ParsedNote
from engine.vault import parse_note
from engine.vault.links import MD_LINK, WIKILINK, shown_links, split_wikilink

# Pieces that exercise every branch of the parser when glued together at random.
FRAGMENTS = [
    "---\n",
    "...\n",
    "title: x\n",
    "tags: [a, #b\n",
    "aliases: 'q\n",
    "date: 2023-02-30\n",
    "[[",
    "]]",
    "![[",
    "|",
    "\\|",
    "#",
    "#tag ",
    "^",
    "`",
    "``",
    "```\n",
    "~~~\n",
    "    ",
    "\t",
    "> ",
    "- ",
    "1. ",
    "\n",
    "\n\n",
    "](",
    ")",
    "[",
    "]",
    "<",
    ">",
    "%20",
    "%",
    ".md",
    "http://",
    ":",
    "\r\n",
    "\r",
    "\ufeff",
    "\x00",
    "\x0b",
    "\u2028",
    "[!note] ",
    "# ",
    "word ",
    "Marcus Chen ",
    "é",
    "&",
    "\\",
]

prose_text = st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=12)), max_size=60).map(
    "".join
)
any_text = st.one_of(st.text(max_size=400), prose_text)


def _file_lines(text: str) -> int:
    text = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    return text.count("\n") + 1


@settings(max_examples=400, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text)
@example("---\n---")
@example("---\na: [\n---\n[[x]]")
@example("```\n[[x]]")
@example("[[a\\|b]]")
@example("---\n- 1\n...\n# T")
def test_parse_note_never_raises_and_lines_are_in_range(text: str) -> None:
    note = parse_note("folder/Note.md", text)
    n_lines = _file_lines(text)
    assert note.title
    for link in note.links:
        assert 1 <= link.line <= n_lines
        assert "\n" not in link.target
    for heading in note.headings:
        assert note.body_line_offset < heading.line <= n_lines
        assert 1 <= heading.level <= 6
    # The body is exactly the file from line body_line_offset+1 on.
    normalized = text.removeprefix("\ufeff").replace("\r\n", "\n").replace("\r", "\n")
    assert "\n".join(normalized.split("\n")[note.body_line_offset :]) == note.body
    assert len({t.casefold() for t in note.tags}) == len(note.tags)


def _check_chunks(note: ParsedNote, max_words: int, overlap: int) -> None:
    chunks = chunk_note(note, max_words, overlap)
    body = note.body
    starts = [c.char_start for c in chunks]
    assert starts == sorted(starts)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    covered: set[int] = set()
    for chunk in chunks:
        assert body[chunk.char_start : chunk.char_end] == chunk.text
        assert chunk.text.strip()
        assert chunk.line_start <= chunk.line_end
        first_line = note.body_line_offset + body.count("\n", 0, chunk.char_start) + 1
        assert chunk.line_start == first_line
        assert chunk.line_end == first_line + chunk.text.count("\n")
        covered.update(range(chunk.char_start, chunk.char_end))
    # Every word of the body is inside some chunk.
    for m in re.finditer(r"\S+", body):
        assert m.start() in covered and m.end() - 1 in covered
    if not body.strip():
        assert chunks == []


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(any_text, st.integers(1, 40), st.integers(0, 50))
def test_chunk_spans_exact_ordered_and_covering(text: str, max_words: int, overlap: int) -> None:
    _check_chunks(parse_note("n.md", text), max_words, overlap)


words = st.sampled_from(
    ["alpha", "beta.", "gamma!", "delta?", "eps", "\n\n", "\n", "# Head\n", "\n## Sub\n", "  "]
)


@settings(max_examples=200, deadline=None)
@given(st.lists(words, max_size=400).map(" ".join), st.integers(1, 60), st.integers(0, 70))
def test_chunks_on_long_structured_text(text: str, max_words: int, overlap: int) -> None:
    note = parse_note("n.md", "---\ntitle: t\n---\n" + text)
    _check_chunks(note, max_words, overlap)
    for chunk in chunk_note(note, max_words, overlap):
        # A window never exceeds max_words unless tiny sections were merged (< 20 words more).
        assert len(chunk.text.split()) <= max_words + 19


@settings(max_examples=100, deadline=None)
@given(
    st.lists(
        st.tuples(st.integers(1, 6), st.text(min_size=1, max_size=10), st.integers(0, 50)),
        max_size=10,
    ),
    st.text(max_size=300),
    st.integers(0, 5),
)
def test_chunker_tolerates_arbitrary_heading_records(
    headings: list[tuple[int, str, int]], body: str, offset: int
) -> None:
    note = ParsedNote(
        path="n.md",
        title="n",
        aliases=(),
        tags=(),
        headings=tuple(Heading(level, text, line) for level, text, line in headings),
        links=(),
        body=body,
        body_line_offset=offset,
    )
    _check_chunks(note, 10, 3)


target_text = st.text(
    alphabet=st.characters(
        whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters=" -_.()&'"
    ),
    min_size=1,
    max_size=30,
).map(str.strip)
prose_word = st.text(
    alphabet=st.characters(whitelist_categories=("Lu", "Ll", "Nd"), whitelist_characters=".,;!?"),
    min_size=1,
    max_size=10,
)


@settings(max_examples=300, deadline=None)
@given(
    st.lists(prose_word, max_size=40),
    st.lists(prose_word, max_size=40),
    target_text,
    st.one_of(st.none(), target_text),
    st.booleans(),
    st.sampled_from([" ", "\n", "\n\n"]),
)
def test_wikilink_in_prose_is_found(
    before: list[str],
    after: list[str],
    target: str,
    display: str | None,
    embed: bool,
    sep: str,
) -> None:
    assume(target and not target.lower().endswith(".md"))
    inner = target if display is None or not display else f"{target}|{display}"
    link = ("!" if embed else "") + f"[[{inner}]]"
    text = " ".join(before) + sep + link + sep + " ".join(after)
    note = parse_note("n.md", text)
    found = [lk for lk in note.links if lk.kind == "wikilink"]
    assert len(found) == 1
    assert found[0].target == target
    assert found[0].embed is embed
    if display:
        assert found[0].display == display.strip()
    expected_line = text[: text.index(link)].count("\n") + 1
    assert found[0].line == expected_line


@settings(max_examples=200, deadline=None)
@given(any_text)
def test_entities_never_crash(text: str) -> None:
    names = extract_names(text)
    assert len(names) == len(set(names))
    dictionary = EntityDictionary([(name, str(i)) for i, name in enumerate(names)])
    for match in dictionary.recognize(text):
        assert text[match.start : match.end] == match.surface
        assert match.entity_ids


def test_five_megabyte_note_chunks_fast() -> None:
    paragraph = (
        "Lorem ipsum dolor sit amet, consectetur adipiscing elit. Sed do eiusmod tempor "
        "incididunt ut labore et dolore magna aliqua.\n\n"
    )
    text = "# Big\n\n" + paragraph * (5_000_000 // len(paragraph))
    note = parse_note("big.md", text)
    t0 = time.process_time()  # CPU time: wall time is noise on a loaded CI machine
    chunks = chunk_note(note)
    elapsed = time.process_time() - t0
    assert chunks and chunks[-1].char_end == len(note.body.rstrip())
    assert elapsed < 1.0  # typically ~0.15 s of CPU


def test_a_title_line_joins_the_section_after_it_whatever_its_length() -> None:
    long_section = " ".join(f"w{i}" for i in range(150))
    note = parse_note("adr.md", f"# ADR-004: Sync with CRDTs\n\n## Context\n\n{long_section}\n")
    chunks = chunk_note(note, 80, 16)
    # No chunk is the title alone: it opens the first window of the section it heads.
    assert chunks[0].text.startswith("# ADR-004: Sync with CRDTs\n\n## Context\n\nw0 w1")
    assert all(len(c.text.split()) <= 80 for c in chunks)
    assert chunks[0].heading_path == ("ADR-004: Sync with CRDTs",)


@settings(max_examples=3000, deadline=None)
@given(text=st.lists(st.sampled_from(["!", "[", "]", "[[", "]]", "![[", "a", "b|c", "#h", "\n", " ", "!!", "[[!", "](u)", "[t]", "x.md"]), max_size=16).map("".join))
def test_links_are_shown_as_the_link_grammar_reads_them(text: str) -> None:
    # shown_links finds a wikilink from its `[[` and takes an embed's `!` from before it:
    # the same as replacing every match of the grammar's WIKILINK, `!` and all.
    def shown(parts: object) -> str:
        return f"<{parts}>"

    expected = WIKILINK.sub(lambda m: shown(split_wikilink(m.group(2))), text)
    expected = MD_LINK.sub(lambda m: m.group(2), expected) if "](" in expected else expected
    assert shown_links(text, shown) == expected
