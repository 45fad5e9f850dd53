"""The vault: find notes (scan), read them safely (read), parse them Obsidian-style (parse), read and resolve links (links)."""

from __future__ import annotations

from engine.vault.links import LinkResolver, LinkSpan
from engine.vault.parse import link_spans, parse_note
from engine.vault.read import (
    DecodedNote,
    NoteUnreadable,
    decode_note,
    os_reason,
    read_note,
    read_note_bytes,
)
from engine.vault.scan import SAVE_TEMP, ScanResult, VaultFile, look_up_note, scan_vault

__all__ = [
    "SAVE_TEMP",
    "DecodedNote",
    "LinkResolver",
    "LinkSpan",
    "NoteUnreadable",
    "ScanResult",
    "VaultFile",
    "decode_note",
    "link_spans",
    "look_up_note",
    "os_reason",
    "parse_note",
    "read_note",
    "read_note_bytes",
    "scan_vault",
]
