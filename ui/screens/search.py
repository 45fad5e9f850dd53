"""The search panel: results on every keystroke, badges, explain view, per-channel filter."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Vertical
from textual.content import Content
from textual.message import Message
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Markdown, Static
from textual.worker import get_current_worker

from engine.present import QUERY_SYNTAX_HELP, channel_word, count_text, query_without
from engine.records import CHANNEL_NAMES, ChannelName, Hit, IndexStatus, SearchResults, WhyReport
from ui.dialogs.note_picker import NotePicker
from ui.errors import ReportsWorkerErrors
from ui.hits import channel_summary
from ui.widgets.explain_view import ExplainView
from ui.widgets.search_results import SearchResultList

if TYPE_CHECKING:
    from engine.api import Engine


@dataclass(frozen=True)
class SearchOutcome:
    """How the search panel closed: the last query, and the hit to open if one was chosen."""

    query: str
    path: str | None = None
    line: int = 0


class SearchScreen(ReportsWorkerErrors, Screen[SearchOutcome]):
    """Type to search; results come from an exclusive thread worker, stale ones are dropped."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("escape", "close", "Close"),
        Binding("down", "move(1)", "Next", show=False),
        Binding("up", "move(-1)", "Previous", show=False),
        Binding("pagedown", "move(5)", "Page down", show=False),
        Binding("pageup", "move(-5)", "Page up", show=False),
        Binding("f1", "syntax_help", "Syntax"),
        Binding("f2", "toggle_explain", "Explain"),
        Binding("f3", "why_not", "Why not…"),
        # The chips line says "f4 drops the last filter" when there is one to drop.
        Binding("f4", "drop_chip", "Drop filter", show=False, priority=True),
        # Searching one channel at a time is for comparing them: the palette and F1 list them,
        # the footer keeps its width for the keys everyone needs.
        Binding("f5", "only('')", "Search every way", show=False, priority=True),
        Binding("f6", "only('fulltext')", "Search by words only", show=False, priority=True),
        Binding("f7", "only('vectors')", "Search by meaning only", show=False, priority=True),
        Binding("f8", "only('graph')", "Search by links only", show=False, priority=True),
        Binding("f9", "toggle_raw", "Raw scores", show=False),
        Binding("alt+0", "only('')", "Search every way", show=False, priority=True),
        Binding("alt+1", "only('fulltext')", "Search by words only", show=False, priority=True),
        Binding("alt+2", "only('vectors')", "Search by meaning only", show=False, priority=True),
        Binding("alt+3", "only('graph')", "Search by links only", show=False, priority=True),
    ]

    @dataclass
    class WhyReady(Message, bubble=False):
        """A why worker explained where a note is in the results of `query`."""

        query: str
        report: WhyReport

    @dataclass
    class ResultsReady(Message, bubble=False):
        """A search worker answered query number `seq`."""

        seq: int
        query: str
        results: SearchResults
        status: IndexStatus

    def __init__(
        self,
        engine: Engine,
        *,
        query: str = "",
        limit: int = 20,
        show_timings: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.engine = engine
        self.limit = limit
        self.show_timings = show_timings
        self.only: ChannelName | None = None
        self.results: SearchResults | None = None
        self.shown_seq = 0
        self.dropped_stale = 0
        self._seq = 0
        self._initial_query = query
        self._why_report: WhyReport | None = None  # shown in the explain view until the cursor or the query moves
        self._status: IndexStatus | None = None

    def compose(self) -> ComposeResult:
        with Vertical(id="search-box"):
            yield Input(self._initial_query, placeholder="Search the vault… (F1: syntax)", id="search-input")
            yield Static("", id="search-chips")
            yield Static("", id="search-status", markup=False)
            yield Static("", id="search-vectors", markup=False)
        yield SearchResultList(id="results")
        yield ExplainView(show_timings=self.show_timings, id="explain")
        yield Footer()

    def on_mount(self) -> None:
        search_input = self.query_one("#search-input", Input)
        search_input.focus()
        # The last query comes back selected: typing replaces it, an arrow key keeps it.
        search_input.select_all()
        self._start(search_input.value)

    def on_key(self, event: events.Key) -> None:
        """Typing anywhere on the panel types into the search box (also before it has focus)."""
        search_input = self.query_one("#search-input", Input)
        if not search_input.has_focus and event.is_printable and event.character:
            event.stop()
            search_input.focus()
            if search_input.selection.is_empty:
                search_input.insert_text_at_cursor(event.character)
            else:
                search_input.replace(event.character, *search_input.selection)

    @property
    def query_text(self) -> str:
        """What is in the search box."""
        return self.query_one("#search-input", Input).value

    def _start(self, query: str) -> None:
        self._seq += 1
        if self._why_report is not None and self._why_report.query != query:
            self._why_report = None
        if not query.strip():
            self.workers.cancel_group(self, "search")
            self.shown_seq = self._seq
            self._show(None, query)
            return
        channels: tuple[ChannelName, ...] = (self.only,) if self.only else CHANNEL_NAMES
        self._search(self._seq, query, channels)

    @work(thread=True, exclusive=True, exit_on_error=False, group="search")
    def _search(self, seq: int, query: str, channels: tuple[ChannelName, ...]) -> None:
        results = self.engine.search(query, limit=self.limit, channels=channels, as_you_type=True)
        status = self.engine.status()
        if not get_current_worker().is_cancelled:
            self.post_message(self.ResultsReady(seq, query, results, status))

    @on(Input.Changed, "#search-input")
    def _typed(self, event: Input.Changed) -> None:
        self._start(event.value)

    @on(ResultsReady)
    def _answered(self, message: ResultsReady) -> None:
        if message.seq <= self.shown_seq:
            self.dropped_stale += 1
            return
        self.shown_seq = message.seq
        self._show(message.results, message.query, message.status)

    def _show(self, results: SearchResults | None, query: str, status: IndexStatus | None = None) -> None:
        self.results = results
        self._status = status
        self.query_one(SearchResultList).show(results)
        status_line = self.query_one("#search-status", Static)
        filter_note = f" · by {channel_word(self.only)} only (F5: every way)" if self.only else ""
        if results is None:
            status_line.update(Content.styled(f"Type to search{filter_note}", "$text-muted"))
        else:
            count = f"{count_text(results)}{filter_note} · "
            raw = self.query_one(ExplainView).raw
            status_line.update(Content.assemble(count, channel_summary(results, self.show_timings, raw=raw)))
        self._show_chips(results)
        self._show_vectors(results, status)
        self._explain(self.query_one(SearchResultList).current_hit)

    def _show_chips(self, results: SearchResults | None) -> None:
        """How the query was read: its filters and phrases as chips, and what was not taken literally."""
        line = self.query_one("#search-chips", Static)
        reading = results.reading if results is not None else None
        if reading is None or not (reading.chips or reading.notes):
            line.display = False
            return
        parts: list[Content | str] = []
        for chip in reading.chips:
            if parts:
                parts.append(" ")
            parts.append(Content.styled(f" {chip.text} ", "$text on $accent-muted"))
        for note in reading.notes:
            parts.append(Content.styled(f"  {note}", "$text-warning"))
        if any(chip.written for chip in reading.chips):
            parts.append(Content.styled("  f4 drops the last filter", "$text-muted"))
        line.update(Content.assemble(*parts))
        line.display = True

    def _show_vectors(self, results: SearchResults | None, status: IndexStatus | None) -> None:
        notice = self.query_one("#search-vectors", Static)
        vectors = results.channels.get("vectors") if results else None
        parts: list[str] = []
        if vectors is not None and vectors.status == "unavailable":
            parts.append(f"Vector channel unavailable: {vectors.message or 'no embedding model'} — BM25 and graph only.")
        elif vectors is not None and vectors.status == "degraded":
            parts.append(f"Vector channel degraded: {vectors.message}.")
        if (
            results is not None
            and status is not None
            and status.vectors.status != "unavailable"
            and status.embedded_fraction < 1.0
        ):
            parts.append(
                f"Still embedding: {status.embedded_fraction:.0%} of chunks have vectors "
                f"({status.embedded_chunks}/{status.chunks}); semantic matches may be missing."
            )
        notice.update(" ".join(parts))
        notice.display = bool(parts)

    def _explain(self, hit: Hit | None) -> None:
        explain = self.query_one(ExplainView)
        if not explain.display:
            return
        if self._why_report is not None:
            explain.show_why(self._why_report)
        else:
            explain.show(hit, self.results)

    @on(SearchResultList.HitHighlighted)
    def _hit_highlighted(self, message: SearchResultList.HitHighlighted) -> None:
        self._explain(message.hit)

    @on(SearchResultList.HitChosen)
    def _hit_chosen(self, message: SearchResultList.HitChosen) -> None:
        self._open(message.hit)

    @on(Input.Submitted, "#search-input")
    def _submitted(self) -> None:
        hit = self.query_one(SearchResultList).current_hit
        if hit is not None:
            self._open(hit)

    def _open(self, hit: Hit) -> None:
        self.dismiss(SearchOutcome(self.query_text, hit.path, hit.snippet.line))

    def action_close(self) -> None:
        """Close the panel, keeping the query for next time."""
        self.dismiss(SearchOutcome(self.query_text))

    def action_move(self, delta: int) -> None:
        """Move the result cursor by `delta` (the explain view explains the hit again)."""
        self._why_report = None
        results = self.query_one(SearchResultList)
        if results.option_count == 0:
            return
        current = results.highlighted if results.highlighted is not None else -1
        target = max(0, min(results.option_count - 1, current + delta))
        step = 1 if delta >= 0 else -1
        # Step over the "no confident match" divider (a disabled option), whichever way.
        while 0 <= target < results.option_count and results.get_option_at_index(target).disabled:
            target += step
        if not 0 <= target < results.option_count:
            target = current
        results.highlighted = max(0, target)

    def action_toggle_explain(self) -> None:
        """Show or hide the explain view (per-channel ranks, scores and entities)."""
        explain = self.query_one(ExplainView)
        explain.display = not explain.display
        self.set_class(explain.display, "-explain")
        self._explain(self.query_one(SearchResultList).current_hit)

    def action_syntax_help(self) -> None:
        """Show what the search box understands."""
        self.app.push_screen(SyntaxHelp())

    def action_drop_chip(self) -> None:
        """Remove the last filter (or phrase, or exclusion) from the query."""
        reading = self.results.reading if self.results is not None else None
        removable = [chip for chip in reading.chips if chip.written] if reading is not None else []
        if not removable:
            return
        search_input = self.query_one("#search-input", Input)
        chip = removable[-1]
        # Typed on since these results: take the part out of what the box holds now.
        same = self.results is not None and search_input.value == self.results.query
        search_input.value = chip.without if same else query_without(search_input.value, chip.written)

    def action_why_not(self) -> None:
        """Pick any note and show, in the explain view, why it is where it is in these results (or not in them)."""
        query = self.query_text
        if not query.strip():
            self.notify("Type a search first.", severity="warning")
            return

        def chosen(path: str | None) -> None:
            if path:
                channels: tuple[ChannelName, ...] = (self.only,) if self.only else CHANNEL_NAMES
                self._explain_why(query, path, channels)

        self.app.push_screen(
            NotePicker(self.engine, "Why isn't this note here?", f"For “{query}”: which note did you expect?"), chosen
        )

    def action_toggle_raw(self) -> None:
        """Show the engine's own evidence (labels, ranks, scores, votes) instead of plain words, or back."""
        explain = self.query_one(ExplainView)
        explain.raw = not explain.raw
        results = self.query_one(SearchResultList)
        results.raw = explain.raw
        highlighted = results.highlighted
        self._show(self.results, self.query_text, self._status)
        if highlighted is not None and results.option_count:
            results.highlighted = highlighted

    @work(thread=True, exclusive=True, exit_on_error=False, group="why")
    def _explain_why(self, query: str, note: str, channels: tuple[ChannelName, ...]) -> None:
        report = self.engine.why(query, note, limit=self.limit, channels=channels, as_you_type=True)
        self.post_message(self.WhyReady(query, report))

    @on(WhyReady)
    def _explained(self, message: WhyReady) -> None:
        if message.query != self.query_text:
            return  # the query changed meanwhile
        self._why_report = message.report
        explain = self.query_one(ExplainView)
        explain.display = True
        self.set_class(True, "-explain")
        explain.show_why(message.report)

    def action_only(self, channel: str) -> None:
        """Search one channel only (empty: all channels) to compare what each finds."""
        self.only = next((name for name in CHANNEL_NAMES if name == channel), None)
        self._start(self.query_text)


class SyntaxHelp(ModalScreen[None]):
    """The query syntax the search box understands (the same text as the README's)."""

    BINDINGS: ClassVar[list[BindingType]] = [Binding("escape,f1,q", "close", "Close")]

    def compose(self) -> ComposeResult:
        with Vertical(id="syntax-help"):
            yield Markdown(f"## Search syntax\n\n{QUERY_SYNTAX_HELP}\n\nEsc closes.")

    def action_close(self) -> None:
        """Back to the search."""
        self.dismiss(None)
