"""Which modules of a tree contain an identifier.

Questions such as "who calls ``configure``?" or "which classes inherit from this mixin?" would
otherwise run a regex over every file once per name. Each file's words are collected once (bytes
``translate`` and ``split``: about four times faster than a regex ``findall``), a chunk of files at a
time: a chunk's words list each word once, with the positions (in the chunk) of the files that
contain it. Chunks are built on the worker processes while find's pass reads the tree
(:mod:`sgtrace.index.chunks`) and kept in the content store by the names and contents of their files, so
a later run on the same files (another attribute, the same package checked out elsewhere) reads them
instead. A name's modules are the union of its chunks' positions, looked up once per name.

A chunk's words are three values, as cheap to hand between processes and to store as to read back
(measured on SGLang 0.5.23, 4,719 files, 1.47 million distinct words of files: a dict per word cost
0.6 s to write as JSON): ``words`` (the words, sorted, space-separated),
``sizes`` (the bytes of each word's positions, 32-bit) and ``positions`` (the files' positions in the
chunk, 16-bit, word after word), the numbers packed little-endian: bytes when just built, base64
text in the store. A word is found by a binary search (a lookup table of every chunk's words cost the
parent 0.15 s; the sort costs the workers about as much, while the parent has nothing to do).
"""

from __future__ import annotations

import base64
import bisect
import difflib
import operator
import sys
from array import array
from collections import defaultdict, deque
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from itertools import accumulate, compress, repeat
from typing import Any

#: Every byte that cannot be part of an identifier becomes a space.
_NON_WORD = bytes(c if chr(c).isalnum() and c < 128 or c == ord("_") else 32 for c in range(256))


def words_of(data: bytes) -> frozenset[bytes]:
    """The distinct identifier-like words of a file's bytes (runs of ASCII letters, digits and ``_``)."""
    return frozenset(data.translate(_NON_WORD).split())


def chunk_words(files: Iterable[Set[bytes] | None]) -> dict[str, Any]:
    """The words of a chunk of files (in order, at most 65,536; None for a file left out): ``words``, ``sizes``,
    ``positions``."""
    found: defaultdict[bytes, bytearray] = defaultdict(bytearray)
    append = deque[None](maxlen=0).extend  # runs a map to its end in C: a fifth faster than a loop here
    for position, words in enumerate(files):
        if words:
            append(map(bytearray.extend, map(found.__getitem__, words), repeat(position.to_bytes(2, "little"))))
    ordered = sorted(found)
    values = list(map(found.__getitem__, ordered))
    sizes = array("I", map(len, values))
    if sys.byteorder != "little":
        sizes.byteswap()
    return {"words": b" ".join(ordered).decode("ascii"), "sizes": sizes.tobytes(), "positions": b"".join(values)}


def stored(words: Mapping[str, Any]) -> dict[str, str]:
    """A chunk's words as the store keeps them (the packed numbers as base64 text)."""
    return {
        "words": words["words"],
        "sizes": base64.b64encode(words["sizes"]).decode("ascii"),
        "positions": base64.b64encode(words["positions"]).decode("ascii"),
    }


class ChunkWords:
    """A chunk's packed words (stored or just built), unpacked for lookups; ValueError/TypeError if they are
    damaged."""

    def __init__(self, words: Mapping[str, Any], files: int) -> None:
        text = words["words"]
        if not isinstance(text, str):
            raise TypeError("words are not text")
        sizes = _numbers(words["sizes"], "I")
        self.positions = _raw(words["positions"])
        listed = text.split(" ") if text else []
        if len(sizes) != len(listed) or sum(sizes) != len(self.positions):
            raise ValueError("sizes do not match the words")
        self.files = files
        self.text = text
        self.words = listed
        self.offsets = [0, *accumulate(sizes)]

    def holding(self, name: str) -> array[int]:
        """The positions of the files that hold *name* (the words are sorted: a binary search)."""
        index = bisect.bisect_left(self.words, name)
        if index == len(self.words) or self.words[index] != name:
            return array("H")
        found = _numbers(self.positions[self.offsets[index] : self.offsets[index + 1]], "H")
        if found and max(found) >= self.files:
            raise ValueError("a position past the chunk's files")
        return found

    def containing(self, part: str) -> set[int]:
        """The positions of the files whose bytes hold *part* (ASCII word characters only: then it stands inside
        one of the file's words)."""
        found: set[int] = set()
        start = self.text.find(part)
        while start >= 0:
            index = self.text.count(" ", 0, start)  # the word the hit is in (few hits: a count each is cheap)
            found.update(_numbers(self.positions[self.offsets[index] : self.offsets[index + 1]], "H"))
            end = self.text.find(" ", start)
            start = self.text.find(part, end) if end >= 0 else -1
        if found and max(found) >= self.files:
            raise ValueError("a position past the chunk's files")
        return found


