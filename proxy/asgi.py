"""Small helpers for answering at the ASGI level."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from starlette.types import Send


async def send_json(send: Send, status: int, payload: Any, *, headers: Iterable[tuple[bytes, bytes]] = ()) -> None:
    """Answer ``payload`` as JSON in one piece."""
    body = json.dumps(payload, ensure_ascii=False).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", b"application/json"),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})
