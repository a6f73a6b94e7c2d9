"""Health: memwarden's own (``/warden/health``) and Hindsight's (``/health``, in its shape)."""

from __future__ import annotations

from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendUnavailable
from memwarden.fronts.asgi import send_json
from memwarden.governance.state import AppState
from memwarden.proxy import __version__
from memwarden.proxy.middleware import note_backend_status
from memwarden.proxy.passthrough import relay, request_headers, target_of


async def warden_health(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """200 while memwarden serves; ``status`` is "degraded" when the backend is not healthy."""
    backend = await state.backend.health()
    note_backend_status(scope, "healthy" if backend.healthy else "unhealthy")
    await send_json(
        send,
        200,
        {
            "status": "ok" if backend.healthy else "degraded",
            "service": "memwarden",
            "version": __version__,
            "mode": "self-hosted" if state.settings.backend == "local" else "proxy",
            "backend": {
                "kind": "local" if state.settings.backend == "local" else backend.kind,
                "healthy": backend.healthy,
                "detail": backend.detail,
                "latency_ms": backend.latency_ms,
                "api_version": backend.version,
                **backend.extra,
            },
        },
    )


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
