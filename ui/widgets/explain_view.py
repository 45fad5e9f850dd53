"""Why a hit was found: per-channel ranks and scores, channel status, query entities."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.widgets import Static

from engine.present import why_lines
from engine.records import Hit, SearchResults, WhyReport
from ui.hits import explain_content


class ExplainView(VerticalScroll):
    """A scrollable explanation of the highlighted hit and its query."""

    def __init__(self, *, show_timings: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.show_timings = show_timings
        self.raw = False  # the engine's own numbers instead of sentences (F9 in the search panel)
        self._text = Static("", id="explain-text")

    def compose(self) -> ComposeResult:
        yield self._text

    def show(self, hit: Hit | None, results: SearchResults | None) -> None:
        """Explain `hit` within `results` (nothing when there are no results)."""
        if results is None:
            self._text.update("")
            return
        self._text.update(explain_content(hit, results, self.show_timings, raw=self.raw))

    def show_why(self, report: WhyReport) -> None:
        """Explain where a chosen note is in the results, and why (until the next hit is explained)."""
        lines = why_lines(report, raw=self.raw)
        self._text.update(Content("\n").join([Content.styled("Why this note is where it is", "bold"), *map(Content, lines)]))
