"""memwarden's API keys (admin on every bank):

* ``GET    /warden/v1/keys`` — every key, revoked ones too; never a secret;
* ``POST   /warden/v1/keys`` ``{"name", "read": [patterns], "write": [...], "admin": [...],
  "expires_in_days"?}`` — ``201`` with the key and its ``token``, shown this once;
* ``GET    /warden/v1/keys/{key_id}`` — one key;
* ``DELETE /warden/v1/keys/{key_id}`` — revoke it, at once (``?reason=`` is audited).
"""

from __future__ import annotations

from typing import Any

from starlette.types import Receive, Scope, Send

from memwarden.fronts.admin.queries import RevokeQuery
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.errors import Refused
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import masked
from memwarden.wire.asgi import read_object, send_json

FIELDS = frozenset({"name", "read", "write", "admin", "expires_in_days"})


def _patterns(payload: dict[str, Any], level: str) -> list[str]:
    value = payload.get(level, [])
    if not isinstance(value, list) or not all(isinstance(p, str) for p in value):
        raise Refused(422, f"{level}: a list of bank patterns (strings) is expected")
    return value


async def create_key(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    payload = await read_object(scope, receive, send)
    if payload is None:
        return
    try:
        unknown = sorted(set(payload) - FIELDS)
        if unknown:
            raise Refused(422, f"unknown field {unknown[0]!r}; expected {', '.join(sorted(FIELDS))}")
        days = payload.get("expires_in_days")
        if days is not None and (isinstance(days, bool) or not isinstance(days, int | float)):
            raise Refused(422, "expires_in_days: a number of days is expected")
        name = payload.get("name")
        if not isinstance(name, str):
            raise Refused(422, "name: a string is expected (what the key is for)")
        created = await state.keys.create(
            name=name,
            read=_patterns(payload, "read"),
            write=_patterns(payload, "write"),
            admin=_patterns(payload, "admin"),
            expires_in_days=days,
        )
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(send, 201, {**created.key.public(), "token": created.token})


async def list_keys(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    keys = await state.keys.listing()
    await send_json(send, 200, {"items": [k.public() for k in keys], "total": len(keys)})


async def show_key(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    key_id: str = scope["path_params"]["key_id"]
    found = next((k for k in await state.keys.listing() if k.id == key_id), None)
    if found is None:
        await send_json(send, 404, {"detail": f"no key {key_id[:100]!r}"})
        return
    await send_json(send, 200, found.public())


async def revoke_key(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    key_id: str = scope["path_params"]["key_id"]
    try:
        given = read_query(query_params(scope), RevokeQuery).reason
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    reason = masked(given) if given is not None else None
    try:
        revoked = await state.keys.revoke(key_id, reason=reason)
    except Refused as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    await send_json(send, 200, revoked.public())
