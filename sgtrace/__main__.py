"""``python -m sgtrace``."""

from sgtrace.cli import main

main()
