"""The entity-graph channel: igraph over notes, tags and names; proximity to the entities a query names.

`build` turns each note into its contribution and sums them, `walk` searches the sum,
`store` saves and loads it, `channel` is the channel the engine talks to.
"""

from __future__ import annotations

from engine.channels.graph.channel import GraphChannel, open_channel

__all__ = ["GraphChannel", "open_channel"]
