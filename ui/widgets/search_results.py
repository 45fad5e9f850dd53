"""The list of search results: title and folder, badges, evidence label, highlighted snippet."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from engine.present import NO_CONFIDENT_MATCH, colliding_titles, split_hits
from engine.records import Hit, SearchResults
from ui.hits import hit_content


class SearchResultList(OptionList):
    """Fused hits, one three-line option each; enter chooses one."""

    @dataclass
    class HitChosen(Message):
        """The user chose a hit to open."""

        hit: Hit

    @dataclass
    class HitHighlighted(Message):
        """The cursor moved to a hit (or to none)."""

        hit: Hit | None

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.results: SearchResults | None = None
        self.raw = False  # badges and labels as the engine has them (F9 in the search panel)

    def show(self, results: SearchResults | None) -> None:
        """Replace the list with `results`: the confident hits, then a divider and the few nearest notes."""
        self.results = results
        self.clear_options()
        if results is None:
            return
        width = self.scrollable_content_region.width - 2
        confident, nearest = split_hits(results)
        shared = colliding_titles([(hit.path, hit.title) for hit in results.hits])

        def option(hit: Hit, number: int) -> Option:
            content = hit_content(hit, number, width, show_path=hit.title.casefold() in shared, raw=self.raw)
            return Option(content, id=str(number - 1))

        options: list[Option] = [option(hit, number) for number, hit in enumerate(confident, start=1)]
        if nearest:
            options.append(Option(Content.styled(f"── {NO_CONFIDENT_MATCH} ──", "$text-muted italic"), disabled=True))
            options.extend(option(hit, number) for number, hit in enumerate(nearest, start=len(confident) + 1))
        self.add_options(options)
        if confident or nearest:
            self.highlighted = 0 if confident else 1
        else:
            self.post_message(self.HitHighlighted(None))

    def on_resize(self) -> None:
        """Re-wrap the snippets to the new width, keeping the cursor."""
        if self.results is not None and self.results.hits:
            highlighted = self.highlighted
            self.show(self.results)
            if highlighted is not None:
                self.highlighted = highlighted

    @property
    def current_hit(self) -> Hit | None:
        """The hit under the cursor, if any."""
        if self.results is None or self.highlighted is None or not self.results.hits:
            return None
        option = self.get_option_at_index(self.highlighted)
        if option.id is None:
            return None  # the divider
        return self.results.hits[int(option.id)]

    @on(OptionList.OptionHighlighted)
    def _highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        self.post_message(self.HitHighlighted(self.current_hit))

    @on(OptionList.OptionSelected)
    def _selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        hit = self.current_hit
        if hit is not None:
            self.post_message(self.HitChosen(hit))
