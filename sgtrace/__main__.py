"""``python -m sgtrace``."""

from sgtrace.cli import run

run()
