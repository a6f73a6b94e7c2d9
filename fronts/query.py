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
  Mem0 ``top_k``) is read by :func:`bounded_int`, one way (its copies each had their own bugs);
* a route of memwarden's own API declares its parameters once, as a :class:`QueryModel`: the
  handler reads the query with :func:`read_query`, the OpenAPI document lists them with
  :func:`openapi_parameters` — the two cannot disagree.
"""

from __future__ import annotations

import types
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, TypeVar, Union, get_args, get_origin, overload

import annotated_types
from pydantic import BaseModel, ConfigDict
from pydantic.fields import FieldInfo
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


# -- declared parameters --------------------------------------------------------------------------


@dataclass(frozen=True)
class Choices:
    """Field metadata: the values a string parameter (or each value of a list one) may take."""

    values: Sequence[str]


@dataclass(frozen=True)
class CommaSeparated:
    """Field metadata: a list parameter whose values may also come comma-separated (``a,b``)."""


class QueryModel(BaseModel):
    """A route's query parameters, declared with their types, bounds, choices, defaults and
    descriptions. Fields are ``int`` with ``ge``/``le`` (read by :func:`bounded_int`; one whose
    default is None may be left blank), ``bool``
    (``true``/``false``, ``1``/``0``, ``yes``/``no``; anything else refused — a mistyped
    ``preview`` is no order to act), ``str | None`` (a blank value is no value — unless it has a
    ``min_length``, which refuses it; ``max_length`` checked), ``str | None`` with :class:`Choices`, or
    ``tuple[str, ...]`` (repeated, with :class:`CommaSeparated` also comma-separated; blanks dropped;
    with :class:`Choices` each value checked)."""

    model_config = ConfigDict(frozen=True, extra="ignore")


Q = TypeVar("Q", bound=QueryModel)


def _marker(info: FieldInfo, kind: type[Any]) -> Any:
    return next((m for m in info.metadata if isinstance(m, kind)), None)


def _bound(info: FieldInfo, kind: type[Any], attr: str) -> Any:
    found = _marker(info, kind)
    return getattr(found, attr) if found is not None else None


def _is_list(info: FieldInfo) -> bool:
    return get_origin(info.annotation) is tuple


def _is_int(info: FieldInfo) -> bool:
    annotation = info.annotation
    if get_origin(annotation) in (Union, types.UnionType):
        annotation = next(a for a in get_args(annotation) if a is not type(None))
    return annotation is int


def _int_bounds(name: str, info: FieldInfo) -> tuple[int, int]:
    low, high = _bound(info, annotated_types.Ge, "ge"), _bound(info, annotated_types.Le, "le")
    if low is None or high is None:
        raise TypeError(f"the integer parameter {name!r} is declared without ge= and le=")
    return low, high


TRUE, FALSE = ("true", "1", "yes"), ("false", "0", "no")


def _checked(name: str, info: FieldInfo, value: str) -> str:
    choices = _marker(info, Choices)
    if choices is not None and value not in choices.values:
        raise QueryProblem(name, f"{name} must be one of {', '.join(choices.values)}", value)
    longest = _bound(info, annotated_types.MaxLen, "max_length")
    if longest is not None and len(value) > longest:
        raise QueryProblem(name, f"{name} must be at most {longest} characters", value)
    shortest = _bound(info, annotated_types.MinLen, "min_length")
    if shortest is not None and len(value) < shortest:
        raise QueryProblem(name, f"{name} must be at least {shortest} characters", value)
    return value


def read_query(query: QueryParams, model: type[Q]) -> Q:
    """``query`` read as ``model`` declares it; absent parameters take their defaults. Raises
    :class:`QueryProblem` naming the first parameter that is not valid."""
    values: dict[str, Any] = {}
    for name, info in model.model_fields.items():
        if _is_list(info):
            given = query.getlist(name)
            if not given:
                continue
            if _marker(info, CommaSeparated) is not None:
                given = [part for value in given for part in value.split(",")]
            values[name] = tuple(dict.fromkeys(_checked(name, info, v) for v in given if v))
            continue
        raw = query.get(name)
        if raw is None:
            continue
        if info.annotation is bool:
            if raw.lower() not in TRUE + FALSE:
                raise QueryProblem(name, f"{name} must be true or false", raw)
            values[name] = raw.lower() in TRUE
        elif _is_int(info):
            if not raw and info.default is None:  # an optional count left blank: none given
                continue
            low, high = _int_bounds(name, info)
            values[name] = bounded_int(query, name, None, low, high)
        elif raw or _bound(info, annotated_types.MinLen, "min_length"):
            # A blank string parameter is no filter — but where a value has a least length, a blank
            # one is refused (an entity id left blank does not name every entity).
            values[name] = _checked(name, info, raw)
    return model.model_validate(values)


def openapi_parameters(model: type[QueryModel]) -> list[dict[str, Any]]:
    """``model``'s parameters in OpenAPI's form, as :func:`read_query` reads them."""
    out = []
    for name, info in model.model_fields.items():
        choices = _marker(info, Choices)
        one: dict[str, Any] = {"type": "string"} if choices is None else {"enum": list(choices.values)}
        longest = _bound(info, annotated_types.MaxLen, "max_length")
        if longest is not None:
            one["maxLength"] = longest
        shortest = _bound(info, annotated_types.MinLen, "min_length")
        if shortest is not None:
            one["minLength"] = shortest
        schema: dict[str, Any]
        if _is_list(info):
            schema = {"type": "array", "items": one}
        elif info.annotation is bool:
            schema = {"type": "boolean"}
        elif _is_int(info):
            low, high = _int_bounds(name, info)
            schema = {"type": "integer", "minimum": low, "maximum": high}
        else:
            schema = one
        if info.default is not None and not info.is_required():
            schema["default"] = list(info.default) if isinstance(info.default, tuple) else info.default
        param: dict[str, Any] = {"name": name, "in": "query", "required": False, "schema": schema}
        param["description"] = info.description or ""
        if _is_list(info):
            param["explode"] = True  # repeated: ?tag=a&tag=b
        out.append(param)
    return out
