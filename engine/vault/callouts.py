"""Obsidian's callouts: `> [!type]± Title` opening a blockquote, its types, aliases, icons and colours."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

Tone = Literal["blue", "cyan", "green", "orange", "red", "purple", "grey"]
Fold = Literal["", "+", "-"]

# Obsidian's colours for callouts (its default theme's `--color-*-rgb`), the same in a
# light and a dark theme: a callout's colour names its type, as syntax colours do.
TONE_RGB: dict[Tone, tuple[int, int, int]] = {
    "blue": (8, 109, 221),
    "cyan": (0, 191, 188),
    "green": (8, 185, 78),
    "orange": (236, 117, 0),
    "red": (233, 49, 71),
    "purple": (120, 82, 238),
    "grey": (158, 158, 158),
}


@dataclass(frozen=True)
class CalloutStyle:
    """How a callout type looks: its name, a one-cell icon and Obsidian's colour for it."""

    name: str
    icon: str
    tone: Tone


# Obsidian's default types (its help vault, "Callouts"), with the Lucide icon each uses
# drawn as one terminal cell (pencil, clipboard, info, check-circle, flame, check,
# help-circle, alert-triangle, x, zap, bug, list, quote).
STYLES: dict[str, CalloutStyle] = {
    style.name: style
    for style in (
        CalloutStyle("note", "✎", "blue"),
        CalloutStyle("abstract", "☰", "cyan"),
        CalloutStyle("info", "ℹ", "blue"),
        CalloutStyle("todo", "☑", "blue"),
        CalloutStyle("tip", "✦", "cyan"),
        CalloutStyle("success", "✔", "green"),
        CalloutStyle("question", "?", "orange"),
        CalloutStyle("warning", "⚠", "orange"),
        CalloutStyle("failure", "✘", "red"),
        CalloutStyle("danger", "ϟ", "red"),
        CalloutStyle("bug", "☣", "red"),
        CalloutStyle("example", "≡", "purple"),
        CalloutStyle("quote", "❝", "grey"),
    )
}
ALIASES: dict[str, str] = {
    "summary": "abstract",
    "tldr": "abstract",
    "hint": "tip",
    "important": "tip",
    "check": "success",
    "done": "success",
    "help": "question",
    "faq": "question",
    "caution": "warning",
    "attention": "warning",
    "fail": "failure",
    "missing": "failure",
    "error": "danger",
    "cite": "quote",
}

# `[!type]`, then `+` or `-`, then the title: on the first line of a blockquote.
_MARKER = re.compile(r"\[!([^\]\n]+)\]([+-]?)[ \t]*")


@dataclass(frozen=True)
class Callout:
    """One callout: its type as written (lower case), its style, title and fold."""

    kind: str
    style: CalloutStyle
    title: str
    fold: Fold

    @property
    def foldable(self) -> bool:
        """Whether the reader may fold it (`+` or `-` after the type)."""
        return bool(self.fold)

    @property
    def folded(self) -> bool:
        """Whether it starts folded (`-`)."""
        return self.fold == "-"


def style_for(kind: str) -> CalloutStyle:
    """The style of a callout type; types Obsidian does not know look like `note`."""
    key = kind.strip().casefold()
    return STYLES.get(ALIASES.get(key, key), STYLES["note"])


def read_callout(first_line: str) -> Callout | None:
    """The callout a blockquote's first line opens (None when it opens none)."""
    found = _MARKER.match(first_line)
    if found is None:
        return None
    kind = found.group(1).strip().casefold()
    if not kind:
        return None
    title = first_line[found.end() :].strip()
    fold: Fold = "-" if found.group(2) == "-" else "+" if found.group(2) == "+" else ""
    return Callout(kind, style_for(kind), title or default_title(kind), fold)


def default_title(kind: str) -> str:
    """A callout's title when none is written: its type in title case, as Obsidian shows it."""
    return kind[:1].upper() + kind[1:]
