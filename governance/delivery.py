"""How a governed retain reaches its backend: a delivery, chosen once per request.

* :class:`Neutral` — through :class:`~memwarden.backends.base.MemoryBackend` ``retain``: neutral
  items, each with the embedding the pipeline already computed for its text (the self-hosted store,
  a backend of another dialect). Its answer is a :class:`~memwarden.backends.types.Receipt`.
* :class:`Raw` — through the pass-through: the client's own request (its path, query and headers)
  with the governed body, the backend's answer relayed as it gave it (a backend that speaks the
  front's dialect, ``RAW_PASSTHROUGH``).

Either is called by :func:`memwarden.governance.retain.enforce` with the body to send; a refusal
comes back as a :class:`Delivered` with the backend's status (the outbox's rules decide what is
tried again), a backend that cannot be reached as :class:`BackendUnavailable`. (The outbox's own
entries are :mod:`memwarden.governance.deliveries`.)
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any, Protocol

from memwarden.backends.base import RAW_PASSTHROUGH, BackendRejected, BackendUnavailable, MemoryBackend, PassThrough
from memwarden.backends.transport import BodyBrokenError
from memwarden.backends.types import Item, Receipt

JSON_TYPE = ((b"content-type", b"application/json"),)


@dataclass(frozen=True)
class Delivered:
    """The backend's answer to a delivery: as received over HTTP (``body``, ``headers``), or the
    receipt of a backend called directly (no bytes to decode)."""

    status: int
    body: bytes
    headers: Sequence[tuple[bytes, bytes]]
    receipt: Receipt | None = None


class Delivery(Protocol):
    """Send the request body (its ``items`` the survivors as the backend gets them) with each
    item's embedding (None when the pipeline computed none). Raises :class:`BackendUnavailable`."""

    async def __call__(self, body: Mapping[str, Any], vectors: Sequence[Any]) -> Delivered: ...


def _json(payload: Any) -> bytes:
    """JSON bytes of any value a backend's refusal carries (a lone surrogate too: escaped)."""
    return json.dumps(payload, separators=(",", ":"), default=str).encode()


@dataclass(frozen=True)
class Neutral:
    """Through ``MemoryBackend.retain`` (see the module); ``wait``: store before answering."""

    memory: MemoryBackend
    bank: str
    wait: bool = True

    async def __call__(self, body: Mapping[str, Any], vectors: Sequence[Any]) -> Delivered:
        items = []
        for raw, vector in zip(body["items"], vectors, strict=True):
            item = Item.from_json(raw)
            # The pipeline embedded the text as judged (stripped): the same text, the same vector.
            same = vector is not None and isinstance(raw.get("content"), str) and raw["content"] == item.content.strip()
            items.append(replace(item, vector=vector) if same else item)
        try:
            receipt = await self.memory.retain(
                self.bank, items, document_tags=body.get("document_tags") or (), wait=self.wait
            )
        except BackendRejected as exc:
            return Delivered(exc.status, _json(exc.body), JSON_TYPE)
        except BackendUnavailable as exc:  # a store's database busy (503) or full (507): said as its app says it
            if exc.status is None:
                raise
            return Delivered(exc.status, _json({"detail": str(exc)}), JSON_TYPE)
        return Delivered(200, b"", JSON_TYPE, receipt=receipt)


@dataclass(frozen=True)
class Raw:
    """Through the pass-through (see the module): ``target`` is the path and query to send to,
    ``headers`` the client's own (their length and encoding are set anew)."""

    backend: PassThrough
    target: str
    headers: Sequence[tuple[str, str]]

    async def __call__(self, body: Mapping[str, Any], vectors: Sequence[Any]) -> Delivered:
        headers = [(k, v) for k, v in self.headers if k.lower() not in ("content-length", "accept-encoding")]
        headers.append(("accept-encoding", "identity"))
        encoded = json.dumps(body, ensure_ascii=False).encode()
        upstream = await self.backend.send_raw("POST", self.target, headers, encoded)
        try:
            answer = b"".join([chunk async for chunk in upstream.aiter_raw()])
        except BodyBrokenError as exc:  # cut mid-answer: the backend may or may not have it
            raise BackendUnavailable(f"the backend's answer was cut: {exc}") from exc
        finally:
            await upstream.aclose()
        return Delivered(upstream.status_code, answer, list(upstream.raw_headers))


def delivery_for(
    memory: MemoryBackend,
    backend: PassThrough,
    bank: str,
    *,
    wait: bool,
    target: str,
    headers: Iterable[tuple[str, str]],
) -> Delivery:
    """The raw delivery when the backend speaks the front's dialect, else the neutral one."""
    if RAW_PASSTHROUGH in memory.capabilities:
        return Raw(backend, target, list(headers))
    return Neutral(memory, bank, wait)
