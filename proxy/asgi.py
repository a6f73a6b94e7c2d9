"""Small helpers for answering at the ASGI level."""

from __future__ import annotations

import json
from collections.abc import Iterable
from typing import Any

from pydantic import ValidationError
from starlette.types import Message, Receive, Send


class ClientGone(Exception):
    """The client disconnected while its request body was being read."""


async def read_body(receive: Receive) -> bytes:
    """The whole request body (the middleware has already bounded its size)."""
    chunks = []
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunks.append(message.get("body", b""))
        if not message.get("more_body", False):
            return b"".join(chunks)


def replay(body: bytes) -> Receive:
    """A ``receive`` that hands out ``body`` again, for forwarding a request already read."""
    sent = False

    async def receive() -> Message:
        nonlocal sent
        if not sent:
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}
        return {"type": "http.disconnect"}

    return receive


async def send_json(
    send: Send,
    status: int,
    payload: Any,
    *,
    headers: Iterable[tuple[bytes, bytes]] = (),
    content_type: bytes = b"application/json",
) -> None:
    """Answer ``payload`` as JSON in one piece."""
    body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode()
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [
                (b"content-type", content_type),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        }
    )
    await send({"type": "http.response.body", "body": body})


def json_decode_error(exc: ValueError | UnicodeDecodeError) -> dict[str, Any]:
    """A body that is not JSON, as FastAPI (so Hindsight) describes it in a 422."""
    return {
        "detail": [
            {
                "type": "json_invalid",
                "loc": ["body", getattr(exc, "pos", 0)],
                "msg": "JSON decode error",
                "input": {},
                "ctx": {"error": getattr(exc, "msg", str(exc))},
            }
        ]
    }


def validation_detail(exc: ValidationError) -> list[dict[str, Any]]:
    """pydantic errors in FastAPI's shape (what Hindsight answers with 422)."""
    out = []
    for err in exc.errors():
        item: dict[str, Any] = {
            "type": err["type"],
            "loc": ["body", *err["loc"]],
            "msg": err["msg"],
            "input": err.get("input"),
        }
        if err.get("ctx"):
            item["ctx"] = {k: v if isinstance(v, int | float | str | bool) else str(v) for k, v in err["ctx"].items()}
        out.append(item)
    return out


def lone_surrogate(value: Any, where: tuple[str | int, ...] = ("body",)) -> list[str | int] | None:
    """The location of the first string in ``value`` holding an unpaired UTF-16 surrogate (JSON's
    ``"\\ud800"`` escape decodes to one): not Unicode text, it cannot be stored or hashed."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return list(where)
        return None
    if isinstance(value, dict):
        items: Any = value.items()
    elif isinstance(value, list):
        items = enumerate(value)
    else:
        return None
    for key, item in items:
        found = lone_surrogate(key, where) if isinstance(key, str) else None
        found = found or lone_surrogate(item, (*where, key))
        if found:
            return found
    return None


def surrogate_error(loc: list[str | int]) -> dict[str, Any]:
    """The 422 for :func:`lone_surrogate`, in FastAPI's shape."""
    return {
        "detail": [
            {
                "type": "string_unicode",
                "loc": loc,
                "msg": "String contains an unpaired surrogate: not valid Unicode text",
                "input": None,
            }
        ]
    }
