"""Pure ASGI middleware (no BaseHTTPMiddleware: it breaks contextvars and streaming).

:class:`RequestContextMiddleware` gives every request an id (the client's ``X-Request-Id`` when it
is sane, a new one otherwise), returns it on the response, binds it to the log context, enforces
the body-size limit, and writes the one canonical log line per request.
"""

from __future__ import annotations

import asyncio
import re
import time
import uuid
from email.utils import formatdate
from typing import Any

import structlog
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from memwarden.policies.ids import id_secret_problem
from memwarden.policies.secrets import find_secrets, mask
from memwarden.wire.asgi import send_json

log = structlog.get_logger("memwarden.access")

METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"})
_SANE_ID = re.compile(r"^[A-Za-z0-9._:@/+=-]{1,128}$")
# What a path needs for a secret detector to match in it: a segment of 16+ characters, an
# assignment, a colon, a space.
_MAY_HIDE = re.compile(r"[^/]{16}|[=:\s]")


class BodyTooLarge(Exception):
    """Raised from ``receive`` once a request body passes the configured limit."""

    def __init__(self, limit: int) -> None:
        super().__init__(f"request body exceeds the limit of {limit} bytes")
        self.limit = limit


class BodyTimeout(Exception):
    """Raised from ``receive`` when the rest of a request body does not come within the timeout (a
    body shorter than its ``Content-Length``, a client that stalls): the connection is not held."""

    def __init__(self, seconds: float, *, whole: bool = False) -> None:
        said = f"it took longer than {seconds:g} s in all" if whole else f"nothing received for {seconds:g} s"
        super().__init__(f"the request body did not arrive: {said}")
        self.seconds = seconds


_date_cache: list[Any] = [0, ""]


def http_date() -> str:
    """The current time as an HTTP date, recomputed at most once a second."""
    now = int(time.time())
    if _date_cache[0] != now:
        _date_cache[0] = now
        _date_cache[1] = formatdate(now, usegmt=True)
    return str(_date_cache[1])


def request_id_of(scope: Scope) -> str:
    """The request id assigned by :class:`RequestContextMiddleware` (for handlers)."""
    return str(scope.get("state", {}).get("request_id", ""))


def masked_path(path: str) -> str:
    """The path as the log writes it: a secret in it (a document id, a bank id refused for holding
    one) masked — each segment on its own (base64 holds ``/``: read whole, ``…/operations/<an
    encoded key>`` is one token that decodes to nothing), then the whole path (a secret that spans
    segments)."""
    if not _MAY_HIDE.search(path):  # no long segment, no assignment, no space: nothing to mask
        return path
    segments = []
    for segment in path.split("/"):
        found = find_secrets(segment, random_tokens=False) if _MAY_HIDE.search(segment) else []
        segments.append(mask(segment, found) if found else segment)
    joined = "/".join(segments)
    found = find_secrets(joined, random_tokens=False)
    return mask(joined, found) if found else joined


class RequestContextMiddleware:
    def __init__(
        self,
        app: ASGIApp,
        *,
        max_body_bytes: int,
        access_log: bool = True,
        body_timeout: float = 10.0,
        body_deadline: float = 60.0,
    ) -> None:
        self.app = app
        self.max_body_bytes = max_body_bytes
        self.access_log = access_log
        self.body_timeout = body_timeout
        self.body_deadline = body_deadline

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        started = time.perf_counter()
        incoming = ""
        declared: int | None = None
        for name, value in scope["headers"]:
            if name == b"x-request-id":
                incoming = value.decode("latin-1")
            elif name == b"content-length":
                declared = int(value) if value.strip().isdigit() and len(value) <= 18 else -1
        # The client's id when it is sane and no secret (it is echoed, logged and audited).
        sane = _SANE_ID.match(incoming) is not None and id_secret_problem("request id", incoming) is None
        request_id = incoming if sane else uuid.uuid4().hex
        state = scope.setdefault("state", {})
        state["request_id"] = request_id
        structlog.contextvars.clear_contextvars()
        structlog.contextvars.bind_contextvars(request_id=request_id)
        rid = request_id.encode()
        status_box: dict[str, Any] = {"status": None}

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                status_box["status"] = message["status"]
                headers = list(message.get("headers", []))
                if not any(name.lower() == b"date" for name, _ in headers):
                    # uvicorn runs with date_header=False so that a proxied response keeps the
                    # backend's Date instead of carrying two; memwarden's own answers get one here.
                    headers.append((b"date", http_date().encode()))
                headers.append((b"x-request-id", rid))
                message["headers"] = headers
            await send(message)

        limit, timeout = self.max_body_bytes, self.body_timeout
        deadline = started + self.body_deadline  # the whole body, however it trickles in
        received = 0
        body_done = False

        async def limited_receive() -> Message:
            nonlocal received, body_done
            if body_done:  # after the body: waiting for a disconnect (a stream) has no time limit
                return await receive()
            left = deadline - time.perf_counter()
            if left <= 0:  # past the whole body's deadline, even with the next chunk already buffered
                raise BodyTimeout(self.body_deadline, whole=True)
            try:
                async with asyncio.timeout(min(timeout, left)):
                    message = await receive()
            except TimeoutError:
                if left <= timeout:
                    raise BodyTimeout(self.body_deadline, whole=True) from None
                raise BodyTimeout(timeout) from None
            if message["type"] == "http.request":
                received += len(message.get("body", b""))
                if received > limit:
                    raise BodyTooLarge(limit)
                body_done = not message.get("more_body", False)
            return message

        try:
            if declared is not None and declared < 0:
                await self._reply(send, 400, "Invalid Content-Length header", request_id, status_box)
            elif declared is not None and declared > limit:
                await self._reply(
                    send, 413, f"Request body too large: {declared} bytes, limit {limit}", request_id, status_box
                )
            else:
                await self.app(scope, limited_receive, send_with_id)
        except BodyTooLarge as exc:
            if status_box["status"] is None:
                await self._reply(send, 413, f"Request body too large: {exc}", request_id, status_box)
        except BodyTimeout as exc:
            if status_box["status"] is None:
                await self._reply(send, 408, f"Request timeout: {exc}", request_id, status_box)
        finally:
            elapsed = time.perf_counter() - started
            warden = getattr(getattr(scope.get("app"), "state", None), "warden", None)
            if warden is not None:  # the lifespan ran
                route = state.get("route", "unmatched")
                method = scope["method"] if scope["method"] in METHODS else "other"  # a bounded label
                warden.metrics.requests.labels(route, method, str(status_box["status"])).inc()
                warden.metrics.request_seconds.labels(route).observe(elapsed)
            if self.access_log:
                log.info(
                    "request",
                    method=scope["method"],
                    path=masked_path(scope["path"]),
                    status=status_box["status"],
                    backend_status=state.get("backend_status"),
                    bank=state.get("bank_id"),
                    key=state.get("key_id"),
                    duration_ms=round(elapsed * 1000, 2),
                )

    @staticmethod
    async def _reply(send: Send, status: int, detail: str, request_id: str, box: dict[str, Any]) -> None:
        box["status"] = status
        # Close the connection: the rest of an oversized body is not worth reading.
        extra = [(b"x-request-id", request_id.encode()), (b"date", http_date().encode()), (b"connection", b"close")]
        await send_json(send, status, {"detail": detail}, headers=extra)
