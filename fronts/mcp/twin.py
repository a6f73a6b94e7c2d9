"""A tool's HTTP twin, the parts every tool's is built of: the request (:class:`Request`), the answer
(:class:`Answer`), a refusal (:class:`Refused`: the tool's error), and the builders of the tools that
are one request (:func:`get`, :func:`acted`) — a path of the bank (:func:`bank_path`), the
arguments as a query (:func:`query_of`) or a body (:func:`given`)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import quote

Args = Mapping[str, Any]


@dataclass(frozen=True)
class Request:
    """One HTTP request to a tool's twin; ``path`` is percent-encoded."""

    method: str
    path: str
    query: Sequence[tuple[str, str]] = ()
    body: Any = None  # JSON; None: no body
    headers: Sequence[tuple[bytes, bytes]] = ()


@dataclass(frozen=True)
class Answer:
    status: int
    body: Any  # the JSON answered (None when it was not JSON)
    headers: Mapping[str, str] = field(default_factory=dict)  # lower-case names


class Refused(Exception):
    """The twin answered an error: the tool's result is a tool error with its status and detail."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        detail = answer.body.get("detail") if isinstance(answer.body, dict) else None
        self.detail: Any = detail if detail is not None else answer.body
        super().__init__(f"HTTP {answer.status}: {self.detail}")


Send = Callable[[Request], Awaitable[Answer]]
Twin = Callable[[Send, str, Args], Awaitable[Any]]


def bank_path(bank: str) -> str:
    return f"/v1/default/banks/{quote(bank, safe='')}"


def segment(value: Any) -> str:
    return quote(str(value), safe="")


def query_of(args: Args, *names: str) -> list[tuple[str, str]]:
    """The arguments ``names`` as query parameters (``"arg:param"`` where the names differ): None
    left out, a list repeated."""
    out: list[tuple[str, str]] = []
    for name in names:
        arg, _, param = name.partition(":")
        value = args.get(arg)
        if value is None:
            continue
        for one in value if isinstance(value, list) else [value]:
            out.append((param or arg, ("true" if one else "false") if isinstance(one, bool) else str(one)))
    return out


def given(args: Args, *names: str) -> dict[str, Any]:
    return {n: args[n] for n in names if args.get(n) is not None}


async def ok(send: Send, request: Request) -> Any:
    answer = await send(request)
    if answer.status >= 400:
        raise Refused(answer)
    return answer.body


def without(body: Any, *keys: str) -> Any:
    return {k: v for k, v in body.items() if k not in keys} if isinstance(body, dict) else body


def as_dict(body: Any) -> dict[str, Any]:
    """A twin's answer where a JSON object is expected: ``{}`` for anything else."""
    return dict(body) if isinstance(body, dict) else {}


def get(path: Callable[[str, Args], str], params: Sequence[str] = (), drop: Sequence[str] = ()) -> Twin:
    """A tool that is a GET of its twin: its arguments as the query, the answer less ``drop``."""

    async def twin(send: Send, bank: str, args: Args) -> Any:
        return without(await ok(send, Request("GET", path(bank, args), query_of(args, *params))), *drop)

    return twin


def in_bank(suffix: str) -> Callable[[str, Args], str]:
    return lambda bank, args: f"{bank_path(bank)}{suffix}"


def of(suffix: str, name: str, after: str = "") -> Callable[[str, Args], str]:
    return lambda bank, args: f"{bank_path(bank)}{suffix}/{segment(args[name])}{after}"


def acted(method: str, path: Callable[[str, Args], str], extra: Callable[[Args, Any], dict[str, Any]]) -> Twin:
    async def twin(send: Send, bank: str, args: Args) -> Any:
        done = await ok(send, Request(method, path(bank, args)))
        return {**as_dict(done), **extra(args, done)}

    return twin


def listed(body: Any) -> Any:
    return without(body, "limit", "offset")


def deleted(key: str) -> Callable[[Args, Any], dict[str, Any]]:
    return lambda args, done: {"status": "deleted", key: args[key]}
