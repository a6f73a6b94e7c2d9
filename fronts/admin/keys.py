"""memwarden's API keys (admin on every bank):

* ``GET    /warden/v1/keys`` — every key, revoked ones too; never a secret;
* ``POST   /warden/v1/keys`` ``{"name", "read": [patterns], "write": [...], "admin": [...],
  "expires_in_days"?}`` — ``201`` with the key and its ``token``, shown this once;
* ``GET    /warden/v1/keys/{key_id}`` — one key;
* ``DELETE /warden/v1/keys/{key_id}`` — revoke it, at once (``?reason=`` is audited).
"""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.fronts.admin.bodies import KeyBody
from memwarden.fronts.admin.queries import RevokeQuery
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.errors import Refused
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import masked
from memwarden.wire.asgi import read_model, send_json


async def create_key(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    body = await read_model(scope, receive, send, KeyBody)  # its shape; the ring checks the rest
    if body is None:
        return
    try:
        created = await state.keys.create(
            name=body.name, read=body.read, write=body.write, admin=body.admin, expires_in_days=body.expires_in_days
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
