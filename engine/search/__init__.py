"""The search: plan the query, run the channels concurrently, fuse their lists, explain every hit."""

from __future__ import annotations

from engine.search.searcher import Searcher, channel_depth

__all__ = ["Searcher", "channel_depth"]
