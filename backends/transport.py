"""The HTTP plumbing under HTTP backends: one connection pool, two ways to use it.

* ``httpx.AsyncClient`` — the client API for every JSON call a backend makes.
* :class:`RawSender` — the pass-through hot path: send a request as is, get the status, raw
  headers and an unread body stream back.

Transports are chosen by measurement (``bench/proxy_overhead.py``; docs/operations/benchmarks/speed.md):
httpx's own transport pins a core at a few hundred requests/s under concurrency (encode/httpx#3215), so the default is
aiohttp underneath — the httpx client runs on the ``httpx-aiohttp`` transport and the raw sender
calls the *same* ``aiohttp.ClientSession`` directly, which skips httpx's request/response
objects on the path every proxied request takes. ``transport = "httpx"`` keeps everything on
httpx, for comparison and as a fallback.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, AsyncIterator, Iterable
from dataclasses import dataclass
from typing import Protocol

import aiohttp
import httpx
import yarl
from httpx_aiohttp import AiohttpTransport

from memwarden.settings import HindsightSettings

Headers = Iterable[tuple[str, str]]
Body = AsyncIterable[bytes] | bytes | None


class SendError(Exception):
    """No response could be had; ``timeout`` tells a time-out from a refused/broken connection."""

    def __init__(self, message: str, *, timeout: bool) -> None:
        super().__init__(message)
        self.timeout = timeout


class RawResponse(Protocol):
    """A backend response whose body has not been read yet. Always ``aclose()`` it."""

    status_code: int
    raw_headers: list[tuple[bytes, bytes]]

    def aiter_raw(self) -> AsyncIterator[bytes]:
        """The body exactly as sent (still compressed, if it was)."""
        ...

    async def aclose(self) -> None: ...


class RawSender(Protocol):
    async def send(self, method: str, url: str, headers: Headers, content: Body) -> RawResponse:
        """Send one request unchanged; raise :class:`SendError` when no response comes."""
        ...

    async def aclose(self) -> None: ...


class BodyBrokenError(Exception):
    """The backend broke off while sending a body."""


# -- httpx -------------------------------------------------------------------------------------


def is_timeout(exc: httpx.TransportError) -> bool:
    """Whether a transport error was a time-out, judged by its whole cause chain.

    httpx-aiohttp maps every ``aiohttp.ClientConnectionError`` — a refused connection included —
    to ``httpx.ConnectTimeout``; the underlying exception tells the truth.
    """
    chain: list[BaseException] = []
    cause: BaseException | None = exc
    while cause is not None and len(chain) < 16:
        chain.append(cause)
        cause = cause.__cause__
    if any(isinstance(e, TimeoutError) for e in chain):
        return True
    if any(isinstance(e, aiohttp.ClientError) for e in chain):
        return False
    return isinstance(exc, httpx.TimeoutException)


class _HttpxRawResponse:
    def __init__(self, response: httpx.Response) -> None:
        self._response = response
        self.status_code = response.status_code
        self.raw_headers = list(response.headers.raw)

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.aiter_raw():
                yield chunk
        except httpx.TransportError as exc:
            raise BodyBrokenError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        await self._response.aclose()


class HttpxRawSender:
    """Sends straight to an httpx transport: the client layer would add default headers, keep a
    cookie jar and follow redirects — none of which a pass-through may do."""

    def __init__(self, client: httpx.AsyncClient) -> None:
        self._transport: httpx.AsyncBaseTransport = client._transport
        self._timeout = client.timeout.as_dict()

    async def send(self, method: str, url: str, headers: Headers, content: Body) -> RawResponse:
        request = httpx.Request(
            method, url, headers=list(headers), content=content, extensions={"timeout": self._timeout}
        )
        try:
            return _HttpxRawResponse(await self._transport.handle_async_request(request))
        except httpx.TransportError as exc:
            raise SendError(str(exc) or type(exc).__name__, timeout=is_timeout(exc)) from exc

    async def aclose(self) -> None:
        """The transport belongs to the client, which its owner closes."""


# -- aiohttp -----------------------------------------------------------------------------------


class _AiohttpRawResponse:
    def __init__(self, response: aiohttp.ClientResponse) -> None:
        self._response = response
        self.status_code = response.status
        self.raw_headers = list(response.raw_headers)

    async def aiter_raw(self) -> AsyncIterator[bytes]:
        try:
            async for chunk in self._response.content.iter_any():
                yield chunk
        except (TimeoutError, aiohttp.ClientError) as exc:
            raise BodyBrokenError(str(exc) or type(exc).__name__) from exc

    async def aclose(self) -> None:
        # Returns the connection to the pool when the body was read to the end, closes it otherwise.
        self._response.release()


class AiohttpRawSender:
    def __init__(self, session: aiohttp.ClientSession, settings: HindsightSettings) -> None:
        self._session = session
        self._timeout = aiohttp.ClientTimeout(
            connect=settings.pool_timeout + settings.connect_timeout,
            sock_connect=settings.connect_timeout,
            sock_read=settings.read_timeout,
        )

    async def send(self, method: str, url: str, headers: Headers, content: Body) -> RawResponse:
        try:
            response = await self._session.request(
                method,
                # encoded=True: the target goes out byte for byte (yarl would otherwise normalise
                # escapes such as %41 to "A").
                yarl.URL(url, encoded=True),
                headers=list(headers),
                data=content,
                allow_redirects=False,
                auto_decompress=False,
                compress=None,
                timeout=self._timeout,
                # Send the client's headers, not aiohttp's defaults in their place.
                skip_auto_headers=("User-Agent", "Accept", "Accept-Encoding", "Content-Type"),
            )
        except TimeoutError as exc:
            raise SendError(f"no answer in time ({type(exc).__name__})", timeout=True) from exc
        except (aiohttp.ClientError, OSError) as exc:
            raise SendError(str(exc) or type(exc).__name__, timeout=False) from exc
        return _AiohttpRawResponse(response)

    async def aclose(self) -> None:
        await self._session.close()


# -- the pair ----------------------------------------------------------------------------------


@dataclass
class BackendHTTP:
    """One pool, its httpx client and its raw sender; owned (and closed) by the app lifespan."""

    client: httpx.AsyncClient
    raw: RawSender

    async def aclose(self) -> None:
        await self.client.aclose()
        await self.raw.aclose()


def open_backend_http(settings: HindsightSettings) -> BackendHTTP:
    """Build the pool for a backend, with the configured timeouts and limits (call in a loop)."""
    timeout = httpx.Timeout(
        connect=settings.connect_timeout,
        read=settings.read_timeout,
        write=settings.write_timeout,
        pool=settings.pool_timeout,
    )
    limits = httpx.Limits(
        max_connections=settings.max_connections,
        max_keepalive_connections=settings.max_connections,
        keepalive_expiry=settings.keepalive_expiry,
    )
    if settings.transport == "httpx":
        client = httpx.AsyncClient(
            transport=httpx.AsyncHTTPTransport(limits=limits, trust_env=False), timeout=timeout, trust_env=False
        )
        return BackendHTTP(client=client, raw=HttpxRawSender(client))
    session = aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=settings.max_connections, keepalive_timeout=settings.keepalive_expiry),
        trust_env=False,
        auto_decompress=False,
    )
    client = httpx.AsyncClient(transport=AiohttpTransport(client=session), timeout=timeout, trust_env=False)
    return BackendHTTP(client=client, raw=AiohttpRawSender(session, settings))
