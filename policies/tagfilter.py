"""Hindsight's tag filters, exactly (``hindsight_api/engine/search/tags.py``, 1.1.0).

``tags`` + ``tags_match``:

* ``any``: the memory has one of the tags — or has no tags at all;
* ``all``: the memory has every tag — or has no tags at all;
* ``any_strict`` / ``all_strict``: the same, untagged memories excluded;
* ``exact``: the memory's tag set equals the given set (empty or absent: only untagged memories).

In every mode but ``exact``, empty or absent ``tags`` means no filter. ``tag_groups`` is a list of
groups AND-ed together; a group is a leaf ``{"tags": [...], "match": mode}`` (default
``any_strict``) or ``{"and": [...]}``, ``{"or": [...]}``, ``{"not": group}``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

MODES = ("any", "all", "any_strict", "all_strict", "exact")
Predicate = Callable[[frozenset[str]], bool]


class TagFilterError(ValueError):
    pass


def leaf(tags: Sequence[str] | None, mode: str) -> Predicate | None:
    """The predicate of one ``tags``/``tags_match`` pair, or None when it filters nothing."""
    if mode not in MODES:
        raise TagFilterError(f"tags_match must be one of {', '.join(MODES)}, got {mode!r}")
    wanted = frozenset(tags or ())
    if mode == "exact":
        return lambda have: have == wanted
    if not wanted:
        return None
    if mode == "any":
        return lambda have: not have or bool(have & wanted)
    if mode == "all":
        return lambda have: not have or wanted <= have
    if mode == "any_strict":
        return lambda have: bool(have & wanted)
    return lambda have: bool(have) and wanted <= have


def _group(node: Any, where: str) -> Predicate:
    if not isinstance(node, dict):
        raise TagFilterError(f"{where}: a tag group is an object ({{tags, match}}, and, or, not)")
    if "tags" in node:
        tags = node["tags"]
        if not isinstance(tags, list) or not all(isinstance(t, str) for t in tags):
            raise TagFilterError(f"{where}.tags must be a list of strings")
        pred = leaf(tags, node.get("match", "any_strict"))
        return pred if pred is not None else (lambda have: True)
    if "and" in node or "or" in node:
        key = "and" if "and" in node else "or"
        children = node[key]
        if not isinstance(children, list):
            raise TagFilterError(f"{where}.{key} must be a list of groups")
        preds = [_group(c, f"{where}.{key}[{i}]") for i, c in enumerate(children)]
        if key == "and":
            return lambda have: all(p(have) for p in preds)
        return lambda have: any(p(have) for p in preds)
    if "not" in node:
        inner = _group(node["not"], f"{where}.not")
        return lambda have: not inner(have)
    raise TagFilterError(f"{where}: expected tags, and, or or not")


def build(tags: Sequence[str] | None, mode: str, tag_groups: Sequence[Any] | None) -> Predicate | None:
    """One predicate for a request's tag filters (None: no filter)."""
    preds: list[Predicate] = []
    first = leaf(tags, mode)
    if first is not None:
        preds.append(first)
    for i, group in enumerate(tag_groups or ()):
        preds.append(_group(group, f"tag_groups[{i}]"))
    if not preds:
        return None
    if len(preds) == 1:
        return preds[0]
    return lambda have: all(p(have) for p in preds)
