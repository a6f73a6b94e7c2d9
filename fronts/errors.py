"""Error answers the fronts share: a governance service's refusal, a backend's failure as the client
sees it, and problem details (RFC 9457) for memwarden's own refusals."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from starlette.types import Scope, Send

from memwarden.backends.base import BackendError, BackendRejected
from memwarden.fronts.middleware import request_id_of
from memwarden.governance.errors import ServiceError
from memwarden.governance.refusals import SecretInFields, refuse_secrets
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import FieldSecret, Loc, field_secrets
from memwarden.wire.asgi import note_backend_status, send_json

PROBLEM = "https://memwarden.dev/problems/"


async def send_service_error(send: Send, exc: ServiceError) -> None:
    """A governance service's refusal in the ``{"detail": …}`` dialect (Hindsight's, memwarden's
    own API): its status, and ``Retry-After`` when the same request can succeed later."""
    headers = [] if exc.retry_after is None else [(b"retry-after", str(exc.retry_after).encode())]
    await send_json(send, exc.status, {"detail": exc.detail}, headers=headers)


async def answer(send: Send, work: Awaitable[dict[str, Any]]) -> None:
    """Answer ``work``'s result with 200, or its governance refusal (:func:`send_service_error`)."""
    try:
        body = await work
    except ServiceError as exc:
        await send_service_error(send, exc)
        return
    await send_json(send, 200, body)


async def refused_for_secrets(
    state: AppState,
    scope: Scope,
    send: Send,
    payload: Any,
    *,
    skip: Callable[[Loc], bool] = lambda loc: False,
    found: Sequence[FieldSecret] | None = None,
    audit: bool = True,
) -> bool:
    """Answer ``422`` (Hindsight's validation shape, each field named, no value echoed) when any field
    of ``payload`` holds what looks like a secret (or ``found`` names some), the refusal audited by
    :func:`memwarden.governance.refusals.refuse_secrets`; whether it did. For the bodies memwarden
    passes on without judging them item by item: the backend would store, log or send them on.
    ``audit=False`` for a dry run (it writes nothing)."""
    if found is None:
        found = field_secrets(payload, skip=skip)
    if not found:
        return False
    info = scope.get("state", {})
    bank = scope.get("path_params", {}).get("bank_id") or info.get("bank_id")  # the pass-through's too
    try:
        await refuse_secrets(
            state.ledger, bank, found, route=info.get("route", "api"), request_id=request_id_of(scope), audit=audit
        )
    except SecretInFields as exc:
        await send_json(send, 422, {"detail": [f.detail() for f in exc.found]})
    return True


async def problem(
    send: Send,
    status: int,
    kind: str,
    title: str,
    detail: str,
    *,
    headers: list[tuple[bytes, bytes]] | None = None,
    **extra: Any,
) -> None:
    """An RFC 9457 problem body; ``detail`` keeps Hindsight clients' error display working."""
    body = {"type": PROBLEM + kind, "title": title, "status": status, "detail": detail, **extra}
    await send_json(send, status, body, headers=headers or [], content_type=b"application/problem+json")


async def backend_failed(send: Send, scope: Scope, exc: BackendError, what: str | None = None) -> None:
    """A 4xx of the backend is the client's answer, as sent; anything else is 502 saying what failed."""
    if isinstance(exc, BackendRejected):
        note_backend_status(scope, exc.status)
        body = exc.body if isinstance(exc.body, dict) else {"detail": exc.body}
        await send_json(send, exc.status, body)
        return
    note_backend_status(scope, "unreachable")
    await send_json(send, 502, {"detail": f"Backend unavailable{f' while {what}' if what else ''}: {exc}"})
