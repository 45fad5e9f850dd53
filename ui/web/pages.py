"""Server-rendered HTML of the web view's pages; every value from a note is escaped here."""

from __future__ import annotations

import html
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path
from string import Template
from typing import TYPE_CHECKING
from urllib.parse import quote

from engine.present import (
    CHANNEL_LABELS,
    asked_kind_text,
    badges,
    printable_path,
    relation_text,
    why_lines,
)
from ui.web.render import note_url

if TYPE_CHECKING:
    from engine.records import Backlink, ChannelEvidence, Hit, Neighbor, SearchResults, WhyReport

_BASE = Template(files("ui.web").joinpath("templates/base.html").read_text(encoding="utf-8"))
_SHELL = files("ui.web").joinpath("templates/shell.html").read_text(encoding="utf-8")
e = html.escape


def page(title: str, content: str, *, vault: Path, script: str | None = None, body_class: str = "") -> str:
    """A whole HTML page around `content` (already-escaped HTML), with common.js and `script`."""
    scripts = ["common.js", *([script] if script else [])]
    return _BASE.substitute(
        title=e(title),
        content=content,
        scripts="\n".join(f'<script src="/static/{e(name)}" defer></script>' for name in scripts),
        body_class=e(body_class),
        # A vault folder whose name is not UTF-8 could not be sent as UTF-8 at all.
        vault_name=e(printable_path(vault.name)),
        vault_path=e(printable_path(str(vault))),
    )


def shell_page() -> str:
    """The public page every page URL answers without the token: no vault data, only shell.js."""
    return _SHELL


def search_page(query: str, results_html: str) -> str:
    """The search box, options and the results container."""
    return f"""
<section class="search">
  <form class="search-form" action="/" method="get" role="search">
    <input id="q" name="q" type="search" value="{e(query)}" placeholder="Search notes…"
           autocomplete="off" autofocus spellcheck="false" aria-label="Search notes">
    <label class="toggle"><input id="explain" type="checkbox"> explain</label>
  </form>
  <p class="hint">↑ ↓ to move · Enter to open · results update as you type</p>
  <div id="results" aria-live="polite">{results_html}</div>
</section>"""


def results_fragment(results: SearchResults | None) -> str:
    """The results list of one search (also served alone to the page's script)."""
    if results is None:
        return '<p class="empty">Type to search the vault.</p>'
    parts = [_channel_notices(results), _explain_summary(results)]
    count = len(results.hits)
    parts.append(
        f'<p class="results-meta" data-query="{e(results.query)}">'
        f"{count} result{'s' if count != 1 else ''} · {results.total_ms:.0f} ms</p>"
    )
    if not results.hits:
        parts.append('<p class="empty">No results.</p>')
        return "\n".join(parts)
    parts.append('<ol class="hits">')
    for number, hit in enumerate(results.hits):
        parts.append(_hit(hit, selected=number == 0))
    parts.append("</ol>")
    return "\n".join(parts)


def _channel_notices(results: SearchResults) -> str:
    vectors = results.channels.get("vectors")
    if vectors is None or vectors.status == "ok":
        return ""
    if vectors.status == "unavailable":
        text = "Vector search is unavailable"
    else:
        text = "Vector search is still embedding"
    detail = f": {vectors.message}" if vectors.message else ""
    return f'<p class="notice notice-vectors" data-status="{e(vectors.status)}">{e(text + detail)}.</p>'


def _explain_summary(results: SearchResults) -> str:
    channels = " · ".join(
        f'<span class="ch ch-{e(name)} st-{e(st.status)}">{e(name)} {e(st.status)} {st.ms:.1f} ms'
        + (f" ({e(st.message)})" if st.message else "")
        + "</span>"
        for name, st in results.channels.items()
    )
    recognized = ", ".join(results.recognized_entities) or "–"
    expanded = ", ".join(results.expanded_entities) or "–"
    return (
        '<div class="explain-summary explain-only">'
        f"<p>{channels} · total {results.total_ms:.1f} ms</p>"
        f"<p>entities recognized: {e(recognized)}</p>"
        f"<p>entities expanded: {e(expanded)}</p>"
        + (f"<p>asks for: {e(asked_kind_text(results))}</p>" if results.asked_kind.label else "")
        + '<form class="why-form" action="/why" method="get">'
        f'<input type="hidden" name="q" value="{e(results.query)}">'
        '<input name="note" type="text" placeholder="Why isn\'t this note here? (title or path)"'
        ' aria-label="Why is a note not in the results" spellcheck="false">'
        '<button type="submit">Why?</button></form>'
        + "</div>"
    )


