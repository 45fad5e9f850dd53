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
    NO_CONFIDENT_MATCH,
    QUERY_SYNTAX_HELP,
    asked_kind_text,
    badges,
    channel_word,
    colliding_titles,
    count_text,
    hit_label,
    hit_reasons,
    plain_badges,
    printable_path,
    query_sentences,
    relation_text,
    split_hits,
    typed_as_text,
    why_lines,
)
from ui.web.render import file_url, note_url

if TYPE_CHECKING:
    from engine.records import (
        Backlink,
        ChannelEvidence,
        GraphNode,
        Heading,
        Hit,
        LinkedNote,
        LocalGraph,
        Neighbor,
        QueryChip,
        SearchResults,
        TagCount,
        VaultEntry,
        WhyReport,
    )

_BASE = Template(files("ui.web").joinpath("templates/base.html").read_text(encoding="utf-8"))
_SHELL = files("ui.web").joinpath("templates/shell.html").read_text(encoding="utf-8")
e = html.escape
_NONE = '<li class="empty">None</li>'


def page(
    title: str, content: str, *, vault: Path, script: str | Sequence[str] | None = None, body_class: str = ""
) -> str:
    """A whole HTML page around `content` (already-escaped HTML), with common.js and `script` (one or several)."""
    scripts = ["common.js", *([script] if isinstance(script, str) else script or ())]
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


def search_page(query: str, results_html: str, recent: Sequence[tuple[str, str]] = ()) -> str:
    """The search box, options and the results container; the notes changed last below it."""
    recent_html = (
        f'<section class="recent"><h2>Recently changed</h2>{note_list(recent)}'
        '<p><a href="/notes">All notes</a> · <a href="/notes#new-note">New note</a></p></section>'
        if recent
        else ""
    )
    return f"""
<section class="search">
  <form class="search-form" action="/" method="get" role="search">
    <input id="q" name="q" type="search" value="{e(query)}" placeholder="Search notes…"
           autocomplete="off" autofocus spellcheck="false" aria-label="Search notes">
    <label class="toggle"><input id="explain" type="checkbox"> explain</label>
  </form>
  <p class="hint"><span class="keys">↑ ↓ to move · Enter to open · </span>results update as you type</p>
  <details class="syntax"><summary>Search syntax</summary>{_syntax_help()}</details>
  <div id="results" aria-live="polite">{results_html}</div>
  {recent_html}
</section>"""


def _syntax_help() -> str:
    """The query syntax table (the same text as the TUI's help screen and the README)."""
    from markdown_it import MarkdownIt

    rendered: str = MarkdownIt("commonmark", {"html": False}).enable("table").render(QUERY_SYNTAX_HELP)
    return rendered


def note_list(notes: Sequence[tuple[str, str]]) -> str:
    """(path, title) notes as a list of links; where two share a title, each shows its path."""
    shared = colliding_titles(notes)
    items = "".join(
        f'<li><a href="{e(note_url(path))}" title="{e(path)}">{e(title)}</a>'
        + (f' <span class="path">{e(path)}</span>' if title.casefold() in shared else "")
        + "</li>"
        for path, title in notes
    )
    return f'<ul class="note-list">{items or _NONE}</ul>'


