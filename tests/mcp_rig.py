"""The official MCP Python client (``mcp`` 2.x), unchanged, as an agent connects it: over streamable
HTTP to a URL with its headers, or launching ``memwarden mcp`` on stdio."""

from __future__ import annotations

import contextlib
import json
from collections.abc import AsyncIterator, Mapping
from typing import Any

import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client


@contextlib.asynccontextmanager
async def mcp_client(
    url: str, *, key: str | None = None, headers: Mapping[str, str] | None = None, mode: str = "auto"
) -> AsyncIterator[Client]:
    """A connected client; ``mode``: ``auto`` (the 2026 sessionless protocol, as the SDK tries
    first) or ``legacy`` (the initialize handshake older clients make)."""
    sent = {**(headers or {}), **({"Authorization": f"Bearer {key}"} if key else {})}
    http = httpx2.AsyncClient(headers=sent, timeout=httpx2.Timeout(120.0))
    async with http, Client(streamable_http_client(url, http_client=http), mode=mode) as client:
        yield client


def value(result: Any) -> Any:
    """A tool result's value: its structured content (unwrapped from ``{"result": text}`` as the
    every-bank endpoint wraps JSON text), or its text."""
    structured = result.structured_content
    if isinstance(structured, dict) and set(structured) == {"result"} and isinstance(structured["result"], str):
        return json.loads(structured["result"])
    if structured is not None:
        return structured
    return result.content[0].text


def error(result: Any) -> Any:
    """A tool error's content: its JSON when it is JSON, else its text."""
    assert result.is_error, result
    text = result.content[0].text
    try:
        return json.loads(text)
    except ValueError:
        return text
