"""Every parser stage reads hostile text in linear time: runs that once took minutes take milliseconds.

Each input below is sized so that the quadratic code it guards against needs far more
than a minute (measured before the fix: see each test), while the linear code needs
well under a second (a few seconds for the web renderer, whose Markdown parser spends
~7 ms per KB on brackets). A stage runs in a child process whose CPU time is capped at
`_CPU_LIMIT_S`: the kernel stops it there, so a regression fails the test instead of
hanging the suite, and a loaded machine (which stretches wall time, not CPU time)
cannot make a linear stage fail. Timings per KB: `engine bench --parsers`.
"""

from __future__ import annotations

import multiprocessing
import resource
from collections.abc import Callable
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures.process import BrokenProcessPool
from pathlib import Path
from typing import Any, TypeVar

import pytest

from engine import notes
from engine.api import Engine
from engine.catalog import StoredChunk
from engine.channels.graph.build import NoteRows, note_part
from engine.chunking import chunk_note
from engine.entities import extract_names
from engine.lexicon.en import ENGLISH
from engine.records import NoteInfo, Snippet
from engine.search.evidence import build_snippet
from engine.tools.eval import cut_mid_word
from engine.vault import parse_note
from engine.vault.plain import plain_text
from engine.vault.sections import block_lines, without_comments
from ui.web.render import LinkTable, render_note

_CPU_LIMIT_S = 30
Result = TypeVar("Result")


def _cap_cpu() -> None:
    resource.setrlimit(resource.RLIMIT_CPU, (_CPU_LIMIT_S, _CPU_LIMIT_S + 1))


def _within_limit(stage: Callable[..., Result], *args: Any) -> Result:
    """stage(*args) in a child process, failing the test if it uses more than _CPU_LIMIT_S of CPU."""
    # A thread cannot be stopped inside a regex (it holds the GIL); a process can. The
    # kernel ends the child with SIGXCPU at the limit and the pool reports it broken.
    context = multiprocessing.get_context("fork")
    with ProcessPoolExecutor(1, mp_context=context, initializer=_cap_cpu) as pool:
        try:
            return pool.submit(stage, *args).result()
        except BrokenProcessPool:
            pytest.fail(f"{stage.__name__} used more than {_CPU_LIMIT_S} s of CPU: not linear")


# -- headings -----------------------------------------------------------------------


@pytest.mark.parametrize("tail", ["x", "\u200b", "#x"])
def test_a_heading_padded_with_spaces_parses_fast(tail: str) -> None:
    # `(?:^|[ \t]+)#+[ \t]*$` retried at every blank: 32k spaces took 3.1 s, 400k ~8 min.
    line = "# Title" + " " * 400_000 + tail
    note = _within_limit(parse_note, "a.md", line + "\n\nBody text.\n")
    assert note.headings[0].text.startswith("Title ") and note.headings[0].text.endswith(tail)
    assert note.title == note.headings[0].text