def notes_page(entries: Sequence[VaultEntry], recent: Sequence[tuple[str, str]]) -> str:
    """Every note and attachment as a tree of folders (filtered as you type), the notes changed last, and a new-note form."""
    notes = [(entry.path, entry.title) for entry in entries if entry.kind == "note"]
    kinds: dict[str, str] = {entry.path: entry.kind for entry in entries}
    folders = sorted({path.rpartition("/")[0] for path, _title in notes if "/" in path})
    options = "".join(f'<option value="{e(folder)}"></option>' for folder in folders)
    return f"""
<div class="browse">
<section class="tree-section">
  <h1>Notes <span class="count">{len(notes)}</span>
    <span class="count-files">{len(entries) - len(notes)} other files</span></h1>
  <input id="tree-filter" type="search" placeholder="Filter notes…" autocomplete="off" spellcheck="false"
         aria-label="Filter notes">
  <div id="note-tree">{_tree([(entry.path, entry.title) for entry in entries], kinds)}</div>
</section>
<aside class="browse-side">
  <section id="new-note">
    <h2>New note</h2>
    <form id="new-note-form" class="new-note">
      <label>Title <input id="new-title" name="title" required autocomplete="off"></label>
      <label>Folder <input id="new-folder" name="folder" list="folders" autocomplete="off" placeholder="(the vault root)"></label>
      <datalist id="folders">{options}</datalist>
      <button class="primary" type="submit">Create</button>
      <p id="new-state" class="save-state" aria-live="polite"></p>
    </form>
  </section>
  <section><h2>Recently changed</h2>{note_list(recent)}</section>
</aside>
</div>"""


_KIND_MARKS = {"image": "🖼", "audio": "♪", "video": "▶", "pdf": "📄", "canvas": "▦", "other": "📎"}


def _tree(notes: Sequence[tuple[str, str]], kinds: dict[str, str] | None = None) -> str:
    """Nested lists of folders (each a <details>) and files, in path order, root notes last as in the TUI."""
    kinds = kinds or {}
    shared = colliding_titles([(path, title) for path, title in notes if kinds.get(path, "note") == "note"])
    root: dict[str, object] = {}
    for path, title in notes:
        node = root
        *folders, _name = path.split("/")
        for folder in folders:
            child = node.setdefault(folder + "/", {})
            assert isinstance(child, dict)
            node = child
        node[path] = title
    return _branch(root, shared, kinds)


def _branch(node: dict[str, object], shared: set[str], kinds: dict[str, str]) -> str:
    parts: list[str] = []
    for key in sorted((k for k in node if k.endswith("/")), key=str.casefold):
        child = node[key]
        assert isinstance(child, dict)
        parts.append(
            f'<li class="folder"><details><summary>{e(key)}</summary>{_branch(child, shared, kinds)}</details></li>'
        )
    for key in sorted((k for k in node if not k.endswith("/")), key=str.casefold):
        title = str(node[key])
        kind = kinds.get(key, "note")
        if kind != "note":
            name = key.rpartition("/")[2]
            parts.append(
                f'<li class="file" data-kind="{e(kind)}" data-search="{e(key.casefold())}">'
                f'<span class="file-mark" aria-hidden="true">{_KIND_MARKS.get(kind, "📎")}</span>'
                f'<a href="{e(file_url(key))}" title="{e(key)}">{e(name)}</a></li>'
            )
            continue
        name = key.rpartition("/")[2].removesuffix(".md")
        extra = f' <span class="path">{e(key)}</span>' if title.casefold() in shared else ""
        parts.append(
            f'<li class="note" data-search="{e((key + " " + title).casefold())}">'
            f'<a href="{e(note_url(key))}" title="{e(key)}">{e(name)}</a>{extra}</li>'
        )
    return f'<ul class="tree">{"".join(parts)}</ul>'


def results_fragment(results: SearchResults | None) -> str:
    """The results list of one search (also served alone to the page's script)."""
    if results is None:
        return '<p class="empty">Type to search the vault.</p>'
    parts = [_channel_notices(results), _chips(results), _explain_summary(results)]
    parts.append(
        f'<p class="results-meta" data-query="{e(results.query)}">{e(count_text(results))} · {results.total_ms:.0f} ms</p>'
    )
    if not results.hits:
        parts.append('<p class="empty">No results.</p>')
        return "\n".join(parts)
    confident, nearest = split_hits(results)
    parts.append('<ol class="hits">')
    for number, hit in enumerate(confident):
        parts.append(_hit(hit, selected=number == 0))
    if nearest:
        parts.append(f'<li class="divider" role="separator">{e(NO_CONFIDENT_MATCH)}</li>')
        for number, hit in enumerate(nearest):
            parts.append(_hit(hit, selected=not confident and number == 0))
    parts.append("</ol>")
    return "\n".join(parts)


