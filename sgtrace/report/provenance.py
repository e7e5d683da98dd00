"""Which code an answer read, as every renderer names it: a phrase for text, a field for JSON, SARIF's
``versionControlProvenance``."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from sgtrace.identity import as_dict
from sgtrace.model import TreeIdentity, TreeOrder

#: How many hex digits of a commit a line of text shows (JSON and SARIF carry it whole).
SHORT = 12


def named(root: str, tree: TreeIdentity | None) -> str:
    """*root* with what it is in parentheses: ``/src/sglang (commit 1a2b.., v0.5.9-3-g1a2b, version 0.5.9)``."""
    said = described(tree)
    return f"{root} ({said})" if said else root


def described(tree: TreeIdentity | None) -> str:
    """What a tree is, in a few words ("" when nothing is known of it)."""
    if tree is None or (tree.kind == "release" and tree.spec is not None and tree.display == tree.spec):
        return ""  # a spec names its release whole
    parts: list[str] = []
    if tree.kind == "sample":
        parts.append("the sample shipped with sgtrace")
    elif tree.kind in ("release", "installed"):
        parts.append(f"{'release' if tree.kind == 'release' else 'installed'} {tree.version or '(no version)'}")
    elif tree.commit is None:
        parts.append("not a git checkout")
    if tree.commit is not None:
        parts.append(f"commit {tree.commit[:SHORT]}")
        if tree.describe:
            parts.append(tree.describe)
    if tree.version and tree.kind not in ("release", "installed"):
        parts.append(f"version {tree.version}")
    if tree.dirty_files:
        parts.append(f"{_files(tree.dirty_files)} changed since the commit")
    elif tree.dirty:
        parts.append("changes since the commit, none in its .py files")
    return ", ".join(parts)


def _files(count: int) -> str:
    return f"{count} .py file{'' if count == 1 else 's'}"


def payload(tree: TreeIdentity | None) -> dict[str, Any] | None:
    """The JSON ``"tree"`` field: every part of the identity, null where unknown."""
    return as_dict(tree) if tree is not None else None


def version_control(tree: TreeIdentity | None) -> list[dict[str, Any]]:
    """SARIF 2.1.0 ``versionControlProvenance`` of a run on a checkout (none for a tree without a commit)."""
    if tree is None or tree.commit is None:
        return []
    found: dict[str, Any] = {"repositoryUri": Path(tree.root).as_uri(), "revisionId": tree.commit}
    details = {"describe": tree.describe, "version": tree.version, "dirty": tree.dirty, "dirtyFiles": tree.dirty_files}
    found["properties"] = {name: value for name, value in details.items() if value is not None}
    return [found]


def order_line(order: TreeOrder | None, old: str, new: str) -> str:
    """One line when NEW is older than OLD ("" otherwise): a comparison that runs backwards in time."""
    if order is None or not order.new_is_older:
        return ""
    if order.by == "ancestry":
        why = f"its commit {order.new[:SHORT]} is an ancestor of {order.old[:SHORT]}"
    else:
        why = f"version {order.new} is before {order.old}"
    return f"note: NEW ({new}) is older than OLD ({old}): {why}; what is 'added' and 'removed' runs backwards in time"


def order_payload(order: TreeOrder | None) -> dict[str, Any] | None:
    """The JSON ``"order"`` field: whether NEW is older than OLD and what told (null when nothing did)."""
    if order is None:
        return None
    return {"new_is_older": order.new_is_older, "by": order.by, "old": order.old, "new": order.new}
