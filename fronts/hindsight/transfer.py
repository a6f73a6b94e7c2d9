"""A bank's import (``POST …/transfer/import``, ``POST …/document-transfer``) through memwarden.

Self-hosted, the store imports the archive and audits it in the same transaction as the data
(``store/transfer_import.py``). In front of a backend the archive goes to it as sent (Hindsight
imports it in the background; its ledger blocks ride along, untouched): memwarden audits the
import the backend accepted (``import``, with the backend's operation id), as it logs every
ungoverned write. Its own ledger does not take the archive's rows in front of a backend.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import structlog
from starlette.types import Message, Receive, Scope, Send

from memwarden.backends.base import self_hosted
from memwarden.db.audit import AuditEvent
from memwarden.fronts.hindsight.passthrough import forward
from memwarden.fronts.middleware import request_id_of
from memwarden.governance.state import AppState

log = structlog.get_logger("memwarden.transfer")
KEPT = 64 * 1024  # the accepted answer is a small JSON object: its operation id is kept from it


@dataclass
class _Answer:
    status: int = 0
    body: bytearray = field(default_factory=bytearray)
    encoded: bool = False


async def bank_import(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    if self_hosted(state.memory) is not None:  # the store audits its own imports
        await forward(state.backend, scope, receive, send, retries=0)
        return
    bank: str = scope["path_params"]["bank_id"]
    answer = _Answer()

    async def watching(message: Message) -> None:
        if message["type"] == "http.response.start":
            answer.status = message["status"]
            answer.encoded = any(k.lower() == b"content-encoding" for k, _ in message.get("headers", []))
        elif message["type"] == "http.response.body" and len(answer.body) < KEPT:
            answer.body += message.get("body", b"")
        await send(message)

    log.warning("ungoverned_write", route="transfer/import", bank=bank)
    await forward(state.backend, scope, receive, watching, retries=0)
    if answer.status != 202:
        return
    operation_id = None
    if not answer.encoded:
        try:
            operation_id = json.loads(answer.body).get("operation_id")
        except (ValueError, AttributeError):
            operation_id = None
    query = scope.get("query_string", b"").decode("utf-8", "replace")
    event = AuditEvent(
        action="import",
        bank=bank,
        source="transfer",
        reason="an archive passed to the backend, which imports it in the background",
        after={"backend_operation_id": operation_id, "path": scope["path"], "query": query},
        request_id=request_id_of(scope),
    )
    await state.ledger.audit(event)
