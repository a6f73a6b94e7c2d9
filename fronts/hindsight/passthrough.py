"""Stream one request to the backend and its response back, unchanged.

What changes on the way: hop-by-hop headers are dropped in both directions (RFC 9110 §7.6.1),
``Host`` becomes the backend's, the request id is added, and the backend's auth policy applies
(``backends/hindsight.py``). Everything else — method, raw path and query, body bytes, status,
headers such as ``Retry-After`` and ``X-Ignored-Params``, compressed or chunked bodies — passes
as is. A small response (with a ``Content-Length`` up to 64 KiB) is sent in one piece; a larger
or chunked one is streamed while watching for the client to hang up, so a departed client stops
the upstream transfer at once.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

import anyio
import structlog
from starlette.types import Message, Receive, Scope, Send

from memwarden.backends.base import BackendTimeout, BackendUnavailable, PassThrough
from memwarden.backends.transport import Body, BodyBrokenError, RawResponse
from memwarden.fronts.middleware import BodyTimeout, BodyTooLarge, masked_path, request_id_of
from memwarden.wire.asgi import ClientGone, note_backend_status, read_body, send_json

log = structlog.get_logger("memwarden.passthrough")

HOP_BY_HOP = frozenset(
    {
        b"connection",
        b"keep-alive",
        b"proxy-authenticate",
        b"proxy-authorization",
        b"proxy-connection",
        b"te",
        b"trailer",
        b"trailers",
        b"transfer-encoding",
        b"upgrade",
    }
)
SMALL_BODY = 64 * 1024
IDEMPOTENT = frozenset({"GET", "HEAD", "OPTIONS"})


def _connection_tokens(headers: list[tuple[bytes, bytes]]) -> set[bytes]:
    tokens: set[bytes] = set()
    for name, value in headers:
        if name.lower() == b"connection":
            tokens.update(t.strip().lower() for t in value.split(b","))
    return tokens


def request_headers(scope: Scope) -> tuple[list[tuple[str, str]], int | None]:
    """Headers to send upstream, and the body's length: 0 for none, None when unknown (chunked)."""
    raw: list[tuple[bytes, bytes]] = scope["headers"]
    drop = HOP_BY_HOP | _connection_tokens(raw) | {b"host", b"x-request-id"}
    out: list[tuple[str, str]] = []
    length: int | None = 0
    saw_accept_encoding = False
    for name, value in raw:
        lname = name.lower()
        if lname == b"content-length":
            length = int(value) if length is not None else None  # validated by the middleware
        elif lname == b"transfer-encoding":
            length = None
        elif lname == b"accept-encoding":
            saw_accept_encoding = True
        if lname in drop:
            continue
        out.append((name.decode("latin-1"), value.decode("latin-1")))
    if not saw_accept_encoding:
        # The HTTP client would otherwise ask for gzip on the client's behalf and hand it a
        # compressed body it never asked for; "identity" is what an absent header means.
        out.append(("accept-encoding", "identity"))
    out.append(("x-request-id", request_id_of(scope)))
    return out, length


def response_headers(response: RawResponse) -> list[tuple[bytes, bytes]]:
    raw = response.raw_headers
    drop = HOP_BY_HOP | _connection_tokens(raw) | {b"x-request-id"}
    return [(k, v) for k, v in raw if k.lower() not in drop]


def target_of(scope: Scope) -> str:
    """The request target as the client sent it: raw (still percent-encoded) path + query."""
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    query: bytes = scope.get("query_string", b"")
    return (path + (b"?" + query if query else b"")).decode("latin-1")


async def _body(receive: Receive) -> AsyncIterator[bytes]:
    while True:
        message = await receive()
        if message["type"] == "http.disconnect":
            raise ClientGone
        chunk = message.get("body", b"")
        if chunk:
            yield chunk
        if not message.get("more_body", False):
            return


def _caused_by(exc: BaseException, kind: type[BaseException]) -> BaseException | None:
    seen: BaseException | None = exc
    for _ in range(8):
        if seen is None or isinstance(seen, kind):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