@pytest.mark.parametrize("unit", ["`&amp;", "&#1", "&" + "a" * 40])
def test_a_title_of_references_and_backticks_parses_fast(unit: str) -> None:
    # A title read as it renders: its references decoded outside code spans, in one pass.
    line = "# " + unit * (600_000 // len(unit))
    note = _within_limit(parse_note, "a.md", line + "\n\nBody text.\n")
    assert note.title.startswith(unit[0])


def test_closing_hashes_still_come_off_headings() -> None:
    note = parse_note("a.md", "# Title ##\n## Two #\n### #\n#### C# ##\n##### x#\n")
    assert [h.text for h in note.headings] == ["Title", "Two", "C#", "x#"]


# -- bare URLs ----------------------------------------------------------------------


@pytest.mark.parametrize("run", ["a", "a1", "a.+-"])
def test_a_long_word_before_a_url_parses_fast(run: str) -> None:
    # The scheme `[A-Za-z][A-Za-z0-9+.-]*://` was retried at every letter of the word:
    # 128k letters took 8.9 s, 640k about 4 min.
    word = run * (640_000 // len(run))
    note = _within_limit(parse_note, "a.md", f"{word} http://x.io/#not-a-tag #real\n")
    assert note.tags == ("real",)


def test_a_url_after_digits_is_still_blanked() -> None:
    # The scheme starts at the first letter of the run: "1http://x/#y" holds no tag.
    assert parse_note("a.md", "1http://x/#y 2www.x/#z #t\n").tags == ("t",)


# -- Markdown links -----------------------------------------------------------------


@pytest.mark.parametrize("blanks", [" ", "\n", " \t"])
def test_an_open_link_before_a_run_of_blanks_parses_fast(blanks: str) -> None:
    # `\(\s*dest(\s+title)?\s*\)` shared the blanks out every way: 8k took 0.37 s, 200k ~4 min.
    text = "[a](" + blanks * (200_000 // len(blanks)) + "x [b](B.md)\n"
    note = _within_limit(parse_note, "a.md", text)
    assert [link.target for link in note.links] == ["B"]


def test_a_link_with_a_title_and_no_destination_is_still_no_link() -> None:
    note = parse_note("a.md", '[a](  "t") [b](c "d") [e](<f g>)\n')
    assert [link.target for link in note.links] == ['"t"', "c", "f g"]


# -- snippets -----------------------------------------------------------------------


def _snippet(text: str) -> Snippet:
    note = parse_note("a.md", text)
    chunks = [StoredChunk(i, "a.md", c, "") for i, c in enumerate(chunk_note(note, 80, 16))]
    return build_snippet(chunks, matches=lambda word: word.lower() == "alpha", hint_terms=["alpha"])


@pytest.mark.parametrize(
    ("unit", "size"),
    # Measured before the fix: `[` 8k 1.7 s, `[[a|` 32k 3.2 s, `![` 32k 3.1 s, `[a](` 128k 5.3 s.
    [("[", 64_000), ("[[a|", 256_000), ("![", 256_000), ("[a](", 512_000), ("[[a#", 256_000)],
)
def test_a_run_of_brackets_gets_its_snippet_fast(unit: str, size: int) -> None:
    # Snippet cleaning rescanned the rest of the line from every bracket; a 20 KB run of
    # `[` took 75 s, and every search that returned the note hung with it.
    snippet = _within_limit(_snippet, unit * (size // len(unit)) + " alpha\n")
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["alpha"]


# -- the graph's link sentences -----------------------------------------------------


def _part_of(body: str, links: list[tuple[str, int, str]], chunks: list[tuple[int, int, int]]) -> Any:
    info = NoteInfo("A.md", "A", (), (), 0.0, 0, "x", (), ())
    rows = NoteRows(mentions=[], chunks=chunks, links=[(target, line, written, None) for target, line, written in links])
    notes = {target for target, _, _ in links}
    return note_part(info, rows, lambda: (body, 0), {}, notes, 3, True, ENGLISH)


def test_many_links_on_one_line_build_the_graph_fast() -> None:
    # The line was split into sentences and read again for each link: 31k characters
    # took 6.6 s (cubic); 200k would take hours.
    body = "[[B]] meets [[B]] " * 12_500
    links = [("B.md", 1, "B")] * 25_000
    part = _within_limit(_part_of, body, links, [(1, 1, 0)])
    assert part.edges[("note:A.md", "note:B.md", 0)] == 25_000
    assert part.contexts["note:B.md"] == " meets "


def test_links_on_many_lines_find_their_chunk_fast() -> None:
    # Each link looked through the chunks from the first: 200k links x 20k chunks.
    lines = 200_000
    body = "[[B]]\n" * lines
    links = [("B.md", line, "B") for line in range(1, lines + 1)]
    chunks = [(start, start + 9, ordinal) for ordinal, start in enumerate(range(1, lines, 10))]
    part = _within_limit(_part_of, body, links, chunks)
    assert part.edges[("note:A.md", "note:B.md", 0)] == lines


def test_a_line_linking_thousands_of_notes_keeps_each_context_small() -> None:
    # Each linked note kept every word of the line: 4,000 notes x 4,000 words.
    targets = [f"T{i:04d}" for i in range(4000)]
    body = " ".join(f"[[{t}]]" for t in targets) + "\n"
    part = _within_limit(_part_of, body, [(f"{t}.md", 1, t) for t in targets], [(1, 1, 0)])
    sizes = [len(context.split()) for context in part.contexts.values()]
    assert len(sizes) == 4000 and max(sizes) < 200


def test_a_sentence_of_ordinary_length_is_read_whole() -> None:
    body = ("Acme invested in [[B]] early. " + "Filler words here. " * 3) + "\n"
    part = _part_of(body, [("B.md", 1, "B")], [(1, 1, 0)])
    assert part.contexts["note:B.md"] == " acme early inves "


# -- the web view -------------------------------------------------------------------


def _render(text: str) -> str:
    return render_note(text, path="a.md", links=LinkTable())


def test_ten_thousand_tasks_render_fast() -> None:
    # The task-list plugin walked back to the list for each item: 10k tasks took 40 s.
    html = _within_limit(_render, "- [ ] task\n- [x] done\n" * 15_000)
    assert html.count('type="checkbox"') == 30_000 and html.count('checked="checked"') == 15_000
    assert html.count('class="contains-task-list"') == 1


def test_ten_thousand_identical_headings_get_their_ids_fast() -> None:
    # Each repeated heading tried every taken `-N` id first: 10k took 46 s.
    html = _within_limit(_render, "## Notes\n" * 30_000)
    assert 'id="h-notes"' in html and 'id="h-notes-30000"' in html and 'id="h-notes-30001"' not in html


def test_heading_ids_are_unique_as_before() -> None:
    html = _render("# A\n# A 2\n# A\n# A\n# A-2\n")
    ids = [part.split('"')[0] for part in html.split('id="')[1:]]
    assert ids == ["h-a", "h-a-2", "h-a-3", "h-a-4", "h-a-2-2"]


def test_a_run_of_wikilink_openers_renders_fast() -> None:
    # Each `[[` searched for `]]` to the end of its paragraph: 8k of `[` took 0.1 s, so
    # 256k took about 100 s. (Rendering them is linear but not cheap: ~7 ms per KB.)
    html = _within_limit(_render, "[[Done]]\n\n" + "[" * 256_000 + "\n")
    assert html.count('class="wikilink dangling"') == 1


# -- renames ------------------------------------------------------------------------


@pytest.mark.parametrize(("unit", "size"), [("[", 512_000), ("[a](", 512_000), ("[[a", 512_000), ("![a](", 256_000)])
def test_a_rename_rewrites_a_note_of_brackets_fast(unit: str, size: int) -> None:
    # `\[[^\]\n]*\]\(` scanned the rest of the line from every `[`: 16k of `[` took
    # 0.4 s and 31k of `![a](` 2.5 s, so these sizes took 3 minutes or more.
    text = unit * (size // len(unit)) + "\n[old](Old.md) and [x](Old.md#part) and [[Old]]\n"
    new_text, changed = _within_limit(_retarget, text)
    assert changed == 3 and new_text.endswith("\n[old](New.md) and [x](New.md#part) and [[New]]\n")


def _retarget(text: str) -> tuple[str, int]:
    return notes.retarget_text(text, "a.md", frozenset({"old"}), notes.Retarget("Old.md", "New.md", "New"))


# -- unlinked mentions and backlinks ------------------------------------------------


def _unlinked_and_backlinks(vault: Path, index: Path) -> tuple[list[Any], list[Any]]:
    with Engine.open(vault, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        return eng.unlinked_mentions("Atlas.md"), eng.backlinks("Atlas.md")


def test_unlinked_mentions_and_backlinks_of_a_note_of_brackets_come_fast(tmp_path: Path) -> None:
    # Links were blanked with `\[[^\]]*\]\(` per line (8k `[` took over 15 s), and every
    # backlink copied its whole line (20,000 links x a 200 KB line).
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "Atlas.md").write_text("# Atlas\n\nThe sync project.\n", "utf-8")
    (vault / "Other.md").write_text("[" * 200_000 + " Atlas is late.\n", "utf-8")
    (vault / "Hub.md").write_text(" ".join(["[[Atlas]]"] * 20_000) + "\n", "utf-8")
    unlinked, backlinks = _within_limit(_unlinked_and_backlinks, vault, tmp_path / "index")
    assert [(m.path, m.line) for m in unlinked] == [("Other.md", 1)]
    assert unlinked[0].context.startswith("…") and unlinked[0].context.endswith("Atlas is late.")
    assert len(backlinks) == 20_000 and {(b.path, b.line) for b in backlinks} == {("Hub.md", 1)}
    # Contexts are rendered text: each link shows as its target.
    assert all(len(b.context) <= 301 and b.context.startswith("Atlas Atlas ") for b in backlinks)


# -- hostile queries ---------------------------------------------------------------------


def _search(vault: Path, index: Path, queries: list[str]) -> list[tuple[list[str], tuple[str, ...]]]:
    with Engine.open(vault, index_dir=index, embedder=None) as eng:
        eng.reindex(embed=False)
        found = []
        for query in queries:
            results = eng.search(query, as_you_type=True)
            found.append(([hit.path for hit in results.hits], results.reading.notes))
        return found


def test_hostile_queries_are_answered_fast(tmp_path: Path) -> None:
    # A long word was read as a typo: every variant one edit away was stemmed, so the work
    # grew with the square of its length (228 Greek letters took 10 s; these, hours). Each
    # phrase without a letter or digit read every note's text (99 of them over 173 notes, 9 s).
    vault = tmp_path / "vault"
    vault.mkdir()
    for n in range(50):
        (vault / f"Note {n}.md").write_text(f"# Note {n}\n\n" + "Tiles -> maps, `code` and [[links]]. " * 60, "utf-8")
    # A phrase is looked for in each note's own text through a pattern over its links.
    (vault / "Brackets.md").write_text("[[" + "have out " * 50_000 + "\n" + "[[have" * 50_000 + "\n", "utf-8")
    wordless = [f'"{a}{b}{c}{d}"' for a in "`->?!" for b in "`->?!" for c in "`->?!" for d in "`->?!*"]
    queries = ["Ω" * 3000, "tiles " + "x" * 20_000, "tiles " + " ".join(wordless * 2), '"have out"']
    (greek, _), (latin, _), (phrases, notes), (brackets, _) = _within_limit(_search, vault, tmp_path / "index", queries)
    assert brackets == ["Brackets.md"]
    assert greek == []  # no correction reads it as a word of the vault
    assert len(latin) == len(phrases) == 20  # "tiles" finds the notes
    assert notes[0].startswith("“````”, “```-”, “```>” and ") and notes[0].endswith(" more has no letter or digit to search for: ignored")


# -- the full-text analyzer and the entity dictionary ----------------------------------


def _term_count(text: str) -> int:
    from engine.channels.analysis import index_terms

    return sum(1 for _ in index_terms(text))


@pytest.mark.parametrize(
    ("unit", "size"),
    [("a.", 200_000), ("a@", 200_000), ("ab_", 150_000), ("x.y-", 100_000), ("C++", 100_000), ("画", 400_000), ("e\u0301", 200_000)],
)
def test_the_analyzer_reads_runs_of_joiners_and_cjk_fast(unit: str, size: int) -> None:
    # A compound's parts are one split of it; a CJK run is one pass of pairs: a pattern
    # with nested repeats (`\w+(\.?\w+)*` and a failing tail) would backtrack here.
    assert _within_limit(_term_count, unit * size + "!") > 0


def _recognised(text: str) -> int:
    from engine.entities import EntityDictionary

    dictionary = EntityDictionary([("ホーム画面", "note:a"), ("製造ライン", "note:b")])
    return len(dictionary.recognize(text))


def test_the_dictionary_reads_a_long_cjk_query_fast() -> None:
    # Every CJK character is a token: the scan is characters × the widest entry, no more.
    assert _within_limit(_recognised, "ホーム画面の設定" * 20_000) == 20_000


# -- Obsidian's constructs: rendered text, comments, callouts, highlights, tags, block ids --


@pytest.mark.parametrize(
    "unit", ["*", "=", "a==", "%%", "|", "`", " ^a", "> [!tip]\n", "[[a|100]] ", "- [ ] x\n", "> ", "```\n", "> ````\n> ```\n", "~"]
)
def test_rendered_text_of_hostile_runs_comes_fast(unit: str) -> None:
    # Snippets and backlink contexts read every line once; a pairing regex (`\*\*(.+?)\*\*`)
    # would rescan the rest of a line from every marker.
    text = unit * (1_000_000 // len(unit))
    shown = _within_limit(plain_text, text)
    assert shown.count("\n") == text.count("\n")


@pytest.mark.parametrize("unit", ["==", "a== ", "#a ", " ^a", "> [!tip]\n", "%% a %% b ", "$a$ "])
def test_obsidian_constructs_render_fast(unit: str) -> None:
    html = _within_limit(_render, unit * (256_000 // len(unit)))
    assert html


def test_comments_and_block_ids_are_found_fast() -> None:
    text = "%% a %% b " * 100_000 + "\n" + "x ^a\n" * 100_000
    stripped = _within_limit(without_comments, text)
    assert stripped.count("\n") == text.count("\n") and "%%" not in stripped
    assert _within_limit(block_lines, text, "missing") is None


# -- names --------------------------------------------------------------------------


@pytest.mark.parametrize("unit", ["A. ", "J.  R. ", "Trent Reznor of Nine Inch Nails of ", "A." + " " * 50 + "b "])
def test_runs_of_initials_and_connectors_are_read_fast(unit: str) -> None:
    names = _within_limit(extract_names, unit * (400_000 // len(unit)))
    assert isinstance(names, list)


def test_a_query_is_cut_mid_word_fast() -> None:
    # `(\w+)\W*\Z` tried every start in a run of letters that does not end the text:
    # 8,000 letters took 0.8 s, these 400,000 about half an hour.
    assert _within_limit(cut_mid_word, "a" * 400_000 + " !bcdef") == "a" * 400_000 + " !bcd"
    assert _within_limit(cut_mid_word, "a" * 400_000 + " !b") is None


# -- saving: the ending of every unchanged line is kept ------------------------------------


def _save_every_paragraph_edited(paragraphs: int) -> int:
    # Paragraphs between blank lines, endings mixed (CRLF, LF, CR in turn), every paragraph
    # edited: a line diff of this took 22 s at 2,000 lines and grew eightfold per doubling.
    endings = ("\r\n", "\n", "\r")
    lines = [line for k in range(paragraphs) for line in (f"Paragraph {k} links [[A]].", "")]
    original = "".join(line + endings[k % 3] for k, line in enumerate(lines))
    edited = "".join(line.replace("[[A]]", "[[B]]") + "\n" for line in lines)
    return len(notes.encode_text(edited, notes.TextFormat(newline="\r\n"), original))


def test_a_save_of_a_note_with_mixed_endings_is_fast() -> None:
    assert _within_limit(_save_every_paragraph_edited, 8_000) > 8_000 * 28