def _removal(chip: QueryChip) -> str:
    """A removable chip carries the query without it (the engine's), which a click searches for."""
    return f' data-without="{e(chip.without)}" title="remove"' if chip.written else ""


def _chips(results: SearchResults) -> str:
    """How the query was read: filters and phrases as chips (a click removes one), and notes."""
    reading = results.reading
    if not reading.chips and not reading.notes:
        return ""
    chips = " ".join(
        f'<button type="button" class="chip chip-{e(chip.kind)}"{_removal(chip)}>'
        f'{e(chip.text)}{" ×" if chip.written else ""}</button>'
        for chip in reading.chips
    )
    notes = "".join(f'<span class="reading-note">{e(note)}</span>' for note in reading.notes)
    return f'<p class="chips">{chips}{notes}</p>'


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
    """How the query was read, in sentences; the channels' timings and entities in a fold; the why form."""
    channels = " · ".join(
        f'<span class="ch ch-{e(name)} st-{e(st.status)}">{e(name)} {e(st.status)} {st.ms:.1f} ms'
        + (f" ({e(st.message)})" if st.message else "")
        + "</span>"
        for name, st in results.channels.items()
    )
    recognized = ", ".join(results.recognized_entities) or "–"
    expanded = ", ".join(results.expanded_entities) or "–"
    typed_as = typed_as_text(results.reading)
    sentences = "".join(f"<p>{e(sentence)}</p>" for sentence in query_sentences(results))
    return (
        '<div class="explain-summary explain-only">'
        + sentences
        + (f"<p>While you type: {e(typed_as)}.</p>" if typed_as else "")
        + '<details class="raw"><summary>Raw scores</summary>'
        f"<p>{channels} · total {results.total_ms:.1f} ms</p>"
        f"<p>entities recognized: {e(recognized)}</p>"
        f"<p>entities expanded: {e(expanded)}</p>"
        + (f"<p>asks for: {e(asked_kind_text(results))}</p>" if results.asked_kind.label else "")
        + "</details>"
        + _why_form(results.query)
        + "</div>"
    )


def _why_form(query: str, note: str = "") -> str:
    """"Why isn't this note here?": a note picker (titles and aliases offered as you type, search.js) and a button."""
    return (
        '<form class="why-form" action="/why" method="get">'
        f'<input type="hidden" name="q" value="{e(query)}">'
        f'<input name="note" type="text" value="{e(note)}" placeholder="Why isn\'t this note here? (title or path)"'
        ' aria-label="Why is a note not in the results" spellcheck="false" autocomplete="off" list="why-notes">'
        '<datalist id="why-notes"></datalist>'
        '<button type="submit">Why?</button></form>'
    )


def why_missing_page(query: str, name: str, nearest: Sequence[tuple[str, str]]) -> str:
    """No note has the name asked about: offer the nearest ones (each a link to its why), and the form again."""
    back = f"/?q={e(quote(query))}"
    items = "".join(
        f'<li><a href="/why?q={e(quote(query))}&amp;note={e(quote(path))}">{e(title)}</a>'
        f' <span class="path">{e(path)}</span></li>'
        for path, title in nearest
    )
    offer = f'<p>Did you mean:</p><ul class="why-choices">{items}</ul>' if nearest else "<p>No note has a name like it.</p>"
    return f"""
<section class="why">
  <h1>No note is named “{e(name)}”</h1>
  <p>for <a href="{back}">{e(query)}</a></p>
  {offer}
  {_why_form(query, name)}
</section>"""


