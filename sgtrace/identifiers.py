"""Which modules of a tree contain an identifier.

Questions such as "who calls ``configure``?" or "which classes inherit from
this mixin?" would otherwise run a regex over every file once per name. Each
file's words are collected once (bytes ``translate`` and ``split``: about four
times faster than a regex ``findall``; 0.56 s for SGLang 0.5.23's 68 MB on this
machine), and a name's modules are found by a set lookup per file, remembered
per name. Words are only kept in memory: building them again costs about as
much as reading a cached index from disk, and a warm run (the graph cached)
needs none.
"""

from __future__ import annotations

import difflib
import operator
from itertools import compress, repeat

#: Every byte that cannot be part of an identifier becomes a space.
_NON_WORD = bytes(c if chr(c).isalnum() and c < 128 or c == ord("_") else 32 for c in range(256))


class IdentifierIndex:
    """Identifier -> the modules whose text contains it as a word."""

    def __init__(self, contents: list[tuple[str, bytes]]) -> None:
        self._modules = [module for module, _ in contents]
        self._words = [frozenset(data.translate(_NON_WORD).split()) for _, data in contents]
        self._found: dict[str, tuple[str, ...]] = {}

    def get(self, name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The modules that contain *name* as a word (in the order given), or *default* if none do."""
        if name not in self._found:
            word = name.encode("utf-8")
            # compress/map run the per-module test in C: three times faster than a generator here
            self._found[name] = tuple(compress(self._modules, map(operator.contains, self._words, repeat(word))))
        return self._found[name] or default

    def holds(self, name: str) -> bool:
        """Whether some module contains *name* as a word."""
        return bool(self.get(name))

    def closest(self, name: str, count: int = 1) -> list[str]:
        """The words of the tree most like *name* (a typo's did-you-mean), best first.

        Only words within a quarter of *name*'s length are compared (a typo changes a few characters):
        0.4 s for SGLang 0.5.23's 170,000 words, against 1 s for all of them.
        """
        size = len(name)
        words = {word for words in self._words for word in words if abs(len(word) - size) <= size // 4 + 1}
        near = sorted(word.decode("utf-8", "replace") for word in words)
        return difflib.get_close_matches(name, near, n=count, cutoff=0.75)
