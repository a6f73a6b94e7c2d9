"""store/backend.py: the self-hosted store called directly answers governance's calls as the same
store answers them over its Hindsight app (the way governance reached it before), refusals
included."""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.backends.base import (
    BackendRejected,
    MemoryBackend,
)
from memwarden.backends.hindsight import HindsightBackend
from memwarden.backends.types import Item, MemoryQuery, RecallQuery, TagFilter
from memwarden.db.database import Database
from memwarden.store.backend import LocalBackend
from memwarden.store.embedder import HashingEmbedder
from memwarden.store.local import LocalStore
from memwarden.store.server.app import create_local_app

pytestmark = pytest.mark.anyio

ITEMS = [
    Item("Alice prefers dark roast coffee.", tags=("user:alice",), document_id="d1"),
    Item("Bob moved the deploy to Friday.", tags=("user:bob", "team:ops"), document_id="d2"),
    Item("服务 svc-1 的内网端口统一设为 9000", tags=("team:ops",), timestamp="2026-11-30T10:00:00Z", document_id="d3"),
]
VOLATILE = {
    "id",
    "bank_id",
    "chunk_id",  # names the bank
    "created_at",
    "updated_at",
    "mentioned_at",
    "occurred_start",
    "occurred_end",
    "document_id",
    "raw",  # stats as each way in reads them (the same numbers; a cached flag may differ)
}


@pytest.fixture
async def pair(tmp_path: Path) -> AsyncIterator[tuple[MemoryBackend, MemoryBackend]]:
    """(over the store's Hindsight app, called directly), on one store."""
    ledger = Database.open(tmp_path, mirror=False)
    store = LocalStore(ledger, HashingEmbedder())
    client = httpx.AsyncClient(transport=httpx.ASGITransport(app=create_local_app(store)), base_url="http://store")
    try:
        yield HindsightBackend(client, base_url="http://store"), LocalBackend(store)
    finally:
        await client.aclose()
        await store.drain()
        ledger.close()


def stable(value: Any) -> Any:
    """``value`` without what differs between two banks given the same data (ids, times)."""
    if isinstance(value, tuple) and hasattr(value, "_asdict"):  # a Memory
        value = value._asdict()
    if isinstance(value, dict):
        return {k: stable(v) for k, v in value.items() if k not in VOLATILE and k != "date" and not k.endswith("_at")}
    if isinstance(value, list):
        return [stable(v) for v in value]
    return value


async def refusal(call: Callable[[], Awaitable[Any]]) -> tuple[int, Any]:
    with pytest.raises(BackendRejected) as caught:
        await call()
    return caught.value.status, caught.value.body


async def test_both_ways_in_give_the_same_answers(pair: tuple[MemoryBackend, MemoryBackend]) -> None:
    assert isinstance(pair[1], MemoryBackend)
    answers = []
    for backend in pair:
        bank = f"b-{uuid.uuid4().hex[:6]}"
        retained = await backend.retain(bank, ITEMS)
        listed = await backend.list_memories(bank, MemoryQuery(limit=10))
        ops_only = await backend.list_memories(bank, MemoryQuery(tags=TagFilter(("team:ops",), "all_strict")))
        documents = await backend.list_documents(bank, limit=10, offset=0)
        recalled = await backend.recall(bank, RecallQuery("coffee roast", tags=TagFilter(("user:alice",), "any")))
        one = listed.items[0]
        fetched = await backend.get_memory(bank, one.id)
        await backend.set_memory_state(bank, one.id, "invalidated", reason="test")
        after = await backend.list_memories(bank, MemoryQuery(state="invalidated"))
        await backend.patch_config(bank, {"retain_mission": "Keep decisions."})
        config = await backend.get_config(bank)
        await backend.reset_config(bank)
        reset = await backend.get_config(bank)
        await backend.delete_document(bank, "d1")
        stats = await backend.stats(bank, refresh=True)
        values = [asdict(v) for v in (retained, listed, ops_only, documents, recalled, after, config, reset, stats)]
        answers.append(stable([*values, fetched]))
    assert answers[0] == answers[1]
    retained, listed, ops_only, documents, recalled, after, config, reset, stats, fetched = answers[1]
    assert (retained["items"], retained["operation_id"]) == (3, None)
    assert len(ops_only["items"]) == 2  # the tag filter selected the ops memories
    assert [m["text"] for m in recalled["memories"]] == ["Alice prefers dark roast coffee."]
    assert len(after["items"]) == 1
    assert (fetched["text"], fetched["kind"], fetched["state"]) == (listed["items"][0]["text"], "world", "valid")
    assert len(listed["items"]) == len(documents["items"]) == 3
    assert config["overrides"] == {"retain_mission": "Keep decisions."}
    assert reset["overrides"] == {}
    assert stats["counts"]["documents"] == 2  # d1 deleted


