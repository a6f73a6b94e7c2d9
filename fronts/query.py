"""A request's query string, read one way everywhere: by the key check that decides what a request
may do, by the audit, and by the handler that does it.

Two readings of one query string were an escalation (issue #33): the key check read
``?target_bank_id=bankA&target_bank_id=`` with ``parse_qsl`` (blank values dropped: bank A, which
the key may administer), the handler with Starlette (the last value: blank, so the archive's own
bank C). Now:

* every reader parses with :func:`query_params` — Starlette's own parser (``latin-1`` bytes,
  ``parse_qsl`` with blank values kept), which the Starlette handlers read too;
* a parameter that is not a list (:data:`LIST_PARAMETERS`) given more than once is refused by the
  guard (``fronts/guard.py``) before any route runs — first, last or blank, every reading then
  agrees; :func:`problem` says why;
* a count (``limit``, ``offset``, ``min_count``) past :data:`MAX_COUNT` is refused there too, in
  FastAPI's validation shape (:func:`count_problem`): Hindsight takes any integer and PostgreSQL
  then fails (``?limit=99999999999999999999999`` was Hindsight's 500, relayed with PostgreSQL's
  text);
* an integer parameter of memwarden's own routes (a page's ``limit`` and ``offset``, ``days``, a
  Mem0 ``top_k``) is read by :func:`bounded_int`, one way (its copies each had their own bugs).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any, overload

from starlette.datastructures import QueryParams
from starlette.types import Scope

# Parameters that may repeat: Hindsight's array parameters (``tags``, ``document_id``), and
# memwarden's ledger listing's (``tag``, ``status``).
LIST_PARAMETERS = frozenset({"tags", "document_id", "tag", "status"})
MAX_PARAMETERS = 1000  # more is not a client's request
COUNT_PARAMETERS = ("limit", "offset", "min_count")
MAX_COUNT = 2**31 - 1  # PostgreSQL's integer


def query_params(scope: Scope) -> QueryParams:
    """The query's parameters as every reader sees them (blank values kept; a list parameter's
    values in order: ``getlist``)."""
    return QueryParams(scope.get("query_string", b""))


def query_pairs(scope: Scope) -> list[tuple[str, str]]:
    """The query's ``(name, value)`` pairs in order, blank values kept."""
    return query_params(scope).multi_items()


def problem(query_string: bytes) -> str | None:
    """Why a query string is refused (None: it is not): a parameter that takes one value given more
    than once, or more than :data:`MAX_PARAMETERS` parameters."""
    if not query_string:
        return None
    names = Counter(name for name, _ in QueryParams(query_string).multi_items())
    if sum(names.values()) > MAX_PARAMETERS:
        return f"The query has more than {MAX_PARAMETERS} parameters"
    repeated = sorted(name for name, n in names.items() if n > 1 and name not in LIST_PARAMETERS)
    if repeated:
        shown = repeated[0][:100]
        return f"Query parameter {shown!r} is given {names[repeated[0]]} times; it takes one value"
    return None


def count_problem(query_string: bytes) -> dict[str, Any] | None:
    """The 422 body for a count past :data:`MAX_COUNT` (or below ``-MAX_COUNT``), None when there is
    none. A value that is no integer at all is left to the route (Hindsight's own 422)."""
    if not query_string or not any(name.encode() in query_string for name in COUNT_PARAMETERS):
        return None
    for name, value in QueryParams(query_string).multi_items():
        if name in COUNT_PARAMETERS and len(value) > 9:
            text = value.strip()
            digits = text[1:] if text[:1] in "+-" else text
            if digits.isascii() and digits.isdigit() and abs(int(text)) > MAX_COUNT:
                bound = "less" if not text.startswith("-") else "greater"
                limit = MAX_COUNT if bound == "less" else -MAX_COUNT
                error = {
                    "type": f"{bound}_than_equal",
                    "loc": ["query", name],
                    "msg": f"Input should be {bound} than or equal to {limit}",
                    "input": value[:40],
                    "ctx": {"le" if bound == "less" else "ge": limit},
                }
                return {"detail": [error]}
    return None


MAX_OFFSET = 10**18 - 1  # an offset SQLite's integer holds


class QueryProblem(ValueError):
    """A query parameter that is not valid: its ``name``, why (``str(exc)``), the value sent."""

    def __init__(self, name: str, msg: str, value: str) -> None:
        super().__init__(msg)
        self.name, self.value = name, value

    def detail(self) -> dict[str, Any]:
        """The 422 body, in FastAPI's validation shape (as the rest of memwarden's API answers)."""
        error = {"type": "value_error", "loc": ["query", self.name], "msg": str(self), "input": self.value[:100]}
        return {"detail": [error]}


@overload
def bounded_int(query: Mapping[str, str], name: str, default: int, low: int, high: int) -> int: ...


@overload
def bounded_int(query: Mapping[str, str], name: str, default: None, low: int, high: int) -> int | None: ...


def bounded_int(query: Mapping[str, str], name: str, default: int | None, low: int, high: int) -> int | None:
    """The integer parameter ``name`` of ``query``, from ``low`` to ``high`` (``default`` when it is
    absent). ASCII digits only — ``str.isdigit()`` also says yes to "²", which ``int()`` refuses —
    and, leading zeros aside, no more of them than ``high`` has, so a huge value costs nothing.
    Raises :class:`QueryProblem`."""
    raw = query.get(name)
    if raw is None:
        return default
    digits = raw.lstrip("0") or "0"
    if not (raw.isascii() and raw.isdigit()) or len(digits) > len(str(high)) or not low <= int(digits) <= high:
        raise QueryProblem(name, f"{name} must be an integer from {low} to {high}", raw)
    return int(raw)
