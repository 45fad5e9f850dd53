"""The query language: phrases, exclusions, OR, filters, time words, typos, typing, honest lists, badges."""

from __future__ import annotations

import datetime as dt
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from engine.api import Engine
from engine.embedder import HashEmbedder
from engine.present import count_text, results_to_json, split_hits
from engine.query.parse import parse_query

NOTES = {
    "Maps/Vector Tiles.md": "# Vector Tiles\n\nWe ship vector tiles for offline maps on iOS.\n",
    "Maps/Android Tiles.md": "# Android Tiles\n\nvector tiles render slowly on android phones.\n",
    "Maps/Raster.md": "# Raster\n\nRaster tiles and vector data: not vector tiles in one phrase.\n",
    "Meetings/Atlas Kickoff.md": "---\ntags: [meeting, project/atlas]\n---\n# Atlas Kickoff\n\nThe kickoff of Atlas.\n- [ ] send the agenda\n- [x] book the room\n",
    "Daily/2026-11-30.md": "# 2026-11-30\n\nStandup: the migration to postgres is late.\n",
    "Daily/2026-11-24.md": "# 2026-11-24\n\nStandup notes about tile packs.\n",
    "Glossary/Tile Pack.md": "---\nstatus: draft\naliases: [TP]\n---\n# Tile Pack\n\nA bundle of map tiles for one area.\n",
    "Projects/Offline Map Tiles.md": "# Offline Map Tiles\n\nHow tiles get to the phone.\n",
    "Decisions/Postgres.md": "---\nstatus: done\ntags: [decision]\n---\n# Postgres for Beacon\n\nWe chose postgres over mysql.\n",
    "Inbox/Quokka.md": "# Ideas\n\nA quokka is a small marsupial.\n",
}


@pytest.fixture(scope="module")
def engine(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Engine]:
    base = tmp_path_factory.mktemp("syntax")
    vault = base / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    with Engine.open(vault, index_dir=base / "index", embedder=HashEmbedder()) as opened:
        opened.reindex()
        yield opened


def paths(engine: Engine, query: str, *, typing: bool = False) -> list[str]:
    return [hit.path for hit in engine.search(query, as_you_type=typing).hits]


def test_a_phrase_is_required_and_an_exclusion_leaves_notes_out(engine: Engine) -> None:
    found = paths(engine, '"vector tiles" -android')
    assert "Maps/Vector Tiles.md" in found and "Maps/Android Tiles.md" not in found
    assert "Maps/Raster.md" in found  # it has the phrase ("not vector tiles in one phrase")
    assert "Projects/Offline Map Tiles.md" not in found  # tiles, but not the phrase
    assert "Maps/Android Tiles.md" in paths(engine, '"vector tiles"')
    assert "Maps/Android Tiles.md" not in paths(engine, 'vector tiles -"android phones"')


def test_a_phrase_with_stop_words_finds_the_notes_that_say_it(engine: Engine) -> None:
    # "the" and "of" have no index term: the notes' text decides on them, the index only
    # narrows by the words it holds (before, a stop word narrowed to no note at all).
    assert paths(engine, '"the kickoff of atlas"') == ["Meetings/Atlas Kickoff.md"]
    assert paths(engine, '"for one area"') == ["Glossary/Tile Pack.md"]
    assert "Meetings/Atlas Kickoff.md" not in paths(engine, 'atlas -"the kickoff"')
    # A phrase of stop words alone is looked for in every note.
    assert paths(engine, '"to the"') == ["Projects/Offline Map Tiles.md"]


def test_a_phrase_of_stop_words_opens_its_snippet_on_the_phrase(engine: Engine) -> None:
    hit = engine.search('"to the"', as_you_type=False).hits[0]
    assert "to the" in [hit.snippet.text[a:b].casefold() for a, b in hit.snippet.highlights]


