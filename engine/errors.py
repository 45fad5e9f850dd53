"""The engine's exception tree; each error carries a short title for front ends."""

from __future__ import annotations


class CairnError(Exception):
    """Base of every error the engine raises on purpose."""

    title = "Cairn error"


class VaultNotFound(CairnError):
    """The vault path does not exist or is not a directory."""

    title = "Vault not found"


class ConfigError(CairnError):
    """The configuration is invalid (unknown key, wrong type)."""

    title = "Invalid configuration"


class IndexLocked(CairnError):
    """Another live process holds the index's writer lock."""

    title = "Index is being written by another process"


class IndexWriteFailed(CairnError):
    """The index could not be written: the disk is full, or the index folder is read-only."""

    title = "Could not write the index"


class IndexCorrupt(CairnError):
    """A part of the index could not be read and could not be repaired."""

    title = "Index is damaged"


class ModelUnavailable(CairnError):
    """The embedding model could not be loaded; the vector channel is off."""

    title = "Embedding model unavailable"


class NoteNotFound(CairnError):
    """A note path is not in the vault.

    `name` is what was asked for, when a person named the note; `nearest` the (path,
    title) of the notes closest to it, closest first: what a front end offers instead.
    """

    title = "Note not found"

    def __init__(self, message: str, *, name: str = "", nearest: tuple[tuple[str, str], ...] = ()) -> None:
        super().__init__(message)
        self.name = name
        self.nearest = nearest


class UnsafePath(CairnError):
    """A path points outside the vault."""

    title = "Path outside the vault"


class SaveConflict(CairnError):
    """The file changed on disk since it was loaded; saving would overwrite it.

    `current_sha` is the sha of the file now (None if it was deleted): saving again
    with it overwrites knowingly.
    """

    title = "Note changed on disk"

    def __init__(self, message: str, current_sha: str | None = None) -> None:
        super().__init__(message)
        self.current_sha = current_sha


class NoteExists(CairnError):
    """A note (or file) is already at the path a create, rename or copy would use."""

    title = "Note already exists"


class NoteNotSaved(CairnError):
    """Writing a note failed and nothing was written (full disk, read-only vault, encoding …)."""

    title = "Note not saved"


class NoteNotEditable(NoteNotSaved):
    """A note cannot be opened for editing (binary, too large, unreadable): a save could not write it back intact."""

    title = "Note cannot be edited here"


class EncodingMismatch(NoteNotSaved):
    """The note's own encoding (cp1252, say) cannot hold a character of the new text; nothing was written."""

    title = "Note not saved: its encoding cannot hold the text"
