"""The main screen: vault tree, the open note, its context panel and the index status."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, ClassVar

from markdown_it.token import Token
from textual import events, on, work
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.containers import Horizontal
from textual.message import Message
from textual.screen import Screen
from textual.widgets import Footer
from textual.worker import Worker, WorkerState, get_current_worker

from engine.present import LinkTable, RenderContext, parse_markdown
from engine.records import IndexStatus, Progress, ReindexReport, WatchBatch
from engine.records import NoteView as NoteRecord
from ui.dialogs.choice import ChoiceDialog
from ui.dialogs.prompt import PromptDialog
from ui.errors import ReportsWorkerErrors
from ui.screens.editor import EditorScreen
from ui.screens.search import SearchOutcome, SearchScreen
from ui.widgets.index_status import IndexStatusBar
from ui.widgets.note_files import NoteFiles
from ui.widgets.note_markdown import NOTE_PARSER
from ui.widgets.note_view import NoteView
from ui.widgets.side_panel import NoteContext, SidePanel
from ui.widgets.vault_tree import VaultTree

if TYPE_CHECKING:
    from app.config import UIConfig
    from engine.api import Engine, Watcher

WELCOME = "Pick a note in the tree, or press **/** to search the vault."


class MainScreen(ReportsWorkerErrors, Screen[None]):
    """Browses the vault; owns the history of opened notes and the indexing worker."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("slash", "search", "Search"),
        Binding("e", "edit", "Edit"),
        Binding("ctrl+n", "new_note", "New"),
        Binding("f2", "rename", "Rename"),
        Binding("f8", "delete", "Delete"),
        Binding("alt+left", "back", "Back", show=False),
        Binding("alt+right", "forward", "Forward", show=False),
        Binding("l", "focus_section('links')", "Links", show=False),
        Binding("b", "focus_section('backlinks')", "Backlinks", show=False),
        Binding("ctrl+r", "reindex", "Reindex", show=False),
        Binding("ctrl+b", "toggle_tree", "Toggle vault tree", show=False),
        Binding("f3", "toggle_side", "Toggle side panel", show=False),
        Binding("ctrl+f", "filter_tree", "Filter the vault tree", show=False),
    ]

    @dataclass
    class NotesListed(Message, bubble=False):
        """The note list and index status were read."""

        notes: list[tuple[str, str]]
        status: IndexStatus
        writer: str | None = None

    @dataclass
    class VaultChanged(Message, bubble=False):
        """The watcher absorbed a burst of changes made outside the app."""

        batch: WatchBatch

    @dataclass
    class IndexProgress(Message, bubble=False):
        """The background reindex reached a step."""

        progress: Progress

        def can_replace(self, message: Message) -> bool:
            return isinstance(message, MainScreen.IndexProgress)

    @dataclass
    class IndexFinished(Message, bubble=False):
        """The background reindex finished."""

        report: ReindexReport

    @dataclass
    class NoteLoaded(Message, bubble=False):
        """A note was read for display (and read as Obsidian shows it, embeds included)."""

        note: NoteRecord
        tokens: list[Token]
        line: int
        remember: bool

    @dataclass
    class ContextLoaded(Message, bubble=False):
        """The side-panel context of a note was computed."""

        context: NoteContext

    def __init__(self, engine: Engine, config: UIConfig, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.engine = engine
        self.config = config
        self.history: list[tuple[str, int]] = []
        self.position = -1
        self.last_query = ""
        self.indexing = False
        self.watcher: Watcher | None = None
        self._listed_after_catalog = False
        self.listed_notes: list[tuple[str, str]] = []
        self._reading = False

    def compose(self) -> ComposeResult:
        with Horizontal(id="panes"):
            yield VaultTree(id="vault-tree")
            yield NoteView(id="note-view")
            yield SidePanel(id="side-panel")
        yield IndexStatusBar(id="index-status")
        yield NoteFiles(self.engine, id="note-files")
        yield Footer()

    async def on_mount(self) -> None:
        self.query_one(IndexStatusBar).show_times = self.config.show_timings
        await self.query_one(NoteView).show_text(WELCOME)
        self.query_one(VaultTree).note_tree.focus()
        self._list_notes()
        if self.config.index_on_start:
            self.action_reindex()

    def on_unmount(self) -> None:
        # A first index embeds for minutes: quitting asks it to stop after its batch, or
        # the app waits for the whole of it before it exits (20-60 s measured on the
        # Obsidian help vault, quit 3 s after opening).
        self.engine.stop()
        if self.watcher is not None:
            self.watcher.stop()

    def _start_watching(self) -> None:
        """Follow edits made outside the app (another editor, git) once the index is current."""
        if self.watcher is not None or not self.config.watch:
            return
        def on_batch(batch: WatchBatch) -> None:
            self.post_message(self.VaultChanged(batch))

        self.watcher = self.engine.watcher(on_batch)
        self.watcher.start()
        self.query_one(IndexStatusBar).watching = True

    def on_resize(self) -> None:
        self.set_class(self.size.width < 100, "-narrow")

    @property
    def current_path(self) -> str | None:
        """The note on display."""
        return self.query_one(NoteView).path

    # -- workers (engine calls only here; they post messages) ---------------------------
    @work(thread=True, exclusive=True, exit_on_error=False, group="notes")
    def _list_notes(self) -> None:
        # Every note file, indexed or not yet: a first index takes minutes, the scan moments.
        self.post_message(self.NotesListed(self.engine.note_files(), self.engine.status(), self.engine.writer))

    @work(thread=True, exclusive=True, exit_on_error=False, group="index")
    def _reindex(self) -> None:
        def progress(step: Progress) -> None:
            self.post_message(self.IndexProgress(step))

        report = self.engine.reindex(progress=progress)
        self.post_message(self.IndexFinished(report))

    @work(thread=True, exclusive=True, exit_on_error=False, group="note")
    def _load_note(self, path: str, line: int, remember: bool, heading: str | None = None, block: str | None = None) -> None:
        worker = get_current_worker()
        note = self.engine.note(path)
        if heading or block:
            section = self.engine.section(path, heading=heading, block=block)
            line = section.line if section is not None else line
        reading = RenderContext(path, LinkTable.from_links(note.links), self.engine.embed_section)
        tokens = parse_markdown(NOTE_PARSER, note.text, reading)
        if worker.is_cancelled:
            return
        self.post_message(self.NoteLoaded(note, tokens, line, remember))
        context = NoteContext(
            path=path,
            links=tuple(self.engine.outgoing_links(path)),
            backlinks=tuple(self.engine.backlinks(path)),
            related=self.engine.related(path),
            unlinked=tuple(self.engine.unlinked_mentions(path)),
            neighbors=tuple(self.engine.neighbors(path)),
            title=note.info.title,
        )
        if not worker.is_cancelled:
            self.post_message(self.ContextLoaded(context))

    def on_worker_state_changed(self, event: Worker.StateChanged) -> None:
        """A failed reindex (e.g. another process holds the index) must not leave the bar busy."""
        super().on_worker_state_changed(event)
        if event.worker.group == "index" and event.state in (WorkerState.ERROR, WorkerState.CANCELLED):
            self.indexing = False
            self.query_one(IndexStatusBar).remove_class("-busy")
            self._list_notes()
            if event.state == WorkerState.ERROR:
                self._start_watching()  # it retries what failed (a full disk) and catches up

    # -- message handlers -------------------------------------------------------------------
    @on(NotesListed)
    def _notes_listed(self, message: NotesListed) -> None:
        self.listed_notes = message.notes
        self.query_one(VaultTree).set_notes(message.notes)
        if not self.indexing:
            self.query_one(IndexStatusBar).show_status(message.status, message.writer)

    @on(IndexProgress)
    def _index_progress(self, message: IndexProgress) -> None:
        self.query_one(IndexStatusBar).show_progress(message.progress)
        if message.progress.phase in ("fulltext", "graph", "embed") and not self._listed_after_catalog:
            # The catalog holds every note now: the tree gets their titles long before embedding ends.
            self._listed_after_catalog = True
            self._list_notes()

    @on(IndexFinished)
    def _index_finished(self, message: IndexFinished) -> None:
        self.indexing = False
        self.query_one(IndexStatusBar).remove_class("-busy")
        report = message.report
        changed = len(report.added) + len(report.updated) + len(report.removed)
        if changed or report.skipped:
            self.notify(
                f"{len(report.added)} added, {len(report.updated)} updated, {len(report.removed)} removed, "
                f"{len(report.skipped)} skipped",
                title="Index updated",
            )
        self._list_notes()
        if changed and self.current_path:
            self._load_note(self.current_path, self.query_one(NoteView).passage_line, False)
        self._start_watching()

    @on(VaultChanged)
    def _vault_changed(self, message: VaultChanged) -> None:
        batch = message.batch
        if batch.error:
            self.notify(
                f"{batch.error}. Still watching; trying again in {batch.retry_in:.0f} s.",
                title="Could not index the changes",
                severity="error",
            )
            return
        if batch.recovered:
            self.notify("Indexing works again; every change made meanwhile is indexed.", title="Index caught up")
        self._list_notes()
        current = self.current_path
        if current and (batch.rescan or current in batch.paths or batch.report is None):
            self._load_note(current, self.query_one(NoteView).passage_line, False)

    @on(NoteLoaded)
    async def _note_loaded(self, message: NoteLoaded) -> None:
        path = message.note.info.path
        if message.remember and (self.position < 0 or self.history[self.position] != (path, message.line)):
            del self.history[self.position + 1:]
            self.history.append((path, message.line))
            self.position = len(self.history) - 1
        await self.query_one(NoteView).show(message.note, message.tokens, message.line)
        tree = self.query_one(VaultTree)
        tree.mark_current(path)
        tree.narrow()
        self.sub_title = path

    @on(ContextLoaded)
    def _context_loaded(self, message: ContextLoaded) -> None:
        if message.context.path == self.current_path:
            self.query_one(SidePanel).show(message.context)

    @on(VaultTree.NoteChosen)
    def _tree_chosen(self, message: VaultTree.NoteChosen) -> None:
        self.open_note(message.path)
        self.query_one(NoteView).focus()

    @on(NoteView.LinkFollowed)
    def _follow_link(self, message: NoteView.LinkFollowed) -> None:
        self.open_note(message.path, message.line, heading=message.heading, block=message.block)

    @on(SidePanel.Opened)
    def _follow(self, message: SidePanel.Opened) -> None:
        self.open_note(message.path, message.line)

    @on(NoteView.TagChosen)
    def _tag_chosen(self, message: NoteView.TagChosen) -> None:
        self.last_query = f"#{message.tag}"
        self.action_search()

    @on(NoteView.FileChosen)
    def _file_chosen(self, message: NoteView.FileChosen) -> None:
        self.notify(f"{message.path} is not a note; `cairn web` shows images and opens files.", title="File")

    @on(NoteView.MissingLink)
    def _missing(self, message: NoteView.MissingLink) -> None:
        self.notify(f"No note named “{message.target}” yet (ctrl+n creates one).", severity="warning")

    # -- actions ----------------------------------------------------------------------------
    def open_note(
        self, path: str, line: int = 0, *, remember: bool = True, heading: str | None = None, block: str | None = None
    ) -> None:
        """Show `path` scrolled to file line `line`, or to a heading or block (none: the top)."""
        self._load_note(path, line, remember, heading, block)

    def read_note(self) -> None:
        """Give the note the focus and the tree back its width once the note has it.

        Only for a choice made with the keyboard (palette, search): a click into the note
        keeps the tree as wide as it is until the next note opens (see `VaultTree.narrow`).
        """
        view = self.query_one(NoteView)
        if self.focused is view:
            self.call_after_refresh(self.query_one(VaultTree).narrow)
            return
        self._reading = True
        view.focus()

    @on(events.DescendantFocus)
    def _focus_moved(self, event: events.DescendantFocus) -> None:
        if self._reading and isinstance(event.widget, NoteView):
            self._reading = False
            self.call_after_refresh(self.query_one(VaultTree).narrow)

    def action_search(self) -> None:
        """Open the search panel (results update as you type)."""
        screen = SearchScreen(
            self.engine, query=self.last_query, limit=self.config.search_limit, show_timings=self.config.show_timings
        )
        self.app.push_screen(screen, self._search_closed)

    def _search_closed(self, outcome: SearchOutcome | None) -> None:
        if outcome is None:
            return
        self.last_query = outcome.query
        if outcome.path is None:
            return
        path, line = outcome.path, outcome.line
        top = self.app.screen
        if isinstance(top, EditorScreen):
            top.close_then(lambda: self.open_note(path, line))
        else:
            self.open_note(path, line)
            self.read_note()

    def action_edit(self) -> None:
        """Edit the open note."""
        if self.current_path is None:
            self.notify("Open a note first.", severity="warning")
            return
        self.edit(self.current_path, self.query_one(NoteView).passage_line)

    def edit(self, path: str, line: int = 0) -> None:
        """Open `path` in the editor; show it again when the editor closes."""
        editor = EditorScreen(self.engine, path, line=line, soft_wrap=self.config.editor_soft_wrap)
        self.app.push_screen(editor, self._editor_closed)

    def _editor_closed(self, path: str | None) -> None:
        self._list_notes()
        if path:
            self.open_note(path, self.query_one(NoteView).passage_line if path == self.current_path else 0)

    def action_back(self) -> None:
        """Go back to the previous note."""
        if self.position > 0:
            self.position -= 1
            path, line = self.history[self.position]
            self.open_note(path, line, remember=False)

    def action_forward(self) -> None:
        """Go forward again."""
        if self.position + 1 < len(self.history):
            self.position += 1
            path, line = self.history[self.position]
            self.open_note(path, line, remember=False)

    def action_reindex(self) -> None:
        """Bring the index up to date with the vault, in the background."""
        self.indexing = True
        self._listed_after_catalog = False
        self._reindex()

    def action_toggle_tree(self) -> None:
        """Show or hide the vault tree."""
        tree = self.query_one(VaultTree)
        tree.display = not tree.display

    def action_toggle_side(self) -> None:
        """Show or hide the side panel."""
        self.toggle_class("-side-shown" if self.has_class("-narrow") else "-side-hidden")

    def action_focus_section(self, section: str) -> None:
        """Move the focus to a side-panel list, its first entry highlighted (enter follows it)."""
        if self.has_class("-narrow") and not self.has_class("-side-shown"):
            self.add_class("-side-shown")
        self.query_one(SidePanel).focus_section(section)

    def action_filter_tree(self) -> None:
        """Focus the vault tree's filter box."""
        self.query_one("#tree-filter").focus()

    def _folder(self) -> str:
        tree = self.query_one(VaultTree)
        if tree.note_tree.has_focus or not self.current_path:
            return tree.highlighted_folder()
        return self.current_path.rpartition("/")[0]

    @property
    def files(self) -> NoteFiles:
        """The helper that changes note files."""
        return self.query_one(NoteFiles)

    def action_new_note(self) -> None:
        """Create a note in the current folder (asks for a title)."""
        folder = self._folder()

        def create(title: str | None) -> None:
            if title:
                self.files.create(folder, title)

        self.app.push_screen(PromptDialog("New note", f"Title (created in {folder or 'the vault root'}/)"), create)

    def action_rename(self) -> None:
        """Rename the open note, offering to update the links that point to it."""
        old = self.current_path
        if old is None:
            return
        stem = old.rpartition("/")[2].removesuffix(".md")

        def rename(name: str | None) -> None:
            if name and name != stem:
                self.files.rename(old, name)

        self.app.push_screen(PromptDialog("Rename note", "New name (or a vault path)", stem), rename)

    def action_delete(self) -> None:
        """Move the open note to the vault's .trash folder."""
        path = self.current_path
        if path is None:
            return

        def answered(choice: str | None) -> None:
            if choice == "delete":
                self.files.delete(path)

        self.app.push_screen(
            ChoiceDialog(
                "Delete note",
                f"Move {path} to .trash/?",
                [("delete", "Delete"), ("cancel", "Cancel")],
                safe="cancel",
                destructive=("delete",),
            ),
            answered,
        )

    @on(NoteFiles.Created)
    def _created(self, message: NoteFiles.Created) -> None:
        self._list_notes()
        for warning in message.save.warnings:
            self.notify(warning, title="New note", severity="warning")
        self.open_note(message.path)
        self.edit(message.path, line=3)

    @on(NoteFiles.Renamed)
    def _renamed(self, message: NoteFiles.Renamed) -> None:
        result = message.result
        self._list_notes()
        self.history = [(result.new if p == result.old else p, line) for p, line in self.history]
        self.open_note(result.new, remember=False)
        others = [n for n in result.linking if n.path != result.new]
        if not result.linking:
            return

        def answered(choice: str | None) -> None:
            if choice == "update":
                self.files.update_links(result)

        links = sum(n.links for n in result.linking)
        where = f"{len(others)} other note(s)" if others else "the note itself"
        self.app.push_screen(
            ChoiceDialog(
                "Update links?",
                f"{links} link(s) in {where} point to the old name. Update them to “{result.new}”?",
                [("update", "Update links"), ("cancel", "Leave them")],
                safe="update",
                id="update-links-dialog",
            ),
            answered,
        )

    @on(NoteFiles.LinksUpdated)
    def _links_updated(self, message: NoteFiles.LinksUpdated) -> None:
        update = message.update
        if update.untouched:
            details = "\n".join(f"{s.path}: {s.reason}" for s in update.untouched)
            self.notify(f"No links were changed, because:\n{details}", title="Rename", severity="error", timeout=15)
            return
        self.notify(f"Updated {update.links} link(s) in {len(update.notes)} note(s).", title="Rename")
        if self.current_path == update.path or self.current_path in update.notes:
            self.open_note(self.current_path or update.path, remember=False)

    @on(NoteFiles.Deleted)
    def _deleted(self, message: NoteFiles.Deleted) -> None:
        self.query_one(NoteView).clear()
        self.query_one(SidePanel).show(None)
        self.history = [(p, line) for p, line in self.history if p != message.path]
        self.position = len(self.history) - 1
        self.notify(f"Moved {message.path} to {message.trash_path}", title="Deleted")
        self._list_notes()
