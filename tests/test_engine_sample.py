"""Engine integration on sample_vault with the real model: each kind of query finds its note."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from engine.api import Engine
from engine.errors import NoteNotFound, SaveConflict, UnsafePath
from engine.records import SearchResults


def top(results: SearchResults, n: int) -> list[str]:
    return [hit.path for hit in results.hits[:n]]


def test_index_counts_are_consistent(indexed_sample: Engine) -> None:
    status = indexed_sample.status()
    assert status.notes == len(list((indexed_sample.vault).rglob("*.md")))
    assert status.embedded_fraction == 1.0
    notes_with_text = sum(1 for path, _ in indexed_sample.notes() if indexed_sample._catalog.chunks_for(path))
    assert status.channel_counts == {
        "fulltext": status.notes,
        "vectors": notes_with_text,
        "graph": status.notes,
    }
    assert status.dangling_links >= 3  # the vault has dangling links on purpose
    assert status.vectors.status == "ok"


def test_exact_keyword(indexed_sample: Engine) -> None:
    results = indexed_sample.search("SQLCipher", as_you_type=False)
    first = results.hits[0]
    assert first.path == "Meetings/2026/2026-03-25 Security Review.md"
    assert first.label == "keyword_exact"
    assert "fulltext" in first.channels
    assert any("sqlciph" in term for term in first.channels["fulltext"].matched_terms)
    assert first.snippet.highlights, "the matched word is highlighted in the snippet"
    start, end = first.snippet.highlights[0]
    assert first.snippet.text[start:end].lower() == "sqlcipher"


def test_paraphrase_without_shared_words(indexed_sample: Engine) -> None:
    results = indexed_sample.search(
        "resolving clashing simultaneous amendments made while disconnected", as_you_type=False
    )
    assert "Projects/Atlas/Offline Sync Conflicts.md" in top(results, 3)
    hit = next(h for h in results.hits if h.path == "Projects/Atlas/Offline Sync Conflicts.md")
    assert "vectors" in hit.channels


def test_alias_gets_its_note_first(indexed_sample: Engine) -> None:
    results = indexed_sample.search("PK", as_you_type=False)
    assert results.hits[0].path == "People/Priya Kumar.md"
    assert results.hits[0].label == "alias_hit"


def test_exact_title_floor(indexed_sample: Engine) -> None:
    results = indexed_sample.search("Atlas Sync Engine", as_you_type=False)
    assert results.hits[0].path == "Projects/Atlas/Sync Engine.md"
    assert results.hits[0].label == "exact_title_match"


def test_duplicate_titles_both_first(indexed_sample: Engine) -> None:
    results = indexed_sample.search("Roadmap", as_you_type=False)
    assert set(top(results, 2)) == {"Projects/Atlas/Roadmap.md", "Projects/Beacon/Roadmap.md"}


def test_relational_query_needs_the_graph_hop(indexed_sample: Engine) -> None:
    """The kickoff note lists attendees; their notes never mention the kickoff."""
    results = indexed_sample.search("who attended the Atlas kickoff", as_you_type=False, limit=10)
    attendees = {"People/Priya Kumar.md", "People/Marcus Chen.md", "People/Tomasz Nowak.md"}
    found = [h for h in results.hits if h.path in attendees]
    assert found, top(results, 10)
    for hit in found:
        assert "graph" in hit.channels
        assert len(hit.channels["graph"].graph_path) >= 2
    assert "Atlas" in " ".join(results.recognized_entities)
    # A who-question is answered by people: the vault files them under People/.
    assert results.answer_notes and all(p.startswith("People/") for p in results.answer_notes)
    assert all(h.path.startswith("People/") for h in results.hits[:5]), top(results, 5)


def test_query_cut_mid_word(indexed_sample: Engine) -> None:
    results = indexed_sample.search("offline sync confl", as_you_type=True)
    assert "Projects/Atlas/Offline Sync Conflicts.md" in top(results, 5)
    complete = indexed_sample.search("jose alv", as_you_type=True)
    assert complete.hits[0].path == "People/José Álvarez.md"


def test_a_word_being_typed_counts_where_a_note_holds_what_it_becomes(indexed_sample: Engine) -> None:
    # "tombst" is no word of the vault; the notes holding "tombstone" match it. Their full-text
    # votes count as votes for the whole query, not for none of it, so the nearest vectors of a
    # half word do not push them out.
    holding = {
        path
        for path, _title in indexed_sample.notes()
        if "tombstone" in (indexed_sample.vault / path).read_text(encoding="utf-8").casefold()
    }
    results = indexed_sample.search("tombst", as_you_type=True, limit=10)
    assert len(holding) >= 5
    assert set(top(results, 5)) <= holding, top(results, 10)
    first = results.hits[0]
    assert first.label == "keyword_exact"
    assert first.channels["fulltext"].matched_words == ("tombst",)
    assert first.votes["fulltext"] > first.votes["vectors"]
    # By meaning, the half word is searched as the vault's word it begins: the vector channel
    # lists what it lists for "tombstone", not the nearest neighbours of a fragment.
    assert results.reading.typed_as == "tombstone"
    by_meaning = indexed_sample.search("tombst", as_you_type=True, channels=["vectors"], limit=5)
    whole = indexed_sample.search("tombstone", as_you_type=False, channels=["vectors"], limit=5)
    assert top(by_meaning, 5) == top(whole, 5)


def test_a_name_being_typed_is_recognised_as_the_one_it_can_become(indexed_sample: Engine) -> None:
    text = "who chose Postgres as the database for Bea"
    typed = indexed_sample.plan(text)
    beacon = [m for m in typed.entities if m.surface == "Beacon"]
    assert beacon and beacon[0].end == len(text), typed.entities
    assert ("Beacon", "written as a name, being typed as “Bea”") in typed.named_because
    # Typed whole, the same words name no note: "Bea" is not a name.
    assert not any(m.surface.startswith("Bea") for m in indexed_sample.plan(text, as_you_type=False).entities)
    # "Mar" begins Marcus Chen and Markdown Conventions: it could become either, so neither.
    assert not indexed_sample.plan("notes by Mar").entities
    # The graph walks from Beacon as it does for the whole name.
    whole = indexed_sample.search("who chose Postgres as the database for Beacon", as_you_type=False)
    assert top(indexed_sample.search(text, as_you_type=True), 3) == top(whole, 3)


def test_non_english_title(indexed_sample: Engine) -> None:
    results = indexed_sample.search("現場", as_you_type=False)
    assert results.hits[0].path == "Glossary/現場.md"


def test_all_three_channels_report(indexed_sample: Engine) -> None:
    results = indexed_sample.search("who decided to use CRDTs for sync", as_you_type=False)
    assert set(results.channels) == {"fulltext", "vectors", "graph"}
    assert all(status.status == "ok" for status in results.channels.values())
    assert any(len(h.channels) == 3 for h in results.hits)
    for hit in results.hits:
        for evidence in hit.channels.values():
            assert evidence.rank >= 1


@pytest.mark.parametrize("query", ["", "   ", "!!! ??? ...", "—", "x" * 2000, "a " * 1000, "[[", "#", "\x00"])
def test_odd_queries_never_fail(indexed_sample: Engine, query: str) -> None:
    results = indexed_sample.search(query)
    assert isinstance(results.hits, tuple)
    if not any(ch.isalnum() for ch in query):
        assert results.hits == ()


def test_backlinks_related_mentions_neighbors(indexed_sample: Engine) -> None:
    backlinks = indexed_sample.backlinks("People/Priya Kumar.md")
    kickoff = [b for b in backlinks if b.path == "Meetings/2026/2026-01-12 Atlas Kickoff.md"]
    # The linking line as a reader sees it: `- Attendees: [[Priya Kumar]], …` without marks or brackets.
    assert kickoff and kickoff[0].context.startswith("Attendees: Priya Kumar, Marcus Chen")
    related = indexed_sample.related("Projects/Atlas/Offline Sync Conflicts.md")
    assert related.hits and all(h.path != "Projects/Atlas/Offline Sync Conflicts.md" for h in related.hits)
    neighbors = indexed_sample.neighbors("People/Priya Kumar.md")
    assert any(n.path == "Projects/Atlas/Atlas.md" for n in neighbors)
    with pytest.raises(NoteNotFound):
        indexed_sample.note("Nope.md")


def test_note_links_resolved_like_obsidian(indexed_sample: Engine) -> None:
    view = indexed_sample.note("Projects/Atlas/Sync Engine.md")
    resolved = {link.target: target for link, target in view.links}
    assert resolved.get("priya kumar") == "People/Priya Kumar.md"  # case-insensitive


def test_vectors_unavailable_degrades(sample_copy: Path, tmp_path: Path) -> None:
    engine = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=None)
    try:
        engine.reindex()
        results = engine.search("SQLCipher", as_you_type=False)
        assert results.hits[0].path == "Meetings/2026/2026-03-25 Security Review.md"
        assert results.channels["vectors"].status == "unavailable"
        assert results.channels["fulltext"].status == "ok"
        status = engine.status()
        assert status.vectors.status == "unavailable"
        assert status.model == "none"
    finally:
        engine.close()


def test_incremental_reindex_by_content_hash(sample_copy: Path, tmp_path: Path) -> None:
    from engine.embedder import HashEmbedder

    engine = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=HashEmbedder())
    try:
        first = engine.reindex()
        assert len(first.added) > 40 and first.embedded_chunks > 0
        again = engine.reindex()
        assert again.added == again.updated == again.removed == () and again.embedded_chunks == 0
        note = sample_copy / "Inbox" / "Ideas for Q3.md"
        note.write_text("# Ideas for Q3\n\nA quokka mascot for onboarding.\n", encoding="utf-8")
        (sample_copy / "Glossary" / "Tile Pack.md").unlink()
        third = engine.reindex()
        assert third.updated == ("Inbox/Ideas for Q3.md",)
        assert third.removed == ("Glossary/Tile Pack.md",)
        assert 0 < third.embedded_chunks <= 2  # only the new chunk text is embedded
        assert engine.search("quokka", as_you_type=False).hits[0].path == "Inbox/Ideas for Q3.md"
        assert all(h.path != "Glossary/Tile Pack.md" for h in engine.search("tile pack", limit=50).hits)
        # A rename costs no embedding: same chunk texts, cached by hash.
        shutil.move(sample_copy / "Reference" / "Release Checklist.md", sample_copy / "Reference" / "Shipping.md")
        fourth = engine.reindex()
        assert fourth.added == ("Reference/Shipping.md",) and fourth.embedded_chunks == 0
    finally:
        engine.close()


def test_save_note_is_atomic_and_detects_conflicts(sample_copy: Path, tmp_path: Path) -> None:
    from engine.embedder import HashEmbedder
    from engine.notes import file_sha

    engine = Engine.open(sample_copy, index_dir=tmp_path / "idx", embedder=HashEmbedder())
    try:
        engine.reindex()
        path = "Inbox/Reading list.md"
        target = sample_copy / path
        target.chmod(0o640)
        loaded = file_sha(target)
        engine.save_note(path, "# Reading list\n\nZanzibar papers.\n", expected_sha=loaded)
        assert (target.stat().st_mode & 0o777) == 0o640
        assert engine.search("zanzibar", as_you_type=False).hits[0].path == path
        with pytest.raises(SaveConflict):
            engine.save_note(path, "stale", expected_sha=loaded)
        assert "Zanzibar" in target.read_text(encoding="utf-8")
        with pytest.raises(UnsafePath):
            engine.save_note("../outside.md", "nope", expected_sha=None)
        assert not (sample_copy.parent / "outside.md").exists()
    finally:
        engine.close()


def test_a_page_of_notes_chunks_comes_in_one_query_as_each_note_alone(indexed_sample: Engine) -> None:
    catalog = indexed_sample._catalog
    paths = [path for path, _ in indexed_sample.notes()][:25]
    together = catalog.chunks_of_notes([*paths, "No such note.md"])
    assert set(together) == {path for path in paths if catalog.chunks_for(path)}
    for path in paths:
        assert together.get(path, []) == catalog.chunks_for(path)


def test_a_typo_in_the_word_being_typed_reads_as_the_word_it_was_meant_to_become(indexed_sample: Engine) -> None:
    # "kikcof" begins no word; "kickof", two neighbours swapped, begins "kickoff". Full text
    # reads it so, the vector channel embeds that word, and the reading says which it was.
    typo = indexed_sample.search("atlas kikcof", as_you_type=True, limit=10)
    assert ("kikcof", "kickoff") in typo.reading.corrections
    assert typo.reading.typed_as == "kickoff"
    kickoff = "Meetings/2026/2026-01-12 Atlas Kickoff.md"
    assert kickoff in top(typo, 3), top(typo, 10)
    assert "kickoff" in typo.hits[top(typo, 10).index(kickoff)].channels["fulltext"].matched_words
    by_meaning = indexed_sample.search("atlas kikcof", as_you_type=True, channels=["vectors"], limit=5)
    whole = indexed_sample.search("atlas kickoff", as_you_type=False, channels=["vectors"], limit=5)
    assert top(by_meaning, 5) == top(whole, 5)
    # A whole word mistyped while still typing is embedded as its correction too.
    assert indexed_sample.search("atlas kikcoff", as_you_type=True).reading.typed_as == "kickoff"
    # A slip read as a fragment ("genreat" → generat, an index term) is embedded as the word it begins.
    fragment = indexed_sample.search("platform genreat", as_you_type=True).reading
    assert ("genreat", "generat") in fragment.corrections
    assert fragment.typed_as.startswith("generat") and len(fragment.typed_as) > len("generat"), fragment.typed_as


def test_the_start_of_a_word_the_vault_lacks_is_no_typo(indexed_sample: Engine) -> None:
    # "discon" begins "disconnected", a word of the language no note says: it stays as typed
    # rather than becoming the vault's "discount" (one letter away), and "recep" (reception)
    # does not become "recap".
    for query, fragment in (("made while discon", "discon"), ("handsets lacking recep", "recep")):
        reading = indexed_sample.search(query, as_you_type=True).reading
        assert not any(typed == fragment for typed, _word in reading.corrections), reading.corrections
        assert reading.typed_as not in ("discount", "recap")
