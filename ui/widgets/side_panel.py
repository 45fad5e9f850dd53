"""The open note's context: outgoing links, backlinks, related notes, unlinked mentions, neighbors."""

from __future__ import annotations

from dataclasses import dataclass

from textual import on
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.content import Content
from textual.message import Message
from textual.widgets import Label, OptionList
from textual.widgets.option_list import Option

from engine.present import colliding_titles, relation_from
from engine.records import Backlink, LinkedNote, Neighbor, SearchResults
from ui.hits import badge_content, folder_of


@dataclass(frozen=True)
class NoteContext:
    """Everything the side panel shows for one note."""

    path: str
    links: tuple[LinkedNote, ...]
    backlinks: tuple[Backlink, ...]
    related: SearchResults | None
    unlinked: tuple[Backlink, ...]
    neighbors: tuple[Neighbor, ...]
    title: str = ""  # the note's title: a neighbour's named relation is read from its side


# A list entry shows this much of its line: about two lines of the panel.
_CONTEXT_SHOWN = 64

SECTIONS = (
    ("links", "Links"),
    ("backlinks", "Backlinks"),
    ("related", "Related"),
    ("unlinked", "Unlinked mentions"),
    ("neighbors", "Graph neighbors"),
)


class SidePanel(VerticalScroll):
    """Lists of notes around the open one; enter or click opens the entry."""

    @dataclass
    class Opened(Message):
        """The user chose a note in the panel (at a line, 0 for the top)."""

        path: str
        line: int = 0

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.context: NoteContext | None = None
        self._targets: dict[str, list[tuple[str, int]]] = {}

    def compose(self) -> ComposeResult:
        for key, title in SECTIONS:
            yield Label(title, id=f"{key}-title", classes="section-title", markup=False)
            yield OptionList(id=f"{key}-list", classes="section-list")

    def show(self, context: NoteContext | None) -> None:
        """Fill the lists from `context` (None empties them)."""
        self.context = context
        rows: dict[str, list[tuple[Content, str, int]]] = {key: [] for key, _ in SECTIONS}
        if context is not None:
            listed: list[Backlink | LinkedNote] = [*context.links, *context.backlinks, *context.unlinked]
            shared = colliding_titles([(entry.path, entry.title) for entry in listed])
            for linked in context.links:
                rows["links"].append((self._line_entry(linked, shared), linked.path, 0))
            for backlink in context.backlinks:
                rows["backlinks"].append((self._line_entry(backlink, shared), backlink.path, backlink.line))
            if context.related is not None:
                for hit in context.related.hits:
                    entry = Content.assemble(
                        (hit.title, "bold"), " ", (folder_of(hit.path), "$text-muted"), "\n", badge_content(hit)
                    )
                    rows["related"].append((entry, hit.path, hit.snippet.line))
            for mention in context.unlinked:
                rows["unlinked"].append((self._line_entry(mention, shared), mention.path, mention.line))
            names = colliding_titles([(n.path or n.name, n.name) for n in context.neighbors])
            title = context.title
            for neighbor in context.neighbors:
                where = f"  {neighbor.path}" if neighbor.path and neighbor.name.casefold() in names else ""
                named = f" · {relation_from(neighbor.relation, title)}" if neighbor.relation else ""
                entry = Content.assemble(
                    (neighbor.name, "bold"), (f"{where}  {neighbor.kind} {neighbor.weight:.2f}{named}", "$text-muted")
                )
                rows["neighbors"].append((entry, neighbor.path or "", 0))
        for key, title in SECTIONS:
            option_list = self.query_one(f"#{key}-list", OptionList)
            option_list.clear_options()
            entries = rows[key]
            self._targets[key] = [(path, line) for _, path, line in entries]
            if entries:
                option_list.add_options(Option(content, id=f"{key}-{number}") for number, (content, _, _) in enumerate(entries))
            else:
                option_list.add_option(Option(Content.styled("none", "$text-muted"), disabled=True))
            self.query_one(f"#{key}-title", Label).update(f"{title} ({len(entries)})")

    @staticmethod
    def _line_entry(entry: Backlink | LinkedNote, shared: set[str]) -> Content:
        """Title (and path, where two of the listed notes share the title), then the line as text."""
        where = f"  {entry.path}" if entry.title.casefold() in shared else ""
        context = entry.context if len(entry.context) <= _CONTEXT_SHOWN else entry.context[: _CONTEXT_SHOWN - 1] + "…"
        if context == entry.title:  # a line that is only the link (an embed) says nothing more
            return Content.assemble((entry.title, "bold"), (where, "$text-muted"))
        return Content.assemble((entry.title, "bold"), (where, "$text-muted"), "\n", (context, "$text-muted"))

    def focus_section(self, key: str) -> None:
        """Focus a section's list with its first entry highlighted, so enter opens it at once."""
        option_list = self.query_one(f"#{key}-list", OptionList)
        option_list.focus()
        if option_list.highlighted is None and self._targets.get(key):
            option_list.highlighted = 0

    def entries(self, key: str) -> list[tuple[str, int]]:
        """(path, line) of each entry in section `key`."""
        return list(self._targets.get(key, []))

    @on(OptionList.OptionSelected)
    def _chosen(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        option_id = event.option.id or ""
        key, _, number = option_id.rpartition("-")
        targets = self._targets.get(key, [])
        if number.isdigit() and int(number) < len(targets):
            path, line = targets[int(number)]
            if path:
                self.post_message(self.Opened(path, line))
