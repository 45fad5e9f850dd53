"""A note's local graph, as Obsidian's local graph view shows it: the note, what it links to, what links
to it and its graph neighbours, with the relations the vault names, laid out for drawing.

The layout is radial and deterministic: the note in the middle, the notes it links with
on an inner ring, the graph's other neighbours on an outer ring, each ring in name order,
so the same note always looks the same and labels do not pile up.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Sequence
from typing import Literal

from engine.records import GraphEdge, GraphNode, LocalGraph, Neighbor

MAX_NODES = 40
_INNER, _OUTER = 0.26, 0.44


def local_graph(
    path: str,
    title: str,
    links: Sequence[tuple[str, str]],
    backlinks: Sequence[tuple[str, str]],
    neighbors: Iterable[Neighbor],
    links_from: Callable[[str], Iterable[str]] | None = None,
    max_nodes: int = MAX_NODES,
) -> LocalGraph:
    """The local graph of `path`.

    Args:
        path, title: the note.
        links, backlinks: (path, title) of the notes it links to and that link to it.
        neighbors: its graph neighbours (entities, some of them notes), strongest first.
        links_from: the paths a shown note links to, for the links among the shown notes.
        max_nodes: at most this many nodes besides the note.
    """
    roles: dict[str, str] = {}
    names: dict[str, str] = {}
    paths: dict[str, str | None] = {}
    relations: dict[str, str] = {}
    for target, name in links:
        if target != path:
            roles[target], names[target], paths[target] = "link", name, target
    for source, name in backlinks:
        if source == path:
            continue
        roles[source] = "both" if roles.get(source) == "link" else "backlink"
        names[source], paths[source] = name, source
    for neighbor in neighbors:
        key = neighbor.path or f"entity:{neighbor.name.casefold()}"
        if key == path:
            continue
        if key not in roles:
            roles[key], names[key], paths[key] = "neighbor", neighbor.name, neighbor.path
        if neighbor.relation is not None and key not in relations:
            relation = neighbor.relation
            arrow = "→" if relation.source == title else "←"
            relations[key] = f"{relation.relation} {arrow}" if arrow == "→" else f"← {relation.relation}"
    inner = sorted((k for k, r in roles.items() if r != "neighbor"), key=lambda k: names[k].casefold())
    outer = sorted((k for k, r in roles.items() if r == "neighbor"), key=lambda k: names[k].casefold())
    kept_inner = inner[:max_nodes]
    kept_outer = outer[: max(0, max_nodes - len(kept_inner))]
    nodes = [GraphNode(title, path, "center", 0.5, 0.5)]
    index = {path: 0}
    for ring, radius, offset in ((kept_inner, _INNER, 0.0), (kept_outer, _OUTER, 0.5)):
        for position, key in enumerate(ring):
            angle = 2 * math.pi * (position + offset) / max(len(ring), 1) - math.pi / 2
            index[key] = len(nodes)
            nodes.append(
                GraphNode(
                    names[key],
                    paths[key],
                    roles[key],  # type: ignore[arg-type]
                    round(0.5 + radius * math.cos(angle), 4),
                    round(0.5 + radius * math.sin(angle), 4),
                )
            )
    edges: list[GraphEdge] = []
    for key in (*kept_inner, *kept_outer):
        role = roles[key]
        kind: Literal["link", "neighbor"] = "neighbor" if role == "neighbor" else "link"
        if role == "backlink":
            edges.append(GraphEdge(index[key], 0, kind, relations.get(key, "")))
        else:
            edges.append(GraphEdge(0, index[key], kind, relations.get(key, "")))
    if links_from is not None:
        seen = {(e.source, e.target) for e in edges}
        for key in kept_inner:
            for target in links_from(key):
                other = index.get(target)
                if other is not None and other not in (0, index[key]) and (index[key], other) not in seen:
                    seen.add((index[key], other))
                    edges.append(GraphEdge(index[key], other, "link"))
    return LocalGraph(tuple(nodes), tuple(edges))
