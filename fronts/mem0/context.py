"""What every Mem0 route shares: the bank a request works in, its body, and its errors in the
dialect's shape.

The bank is ``[mem0] bank`` with ``{key}`` replaced by the presented key's id (a bank per key);
Mem0's "project". A memory, event or entity of another bank is not found there: 404, nothing said
about it.

Errors: the platform answers ``{"error": message}`` (400, 404, 409, 413, 415, 502); the open-source
server, FastAPI's ``{"detail": message}`` — and for a body its model refuses, 422 with FastAPI's
list of errors.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from starlette.types import Receive, Scope, Send

from memwarden.fronts import auth
from memwarden.fronts.mem0.models import Mem0Error
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import Q, QueryProblem, query_params, read_query
from memwarden.governance.state import AppState
from memwarden.policies.ids import bank_id_problem
from memwarden.policies.keys import Level, split_token
from memwarden.wire.asgi import (
    BodyError,
    ClientGone,
    content_type_of,
    is_json_type,
    not_json_detail,
    parse_json_async,
    read_body,
    send_json,
)

ANONYMOUS = "anonymous"


def bank_for(state: AppState, scope: Scope) -> str:
    """The bank of this request's key (before or after the key is checked: its id is in its token)."""
    template = state.settings.mem0.bank
    if "{key}" not in template:
        return template
    key = auth.key_of(scope)
    if key is not None:
        return template.replace("{key}", key.id)
    token, _ = auth.presented(scope)
    split = split_token(token) if token else None
    return template.replace("{key}", split[0] if split else ANONYMOUS)


def need(level: Level) -> auth.Rule:
    """A route of the Mem0 front needs ``level`` on the request's bank."""

    def rule(scope: Scope, bank: str | None) -> auth.Need:
        return level, bank_for(scope["app"].state.warden, scope)

    return rule


@dataclass
class Call:
    """One request to the Mem0 front."""

    state: AppState
    scope: Scope
    bank: str
    request_id: str
    oss: bool  # the open-source server's dialect (else the platform's)

    @property
    def invalid(self) -> int:
        """The status of a body its model refuses: the server's 422, the platform's 400."""
        return 422 if self.oss else 400

    def read(self, model: type[Q]) -> Q:
        """The query string as ``model`` declares it (``fronts/mem0/queries.py``). Raises
        :class:`Mem0Error`: the server's 422 in FastAPI's shape, the platform's 400."""
        try:
            return read_query(query_params(self.scope), model)
        except QueryProblem as exc:
            raise Mem0Error(self.invalid, str(exc), exc.detail()["detail"] if self.oss else None) from None

    def path(self, name: str) -> str:
        return str(self.scope["path_params"][name])


def call_of(state: AppState, scope: Scope, *, oss: bool) -> Call:
    bank = bank_for(state, scope)
    problem = bank_id_problem(bank, None)
    if problem is not None:
        raise Mem0Error(400, f"the Mem0 bank '{bank}' is not a valid bank id: {problem}")
    scope.setdefault("state", {})["bank_id"] = bank
    return Call(state, scope, bank, request_id_of(scope), oss)


async def body_of(call: Call, receive: Receive, *, empty: Any = None) -> Any:
    """The request's JSON (``empty`` for no body). Raises :class:`Mem0Error` for malformed JSON and
    :class:`ClientGone`."""
    raw = await read_body(receive)
    content_type = content_type_of(call.scope)
    if raw and not is_json_type(content_type):
        # A page's "simple" cross-site POST (text/plain, a form) is never read as JSON, as on the
        # other fronts: the platform's Django REST framework answers 415, the server's FastAPI 422.
        if call.oss:
            raise Mem0Error(422, "the body was not sent as JSON", not_json_detail(b""))
        raise Mem0Error(415, f'Unsupported media type "{(content_type or "")[:100]}" in request.')
    if not raw.strip():
        if empty is None:
            raise Mem0Error(call.invalid, "a JSON body is required")
        return empty
    try:
        return await parse_json_async(raw)
    except BodyError as exc:
        detail = exc.detail if isinstance(exc.detail, list) else None
        if exc.status == 413:
            raise Mem0Error(413, str(exc), detail) from None
        raise Mem0Error(call.invalid, f"the body is not valid JSON: {exc}", detail) from None


async def send_error(
    send: Send, error: Mem0Error, *, oss: bool, headers: list[tuple[bytes, bytes]] | None = None
) -> None:
    if oss:
        body: dict[str, Any] = {"detail": error.detail if error.status == 422 and error.detail else error.message}
    else:
        body = {"error": error.message}
        if error.status == 401:
            body = {"detail": error.message}
    await send_json(send, error.status, body, headers=headers or [])


__all__ = ["Call", "ClientGone", "body_of", "call_of", "need", "send_error"]