def test_a_phrase_is_looked_for_again_after_a_save(tmp_path: Path) -> None:
    # The notes holding a phrase are kept between keystrokes, and dropped when a note changes.
    vault = tmp_path / "vault"
    vault.mkdir()
    (vault / "A.md").write_text("# A\n\nThe road to the sea.\n", encoding="utf-8")
    (vault / "B.md").write_text("# B\n\nA road by the hills.\n", encoding="utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as opened:
        opened.reindex(embed=False)
        assert paths(opened, '"to the"') == ["A.md"]
        assert paths(opened, '"to the"', typing=True) == ["A.md"]
        note = opened.read_note("B.md")
        opened.save_note("B.md", note.text + "Back to the town.\n", expected_sha=note.sha)
        assert sorted(paths(opened, '"to the"')) == ["A.md", "B.md"]


def test_a_prepared_engine_finds_what_reading_every_note_finds(tmp_path: Path) -> None:
    # `prepare_for_typing` builds each note's runs of four characters: a phrase then reads
    # only the notes that have all of its runs. It must find what reading them all finds,
    # and after a save, before the table is built again, the changed note too.
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    phrases = ['"vector tiles"', '"the kickoff of atlas"', '"to the"', '"tiles for"', '"small marsupial"', '"no such words"']
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as opened:
        opened.reindex(embed=False)
        unprepared = {phrase: sorted(paths(opened, phrase)) for phrase in phrases}
        opened.prepare_for_typing(wait=True)
        assert {phrase: sorted(paths(opened, phrase)) for phrase in phrases} == unprepared
        assert unprepared['"no such words"'] == [] and len(unprepared['"vector tiles"']) == 3
        note = opened.read_note("Inbox/Quokka.md")
        opened.save_note("Inbox/Quokka.md", note.text + "Its tiles for the burrow.\n", expected_sha=note.sha)
        assert "Inbox/Quokka.md" in paths(opened, '"tiles for the burrow"')
        opened.prepare_for_typing(wait=True)
        assert paths(opened, '"tiles for the burrow"') == ["Inbox/Quokka.md"]
        assert sorted(paths(opened, '"tiles for"')) == sorted([*unprepared['"tiles for"'], "Inbox/Quokka.md"])
        # A note added, and one deleted: the table is made anew, the unchanged rows kept.
        opened.create_note("Inbox", "Wombat", "# Wombat\n\nA wombat digs tiles for the burrow too.\n")
        opened.trash_note("Maps/Raster.md")
        opened.prepare_for_typing(wait=True)
        assert sorted(paths(opened, '"tiles for the burrow"')) == ["Inbox/Quokka.md", "Inbox/Wombat.md"]
        assert sorted(paths(opened, '"vector tiles"')) == ["Maps/Android Tiles.md", "Maps/Vector Tiles.md"]


def test_a_phrase_without_a_letter_or_digit_is_ignored_and_said_so(engine: Engine) -> None:
    results = engine.search('tiles "->" -"`"', as_you_type=False)
    assert results.hits and results.reading.notes == (
        "“->”, “`” has no letter or digit to search for: ignored",
    )
    assert not [c for c in results.reading.chips if c.kind == "phrase"]
    assert [h.path for h in results.hits] == paths(engine, "tiles")


def test_a_phrase_said_twice_is_one_phrase() -> None:
    parsed = parse_query('"vector tiles" "vector tiles" -"android" -"android"')
    assert parsed.phrases == ("vector tiles",) and parsed.excluded_phrases == ("android",)


def test_the_snippet_opens_on_the_phrase_and_highlights_it_whole(engine: Engine) -> None:
    hit = next(h for h in engine.search('"vector data"', as_you_type=False).hits if h.path == "Maps/Raster.md")
    shown = [hit.snippet.text[a:b] for a, b in hit.snippet.highlights]
    assert "vector data" in shown
    # Words of the phrase elsewhere in the passage are still marked one by one.
    assert "vector" in shown


def test_filters_restrict_every_channel_before_fusion(engine: Engine) -> None:
    results = engine.search("atlas tag:project", as_you_type=False)
    assert [h.path for h in results.hits] == ["Meetings/Atlas Kickoff.md"]  # tag:project keeps project/atlas
    assert {c.text for c in results.reading.chips} == {"tag:project"}
    assert paths(engine, "tiles path:Maps") and all(p.startswith("Maps/") for p in paths(engine, "tiles path:Maps"))
    assert paths(engine, "file:kickoff") == ["Meetings/Atlas Kickoff.md"]
    assert paths(engine, "[status:done]") == ["Decisions/Postgres.md"]
    assert set(paths(engine, "[status]")) == {"Decisions/Postgres.md", "Glossary/Tile Pack.md"}
    assert paths(engine, "task-todo:agenda") == ["Meetings/Atlas Kickoff.md"]
    assert paths(engine, "task-done:agenda") == []
    assert paths(engine, "task-done:room") == ["Meetings/Atlas Kickoff.md"]
    assert "Decisions/Postgres.md" not in paths(engine, "postgres -tag:decision")


def test_a_query_of_filters_only_lists_the_notes_newest_first(engine: Engine) -> None:
    results = engine.search("path:Daily", as_you_type=False)
    assert [h.path for h in results.hits] == ["Daily/2026-11-30.md", "Daily/2026-11-24.md"]
    assert {h.label for h in results.hits} == {"filter_match"} and results.reading.only_filters
    assert [h.path for h in engine.search("after:2026-11-25 path:Daily", as_you_type=False).hits] == ["Daily/2026-11-30.md"]
    assert [h.path for h in engine.search("before:2026-11-25 path:Daily", as_you_type=False).hits] == ["Daily/2026-11-24.md"]


def test_time_words_are_a_date_filter_in_a_short_query() -> None:
    monday = dt.date(2026, 12, 1)
    query = parse_query("yesterday's standup", today=monday, as_you_type=False)
    assert query.terms == ("standup",)
    assert [(f.kind, f.start, f.end) for f in query.filters] == [("date", dt.date(2026, 11, 30), dt.date(2026, 11, 30))]
    week = parse_query("standup last week", today=monday).filters[0]
    assert (week.start, week.end) == (dt.date(2026, 11, 23), dt.date(2026, 11, 29))
    march = parse_query("budget in March", today=monday).filters[0]
    assert (march.start, march.end) == (dt.date(2026, 3, 1), dt.date(2026, 3, 31))
    question = parse_query("which singer born in March recorded the song about the lonely moon", today=monday)
    assert not question.filters and "march" in question.terms and question.readings


def test_or_keeps_notes_with_either_word(engine: Engine) -> None:
    query = parse_query("mysql OR marsupial", as_you_type=False)
    assert query.alternatives == (("mysql", "marsupial"),) and query.terms == ("mysql", "marsupial")
    found = paths(engine, "mysql OR marsupial", typing=False)
    # Either word is required: nothing else is listed, however near its vector.
    assert set(found) == {"Decisions/Postgres.md", "Inbox/Quokka.md"}
    # While the last alternative is still being typed, the choice waits for it.
    assert len(paths(engine, "mysql OR marsu", typing=True)) > 2


def test_quotes_in_a_long_question_are_a_title_not_a_required_phrase() -> None:
    short = parse_query('"vector tiles" android', as_you_type=False)
    assert short.phrases == ("vector tiles",)
    question = parse_query('Who recorded the song "Vector Tiles" on the album of 1968?', as_you_type=False)
    assert not question.phrases and {"vector", "tiles"} <= set(question.terms)
    assert "read as words" in question.readings[0]
    # An excluded phrase is excluded in any query.
    assert parse_query('which notes talk about maps but -"vector tiles" please', as_you_type=False).excluded_phrases


def test_a_malformed_query_never_errors_and_says_how_it_was_read(engine: Engine) -> None:
    for query in ['"unbalanced', "foo: bar", "tag:", "[", "after:yesterday", '-"', "OR", "-", "[[Tile", ":::", 'path:"']:
        results = engine.search(query)
        assert results is not None
    assert engine.search('"vector tiles', as_you_type=False).reading.notes == ("unbalanced quote: read as words",)
    assert "unknown operator foo" in engine.search("foo: tiles", as_you_type=False).reading.notes[0]


def test_no_flat_scan_when_the_channels_found_every_note_a_filter_keeps(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Under a filter, only the notes it keeps are shown: once the channels found all of
    # them, a flat scan (a fuzzy read of every term) could add nothing that is kept.
    from engine.search.fallback import FlatScan

    scans: list[str] = []
    real_scan = FlatScan.scan

    def counted(self: FlatScan, words, *args, **kwargs):  # type: ignore[no-untyped-def]
        scans.append(" ".join(words))
        return real_scan(self, words, *args, **kwargs)

    monkeypatch.setattr(FlatScan, "scan", counted)
    phrase = engine.search('"vector tiles"', as_you_type=False)
    assert {hit.path for hit in phrase.hits} == {"Maps/Vector Tiles.md", "Maps/Android Tiles.md", "Maps/Raster.md"}
    assert scans == []
    unfiltered = engine.search("quokka", as_you_type=False)  # fewer than the limit, no filter: scanned
    assert unfiltered.hits[0].path == "Inbox/Quokka.md"
    assert scans


def test_a_word_typed_after_an_opening_quote_is_still_being_typed(engine: Engine) -> None:
    # `"vect` is the start of a phrase: its last word is a prefix, as it is without the
    # quote, and is not read as a whole word (nor corrected as a typo) at each keystroke.
    for typed in ['"vect', 'offline "vect', '"vector til']:
        query = parse_query(typed, as_you_type=True)
        assert query.prefix == typed.split()[-1].lstrip('"'), typed
        assert parse_query(typed, as_you_type=False).prefix is None
    assert parse_query('"vector tiles"', as_you_type=True).prefix is None  # closed: a phrase
    assert parse_query('-"vect', as_you_type=True).prefix is None  # an exclusion is not searched for
    found = engine.search('"vect', as_you_type=True)
    assert not found.reading.corrections and found.hits, found.reading
    assert found.hits[0].path == engine.search("vect", as_you_type=True).hits[0].path


@settings(max_examples=200, deadline=None)
@given(st.text(alphabet=st.sampled_from(list('ab "-:[]()ORtagpath#/. ')), max_size=40))
def test_any_mix_of_operators_parses(text: str) -> None:
    parsed = parse_query(text)
    assert isinstance(parsed.terms, tuple)


def test_a_typo_is_read_as_the_vaults_word_and_said_so(engine: Engine) -> None:
    results = engine.search("kikcoff", as_you_type=False)
    assert results.hits[0].path == "Meetings/Atlas Kickoff.md"
    assert [c.text for c in results.reading.chips if c.kind == "typo"] == ["kikcoff → kickoff"]
    assert results.hits[0].channels["fulltext"].matched_words == ("kickoff",)
    assert engine.search("postgress", as_you_type=False).hits[0].path == "Decisions/Postgres.md"
    # A real word the vault does not hold is no typo: "attended" stays "attended".
    assert not engine.plan("who attended", as_you_type=False).corrections
    # The word still being typed is read as a typo only when no word of the vault starts so.
    assert engine.search("kikcoff", as_you_type=True).hits[0].path == "Meetings/Atlas Kickoff.md"
    assert not engine.plan("kick", as_you_type=True).corrections


def test_the_languages_words_are_read_only_for_a_word_the_index_lacks(engine: Engine) -> None:
    # The vocabulary (30k words from the model's tokenizer) takes longer to load than a
    # search: a query of the vault's own words never reads it.
    reads: list[int] = []

    def whole_words() -> frozenset[str]:
        reads.append(1)
        return frozenset({"meandered"})

    corrections = engine._fulltext.corrections
    assert corrections(["tiles", "kickoff", "postgres"], "mig", whole_words) == {}
    assert reads == []
    assert corrections(["meandered"], None, whole_words) == {}
    assert reads == [1]
    assert corrections(["kicoff"], None, whole_words) == {"kicoff": ("kickoff", "kickoff")}


def test_a_word_typed_past_its_stem_is_no_typo(engine: Engine) -> None:
    # "migratio" has no index term starting with it (the index holds the stem "migrat"):
    # it is read as the stem it has grown past, not searched for as a typo.
    plan = engine.plan("the migratio", as_you_type=True)
    assert not plan.corrections
    found = engine.search("the migratio", as_you_type=True, channels=["fulltext"]).hits
    assert found and found[0].path == "Daily/2026-11-30.md"
    assert "migrat" in found[0].channels["fulltext"].matched_terms


def test_a_partly_typed_title_comes_first_while_typing(engine: Engine) -> None:
    assert paths(engine, "tile pa", typing=True)[0] == "Glossary/Tile Pack.md"


def test_a_one_note_word_gives_one_confident_hit_and_a_few_nearest(engine: Engine) -> None:
    results = engine.search("quokka", as_you_type=False)
    assert results.hits[0].path == "Inbox/Quokka.md"
    assert results.confident == 1
    confident, nearest = split_hits(results)
    assert len(confident) == 1 and 1 <= len(nearest) <= 3
    assert results_to_json(results)["confident"] == 1
    # Every front end counts what it shows: the confident hit, then the nearest notes.
    assert count_text(results) == f"1 result · {len(nearest)} nearest"
    assert count_text(engine.search("tag:project/atlas", as_you_type=False)) == "1 result"  # a listing has no divider


def test_badges_show_words_as_typed_and_labels_are_honest(engine: Engine) -> None:
    results = engine.search("who ships migration", as_you_type=False, channels=("fulltext",))
    hit = next(h for h in results.hits if h.path == "Daily/2026-11-30.md")
    assert hit.channels["fulltext"].matched_words == ("migration",)  # not "migrat"; never "who"
    assert all(h.label != "weak_semantic" for h in results.hits)  # full text found them all


def test_json_includes_the_plan(engine: Engine) -> None:
    payload = results_to_json(engine.search('"vector tiles" -android tag:maps kikcoff', as_you_type=False))
    plan = payload["plan"]
    assert {chip["kind"] for chip in plan["chips"]} >= {"phrase", "exclude", "tag", "typo"}
    assert plan["corrections"] == [{"typed": "kikcoff", "read_as": "kickoff"}]
    assert "vector" in plan["words"]


def test_a_chip_names_what_to_remove(engine: Engine, tmp_path: Path) -> None:
    results = engine.search("tiles tag:meeting last week", as_you_type=False)
    written = [chip.written for chip in results.reading.chips]
    assert "tag:meeting" in written and "last week" in written


def test_the_readme_documents_the_syntax_the_help_screen_shows() -> None:
    from engine.present import QUERY_SYNTAX_HELP

    readme = (Path(__file__).resolve().parent.parent / "README.md").read_text(encoding="utf-8")
    assert QUERY_SYNTAX_HELP in readme


def test_removing_a_chip_searches_the_query_without_it(engine: Engine) -> None:
    reading = engine.search('"vector tiles" -android tag:maps', as_you_type=False).reading
    without = {chip.text: chip.without for chip in reading.chips if chip.written}
    assert without == {
        "tag:maps": '"vector tiles" -android',
        '"vector tiles"': "-android tag:maps",
        "-android": '"vector tiles" tag:maps',
    }


def test_a_filter_is_tested_against_the_notes_once_while_its_words_are_typed(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    from engine.search import filters

    tests_made: list[str] = []
    real = filters._test

    def counted(query_filter: filters.QueryFilter) -> object:
        tests_made.append(query_filter.value)
        return real(query_filter)

    monkeypatch.setattr(filters, "_test", counted)
    typed = [engine.search(f"path:maps {word}", as_you_type=True) for word in ("t", "ti", "til", "tile", "tiles")]
    assert tests_made.count("maps") <= 1, "the same filter on every keystroke: its notes remembered"
    assert all(h.path.startswith("Maps/") for r in typed for h in r.hits)
    assert paths(engine, "tiles path:maps") == paths(engine, "tiles path:Maps") != []


@pytest.mark.parametrize(
    ("path", "prefix", "starts"),
    [
        ("Maps/Vector Tiles.md", "maps", True),
        ("Maps/Vector Tiles.md", "vector", True),
        ("Maps/Vector Tiles.md", "maps/vec", True),
        ("Maps/Vector Tiles.md", "tiles", False),
        ("Reference/Archive/Old.md", "archive/o", True),
        ("Reference/Archive/Old.md", "ence", False),
        ("a/b", "", True),
    ],
)
def test_a_path_filter_matches_the_path_or_a_part_after_a_slash(path: str, prefix: str, starts: bool) -> None:
    from engine.search.filters import _path_starts

    assert _path_starts(path, prefix) is starts


def test_tables_prepared_ahead_are_used_and_a_change_while_preparing_drops_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import time

    from engine.search import searcher as searcher_module

    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    built: list[int] = []
    real = searcher_module.FactsTable

    def counted(catalog: object) -> object:
        built.append(1)
        return real(catalog)  # type: ignore[arg-type]

    monkeypatch.setattr(searcher_module, "FactsTable", counted)
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        eng.prepare_for_typing(wait=True)
        assert len(built) == 1 and eng._searcher._scan is not None
        assert paths(eng, "tag:decision postgres", typing=True) == ["Decisions/Postgres.md"]
        assert len(built) == 1, "the first filtered keystroke found the facts ready"

        # A note gains a tag: the tables are built again in the background, from the new catalog.
        note = vault / "Inbox/Quokka.md"
        note.write_text("---\ntags: [decision]\n---\n" + note.read_text(encoding="utf-8"), encoding="utf-8")
        eng.reindex(["Inbox/Quokka.md"])
        deadline = time.monotonic() + 60
        while eng._searcher._facts is None and time.monotonic() < deadline:
            time.sleep(0.01)
        assert len(built) >= 2
        assert "Inbox/Quokka.md" in paths(eng, "tag:decision")

        # The catalog changes while a table is being read: that table is dropped, not kept.
        def changing(catalog: object) -> object:
            table = real(catalog)  # type: ignore[arg-type]
            eng._searcher.refresh_titles()
            return table

        monkeypatch.setattr(searcher_module, "FactsTable", changing)
        eng._searcher.refresh_titles()
        eng._searcher.prepare()
        assert eng._searcher._facts is None and eng._searcher._scan is None


def test_a_tag_an_edit_adds_is_filtered_at_once(tmp_path: Path) -> None:
    vault = tmp_path / "vault"
    for rel, text in NOTES.items():
        (vault / rel).parent.mkdir(parents=True, exist_ok=True)
        (vault / rel).write_text(text, encoding="utf-8")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as eng:
        eng.reindex()
        assert "Inbox/Quokka.md" not in paths(eng, "tag:decision")  # the facts are read now
        note = vault / "Inbox/Quokka.md"
        note.write_text("---\ntags: [decision]\nstatus: open\n---\n" + note.read_text(encoding="utf-8"), encoding="utf-8")
        eng.reindex(["Inbox/Quokka.md"])  # its title and aliases stay the same
        assert "Inbox/Quokka.md" in paths(eng, "tag:decision")
        assert "Inbox/Quokka.md" in paths(eng, "[status:open]")


def test_tag_and_path_filters_keep_what_testing_every_note_keeps(engine: Engine) -> None:
    # Tag and path filters are read from each distinct tag's notes and from casefolded
    # paths; they must keep exactly the notes the per-note test keeps, negated or not.
    from engine.query.parse import QueryFilter
    from engine.search.filters import FactsTable, _test

    table = FactsTable(engine._catalog)
    tags = {tag for note in table.notes.values() for tag in note.tags}
    values = {"", "x", "proj", "project", "project/", "project/atlas", "project/at", "Meeting", "MEETINGS", "maps/v"}
    values |= {tag[:cut] for tag in tags for cut in range(1, len(tag) + 1)}
    values |= {path[:cut] for path in table.notes for cut in range(1, len(path) + 1, 3)}
    compared = 0
    for kind in ("tag", "path"):
        for value in sorted(values):
            for negated in (False, True):
                query_filter = QueryFilter(kind, value, negated=negated)  # type: ignore[arg-type]
                test = _test(query_filter)
                slow = {path for path, note in table.notes.items() if test(note) != negated}
                assert set(table._kept_by(query_filter)) == slow, (kind, value, negated)
                compared += bool(slow) and len(slow) < len(table.notes)
    assert compared > 20  # values that keep some notes and not others, not only all or none


EDGES = [dt.date.min, dt.date(1, 1, 31), dt.date(1, 2, 1), dt.date(9999, 12, 1), dt.date.max]


@pytest.mark.parametrize(
    "text",
    [
        "after:9999-12-31", "before:0001-01-01", "after:0001-01-01", "before:9999-12-31", "after:0000-01-01",
        "in December 9999", "in January 0001", "in May 0000", "notes in december 9999", "-after:9999-12-31",
        "today", "yesterday", "this week", "last week", "this month", "last month", "this year", "last year",
        "in December", "in January", "standup yesterday's",
    ],
)
@pytest.mark.parametrize("today", EDGES, ids=str)
def test_every_date_form_at_the_calendar_s_ends_is_read_without_raising(text: str, today: dt.date) -> None:
    query = parse_query(text, today=today, as_you_type=False)
    for found in query.filters:
        assert found.start is None or dt.date.min <= found.start
        assert found.end is None or found.end <= dt.date.max


def test_a_date_beyond_the_calendar_keeps_no_note_and_says_so(engine: Engine) -> None:
    for text in ("after:9999-12-31", "before:0001-01-01"):
        results = engine.search(text, as_you_type=False)
        assert not results.hits, text
        assert any("no date is" in note for note in results.reading.notes), results.reading.notes
    december = parse_query("in December 9999", as_you_type=False).filters[0]
    assert (december.start, december.end) == (dt.date(9999, 12, 1), dt.date(9999, 12, 31))
    year_zero = parse_query("in May 0000", as_you_type=False)
    assert not year_zero.filters and "0000" in year_zero.terms and year_zero.readings
    assert [h.path for h in engine.search("after:9999-12-30 path:Daily", as_you_type=False).hits] == []
    assert {h.path for h in engine.search("before:9999-12-31 path:Daily", as_you_type=False).hits} == {
        "Daily/2026-11-30.md", "Daily/2026-11-24.md"
    }


def test_a_note_dated_past_the_calendar_by_its_file_is_filtered_and_listed(tmp_path: Path) -> None:
    """tmpfs keeps any 64-bit file time: a note modified "in the year 33658" must not break filters."""
    import os
    import shutil
    import tempfile

    if not Path("/dev/shm").is_dir():
        pytest.skip("no tmpfs to hold a file time past the year 9999")
    with tempfile.TemporaryDirectory(dir="/dev/shm") as shm:
        vault = Path(shm) / "vault"
        for rel, text in NOTES.items():
            (vault / rel).parent.mkdir(parents=True, exist_ok=True)
            (vault / rel).write_text(text, encoding="utf-8")
        far = vault / "Inbox" / "Quokka.md"
        os.utime(far, (1e12, 1e12))
        if far.stat().st_mtime != 1e12:
            pytest.skip("this file system does not keep a file time past the year 9999")
        with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
            engine.reindex()
            assert [h.path for h in engine.search("path:Inbox", as_you_type=False).hits] == ["Inbox/Quokka.md"]
            assert "Inbox/Quokka.md" in [h.path for h in engine.search("after:2026-01-01", as_you_type=False).hits]
        shutil.rmtree(vault)


# A paragraph in another language than the vault's, as someone pastes it into the search box.
FOREIGN_PASTE = (
    "Gestern Nachmittag besprachen wir ausführlich die Überarbeitung unserer Lagerverwaltung, wobei "
    "mehrere Abteilungsleiter ihre Bedenken hinsichtlich der Umstellungsfristen äußerten. Insbesondere "
    "die Buchhaltung befürchtet Verzögerungen beim Jahresabschluss, während die Logistikabteilung "
    "zusätzliche Schulungen verlangt, bevor irgendwelche Änderungen umgesetzt werden."
)


def _posting_reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Count the full-text postings read (the unit of a correction's work), reading them for real."""
    from engine.channels.bm25 import BulkScorer

    reads: list[str] = []
    real = BulkScorer.docs_with

    def docs_with(self: BulkScorer, term: str, fields: object) -> object:
        reads.append(term)
        return real(self, term, fields)  # type: ignore[arg-type]

    monkeypatch.setattr(BulkScorer, "docs_with", docs_with)
    return reads


def test_pasted_text_in_another_language_is_not_read_as_typos_and_costs_little(
    engine: Engine, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Each unknown word tried every variant one edit away, two posting reads each: 25,212
    # lookups for one such paragraph (0.8-1.6 s, under the full-text lock).
    reads = _posting_reads(monkeypatch)
    for typing in (False, True):
        results = engine.search(FOREIGN_PASTE, as_you_type=typing)
        assert not results.reading.corrections, results.reading.corrections
        assert not [c for c in results.reading.chips if c.kind == "typo"]
    assert len(reads) < 1000, len(reads)


def test_a_few_typos_are_still_read_within_the_budget(engine: Engine, monkeypatch: pytest.MonkeyPatch) -> None:
    reads = _posting_reads(monkeypatch)
    three = engine.plan("kikcoff postgress marsupail", as_you_type=False).corrections
    assert dict(three) == {"kikcoff": "kickoff", "postgress": "postgres", "marsupail": "marsupial"}
    assert len(reads) < 2 * 4000 + 100, len(reads)
    long_typos = engine.plan("kikcoff marsupial migratoin", as_you_type=False).corrections
    assert ("migratoin", "migration") in long_typos and ("kikcoff", "kickoff") in long_typos
    # More words than typos come in are another language: none is read as a typo.
    assert not engine.plan("kikcoff postgress marsupail quokkka", as_you_type=False).corrections


@pytest.mark.parametrize(
    ("query", "expected"),
    [
        ("tag:meeting OR tag:decision", {"Meetings/Atlas Kickoff.md", "Decisions/Postgres.md"}),
        ("path:Meetings OR path:Decisions", {"Meetings/Atlas Kickoff.md", "Decisions/Postgres.md"}),
        ("[status:draft] OR [status:done]", {"Glossary/Tile Pack.md", "Decisions/Postgres.md"}),
        ("marsupial OR tag:decision", {"Inbox/Quokka.md", "Decisions/Postgres.md"}),
        ("tag:decision OR marsupial", {"Inbox/Quokka.md", "Decisions/Postgres.md"}),
        ('"tile packs" OR file:quokka', {"Daily/2026-11-24.md", "Inbox/Quokka.md"}),
        # OR joins the parts next to it; the others still apply (parentheses make one part of several).
        ("task-todo:agenda OR before:2026-11-25 path:Daily", {"Daily/2026-11-24.md"}),
        ("(task-todo:agenda) OR (before:2026-11-25 path:Daily)", {"Meetings/Atlas Kickoff.md", "Daily/2026-11-24.md"}),
        ("-tag:meeting OR path:Meetings", set(NOTES)),
        ("(path:Maps raster) OR tag:meeting", {"Maps/Raster.md", "Meetings/Atlas Kickoff.md"}),
        ("tag:meeting OR tag:decision OR file:quokka", {"Meetings/Atlas Kickoff.md", "Decisions/Postgres.md", "Inbox/Quokka.md"}),
        ("path:Maps -(android phones)", {"Maps/Vector Tiles.md", "Maps/Raster.md"}),
        ("path:Maps -(android rollout)", {"Maps/Vector Tiles.md", "Maps/Raster.md", "Maps/Android Tiles.md"}),
    ],
)
def test_or_joins_any_two_parts_of_the_query_language(engine: Engine, query: str, expected: set[str]) -> None:
    """`tag:atlas OR tag:maps` kept the notes of both filters (none) where each kept three, with no chip."""
    found = engine.search(query, as_you_type=False, limit=50)
    # Every note the query keeps, and none other: the flat scan fills the list inside a filter.
    assert {hit.path for hit in found.hits} == expected, query
    chips = [chip for chip in found.reading.chips if chip.kind in ("or", "exclude")]
    assert chips and all(chip.written for chip in chips), found.reading.chips
    # A chip's ✕ searches the query without the whole choice.
    assert chips[-1].without == " ".join(query.replace(chips[-1].written, " ").split())
