"""``/warden/health``: memwarden, its mode and its backend."""

from __future__ import annotations

import os

from starlette.types import Receive, Scope, Send

from memwarden import __version__
from memwarden.governance.state import AppState
from memwarden.wire.asgi import note_backend_status, send_json


async def warden_health(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """200 while memwarden serves; ``status`` is "degraded" when the backend is not healthy, or
    (in front of a backend) the delivery outbox holds dead letters or is past its limits;
    "critical" when the start found the audit chain tampered with (``audit.alarms``)."""
    # In front of Mem0 the pass-through is memwarden's own translation: Mem0 itself is asked.
    backend = await (state.memory if state.settings.backend == "mem0" else state.backend).health()
    note_backend_status(scope, "healthy" if backend.healthy else "unhealthy")
    outbox = await state.outbox.summary() if state.outbox is not None else None
    degraded = not backend.healthy or (outbox is not None and bool(outbox.full or outbox.dead_letters))
    alarms = state.ledger.alarms
    failing = state.ledger.checkpoints.failing if state.ledger.checkpoints is not None else None
    status = "critical" if alarms else "degraded" if degraded or failing else "ok"
    await send_json(
        send,
        200,
        {
            "status": status,
            "service": "memwarden",
            "version": __version__,
            "mode": "self-hosted" if state.settings.backend == "local" else "proxy",
            # Which instance answers (several may share one PostgreSQL), on which engine.
            "instance": {"id": state.ledger.instance_id, "pid": os.getpid(), "database": state.ledger.engine},
            "backend": {
                "kind": "local" if state.settings.backend == "local" else backend.kind,
                "healthy": backend.healthy,
                "detail": backend.detail,
                "latency_ms": backend.latency_ms,
                "api_version": backend.version,
                "capabilities": sorted(state.memory.capabilities),
                **backend.extra,
            },
            "outbox": outbox.as_json() if outbox is not None else None,
            "audit": {"ok": not alarms and not failing, "alarms": alarms, "checkpoints": failing or "ok"},
        },
    )