async def _send_with_retries(
    backend: PassThrough, method: str, target: str, headers: list[tuple[str, str]], content: Body, attempts: int
) -> RawResponse:
    for attempt in range(attempts):
        try:
            return await backend.send_raw(method, target, headers, content)
        except BackendTimeout:
            raise
        except BackendUnavailable as exc:
            # A failure while streaming the client's body up is the client's doing, not the
            # backend's: say so with the original exception.
            for kind in (BodyTooLarge, BodyTimeout, ClientGone):
                if (cause := _caused_by(exc, kind)) is not None:
                    raise cause from None
            if attempt + 1 == attempts:
                raise
            await anyio.sleep(0.05 * (2**attempt))
    raise AssertionError("attempts must be >= 1")


async def forward(backend: PassThrough, scope: Scope, receive: Receive, send: Send, *, retries: int) -> None:
    """Forward the request in ``scope`` to ``backend`` and stream the answer to ``send``.

    Connect failures of idempotent, body-less requests are retried ``retries`` times; a backend
    that cannot be reached gets the client a 502 (504 on a timeout) in Hindsight's error shape.
    """
    method: str = scope["method"]
    headers, length = request_headers(scope)
    target = target_of(scope)
    attempts = 1 + (retries if method in IDEMPOTENT and length == 0 else 0)
    try:
        content: Body = None
        if length is None or length > SMALL_BODY:
            content = _body(receive)  # streamed as it arrives: uploads of any size
        elif length > 0:
            content = await read_body(receive)  # one piece: far cheaper for the HTTP client
        upstream = await _send_with_retries(backend, method, target, headers, content, attempts)
    except ClientGone:
        log.info("client_disconnected", phase="request_body")
        note_backend_status(scope, "client_gone")
        return
    except BackendTimeout as exc:
        log.warning("backend_timeout", target=masked_path(target), cause=masked_path(str(exc)))
        note_backend_status(scope, "timeout")
        await send_json(send, 504, {"detail": f"Backend timed out: {masked_path(str(exc))}"})
        return
    except BackendUnavailable as exc:
        log.warning("backend_unreachable", target=masked_path(target), cause=masked_path(str(exc)))
        note_backend_status(scope, "unreachable")
        await send_json(send, 502, {"detail": f"Backend unavailable: {masked_path(str(exc))}"})
        return
    note_backend_status(scope, upstream.status_code)
    await relay(upstream, receive, send)


async def relay(upstream: RawResponse, receive: Receive, send: Send) -> None:
    """Send the backend's response to the client, then release it (always)."""
    try:
        await _send_response(upstream, receive, send)
    finally:
        await upstream.aclose()


async def _send_response(upstream: RawResponse, receive: Receive, send: Send) -> None:
    start: Message = {
        "type": "http.response.start",
        "status": upstream.status_code,
        "headers": response_headers(upstream),
    }
    length = next((v for k, v in upstream.raw_headers if k.lower() == b"content-length"), None)
    if length is not None and length.isdigit() and int(length) <= SMALL_BODY:
        body = b"".join([chunk async for chunk in upstream.aiter_raw()])
        await send(start)
        await send({"type": "http.response.body", "body": body})
        return

    await send(start)
    async with anyio.create_task_group() as tg:

        async def watch_disconnect() -> None:
            while True:
                message = await receive()
                if message["type"] == "http.disconnect":
                    log.info("client_disconnected", phase="response_body")
                    tg.cancel_scope.cancel()
                    return

        tg.start_soon(watch_disconnect)
        try:
            async for chunk in upstream.aiter_raw():
                await send({"type": "http.response.body", "body": chunk, "more_body": True})
        except BodyBrokenError as exc:
            # The backend broke off mid-body; the status line is gone, so all we can do is end the
            # response without its final chunk (the client sees it incomplete) and log why.
            log.warning("backend_broke_off", cause=str(exc) or type(exc).__name__)
            tg.cancel_scope.cancel()
            return
        await send({"type": "http.response.body", "body": b"", "more_body": False})
        tg.cancel_scope.cancel()