async def test_both_ways_in_refuse_alike(pair: tuple[MemoryBackend, MemoryBackend]) -> None:
    refusals = []
    missing = str(uuid.uuid4())
    for backend in pair:
        await backend.retain("known", ITEMS[:1])
        refusals.append(
            [
                await refusal(lambda b=backend, m=missing: b.set_memory_state("known", m, "invalidated")),
                await refusal(lambda b=backend: b.get_config("nobody")),
                await refusal(lambda b=backend: b.patch_config("known", {"bogus_field": 1})),
                await refusal(lambda b=backend: b.set_memory_state("known", "not-a-uuid", "valid")),
                await refusal(lambda b=backend: b.delete_document("known", "no-such-document")),
                await refusal(lambda b=backend: b.recall("nobody", RecallQuery("x"))),
            ]
        )
    assert refusals[0] == refusals[1]
    assert [status for status, _ in refusals[1]] == [404, 404, 400, 400, 404, 404]


async def test_a_retain_not_waited_for_is_queued_as_an_operation(pair: tuple[MemoryBackend, MemoryBackend]) -> None:
    _, direct = pair
    receipt = await direct.retain("queued", ITEMS, wait=False)
    assert receipt.operation_id
    assert receipt.items == 3


async def test_content_blocks_keep_their_text(pair: tuple[MemoryBackend, MemoryBackend]) -> None:
    """An item whose content is a list of blocks is stored as its text, the blocks kept beside it."""
    _, direct = pair
    item = Item.from_json({"content": [{"type": "text", "text": "Port 9000 for svc-1."}], "document_id": "b1"})
    assert item.extra["content"] == [{"type": "text", "text": "Port 9000 for svc-1."}]
    assert item.to_json()["content"] == [{"type": "text", "text": "Port 9000 for svc-1."}]
    await direct.retain("blocks", [item])
    page = await direct.list_memories("blocks", MemoryQuery())
    assert [m.text for m in page.items] == ["Port 9000 for svc-1."]


@pytest.mark.parametrize(
    ("method", "request_", "error", "status"),
    [
        (
            "retain",
            ("POST", "memories", {"items": [{"content": "The search service listens on 8080."}]}),
            "database is locked",
            503,
        ),
        ("recall", ("POST", "memories/recall", {"query": "search service port"}), "database or disk is full", 507),
    ],
)
def test_through_governance_a_failing_database_is_the_stores_answer(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    method: str,
    request_: tuple[str, str, Any],
    error: str,
    status: int,
) -> None:
    """Called directly, the self-hosted store's database failures keep the status its app gives
    them (503 busy, 507 full), not a 502 as if a remote backend were down."""
    from tests.conftest import running_warden
    from tests.loopback.test_local_store import local_settings

    async def failing(*args: Any, **kwargs: Any) -> Any:
        raise sqlite3.OperationalError(error)

    monkeypatch.setattr(LocalStore, method, failing)
    verb, path, body = request_
    with running_warden(local_settings(tmp_path)) as url, httpx.Client(base_url=url, timeout=60) as client:
        r = client.request(verb, f"/v1/default/banks/b/{path}", json=body)
    assert r.status_code == status, r.text
    assert error in r.json()["detail"]
    if method == "retain":
        assert json.loads(r.headers["x-warden-decisions"]) == {"store": 1}
