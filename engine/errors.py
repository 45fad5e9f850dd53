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
    """A note path is not in the vault."""

    title = "Note not found"


class UnsafePath(CairnError):
    """A path points outside the vault."""

    title = "Path outside the vault"


class SaveConflict(CairnError):
    """The file changed on disk since it was loaded; saving would overwrite it."""

    title = "Note changed on disk"
