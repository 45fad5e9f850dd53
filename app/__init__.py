"""Composition root: configuration, paths and wiring for the front ends."""
