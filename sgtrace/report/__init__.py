"""Renderers: one module per format, each a pure ``render(result) -> str``."""