def why_page(report: WhyReport) -> str:
    """Why a chosen note is where it is in a search's results, or not in them."""
    lines = why_lines(report)
    items = "".join(f"<li>{e(line.strip().removeprefix('- '))}</li>" for line in lines[1:])
    back = f"/?q={e(quote(report.query))}"
    return f"""
<section class="why">
  <h1>Why “{e(report.title)}” is where it is</h1>
  <p>for <a href="{back}">{e(report.query)}</a>: {e(lines[0])}</p>
  <ul class="why-reasons">{items}</ul>
</section>"""


def _hit(hit: Hit, *, selected: bool) -> str:
    from ui.web.render import highlight

    href = note_url(hit.path, line=hit.snippet.line)
    badge_html = " ".join(
        f'<span class="badge badge-{e(CHANNEL_LABELS[badge.channel].lower())}">{e(badge.text)}</span>' for badge in badges(hit)
    )
    heading = f"{e(hit.snippet.heading)} · " if hit.snippet.heading else ""
    snippet = highlight(hit.snippet.text, hit.snippet.highlights)
    return f"""<li class="hit{' selected' if selected else ''}" data-href="{e(href)}">
  <a class="hit-link" href="{e(href)}"><span class="hit-title">{e(hit.title)}</span>
  <span class="hit-path">{e(hit.path)}</span></a>
  <div class="hit-meta"><span class="label label-{e(hit.label)}">{e(hit.label.replace("_", " "))}</span> {badge_html}</div>
  <p class="snippet"><span class="where">{heading}line {hit.snippet.line}</span> {snippet}</p>
  {_explain_hit(hit)}
</li>"""


def _explain_hit(hit: Hit) -> str:
    rows = "".join(
        f"<tr><td>{e(name)}</td><td>#{ev.rank}</td><td>{ev.score:.4g}</td><td>{e(_detail(ev))}</td></tr>"
        for name, ev in hit.channels.items()
    )
    return (
        '<table class="explain explain-only"><thead><tr><th>channel</th><th>rank</th><th>score</th>'
        f"<th>detail</th></tr></thead><tbody>{rows}"
        f'<tr class="fused"><td>fused</td><td></td><td>{hit.score:.4g}</td><td>{e(hit.label)}</td></tr>'
        "</tbody></table>"
    )


def _detail(ev: ChannelEvidence) -> str:
    parts = []
    if ev.matched_terms:
        parts.append("terms " + ", ".join(ev.matched_terms))
    if ev.graph_path:
        relation = f" ({ev.graph_relation})" if ev.graph_relation else ""
        parts.append(" → ".join(ev.graph_path) + relation)
        parts.extend(relation_text(r) for r in ev.relations)
    if ev.chunk_id is not None:
        parts.append(f"chunk {ev.chunk_id}")
    return "; ".join(parts)


