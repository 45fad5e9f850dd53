"""The vault tree: folders and notes, filtered as you type."""

from __future__ import annotations

import posixpath
from dataclasses import dataclass

from rich.style import Style
from rich.text import Text
from textual import on
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.message import Message
from textual.widgets import Input, Tree
from textual.widgets.tree import TreeNode

# While the tree has the focus it widens to fit its longest name, up to this share of the screen.
_WIDEST_SHARE = 0.45


class NamesTree(Tree[str | None]):
    """A tree whose names end in an ellipsis where the column cuts them, so a cut name reads as cut."""

    def render_label(self, node: TreeNode[str | None], base_style: Style, style: Style) -> Text:
        label = super().render_label(node, base_style, style)
        depth = 0
        parent = node.parent
        while parent is not None and parent is not self.root:
            depth += 1
            parent = parent.parent
        room = self.scrollable_content_region.width - depth * self.guide_depth - (self.guide_depth if depth else 0)
        if room > 1 and label.cell_len > room:
            label.truncate(room, overflow="ellipsis")
        return label


class VaultTree(Vertical):
    """A filter box over a tree of the vault's folders and notes; it widens to its names while focused."""

    @dataclass
    class NoteChosen(Message):
        """The user picked a note in the tree."""

        path: str

    @dataclass
    class FolderHighlighted(Message):
        """The cursor moved to a folder (where a new note would go)."""

        folder: str

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self._notes: list[tuple[str, str]] = []
        self._filter = ""
        self._current: str | None = None

    def compose(self) -> ComposeResult:
        yield Input(placeholder="Filter notes…", id="tree-filter")
        tree = NamesTree("vault", id="tree")
        tree.show_root = False
        tree.guide_depth = 2
        yield tree

    @property
    def note_tree(self) -> Tree[str | None]:
        """The Tree widget inside."""
        return self.query_one("#tree", Tree)

    def set_notes(self, notes: list[tuple[str, str]]) -> None:
        """Show these (path, title) notes; keeps the current filter."""
        self._notes = notes
        self._rebuild()
        self._fit()

    def _names_width(self) -> int:
        """The columns the longest name needs, with its indentation, the folder marks and the border."""
        widest = 0
        for path, _title in self._notes:
            parts = path.split("/")
            for depth, part in enumerate(parts):
                name = posixpath.splitext(part)[0] if depth == len(parts) - 1 else f"{part}/"
                widest = max(widest, len(name) + 2 * depth + 2)
        return widest + 3

    def _fit(self) -> None:
        """Fit the names while the tree or its filter has the focus."""
        if not self.has_focus_within or not self.is_mounted:
            return
        cap = int(self.screen.size.width * _WIDEST_SHARE)
        self.styles.width = max(self.outer_size.width, min(self._names_width(), cap))

    def narrow(self) -> None:
        """Back to the stylesheet's width (the main screen calls this once a note is open).

        Not on losing the focus: a click into the note takes the focus on the mouse press,
        and a narrower tree would move what is under the mouse before its release, so the
        click would be lost.
        """
        if not self.has_focus_within:
            self.styles.width = None

    def on_descendant_focus(self) -> None:
        self.call_after_refresh(self._fit)

    def mark_current(self, path: str | None) -> None:
        """Move the tree cursor to the open note, expanding its folders."""
        self._current = path
        if path is None:
            return
        node = self._find(self.note_tree.root, path)
        if node is not None:
            parent = node.parent
            while parent is not None:
                parent.expand()
                parent = parent.parent
            # The node's line is only known once the tree has laid out the expanded folders.
            self.call_after_refresh(self.note_tree.move_cursor, node)

    def _find(self, node: TreeNode[str | None], path: str) -> TreeNode[str | None] | None:
        if node.data == path:
            return node
        for child in node.children:
            found = self._find(child, path)
            if found is not None:
                return found
        return None

    def _matches(self, path: str, title: str) -> bool:
        words = self._filter.lower().split()
        haystack = f"{path} {title}".lower()
        return all(word in haystack for word in words)

    def _rebuild(self) -> None:
        tree = self.note_tree
        expanded: set[str | None] = {
            node.data for node in self._walk(tree.root) if node.is_expanded and isinstance(node.data, str) and node.data.endswith("/")
        }
        tree.clear()
        folders: dict[str, TreeNode[str | None]] = {"": tree.root}
        filtering = bool(self._filter.strip())
        shown = [(path, title) for path, title in self._notes if not filtering or self._matches(path, title)]
        for path, _title in sorted(shown, key=lambda item: (item[0].count("/") == 0, item[0].lower())):
            parent = self._folder_node(folders, posixpath.dirname(path), expanded, filtering)
            parent.add_leaf(posixpath.splitext(posixpath.basename(path))[0], data=path)
        if self._current:
            self.mark_current(self._current)

    def _folder_node(
        self,
        folders: dict[str, TreeNode[str | None]],
        folder: str,
        expanded: set[str | None],
        filtering: bool,
    ) -> TreeNode[str | None]:
        if folder in folders:
            return folders[folder]
        parent = self._folder_node(folders, posixpath.dirname(folder), expanded, filtering)
        node = parent.add(f"{posixpath.basename(folder)}/", data=f"{folder}/", expand=filtering or f"{folder}/" in expanded)
        folders[folder] = node
        return node

    def _walk(self, node: TreeNode[str | None]) -> list[TreeNode[str | None]]:
        out = [node]
        for child in node.children:
            out.extend(self._walk(child))
        return out

    def highlighted_folder(self) -> str:
        """The folder of the tree cursor ('' for the vault root)."""
        node = self.note_tree.cursor_node
        if node is None or node.data is None:
            return ""
        return node.data.rstrip("/") if node.data.endswith("/") else posixpath.dirname(node.data)

    @on(Input.Changed, "#tree-filter")
    def _filter_changed(self, event: Input.Changed) -> None:
        self._filter = event.value
        self._rebuild()
        box = event.input
        if len(event.value) < box.content_size.width:
            box.scroll_to(0, animate=False)  # what fits is shown from its first letter

    @on(Input.Submitted, "#tree-filter")
    def _filter_submitted(self) -> None:
        first = next((n for n in self._walk(self.note_tree.root) if isinstance(n.data, str) and not n.data.endswith("/")), None)
        if first is not None and first.data is not None:
            self.post_message(self.NoteChosen(first.data))

    @on(Tree.NodeSelected, "#tree")
    def _selected(self, event: Tree.NodeSelected[str | None]) -> None:
        event.stop()
        data = event.node.data
        if isinstance(data, str) and not data.endswith("/"):
            self.post_message(self.NoteChosen(data))
