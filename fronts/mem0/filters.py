"""Mem0's memory filters, read exactly: parsed into a tree, checked against limits, evaluated on a
memory as the ledger holds it, and narrowed to a tag filter the backend can apply first.

The grammar (the platform's v2/v3 filters, and the open-source server's): the root is an object
whose keys are ANDed — ``AND`` / ``OR`` (a list of filter objects), ``NOT`` (one, or a list
ANDed), or a field. A field's value is a bare value (``eq``), ``"*"`` (the field is set), or an
object of operators, ANDed. Fields and the operators each takes:

=================================  ==============================================================
``user_id agent_id app_id run_id``  eq ne in nin ``*``
``created_at updated_at``           eq ne gt gte lt lte in (ISO 8601 date or date-time)
``timestamp``                       the same, on the memory's event time
``text`` / ``keywords``             eq contains icontains
``categories``                      eq in contains (memwarden's topic label is the category)
``memory_ids``                      eq in
``metadata``                        an object of metadata keys, each a field taking every operator
=================================  ==============================================================

For the open-source dialect a key that is no field is a metadata key (``{"user_id": "u",
"source": "chat"}``). Anything else — an unknown field or operator, a value of the wrong type, a
tree deeper than :data:`MAX_DEPTH` or with more than :data:`MAX_LEAVES` conditions — raises
:class:`FilterError`: a filter that cannot be read exactly is refused, never widened.

memwarden's topic and stage labels are not fields: a filter never sees them unless it names
``categories``. Pure functions.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from typing import Any

MAX_DEPTH = 8
MAX_LEAVES = 64
MAX_IN = 256  # values in one in / nin list
ENTITIES = ("user_id", "agent_id", "app_id", "run_id")
TIMES = ("created_at", "updated_at", "timestamp")
ALL_OPS = frozenset({"eq", "ne", "in", "nin", "gt", "gte", "lt", "lte", "contains", "icontains", "*"})
OPS: dict[str, frozenset[str]] = {
    **{e: frozenset({"eq", "ne", "in", "nin", "*"}) for e in ENTITIES},
    **{t: frozenset({"eq", "ne", "gt", "gte", "lt", "lte", "in", "*"}) for t in TIMES},
    "text": frozenset({"eq", "contains", "icontains"}),
    "keywords": frozenset({"contains", "icontains"}),
    "categories": frozenset({"eq", "in", "contains", "*"}),
    "memory_ids": frozenset({"eq", "in"}),
    "metadata": ALL_OPS,
}
Scalar = str | int | float | bool | None


class FilterError(ValueError):
    """A filter that cannot be read exactly (the message says why, for a 400)."""


@dataclass(frozen=True)
class Leaf:
    field: str  # a field of OPS, or "metadata" with ``key``
    op: str
    value: Any
    key: str | None = None  # the metadata key


@dataclass(frozen=True)
class Node:
    kind: str  # and, or, not
    children: tuple[Node | Leaf, ...]


Filter = Node | Leaf


@dataclass(frozen=True)
class Record:
    """A memory as a filter sees it."""

    id: str
    text: str
    entities: Mapping[str, str]  # user_id → value …
    metadata: Mapping[str, Any]
    categories: Sequence[str]
    created_at: str
    updated_at: str
    timestamp: str | None = None
    extra: Mapping[str, Any] = field(default_factory=dict)


def parse(filters: Any, *, oss: bool = False) -> Node:
    """The tree of ``filters`` (an object). Raises :class:`FilterError`."""
    if not isinstance(filters, Mapping):
        raise FilterError("filters must be an object")
    counter = [0]
    return _object(filters, 1, counter, oss)


def _object(obj: Mapping[str, Any], depth: int, counter: list[int], oss: bool) -> Node:
    if depth > MAX_DEPTH:
        raise FilterError(f"filters nest more than {MAX_DEPTH} levels deep")
    parts: list[Filter] = []
    for key, value in obj.items():
        if key in ("AND", "OR"):
            if not isinstance(value, list) or not value:
                raise FilterError(f"{key} takes a non-empty list of filter objects")
            kids = [_child(v, depth + 1, counter, oss, key) for v in value]
            parts.append(Node(key.lower(), tuple(kids)))
        elif key == "NOT":
            items = value if isinstance(value, list) else [value]
            if not items:
                raise FilterError("NOT takes a filter object or a non-empty list of them")
            kids = [_child(v, depth + 1, counter, oss, key) for v in items]
            parts.append(Node("not", (Node("and", tuple(kids)),)))
        elif key == "metadata":
            if not isinstance(value, Mapping) or not value:
                raise FilterError("metadata takes an object of metadata keys")
            for mkey, mvalue in value.items():
                parts += _leaves("metadata", mvalue, counter, mkey)
        elif key in OPS:
            parts += _leaves(key, value, counter)
        elif oss and key not in ("filters",):
            parts += _leaves("metadata", value, counter, key)
        else:
            raise FilterError(f"unknown filter field {key!r}; fields: AND, OR, NOT, {', '.join(OPS)}")
    return Node("and", tuple(parts))


def _child(value: Any, depth: int, counter: list[int], oss: bool, where: str) -> Node:
    if not isinstance(value, Mapping) or not value:
        raise FilterError(f"every entry of {where} must be a non-empty filter object")
    return _object(value, depth, counter, oss)


def _count(counter: list[int]) -> None:
    counter[0] += 1
    if counter[0] > MAX_LEAVES:
        raise FilterError(f"filters hold more than {MAX_LEAVES} conditions")


def _leaves(name: str, value: Any, counter: list[int], key: str | None = None) -> list[Filter]:
    where = f"metadata.{key}" if key is not None else name
    allowed = OPS[name]
    if isinstance(value, Mapping):
        if not value:
            raise FilterError(f"{where}: an empty operator object")
        out: list[Filter] = []
        for op, operand in value.items():
            if op not in ALL_OPS:
                raise FilterError(f"{where}: unknown operator {op!r}; operators: {', '.join(sorted(ALL_OPS))}")
            if op not in allowed:
                raise FilterError(f"{where}: operator {op!r} is not supported here ({', '.join(sorted(allowed))})")
            _count(counter)
            out.append(Leaf(name, op, _operand(where, name, op, operand), key))
        return out
    _count(counter)
    if value == "*":
        if "*" not in allowed:
            raise FilterError(f"{where}: '*' is not supported here")
        return [Leaf(name, "*", None, key)]
    if "eq" not in allowed:
        raise FilterError(f"{where} takes an operator object ({', '.join(sorted(allowed))})")
    return [Leaf(name, "eq", _operand(where, name, "eq", value), key)]


def _operand(where: str, name: str, op: str, value: Any) -> Any:
    if op == "*":
        if value not in ("*", True, None):
            raise FilterError(f"{where}: '*' takes '*' or true")
        return None
    if op in ("in", "nin"):
        if not isinstance(value, list) or not value or len(value) > MAX_IN:
            raise FilterError(f"{where}: {op} takes a list of 1 to {MAX_IN} values")
        return [_scalar(where, name, op, v) for v in value]
    return _scalar(where, name, op, value)


def _scalar(where: str, name: str, op: str, value: Any) -> Any:
    if name in ENTITIES or name in ("memory_ids", "text", "keywords", "categories"):
        if not isinstance(value, str):
            raise FilterError(f"{where}: {op} takes a string, got {type(value).__name__}")
        return value
    if name in TIMES:
        return _instant(where, value)
    if isinstance(value, (dict, list)):  # metadata: scalars only (a nested key cannot be named)
        raise FilterError(f"{where}: {op} takes a string, number, boolean or null")
    if op in ("gt", "gte", "lt", "lte") and (isinstance(value, bool) or not isinstance(value, (int, float, str))):
        raise FilterError(f"{where}: {op} takes a number or a string")
    if op in ("contains", "icontains") and not isinstance(value, str):
        raise FilterError(f"{where}: {op} takes a string")
    return value


_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def _instant(where: str, value: Any) -> datetime:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (OverflowError, OSError, ValueError):  # past year 9999 or before year 1, NaN
            raise FilterError(f"{where}: {value!r} epoch seconds is out of range") from None
    if isinstance(value, str):
        try:
            if _DATE.match(value):
                return datetime.combine(date.fromisoformat(value), datetime.min.time(), UTC)
            parsed = datetime.fromisoformat(value.replace("Z", "+00:00"))
            return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)
        except ValueError:
            pass
    raise FilterError(f"{where}: expected an ISO 8601 date or date-time (or epoch seconds), got {value!r}")


# -- evaluation -------------------------------------------------------------------------------------


def matches(node: Filter, record: Record) -> bool:
    if isinstance(node, Node):
        if node.kind == "and":
            return all(matches(c, record) for c in node.children)
        if node.kind == "or":
            return any(matches(c, record) for c in node.children)
        return not all(matches(c, record) for c in node.children)
    return _leaf(node, record)


def _values(leaf: Leaf, record: Record) -> tuple[bool, Any]:
    """(whether the field is set, its value)."""
    if leaf.field in ENTITIES:
        value = record.entities.get(leaf.field)
        return value is not None, value
    if leaf.field in TIMES:
        raw = record.timestamp if leaf.field == "timestamp" else getattr(record, leaf.field)
        if not raw:
            return False, None
        try:
            return True, _instant(leaf.field, raw)
        except FilterError:
            return False, None
    if leaf.field in ("text", "keywords"):
        return True, record.text
    if leaf.field == "categories":
        return bool(record.categories), list(record.categories)
    if leaf.field == "memory_ids":
        return True, record.id
    assert leaf.key is not None
    return leaf.key in record.metadata, record.metadata.get(leaf.key)


def _leaf(leaf: Leaf, record: Record) -> bool:
    present, value = _values(leaf, record)
    op, want = leaf.op, leaf.value
    if op == "*":
        return present and value is not None
    if leaf.field == "categories":
        if op == "in":
            return any(c in want for c in value or [])
        return want in (value or [])  # eq, contains: the list holds it
    if op == "ne":
        return not present or not _equal(value, want)
    if op == "nin":
        return not present or not any(_equal(value, w) for w in want)
    if not present:
        return False
    if op == "eq":
        return _equal(value, want)
    if op == "in":
        return any(_equal(value, w) for w in want)
    if op == "contains":
        return (isinstance(value, str) and want in value) or (isinstance(value, list) and want in value)
    if op == "icontains":
        return isinstance(value, str) and want.casefold() in value.casefold()
    return _ordered(value, want, op)


def _equal(value: Any, want: Any) -> bool:
    if isinstance(value, bool) or isinstance(want, bool):
        return type(value) is type(want) and value == want
    return bool(value == want)


def _ordered(value: Any, want: Any, op: str) -> bool:
    comparable = (
        (isinstance(value, datetime) and isinstance(want, datetime))
        or (isinstance(value, str) and isinstance(want, str))
        or all(isinstance(v, (int, float)) and not isinstance(v, bool) for v in (value, want))
    )
    if not comparable:
        return False
    if op == "gt":
        return bool(value > want)
    if op == "gte":
        return bool(value >= want)
    if op == "lt":
        return bool(value < want)
    return bool(value <= want)


# -- the backend's part -----------------------------------------------------------------------------

ENTITY_TAG = {"user_id": "user", "agent_id": "agent", "app_id": "app", "run_id": "run"}


def tag_sets(node: Node, separator: str = ":") -> list[list[str]]:
    """Tag conditions every memory ``node`` selects satisfies — an AND of ORs over the entity tags
    (``user:alice``), from the entity ``eq``/``in`` conditions at the root's AND. Applied first, by the
    ledger's query or the backend's tag filter; the whole filter is then evaluated exactly."""
    out: list[list[str]] = []
    stack: list[Filter] = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Node):
            if current.kind == "and":
                stack.extend(current.children)
            continue
        if current.field in ENTITY_TAG and current.op in ("eq", "in"):
            values = current.value if current.op == "in" else [current.value]
            name = ENTITY_TAG[current.field]
            out.append([f"{name}{sep}{v}" for v in values for sep in (separator, "=" if separator == ":" else ":")])
    return out


def names_entity(node: Filter) -> bool:
    """Whether the filter names an entity id anywhere."""
    if isinstance(node, Leaf):
        return node.field in ENTITIES
    return any(names_entity(c) for c in node.children)