def note_page(
    *,
    path: str,
    title: str,
    rendered: str,
    backlinks: Sequence[Backlink],
    related: SearchResults,
    neighbors: Sequence[Neighbor],
) -> str:
    """A rendered note with its backlinks, related notes and entity neighbors."""
    quoted = quote(path, safe="/")
    backlink_items = "".join(
        f'<li><a href="{e(note_url(b.path, line=b.line))}">{e(b.title)}</a>'
        f'<span class="context">{e(b.context)}</span></li>'
        for b in backlinks
    )
    related_items = "".join(
        f'<li><a href="{e(note_url(h.path, line=h.snippet.line))}">{e(h.title)}</a> '
        f'<span class="label label-{e(h.label)}">{e(h.label.replace("_", " "))}</span></li>'
        for h in related.hits
    )
    return f"""
<div class="note-layout">
<article class="note" data-path="{e(path)}">
  <div class="note-head">
    <h1 class="note-title">{e(title)}</h1>
    <p class="note-path">{e(path)}
      · <a class="button" id="edit" href="/edit/{e(quoted)}">Edit</a>
      · <a class="button" href="/graph/{e(quoted)}">Graph neighborhood</a></p>
  </div>
  <div class="markdown" id="markdown">
{rendered}
  </div>
</article>
<aside class="sidebar">
  <section><h2>Backlinks <span class="count">{len(backlinks)}</span></h2>
    <ul class="backlinks">{backlink_items or '<li class="empty">None</li>'}</ul></section>
  <section><h2>Related</h2><ul class="related">{related_items or '<li class="empty">None</li>'}</ul></section>
  <section><h2>Entity neighbors</h2>{_neighbor_list(neighbors)}</section>
</aside>
</div>"""


def _neighbor_link(neighbor: Neighbor) -> str:
    if neighbor.path:
        return f'<a href="{e(note_url(neighbor.path))}" title="{e(neighbor.path)}">{e(neighbor.name)}</a>'
    return f'<a href="/?q={e(quote(neighbor.name))}">{e(neighbor.name)}</a>'


def _neighbor_list(neighbors: Sequence[Neighbor]) -> str:
    if not neighbors:
        return '<ul class="neighbors"><li class="empty">None</li></ul>'
    items = "".join(
        f'<li>{_neighbor_link(n)} <span class="kind">{e(n.kind)}</span>'
        f' <span class="weight">{n.weight:.2g}</span>'
        + (f' <span class="relation">{e(relation_text(n.relation))}</span>' if n.relation else "")
        + "</li>"
        for n in neighbors
    )
    return f'<ul class="neighbors">{items}</ul>'


def graph_page(*, path: str, title: str, neighbors: Sequence[tuple[Neighbor, Sequence[Neighbor]]]) -> str:
    """A note's entity neighbors, each with its own neighbors (two hops)."""
    items = "".join(
        f'<li>{_neighbor_link(n)} <span class="kind">{e(n.kind)}</span>'
        f' <span class="weight">{n.weight:.2g}</span>{_neighbor_list(second) if second else ""}</li>'
        for n, second in neighbors
    )
    return f"""
<section class="graph">
  <h1>Graph neighborhood of <a href="{e(note_url(path))}">{e(title)}</a></h1>
  <ul class="graph-neighbors">{items or '<li class="empty">No neighbors.</li>'}</ul>
</section>"""


def edit_page(*, path: str, title: str, text: str, sha: str, encoding: str = "UTF-8") -> str:
    """The editor: a textarea, save/cancel, and the conflict dialog the script opens on 409."""
    return f"""
<section class="editor" id="editor" data-path="{e(path)}" data-sha="{e(sha)}">
  <div class="editor-head">
    <h1>Editing {e(title)}</h1>
    <span id="save-state" class="save-state" aria-live="polite"></span>
    <button id="save" class="primary" type="button">Save</button>
    <a class="button" href="{e(note_url(path))}">Cancel</a>
  </div>
  <textarea id="text" spellcheck="false" aria-label="Note text" data-encoding="{e(encoding)}">
{e(text)}</textarea>
</section>
<dialog id="conflict">
  <h2>This note changed on disk</h2>
  <p>Someone (or another program) saved <code>{e(path)}</code> after you opened it.
     Nothing was written. Choose what to do with your edits:</p>
  <div class="choices">
    <button id="conflict-reload" type="button">Reload — discard my edits</button>
    <button id="conflict-overwrite" type="button">Overwrite — replace the file with my version</button>
    <button id="conflict-copy" type="button">Save a copy — keep both</button>
    <button id="conflict-cancel" type="button">Keep editing</button>
  </div>
  <p id="conflict-detail" class="detail"></p>
</dialog>"""


def error_page(title: str, message: str) -> str:
    """A short error message body."""
    return f'<section class="error"><h1>{e(title)}</h1><p>{e(message)}</p><p><a href="/">Back to search</a></p></section>'