def why_page(report: WhyReport) -> str:
    """Why a chosen note is where it is in a search's results, or not in them; the numbers in a fold."""
    lines = why_lines(report)
    items = "".join(f"<li>{e(line.strip().removeprefix('- '))}</li>" for line in lines[1:])
    raw = "".join(f"<li>{e(line.strip().removeprefix('- '))}</li>" for line in why_lines(report, raw=True))
    back = f"/?q={e(quote(report.query))}"
    return f"""
<section class="why">
  <h1>Why “{e(report.title)}” is where it is</h1>
  <p>for <a href="{back}">{e(report.query)}</a>: {e(lines[0])}</p>
  <ul class="why-reasons">{items}</ul>
  <details class="raw"><summary>Raw scores</summary><ul class="why-raw">{raw}</ul></details>
</section>"""


def _hit(hit: Hit, *, selected: bool) -> str:
    from ui.web.render import highlight

    href = note_url(hit.path, line=hit.snippet.line)
    badge_html = " ".join(
        f'<span class="badge badge-{e(CHANNEL_LABELS[badge.channel].lower())}" title="by {e(channel_word(badge.channel))}">'
        f"{e(badge.text)}</span>"
        for badge in plain_badges(hit)
    )
    heading = f"{e(hit.snippet.heading)} · " if hit.snippet.heading else ""
    snippet = highlight(hit.snippet.text, hit.snippet.highlights)
    return f"""<li class="hit{' selected' if selected else ''}" data-href="{e(href)}">
  <a class="hit-link" href="{e(href)}"><span class="hit-title">{e(hit.title)}</span>
  <span class="hit-path">{e(hit.path)}</span></a>
  <div class="hit-meta"><span class="label label-{e(hit.label)}">{e(hit_label(hit))}</span> {badge_html}</div>
  <p class="snippet"><span class="where">{heading}line {hit.snippet.line}</span> {snippet}</p>
  {_explain_hit(hit)}
</li>"""


