"""Wikilinks in note text: turn them into followable Markdown links, and retarget them on rename."""

from __future__ import annotations

import posixpath
import re
from collections.abc import Iterable
from urllib.parse import quote, unquote

from engine.records import Link

NOTE_SCHEME = "note:"
MISSING_SCHEME = "missing:"

_WIKILINK = re.compile(r"(!?)\[\[([^\[\]\n]+?)\]\]")
_FENCE = re.compile(r"^\s*(```|~~~)")


def note_href(path: str, line: int = 0) -> str:
    """The href a rendered link to a vault note carries."""
    return f"{NOTE_SCHEME}{quote(path)}" + (f"#L{line}" if line else "")


def parse_href(href: str) -> tuple[str, int] | None:
    """(path, line) of a note href, or None for any other href."""
    if not href.startswith(NOTE_SCHEME):
        return None
    path, _, anchor = href[len(NOTE_SCHEME):].partition("#L")
    return unquote(path), int(anchor) if anchor.isdigit() else 0


def _split(inner: str) -> tuple[str, str, str | None]:
    """(target, fragment, display) of the text between `[[` and `]]`."""
    target_part, _, display = inner.partition("|")
    target, _, fragment = target_part.partition("#")
    return target.strip(), fragment.strip(), display.strip() or None


def wikilinks_to_markdown(body: str, resolved: dict[str, str]) -> str:
    """Rewrite `[[Target#h|shown]]` as `[shown](note:path)`; unresolved ones get a missing: href.

    `resolved` maps a lower-cased link target to its note path; fenced code is left alone
    and no line is added or removed, so block line numbers still match the file.
    """
    out: list[str] = []
    fenced = False
    for line in body.split("\n"):
        if _FENCE.match(line):
            fenced = not fenced
        if fenced or "[[" not in line:
            out.append(line)
            continue
        out.append(_WIKILINK.sub(lambda m: _render(m, resolved), line))
    return "\n".join(out)


def _render(match: re.Match[str], resolved: dict[str, str]) -> str:
    embed, inner = match.group(1), match.group(2)
    target, fragment, display = _split(inner)
    shown = display or (f"{target} › {fragment.lstrip('^')}" if target and fragment else target or fragment)
    shown = shown.replace("[", "(").replace("]", ")")
    path = resolved.get(target.lower())
    prefix = "↳ " if embed else ""
    if path is None:
        return f"{prefix}[{shown}]({MISSING_SCHEME}{quote(target)})"
    return f"{prefix}[{shown}]({note_href(path)})"


def resolution_map(links: Iterable[tuple[Link, str | None]]) -> dict[str, str]:
    """Lower-cased link target → resolved note path, from a NoteView's links."""
    return {link.target.lower(): path for link, path in links if path}


def relative_target(current: str, href: str) -> str:
    """A Markdown link's href resolved against the folder of the note that holds it."""
    return posixpath.normpath(posixpath.join(posixpath.dirname(current), unquote(href.partition("#")[0])))


def link_names(path: str) -> set[str]:
    """The lower-cased targets a wikilink may use for `path`: stem, and path without `.md`."""
    without = path[:-3] if path.lower().endswith(".md") else path
    return {posixpath.basename(without).lower(), without.lower(), path.lower()}


def retarget_wikilinks(text: str, old_path: str, new_path: str) -> tuple[str, int]:
    """Point every wikilink to `old_path` at `new_path`, keeping fragment and display text.

    Returns the new text and how many links changed.
    """
    names = link_names(old_path)
    new_without = new_path[:-3] if new_path.lower().endswith(".md") else new_path
    changed = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal changed
        embed, inner = match.group(1), match.group(2)
        target, fragment, display = _split(inner)
        if target.lower() not in names:
            return match.group(0)
        changed += 1
        written = new_without if "/" in target else posixpath.basename(new_without)
        fragment_part = f"#{fragment}" if fragment else ""
        display_part = f"|{display}" if display else ""
        return f"{embed}[[{written}{fragment_part}{display_part}]]"

    return _WIKILINK.sub(replace, text), changed


# Neither the text nor the href may hold `[` (a note name cannot): a scan from one `[`
# stops at the next, so a line of brackets is read once, not once per bracket.
_MD_LINK = re.compile(r"(!?\[[^\[\]\n]*\]\()([^\[)\s]+)(\))")


def retarget_markdown_links(text: str, source_path: str, old_path: str, new_path: str) -> tuple[str, int]:
    """Point relative Markdown links `[x](../Old%20Note.md#h)` in `source_path` at `new_path`.

    Returns the new text and how many links changed; external URLs are left alone.
    """
    changed = 0

    def replace(match: re.Match[str]) -> str:
        nonlocal changed
        href = match.group(2)
        if "://" in href or href.startswith(("mailto:", "#")):
            return match.group(0)
        if relative_target(source_path, href).lower() != old_path.lower():
            return match.group(0)
        changed += 1
        fragment = href.partition("#")[2]
        relative = posixpath.relpath(new_path, posixpath.dirname(source_path) or ".")
        return f"{match.group(1)}{quote(relative)}{'#' + fragment if fragment else ''}{match.group(3)}"

    return _MD_LINK.sub(replace, text), changed
