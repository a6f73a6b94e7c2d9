"""Health: memwarden's own (``/warden/health``) and Hindsight's (``/health``, in its shape)."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendUnavailable
from memwarden.fronts.hindsight.passthrough import relay, request_headers, target_of
from memwarden.governance.state import AppState
from memwarden.wire.asgi import note_backend_status, send_json


async def hindsight_health(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """Hindsight's ``GET /health``: the backend's own answer, or 503 in its shape when unreachable."""
    headers, _ = request_headers(scope)
    try:
        upstream = await state.backend.send_raw("GET", target_of(scope), headers, None)
    except BackendUnavailable as exc:
        note_backend_status(scope, "unreachable")
        await send_json(send, 503, {"status": "unhealthy", "reason": f"backend unreachable: {exc}"})
        return
    note_backend_status(scope, upstream.status_code)
    await relay(upstream, receive, send)
