"""An identifier index of a whole tree: which modules contain each identifier.

Questions such as "who calls ``configure``?" or "which classes inherit from
this mixin?" would otherwise scan every file's bytes once per name. The
index costs one regex pass over the tree, and is cached on disk under a key
made of every file's path and content hash.
"""

from __future__ import annotations

import hashlib
import re

from sgtrace.cache import JsonCache, key

_IDENTIFIER = re.compile(rb"[A-Za-z_][A-Za-z0-9_]*")


def tree_digest(contents: list[tuple[str, bytes]]) -> bytes:
    """A digest of a whole tree: every module's name and content hash."""
    digest = hashlib.blake2b(digest_size=20)
    for module, data in contents:
        digest.update(module.encode("utf-8") + b"\0" + hashlib.blake2b(data, digest_size=16).digest())
    return digest.digest()


def build_identifier_index(contents: list[tuple[str, bytes]], cache: JsonCache) -> dict[str, tuple[str, ...]]:
    """Identifier -> the modules whose text contains it as a word; *contents* sorted by module."""
    modules = [module for module, _ in contents]
    entry = key(tree_digest(contents), "identifiers")
    cached = cache.get(entry)
    if isinstance(cached, dict) and cached.get("modules") == modules:
        index = cached.get("index", {})
        if isinstance(index, dict):
            return {name: tuple(modules[i] for i in positions) for name, positions in index.items()}
    inverted: dict[str, list[int]] = {}
    for position, (_, data) in enumerate(contents):
        for word in set(_IDENTIFIER.findall(data)):
            inverted.setdefault(word.decode("ascii"), []).append(position)
    cache.put(entry, {"modules": modules, "index": inverted})
    return {name: tuple(modules[i] for i in positions) for name, positions in inverted.items()}