def is_word(text: str) -> bool:
    """Whether *text* is made of the characters the words of a file are (ASCII letters, digits and ``_``)."""
    return text.isascii() and bool(text) and text.encode("ascii").translate(_NON_WORD) == text.encode("ascii")


def _raw(packed: Any) -> bytes | bytearray:
    if isinstance(packed, (bytes, bytearray)):
        return packed
    if not isinstance(packed, str):
        raise TypeError("not packed numbers")
    return base64.b64decode(packed, validate=True)


def _numbers(packed: Any, code: str) -> array[int]:
    found = array(code)
    found.frombytes(_raw(packed))  # ValueError if the length is not a multiple of the item size
    if sys.byteorder != "little":
        found.byteswap()
    return found


#: Gives a chunk's words (built again from its files, or read from the store).
Source = Callable[[], Mapping[str, Any]]


class _Files:
    """A chunk as each file's set of words (just read: what find's pass hands back)."""

    def __init__(self, modules: Sequence[str | None], sets: Sequence[Set[bytes] | None]) -> None:
        self.modules = [m for m, words in zip(modules, sets, strict=True) if m is not None and words is not None]
        self.sets = [words for m, words in zip(modules, sets, strict=True) if m is not None and words is not None]

    def holding(self, name: str) -> list[str]:
        # compress/map run the per-file test in C: three times faster than a generator here
        return list(compress(self.modules, map(operator.contains, self.sets, repeat(name.encode("utf-8")))))

    def vocabulary(self) -> set[str]:
        """Every word of the chunk's files."""
        return {word.decode("utf-8", "replace") for words in self.sets for word in words}


class _Packed:
    """A chunk as its packed words (:func:`chunk_words`), unpacked when first asked about."""

    def __init__(self, modules: Sequence[str | None], words: Mapping[str, Any] | ChunkWords | None,
                 rebuild: Source | None, load: Source | None) -> None:  # fmt: skip
        self.modules, self.rebuild, self.load = modules, rebuild, load
        self.words = words if not isinstance(words, ChunkWords) else None
        self.table = words if isinstance(words, ChunkWords) else None

    def holding(self, name: str) -> list[str]:
        """The modules that hold *name*; stored words found damaged are built again (said once)."""
        found = self._looked_up(lambda table: table.holding(name))
        return [m for m in map(self.modules.__getitem__, found) if m is not None]

    def vocabulary(self) -> set[str]:
        """Every word of the chunk's files."""
        return set(self._looked_up(lambda table: table.words))

    def _looked_up(self, ask: Callable[[ChunkWords], Any]) -> Any:
        try:
            if self.table is None:
                words = self.words if self.words is not None else self.load() if self.load is not None else {}
                self.table = ChunkWords(words, len(self.modules))
            return ask(self.table)
        except (KeyError, TypeError, ValueError) as exc:  # binascii.Error is a ValueError
            if self.rebuild is None:
                raise
            print(f"sgtrace: warning: ignoring damaged cache entry (words of {len(self.modules)} files): {exc}",
                  file=sys.stderr)  # fmt: skip
            self.table, self.rebuild = ChunkWords(self.rebuild(), len(self.modules)), None
            return ask(self.table)


