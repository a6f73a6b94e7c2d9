"""``GET /v1/default/banks/{bank}/operations/{operation_id}`` for the retains memwarden queued.

A retain the backend could not take at once was answered as an accepted asynchronous retain with
the id of its outbox entry (``governance/outbox.py``). Until the outbox delivers it, memwarden
answers that id's status itself, in Hindsight's ``OperationStatusResponse``: ``pending`` while
queued (``retry_count``, ``error_message``: why it waits), ``failed`` for a dead letter (the
backend's refusal), ``cancelled`` when an operator gave it up. Once delivered, the answer is the
backend's own status of the operation the delivery started, under memwarden's id. Every other id
goes to the backend as sent.
"""

from __future__ import annotations

import json
from typing import Any
from urllib.parse import quote

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendUnavailable
from memwarden.backends.transport import BodyBrokenError
from memwarden.db import outbox as outbox_rows
from memwarden.fronts.hindsight.passthrough import forward, request_headers
from memwarden.governance.state import AppState
from memwarden.wire.asgi import send_json

STATUS_OF_STATE = {"sending": "processing", "queued": "pending", "dead": "failed", "given_up": "cancelled"}


def status_json(entry: outbox_rows.Entry, status: str | None = None) -> dict[str, Any]:
    """Hindsight's ``OperationStatusResponse`` for an outbox entry."""
    settled = entry.state in ("delivered", "dead", "given_up")
    return {
        "operation_id": entry.operation_id,
        "status": status or STATUS_OF_STATE.get(entry.state, "completed"),
        "operation_type": "retain",
        "id": entry.operation_id,
        "task_type": "retain",
        "mental_model_id": None,
        "created_at": entry.created_at,
        "updated_at": entry.updated_at,
        "completed_at": entry.settled_at if settled else None,
        "error_message": None if entry.state == "delivered" else entry.last_error,
        "retry_count": entry.attempts,
        "next_retry_at": None,
        "progress": None,
        "result_metadata": {"memwarden_outbox": entry.state, "items": entry.items},
        "details": None,
        "child_operations": None,
        "task_payload": None,
    }


async def operation_status(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    operation_id: str = scope["path_params"]["operation_id"]
    entry = None
    if state.outbox is not None:
        entry = await state.ledger.read(lambda db: outbox_rows.find(db, operation_id))
    if entry is None or entry.bank != bank:
        await forward(state.backend, scope, receive, send, retries=state.read_retries)
        return
    if entry.state != "delivered" or entry.backend_operation_id is None:
        await send_json(send, 200, status_json(entry))
        return
    headers, _ = request_headers(scope)
    headers = [(k, v) for k, v in headers if k.lower() != "accept-encoding"]
    headers.append(("accept-encoding", "identity"))
    target = f"/v1/default/banks/{_path(bank)}/operations/{_path(entry.backend_operation_id)}"
    try:
        upstream = await state.backend.send_raw("GET", target, headers, b"")
    except BackendUnavailable as exc:
        await send_json(send, 502, {"detail": f"Backend unavailable: {exc}"})
        return
    try:
        raw = b"".join([chunk async for chunk in upstream.aiter_raw()])
    except BodyBrokenError as exc:
        await send_json(send, 502, {"detail": f"Backend unavailable: its answer was cut: {exc}"})
        return
    finally:
        await upstream.aclose()
    try:
        answer = json.loads(raw)
    except ValueError:
        answer = None
    if upstream.status_code != 200 or not isinstance(answer, dict):
        await send_json(send, 200, status_json(entry, "completed"))  # delivered; the backend's record is gone
        return
    answer.update(operation_id=entry.operation_id, id=entry.operation_id)
    await send_json(send, 200, answer)


def _path(segment: str) -> str:
    return quote(segment, safe="")
