"""Pilot tests of the search panel: as-you-type results, badges, stale drops, passage, explain."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from pilot_support import SIZE, run, settle
from textual.message import Message
from textual.widgets import Input, Markdown, Static
from textual.widgets.markdown import MarkdownBlock

from ui.app import CairnApp
from ui.dialogs.note_picker import NotePicker
from ui.hits import badge_content
from ui.screens.main import MainScreen
from ui.screens.search import SearchScreen, SyntaxHelp
from ui.widgets.explain_view import ExplainView
from ui.widgets.note_view import NoteView
from ui.widgets.search_results import SearchResultList


async def _type(pilot: object, text: str) -> None:
    for character in text:
        await pilot.press("space" if character == " " else character)  # type: ignore[attr-defined]


def test_results_update_per_keystroke_with_badges_from_all_channels(make_app: Callable[..., CairnApp]) -> None:
    messages: list[Message] = []

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await _type(pilot, "who decided to use CRDTs")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            answers = [m for m in messages if isinstance(m, SearchScreen.ResultsReady)]
            assert answers, "the search worker posted no results"
            assert len({m.query for m in answers}) > 1, "results should arrive while typing, not only at the end"
            final = max(answers, key=lambda m: m.seq)
            assert final.query == "who decided to use CRDTs"
            assert screen.shown_seq == final.seq
            assert screen.results is final.results
            top = [hit.path for hit in final.results.hits[:5]]
            # A who-question: the person who decided first (the qrels' grade 2), the decision record near.
            assert top[0] == "People/Priya Kumar.md"
            assert "Decisions/ADR-004 Sync with CRDTs.md" in top
            channels = {name for hit in final.results.hits[:5] for name in hit.channels}
            assert channels == {"fulltext", "vectors", "graph"}
            first_badges = badge_content(final.results.hits[0]).plain
            # In words: the words it holds as typed, how close in meaning, how the links reach it.
            assert "words “" in first_badges and "meaning ●" in first_badges and "BM25" not in first_badges
            raw_badges = badge_content(final.results.hits[0], raw=True).plain
            assert "BM25 #" in raw_badges and "VEC " in raw_badges and "GRAPH" in raw_badges
            shown = screen.query_one(SearchResultList)
            assert shown.option_count == len(final.results.hits)
            assert "all your words" in str(shown.get_option_at_index(0).prompt)

    run(body())


def test_a_stale_result_never_overwrites_a_newer_one(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await _type(pilot, "tile")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            old_results = screen.results
            assert old_results is not None
            await _type(pilot, " pack")
            await settle(pilot)
            newest = screen.results
            assert newest is not None and newest.query == "tile pack"
            dropped_before = screen.dropped_stale
            stale = SearchScreen.ResultsReady(screen.shown_seq - 1, "tile", old_results, app.engine.status())
            screen.post_message(stale)
            await pilot.pause()
            assert screen.results is newest
            assert screen.dropped_stale == dropped_before + 1

    run(body())


def test_enter_opens_the_note_at_the_matching_passage(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("ctrl+k")
            app.screen.query_one("#search-input", Input).value = "worker streams rows with a server-side cursor"
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen) and screen.results is not None
            hit = screen.results.hits[0]
            assert hit.path == "Projects/Beacon/Export Pipeline.md"
            await pilot.press("enter")
            await settle(pilot)
            assert isinstance(app.screen, MainScreen)
            view = app.screen.query_one(NoteView)
            assert view.path == hit.path
            assert view.passage_line == hit.snippet.line > 1
            marked = list(view.query(".-passage"))
            assert len(marked) == 1 and isinstance(marked[0], MarkdownBlock)
            start, end = marked[0].source_range
            file_line = hit.snippet.line - 1  # blocks know their file's 0-based lines, frontmatter included
            assert start <= file_line < end
            assert view.scroll_y > 0, "the passage should be scrolled into view"

    run(body())


def test_explain_view_and_channel_filters(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            app.screen.query_one("#search-input", Input).value = "offline map tiles"
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            explain = screen.query_one(ExplainView)
            assert not explain.display
            await pilot.press("f2")
            assert explain.display
            text = str(explain.query_one("#explain-text").render())
            assert "why here: " in text and "F9: raw scores" in text and "fused score" not in text
            await pilot.press("f9")
            text = str(explain.query_one("#explain-text").render())
            assert "rank" in text and "recognized" in text and "fused score" in text
            await pilot.press("f9")
            await pilot.press("alt+1")
            await settle(pilot)
            assert screen.results is not None and screen.results.hits
            assert set(screen.results.channels) == {"fulltext"}
            assert all(set(hit.channels) == {"fulltext"} for hit in screen.results.hits)
            await pilot.press("f7")
            await settle(pilot)
            assert set(screen.results.channels) == {"vectors"}
            await pilot.press("alt+0")
            await settle(pilot)
            assert set(screen.results.channels) == {"fulltext", "vectors", "graph"}
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, MainScreen)
            assert app.screen.last_query == "offline map tiles"
            await pilot.press("slash")
            search_input = app.screen.query_one("#search-input", Input)
            assert search_input.value == "offline map tiles", "the last query comes back"
            await pilot.press("x")
            assert search_input.value == "x", "typing replaces the selected old query"

    run(body())


def test_panel_says_when_vectors_are_unavailable(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            app.screen.query_one("#search-input", Input).value = "sync"
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen) and screen.results is not None
            notice = screen.query_one("#search-vectors")
            assert not notice.display, "vectors are ready: no notice"
            results = screen.results
            unavailable = dict(results.channels)
            unavailable["vectors"] = replace(unavailable["vectors"], status="unavailable", message="model missing")
            status = app.engine.status()
            screen.post_message(
                SearchScreen.ResultsReady(screen.shown_seq + 1, "sync", replace(results, channels=unavailable), status)
            )
            await pilot.pause()
            assert notice.display
            assert "unavailable" in str(notice.render()) and "model missing" in str(notice.render())
            embedding = replace(status, embedded_chunks=status.chunks // 2)
            screen.post_message(SearchScreen.ResultsReady(screen.shown_seq + 1, "sync", results, embedding))
            await pilot.pause()
            assert "Still embedding: 50%" in str(notice.render())

    run(body())


def test_chips_show_how_the_query_was_read_and_f4_drops_the_last(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            screen.query_one(Input).value = '"vector tiles" -android tag:project/atlas'
            await settle(pilot)
            chips = str(screen.query_one("#search-chips", Static).render())
            assert "tag:project/atlas" in chips and '"vector tiles"' in chips and "-android" in chips
            assert screen.results is not None
            assert all("android" not in hit.path.lower() for hit in screen.results.hits)
            await pilot.press("f4")  # the last chip is the exclusion
            await settle(pilot)
            assert screen.query_one(Input).value == '"vector tiles" tag:project/atlas'
            await pilot.press("f4")
            await settle(pilot)
            assert screen.query_one(Input).value == "tag:project/atlas"
            assert screen.results is not None and screen.results.reading.only_filters

    run(body())


def test_f1_shows_the_query_syntax(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await pilot.press("f1")
            await pilot.pause()
            assert isinstance(app.screen, SyntaxHelp)
            help_text = app.screen.query_one(Markdown).source
            assert "tag:project" in help_text and "-android" in help_text and "[status:done]" in help_text
            await pilot.press("escape")
            await pilot.pause()
            assert isinstance(app.screen, SearchScreen)

    run(body())


def test_nearest_notes_sit_under_a_divider_the_cursor_skips(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await _type(pilot, "Fjordvik ")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen) and screen.results is not None
            results = screen.results
            assert 0 < results.confident < len(results.hits)
            shown = screen.query_one(SearchResultList)
            divider = shown.get_option_at_index(results.confident)
            assert divider.disabled and "no confident match" in str(divider.prompt)
            assert shown.current_hit is results.hits[0]
            for _ in range(results.confident):
                await pilot.press("down")
            # The cursor steps over the divider onto the first nearest note.
            assert shown.current_hit is results.hits[results.confident]

    run(body())


def test_f3_asks_for_a_note_and_explains_where_it_is(make_app: Callable[..., CairnApp]) -> None:
    messages: list[Message] = []

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE, message_hook=messages.append) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await _type(pilot, "who attended the Atlas kickoff")
            await settle(pilot)
            await pilot.press("f3")
            await pilot.pause()
            await _type(pilot, "Leo Fischer")
            await settle(pilot)
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            reports = [m for m in messages if isinstance(m, SearchScreen.WhyReady)]
            assert len(reports) == 1
            report = reports[0].report
            assert report.path == "People/Leo Fischer.md" and report.query == "who attended the Atlas kickoff"
            explain = screen.query_one(ExplainView)
            assert explain.display
            shown = str(explain.query_one("#explain-text").render())
            assert "Why this note is where it is" in shown and "Leo Fischer (People/Leo Fischer.md)" in shown
            # The search box still holds the query: the prompt did not type into it.
            assert screen.query_text == "who attended the Atlas kickoff"

    run(body())


def test_f3_offers_the_note_a_typo_names(make_app: Callable[..., CairnApp]) -> None:
    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await _type(pilot, "atlas")
            await settle(pilot)
            await pilot.press("f3")
            await pilot.pause()
            await _type(pilot, "Priya Kumr")
            await settle(pilot)
            picker = app.screen
            assert isinstance(picker, NotePicker)
            # The picker offers the note a typo names instead of failing on it.
            assert [c.path for c in picker.choices][:1] == ["People/Priya Kumar.md"]
            await pilot.press("enter")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen)
            shown = str(screen.query_one(ExplainView).query_one("#explain-text").render())
            assert "Priya Kumar (People/Priya Kumar.md)" in shown
            assert not app._notifications, [n.message for n in app._notifications]

    run(body())


def test_the_explain_view_and_the_side_panel_name_the_relation(make_app: Callable[..., CairnApp]) -> None:
    # "Attendees: [[Priya Kumar]], …" in the kickoff note says she attended it: the explain
    # view writes it along the graph path, and her note's side panel beside the neighbour.
    from ui.widgets.side_panel import SidePanel

    async def body() -> None:
        app = make_app()
        async with app.run_test(size=SIZE) as pilot:
            await settle(pilot)
            await pilot.press("slash")
            await _type(pilot, "who attended the Atlas kickoff")
            await settle(pilot)
            screen = app.screen
            assert isinstance(screen, SearchScreen) and screen.results is not None
            shown = screen.query_one(SearchResultList)
            paths = [hit.path for hit in screen.results.hits]
            shown.highlighted = paths.index("People/Priya Kumar.md")
            await pilot.press("f2")
            await settle(pilot)
            text = str(screen.query_one(ExplainView).query_one("#explain-text").render())
            assert "Priya Kumar attended Atlas 2026 Kickoff" in text
            await pilot.press("f9")
            text = str(screen.query_one(ExplainView).query_one("#explain-text").render())
            assert "Priya Kumar —attended→ Atlas 2026 Kickoff" in text
            await pilot.press("escape")
            await pilot.pause()
            main = app.screen
            assert isinstance(main, MainScreen)
            main.open_note("People/Priya Kumar.md")
            await settle(pilot)
            panel = main.query_one(SidePanel)
            neighbours = panel.query_one("#neighbors-list")
            lines = [str(neighbours.get_option_at_index(i).prompt) for i in range(neighbours.option_count)]  # type: ignore[attr-defined]
            assert any(line.startswith("Atlas 2026 Kickoff") and "attended →" in line for line in lines), lines

    run(body())
