"""Snippets read like the note, not like its Markdown source."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

from engine.catalog import StoredChunk
from engine.records import Chunk
from engine.search.evidence import build_snippet, readable


def test_readable_shows_links_by_their_text() -> None:
    source = (
        "## Context\nSee [[ADR-004 Sync with CRDTs]], [[Projects/Atlas/Sync Engine|the sync engine]],\n"
        "![[diagram.png]], [[Note#Heading]], [[#Local]], [[X\\|Y]] and [the guide](Local%20Dev%20Setup.md)."
    )
    assert readable(source) == (
        "Context\nSee ADR-004 Sync with CRDTs, the sync engine,\n"
        "diagram.png, Note > Heading, Local, Y and the guide."
    )


def test_snippet_highlights_point_at_the_words_after_cleaning() -> None:
    text = "# Plan\n\nAsk [[Priya Kumar|Priya]] about the [[Tombstone]] retention.\n"
    chunk = StoredChunk(id=1, path="a.md", chunk=Chunk(0, text, ("Plan",), 0, len(text), 5, 8), text_sha="x")
    snippet = build_snippet([chunk], matches=lambda w: w.lower() in {"tombstone", "priya"}, hint_terms=["tombstone"])
    assert "[[" not in snippet.text and "#" not in snippet.text
    assert [snippet.text[a:b] for a, b in snippet.highlights] == ["Priya", "Tombstone"]
    assert snippet.line == 7  # the first match is on the chunk's third line


def test_note_chunks_are_read_once_until_the_catalog_changes(tmp_path: Path) -> None:
    from vault_copy import copy_sample_vault

    from engine.api import Engine
    from engine.embedder import HashEmbedder
    from engine.search.evidence import NoteChunks

    vault = copy_sample_vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=HashEmbedder()) as engine:
        engine.reindex()
        catalog = engine._catalog
        reads: list[list[str]] = []
        real = catalog.chunks_of_notes

        def counted(paths: Iterable[str]) -> dict[str, list[StoredChunk]]:
            wanted = list(paths)
            reads.append(wanted)
            return real(wanted)

        catalog.chunks_of_notes = counted  # type: ignore[method-assign]
        chunks = NoteChunks(catalog)
        page = ["Glossary/CRDT.md", "People/Priya Kumar.md", "no such note.md"]
        assert chunks.of(page) == {p: c for p, c in real(page).items()}
        assert chunks.of(page[:2]) == {p: c for p, c in real(page[:2]).items()}
        assert reads == [page], "the second page of the same notes reads nothing"
        note = vault / "Glossary/CRDT.md"
        note.write_text(note.read_text(encoding="utf-8") + "\n\n## Later\n\nTombstones are compacted weekly.\n", "utf-8")
        engine.reindex(["Glossary/CRDT.md"])
        fresh = chunks.of(page[:1])["Glossary/CRDT.md"]
        assert any("compacted weekly" in c.chunk.text for c in fresh), "an edit is read again"
        assert len(reads) == 2


def test_the_passage_word_matcher_agrees_with_stemming_every_word() -> None:
    # The matcher skips stemming a plain ASCII word whose first letter begins no query
    # stem (Porter only rewrites endings); it must answer as stemming every word would.
    import re

    from engine.channels.fulltext import analyze_text
    from engine.search.searcher import _WordMatcher

    root = Path(__file__).resolve().parents[1] / "sample_vault"
    text = " ".join(path.read_text(encoding="utf-8") for path in sorted(root.rglob("*.md")))
    words = sorted(set(re.findall(r"[^\W_][\w'’.-]*", text)))
    words += ["Running", "RUNS", "ran", "café", "Cafés", "naïve", "e-mail", "mail", "node.js", "Ünïcode", "ÉTÉ", "日本語", "ties", "happy"]
    queries = ["sync conflicts", "running café", "e-mail tiles", "hap", "日本", "tie", "Ünicode"]
    for query, typing in [(q, False) for q in queries] + [(q, True) for q in queries]:
        # As typed, the last word is a prefix that the stems do not hold yet.
        stems = frozenset(analyze_text(" ".join(query.split()[:-1]) if typing else query))
        for prefix in (None, query.split()[-1]):
            fast = _WordMatcher(stems, prefix, analyze_text)
            folded_prefix = _fold(prefix) if prefix and len(prefix) >= 2 else None
            for word in words:
                lowered = word.lower()
                slow = bool(folded_prefix and _fold(lowered).startswith(folded_prefix)) or bool(
                    stems & set(analyze_text(lowered))
                )
                assert fast(word) == slow, (query, prefix, word)
                if slow and word.isascii() and word.isalpha():  # snippets ask only about these letters
                    assert word[0].lower() in fast.letters, (query, prefix, word)


def test_snippets_asking_only_the_matchers_letters_equal_asking_every_word(tmp_path: Path) -> None:
    # build_snippet asks a matcher that tells its `letters` only about the words that may
    # match; the window and highlights must be those of asking about every word.
    from vault_copy import copy_sample_vault

    from engine.api import Engine
    from engine.channels.fulltext import analyze_text
    from engine.search.searcher import _WordMatcher

    vault = copy_sample_vault(tmp_path / "vault")
    with Engine.open(vault, index_dir=tmp_path / "index", embedder=None) as engine:
        engine.reindex(embed=False)
        notes = engine._catalog.chunks_of_notes(engine._catalog.note_paths())
    compared = 0
    for query in ["sync conflicts", "offline sy", "Priya Ku", "roadmap decisions", "crdt merge", "café", "e-mail"]:
        stems = frozenset(analyze_text(" ".join(query.split()[:-1])))  # the last word still typed
        prefix = query.split()[-1]
        for chunks in notes.values():
            fast = _WordMatcher(stems, prefix, analyze_text)
            slow = _WordMatcher(stems, prefix, analyze_text)
            hints = sorted({*stems, prefix.lower()})
            shown = build_snippet(chunks, matches=fast, hint_terms=hints)
            every_word = slow.__call__  # a plain callable: no `letters`, so every word is asked
            assert shown == build_snippet(chunks, matches=every_word, hint_terms=hints), query
            compared += bool(shown.highlights)
    assert compared > 50


def _fold(text: str) -> str:
    from engine.folding import fold_accents

    return fold_accents(text)