def _explain_hit(hit: Hit) -> str:
    """Why the hit is here, in sentences; the engine's ranks, scores and votes in a fold."""
    reasons = "".join(f"<li>{e(sentence)}</li>" for sentence in hit_reasons(hit))
    raw_badges = " ".join(
        f'<span class="badge badge-{e(CHANNEL_LABELS[badge.channel].lower())}">{e(badge.text)}</span>' for badge in badges(hit)
    )
    rows = "".join(
        f"<tr><td>{e(name)}</td><td>#{ev.rank}</td><td>{ev.score:.4g}</td><td>{e(_detail(ev))}</td></tr>"
        for name, ev in hit.channels.items()
    )
    return (
        f'<div class="explain-hit explain-only"><ul class="reasons">{reasons}</ul>'
        f'<details class="raw"><summary>Raw scores</summary><p>{raw_badges}</p>'
        '<table class="explain"><thead><tr><th>channel</th><th>rank</th><th>score</th>'
        f"<th>detail</th></tr></thead><tbody>{rows}"
        f'<tr class="fused"><td>fused</td><td></td><td>{hit.score:.4g}</td><td>{e(hit.label)}</td></tr>'
        + "</tbody></table></details></div>"
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
    if ev.clause is not None:
        parts.append(f"by the clause “{ev.clause}”")
    return "; ".join(parts)


def note_page(
    *,
    path: str,
    title: str,
    rendered: str,
    backlinks: Sequence[Backlink],
    related: SearchResults,
    neighbors: Sequence[Neighbor],
    links: Sequence[LinkedNote] = (),
    same_title: Sequence[str] = (),
    outline: Sequence[Heading] = (),
    obsidian: str | None = None,
    tags: Sequence[str] = (),
) -> str:
    """A rendered note with its outline, links and backlinks (by title), tags, related notes and entity neighbors."""
    quoted = quote(path, safe="/")
    listed: list[Backlink | LinkedNote] = [*links, *backlinks]
    shared = colliding_titles([(entry.path, entry.title) for entry in listed])

    def titled(entry: Backlink | LinkedNote, href: str) -> str:
        where = f' <span class="path">{e(entry.path)}</span>' if entry.title.casefold() in shared else ""
        return f'<a href="{e(href)}" title="{e(entry.path)}">{e(entry.title)}</a>{where}'

    backlink_items = "".join(
        f'<li>{titled(b, note_url(b.path, line=b.line))}<span class="context">{e(b.context)}</span></li>'
        for b in backlinks
    )
    link_items = "".join(
        f'<li>{titled(n, note_url(n.path) if n.path.lower().endswith(".md") else "/file/" + quote(n.path, safe="/"))}'
        + (f'<span class="context">{e(n.context)}</span>' if n.context != n.title else "")
        + "</li>"
        for n in links
    )
    namesake = (
        '<p class="namesake">Another note has this title: '
        + ", ".join(f'<a href="{e(note_url(other))}">{e(other)}</a>' for other in same_title)
        + "</p>"
        if same_title
        else ""
    )
    related_shared = colliding_titles([(h.path, h.title) for h in related.hits])
    related_items = "".join(
        f'<li><a href="{e(note_url(h.path, line=h.snippet.line))}" title="{e(h.path)}">{e(h.title)}</a> '
        + (f'<span class="path">{e(h.path)}</span> ' if h.title.casefold() in related_shared else "")
        + f'<span class="label label-{e(h.label)}">{e(hit_label(h))}</span></li>'
        for h in related.hits
    )
    return f"""
<div class="note-layout">
<article class="note" data-path="{e(path)}">
  <div class="note-head">
    <h1 class="note-title">{e(title)}</h1>
    <p class="note-path"><span class="path">{e(path)}</span>
      <a class="button" id="edit" href="/edit/{e(quoted)}">Edit</a>
      <a class="button" id="graph" href="/graph/{e(quoted)}">Local graph</a>
      {f'<a class="button" id="open-obsidian" href="{e(obsidian)}">Open in Obsidian</a>' if obsidian else ""}
      <button id="find-open" type="button" title="Find in note (Ctrl+F)">Find</button></p>
    {namesake}
    <div id="find-bar" class="find-bar" hidden role="search">
      <input id="find-input" type="search" placeholder="Find in note…" aria-label="Find in note" autocomplete="off" spellcheck="false">
      <span id="find-count" class="find-count" aria-live="polite"></span>
      <button id="find-prev" type="button" title="Previous (Shift+Enter)" aria-label="Previous match">↑</button>
      <button id="find-next" type="button" title="Next (Enter)" aria-label="Next match">↓</button>
      <button id="find-close" type="button" title="Close (Escape)" aria-label="Close find">×</button>
    </div>
  </div>
  <div class="markdown" id="markdown">
{rendered}
  </div>
</article>
<aside class="sidebar">
  <section class="outline"><h2>Outline</h2>{_outline(outline)}</section>
  {_note_tags(tags)}
  <section><h2>Links <span class="count">{len(links)}</span></h2>
    <ul class="links">{link_items or '<li class="empty">None</li>'}</ul></section>
  <section><h2>Backlinks <span class="count">{len(backlinks)}</span></h2>
    <ul class="backlinks">{backlink_items or '<li class="empty">None</li>'}</ul></section>
  <section><h2>Related</h2><ul class="related">{related_items or '<li class="empty">None</li>'}</ul></section>
  <section><h2>Entity neighbors</h2>{_neighbor_list(neighbors)}</section>
</aside>
</div>"""


def _outline(headings: Sequence[Heading]) -> str:
    """The note's headings, indented by level; each jumps to its line."""
    if not headings:
        return '<ul class="outline-list"><li class="empty">No headings</li></ul>'
    top = min(h.level for h in headings)
    items = "".join(
        f'<li class="level-{h.level - top + 1}"><a href="#L{h.line}">{e(h.text)}</a></li>' for h in headings
    )
    return f'<ul class="outline-list">{items}</ul>'


def _note_tags(tags: Sequence[str]) -> str:
    if not tags:
        return ""
    items = " ".join(f'<a class="tag" href="/?q={e(quote("tag:" + t))}">#{e(t)}</a>' for t in tags)
    return f'<section class="note-tags"><h2>Tags</h2><p>{items}</p></section>'


def tags_page(tags: Sequence[TagCount]) -> str:
    """Every tag with how many notes carry it (nested tags under their parents); each runs a `tag:` search."""
    items = "".join(
        f'<li class="tag-row depth-{t.tag.count("/")}" data-search="{e(t.tag.casefold())}">'
        f'<a class="tag" href="/?q={e(quote("tag:" + t.tag))}">#{e(t.tag)}</a> <span class="count">{t.notes}</span></li>'
        for t in tags
    )
    return f"""
<section class="tags-pane">
  <h1>Tags <span class="count">{len(tags)}</span></h1>
  <input id="tree-filter" type="search" placeholder="Filter tags…" autocomplete="off" spellcheck="false" aria-label="Filter tags">
  <ul class="tag-list" id="note-tree">{items or '<li class="empty">No tags in this vault.</li>'}</ul>
</section>"""


def _neighbor_link(neighbor: Neighbor) -> str:
    if neighbor.path:
        return f'<a href="{e(note_url(neighbor.path))}" title="{e(neighbor.path)}">{e(neighbor.name)}</a>'
    return f'<a href="/?q={e(quote(neighbor.name))}">{e(neighbor.name)}</a>'


def _neighbor_list(neighbors: Sequence[Neighbor]) -> str:
    if not neighbors:
        return '<ul class="neighbors"><li class="empty">None</li></ul>'
    shared = colliding_titles([(n.path or n.name, n.name) for n in neighbors])
    items = "".join(
        f'<li>{_neighbor_link(n)}'
        + (f' <span class="path">{e(n.path)}</span>' if n.path and n.name.casefold() in shared else "")
        + f' <span class="kind">{e(n.kind)}</span> <span class="weight">{n.weight:.2g}</span>'
        + (f' <span class="relation">{e(relation_text(n.relation))}</span>' if n.relation else "")
        + "</li>"
        for n in neighbors
    )
    return f'<ul class="neighbors">{items}</ul>'


_GRAPH_SIZE = 640


def _graph_svg(graph: LocalGraph) -> str:
    """The local graph as an SVG: notes are links, edges carry the relations the vault names."""
    size = _GRAPH_SIZE

    def at(node: GraphNode) -> tuple[float, float]:
        return round(node.x * size, 1), round(node.y * size, 1)

    edges: list[str] = []
    labels: list[str] = []
    for edge in graph.edges:
        (x1, y1), (x2, y2) = at(graph.nodes[edge.source]), at(graph.nodes[edge.target])
        edges.append(
            f'<line class="edge edge-{e(edge.kind)}" x1="{x1}" y1="{y1}" x2="{x2}" y2="{y2}" marker-end="url(#arrow)"/>'
        )
        if edge.relation:
            mx, my = round((x1 + x2) / 2, 1), round((y1 + y2) / 2, 1)
            labels.append(f'<text class="relation" x="{mx}" y="{my}" text-anchor="middle">{e(edge.relation)}</text>')
    nodes: list[str] = []
    for node in graph.nodes:
        x, y = at(node)
        radius = 9 if node.role == "center" else 6
        # A label runs away from the middle: rightwards right of it, leftwards left of it, so two
        # nodes either side of the top or bottom of a ring never write over each other; only a
        # node straight above or below the middle centres its label over or under itself.
        across = x - size / 2
        anchor = "middle" if abs(across) < size * 0.01 else "start" if across > 0 else "end"
        dx = 10 if anchor == "start" else -10 if anchor == "end" else 0
        dy = 4 if anchor != "middle" else (-12 if y < size / 2 else 20)
        name = node.name if len(node.name) <= 32 else node.name[:31] + "…"
        shape = (
            f'<circle class="node node-{e(node.role)}" cx="{x}" cy="{y}" r="{radius}"/>'
            f'<text class="node-label" x="{x + dx}" y="{y + dy}" text-anchor="{anchor}">{e(name)}</text>'
            f"<title>{e(node.name)}{' · ' + e(node.path) if node.path else ''}</title>"
        )
        if node.path:
            href = note_url(node.path) if node.path.lower().endswith(".md") else file_url(node.path)
            nodes.append(f'<a class="graph-node" href="{e(href)}" data-role="{e(node.role)}">{shape}</a>')
        else:
            nodes.append(f'<a class="graph-node" href="/?q={e(quote(node.name))}" data-role="{e(node.role)}">{shape}</a>')
    return (
        f'<svg class="local-graph" viewBox="-120 -20 {size + 240} {size + 40}" role="img" aria-label="Local graph">'
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="16" refY="5" markerWidth="6" markerHeight="6" orient="auto-start-reverse">'
        '<path d="M 0 0 L 10 5 L 0 10 z" class="arrow"/></marker></defs>'
        f'<g class="edges">{"".join(edges)}</g><g class="relations">{"".join(labels)}</g>'
        f'<g class="nodes">{"".join(nodes)}</g></svg>'
    )


def graph_page(*, path: str, title: str, graph: LocalGraph) -> str:
    """A note's local graph: the note, its links and backlinks and its graph neighbours, drawn as an SVG."""
    legend = (
        '<p class="graph-legend"><span class="key key-center">this note</span> '
        '<span class="key key-link">links</span> <span class="key key-backlink">backlinks</span> '
        '<span class="key key-neighbor">graph neighbours</span> · a click opens a note; '
        "labels on edges are the relations the vault names</p>"
    )
    body = _graph_svg(graph) if len(graph.nodes) > 1 else '<p class="empty">No links, backlinks or neighbours.</p>'
    return f"""
<section class="graph">
  <h1>Local graph of <a href="{e(note_url(path))}">{e(title)}</a></h1>
  {legend}
  <div class="graph-wrap">{body}</div>
</section>"""


def edit_page(*, path: str, title: str, text: str, sha: str, encoding: str = "UTF-8") -> str:
    """The editor: a textarea, save/cancel, and the conflict dialog the script opens on 409."""
    return f"""
<section class="editor" id="editor" data-path="{e(path)}" data-sha="{e(sha)}">
  <div class="editor-head">
    <h1>Editing {e(title)}</h1>
    <span id="save-state" class="save-state" aria-live="polite"></span>
    <button id="preview-toggle" type="button" aria-pressed="false" title="Show the preview beside the text (Ctrl+E)">Preview</button>
    <button id="save" class="primary" type="button" title="Ctrl+S">Save</button>
    <a class="button" id="close" href="{e(note_url(path))}">Close</a>
  </div>
  <div class="editor-panes">
    <div class="editor-pane">
      <textarea id="text" spellcheck="false" aria-label="Note text" data-encoding="{e(encoding)}">
{e(text)}</textarea>
      <div id="code-editor" class="code-editor" hidden></div>
    </div>
    <div id="preview" class="preview markdown" hidden aria-label="Preview"></div>
  </div>
</section>
<dialog id="conflict">
  <h2>This note changed on disk</h2>
  <p>Someone (or another program) saved <code>{e(path)}</code> after you opened it.
     Nothing was written. Choose what to do with your edits:</p>
  <div class="choices">
    <button id="conflict-cancel" class="primary" type="button" autofocus>Keep editing</button>
    <button id="conflict-copy" type="button">Save a copy — keep both</button>
    <button id="conflict-overwrite" class="danger" type="button">Overwrite — replace the file with my version</button>
    <button id="conflict-reload" class="danger" type="button">Reload — discard my edits</button>
  </div>
  <p id="conflict-detail" class="detail"></p>
</dialog>"""


def error_page(title: str, message: str) -> str:
    """A short error message body."""
    return f'<section class="error"><h1>{e(title)}</h1><p>{e(message)}</p><p><a href="/">Back to search</a></p></section>'
