"""Copies of sample_vault/ for tests: the notes only, never what an earlier run left in it."""

from __future__ import annotations

import shutil
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
SAMPLE_VAULT = ROOT / "sample_vault"

# `make run` indexes sample_vault/ in place (.cairn/), deleting a note moves it to .trash/,
# and a killed save can leave a temp file: a test must start from the notes alone.
_LEFTOVERS = shutil.ignore_patterns(".cairn", ".trash", "*.tmp")


def copy_vault(source: Path, target: Path) -> Path:
    """Copy a vault's notes and attachments to `target` (which must not exist yet) and return it."""
    shutil.copytree(source, target, ignore=_LEFTOVERS)
    return target


def copy_sample_vault(target: Path) -> Path:
    """Copy sample_vault/'s notes to `target` (which must not exist yet) and return it."""
    return copy_vault(SAMPLE_VAULT, target)


def write_vault(target: Path, notes: dict[str, str]) -> Path:
    """A new vault at `target` holding `notes` (file name → text, UTF-8), returned."""
    target.mkdir(parents=True)
    for name, text in notes.items():
        (target / name).write_text(text, encoding="utf-8")
    return target
