"""Build the one shared ``httpx.AsyncClient`` that talks to an HTTP backend.

memwarden keeps httpx as its client API and picks the transport by measurement: httpx's own
transport pins a core at a few hundred requests/s under concurrency (encode/httpx#3215), while the
aiohttp transport (``httpx-aiohttp``) carries the same API several times faster — see
``bench/proxy_overhead.py`` and the README. ``transport = "httpx"`` is there for comparison.
"""

from __future__ import annotations

import httpx
from httpx_aiohttp import AiohttpTransport

from proxy.settings import HindsightSettings


def create_backend_client(settings: HindsightSettings) -> httpx.AsyncClient:
    """A client with the configured timeouts and pool limits; the caller owns and closes it."""
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
    transport: httpx.AsyncBaseTransport
    if settings.transport == "aiohttp":
        transport = AiohttpTransport(limits=limits, trust_env=False)
    else:
        transport = httpx.AsyncHTTPTransport(limits=limits, trust_env=False)
    return httpx.AsyncClient(transport=transport, timeout=timeout, limits=limits, trust_env=False)
