"""backends/retrying.py: reads and a fact's state change retried as the retry rules say, other writes never."""

from __future__ import annotations

import time
from typing import Any

import httpx
import pytest

from memwarden.backends.base import BackendRejected, BackendUnavailable, MemoryBackend
from memwarden.backends.hindsight import HindsightBackend
from memwarden.backends.retrying import RetryingBackend
from memwarden.backends.types import Item, MemoryQuery, RecallQuery

pytestmark = pytest.mark.anyio


def flaky(statuses: list[int], headers: dict[str, str] | None = None) -> tuple[RetryingBackend, list[str]]:
    """A Hindsight backend whose answers follow ``statuses`` (0 = connection refused)."""
    calls: list[str] = []

    def handler(request: httpx.Request) -> httpx.Response:
        calls.append(f"{request.method} {request.url.path}")
        status = statuses[min(len(calls), len(statuses)) - 1]
        if status == 0:
            raise httpx.ConnectError("connection refused")
        return httpx.Response(status, json={"ok": status == 200}, headers=headers or {})

    inner = HindsightBackend(httpx.AsyncClient(transport=httpx.MockTransport(handler)), base_url="http://hs")
    return RetryingBackend(inner, retries=2, base_wait=0.01), calls


def test_is_a_memory_backend() -> None:
    assert isinstance(flaky([200])[0], MemoryBackend)


@pytest.mark.parametrize("first", [0, 429, 503])
async def test_reads_are_retried_until_they_succeed(first: int) -> None:
    backend, calls = flaky([first, first, 200])
    recalled = await backend.recall("b", RecallQuery("q"))
    assert recalled.extra == {"ok": True}  # the answer of the attempt that succeeded
    assert len(calls) == 3


async def test_reads_give_up_after_the_configured_retries() -> None:
    backend, calls = flaky([503])
    with pytest.raises(BackendUnavailable):
        await backend.stats("b")
    assert len(calls) == 3


async def test_retry_after_is_honoured() -> None:
    backend, calls = flaky([503, 200], headers={"retry-after": "0.3"})
    started = time.monotonic()
    await backend.get_config("b")
    assert time.monotonic() - started >= 0.3
    assert len(calls) == 2


@pytest.mark.parametrize(
    "write",
    [
        lambda b: b.retain("b", [Item("x")]),
        lambda b: b.patch_config("b", {"retain_mission": "x"}),
        lambda b: b.reset_config("b"),
        lambda b: b.delete_document("b", "d"),
    ],
)
async def test_writes_are_never_retried(write: Any) -> None:
    backend, calls = flaky([503, 200])
    with pytest.raises(BackendUnavailable):
        await write(backend)
    assert len(calls) == 1


async def test_a_state_change_is_retried_past_a_backend_deadlock() -> None:
    """The real Hindsight answered 500 ("deadlock detected") to one invalidation of a Mem0 batch
    delete while its graph maintenance ran on the bank, leaving one memory undeleted; setting a
    state is idempotent, so it is sent again."""
    backend, calls = flaky([500, 200])
    await backend.set_memory_state("b", "m", "invalidated", reason="deleted")
    assert calls == ["PATCH /v1/default/banks/b/memories/m"] * 2


async def test_a_4xx_is_final() -> None:
    backend, calls = flaky([404])
    with pytest.raises(BackendRejected):
        await backend.list_memories("b", MemoryQuery(document_id="d"))
    assert len(calls) == 1


def test_the_store_s_own_calls_are_reached_through_the_wrapper_and_only_in_front_of_the_store() -> None:
    """``self_hosted`` finds memwarden's own store behind its retries; a remote backend has none."""
    from memwarden.backends.base import SELF_HOSTED, SelfHosted, self_hosted
    from memwarden.store.backend import LocalBackend

    remote, _ = flaky([200])
    assert self_hosted(remote) is None
    assert SELF_HOSTED not in remote.capabilities
    store = LocalBackend.__new__(LocalBackend)  # the class's calls, without opening a store
    wrapped = RetryingBackend(store, retries=1)
    assert isinstance(store, SelfHosted)
    assert self_hosted(wrapped) is store
    assert SELF_HOSTED in wrapped.capabilities
