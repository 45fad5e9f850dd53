"""Query understanding: what the user typed, read once into a plan that every channel and fusion use."""

from __future__ import annotations

from engine.query.parse import MAX_QUERY_CHARS, Query, parse_query
from engine.query.plan import (
    NO_GRAPH_REQUEST,
    NO_RELATION,
    GraphRequest,
    Planner,
    QueryPlan,
    RelationQuestion,
    embedded_text,
)

__all__ = [
    "MAX_QUERY_CHARS",
    "NO_GRAPH_REQUEST",
    "NO_RELATION",
    "GraphRequest",
    "Planner",
    "Query",
    "QueryPlan",
    "RelationQuestion",
    "embedded_text",
    "parse_query",
]