class Vocabulary:
    """The words of every file content one process met, for trees read one after another (a history's
    releases share most of their files): a content met before is not split again, and no tree's words are
    packed.

    Each word keeps the numbers of the contents holding it (32-bit, packed in a bytearray as
    :func:`chunk_words` packs positions: no container per word for the collector to walk).
    """

    def __init__(self) -> None:
        self._numbers: dict[bytes, int] = {}
        self._holding: defaultdict[bytes, bytearray] = defaultdict(bytearray)

    def __len__(self) -> int:
        return len(self._numbers)

    def add(self, content: bytes, data: bytes) -> int:
        """The number of the file content whose digest is *content* (its bytes *data*), its words taken when new."""
        number = self._numbers.get(content)
        if number is None:
            number = self._numbers[content] = len(self._numbers)
            holders = map(self._holding.__getitem__, words_of(data))
            deque[None](map(bytearray.extend, holders, repeat(number.to_bytes(4, "little"))), maxlen=0)
        return number

    def holding(self, name: str) -> array[int]:
        """The numbers of the contents that hold *name* as a word."""
        return _numbers(self._holding.get(name.encode("utf-8", "surrogateescape"), b""), "I")

    def words(self, numbers: Set[int]) -> set[str]:
        """Every word held by one of the contents *numbers*."""
        found: set[str] = set()
        for word, packed in self._holding.items():
            if not numbers.isdisjoint(_numbers(packed, "I")):
                found.add(word.decode("utf-8", "replace"))
        return found


class _Shared:
    """A tree's files as their contents' numbers in a :class:`Vocabulary`."""

    def __init__(self, source: Vocabulary) -> None:
        self.source = source
        #: A content's number -> the modules of the tree with that content.
        self.modules: dict[int, list[str]] = {}

    def add(self, modules: Sequence[str | None], numbers: Sequence[int | None]) -> None:
        for module, number in zip(modules, numbers, strict=True):
            if module is not None and number is not None:
                self.modules.setdefault(number, []).append(module)

    def holding(self, name: str) -> list[str]:
        found = map(self.modules.get, self.source.holding(name))
        return [module for modules in found if modules is not None for module in modules]

    def vocabulary(self) -> set[str]:
        """Every word of the tree's files."""
        return self.source.words(self.modules.keys())


class IdentifierIndex:
    """Identifier -> the modules whose text contains it as a word."""

    def __init__(self, contents: Sequence[tuple[str, bytes]] = ()) -> None:
        self._chunks: list[_Files | _Packed | _Shared] = []
        self._shared: _Shared | None = None
        self._found: dict[str, tuple[str, ...]] = {}
        if contents:
            self.add_sets([m for m, _ in contents], [words_of(data) for _, data in contents])

    def add_sets(self, modules: Sequence[str | None], sets: Sequence[Set[bytes] | None]) -> None:
        """Add a chunk as its files' modules in order (None for a file not indexed) and their words."""
        self._chunks.append(_Files(modules, sets))
        self._found = {}

    def add_packed(
        self,
        modules: Sequence[str | None],
        words: Mapping[str, Any] | ChunkWords | None,
        rebuild: Source | None = None,
        load: Source | None = None,
    ) -> None:
        """Add a chunk as its files' modules and its packed words (:func:`chunk_words`).

        *words* (packed, or already :class:`ChunkWords`) may be None and *load* give them when first asked;
        *rebuild* gives them again from the files, should stored ones turn out damaged.
        """
        self._chunks.append(_Packed(modules, words, rebuild, load))
        self._found = {}

    def add_numbered(
        self, vocabulary: Vocabulary, modules: Sequence[str | None], numbers: Sequence[int | None]
    ) -> None:
        """Add a chunk as its files' modules and the numbers of their contents in *vocabulary* (None for a file
        not indexed)."""
        if self._shared is None or self._shared.source is not vocabulary:
            self._shared = _Shared(vocabulary)
            self._chunks.append(self._shared)
        self._shared.add(modules, numbers)
        self._found = {}

    def get(self, name: str, default: tuple[str, ...] = ()) -> tuple[str, ...]:
        """The modules that contain *name* as a word (sorted), or *default* if none do."""
        if name not in self._found:
            found: set[str] = set()
            for chunk in self._chunks:
                found.update(chunk.holding(name))
            self._found[name] = tuple(sorted(found))
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
        words = {
            word for chunk in self._chunks for word in chunk.vocabulary() if abs(len(word) - size) <= size // 4 + 1
        }
        return difflib.get_close_matches(name, sorted(words), n=count, cutoff=0.75)
