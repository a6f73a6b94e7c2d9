"""memwarden in front of Mem0: the official ``hindsight-client`` and memwarden's own API writing
through memwarden into Mem0's real ``Memory`` engine (``testing/mem0.py``: local qdrant, SQLite
history, the offline OpenAI stand-in), checked in the engine itself. The official ``mem0ai``
client's suite runs against the same engine in ``test_mem0_client.py`` (its ``mem0`` case)."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from tests import mem0_rig
from tests.conftest import running_warden

FACT = "The deploy key for staging rotates every 90 days, decided by Priya."
OTHER = "Our Postgres primary runs on host db-3 in the Frankfurt region."
NOISE = "thanks!"


def held(rig: Any, bank: str) -> list[dict[str, Any]]:
    """What Mem0's engine holds for the bank, read from the engine itself."""
    found: list[dict[str, Any]] = rig.memory.get_all(filters={"user_id": bank}, top_k=1000)["results"]
    return found


@pytest.fixture
def warden(mem0_server: tuple[str, Any], tmp_path: Path) -> Iterator[tuple[str, Any]]:
    url, rig = mem0_server
    rig.down = False
    with running_warden(
        mem0_rig.mem0_settings(url, tmp_path, outbox={"retry_initial": 0.05, "retry_max": 0.2})
    ) as warden:
        yield warden, rig


def bank_id() -> str:
    return f"b-{uuid.uuid4().hex[:10]}"


@pytest.mark.anyio
async def test_hindsight_client_retains_into_mem0_governed(warden: tuple[str, Any]) -> None:
    url, rig = warden
    bank = bank_id()
    client = Hindsight(base_url=url, timeout=60)
    try:
        await client.acreate_bank(bank, name="ops")
        answer = await client.aretain_batch(bank, [{"content": FACT, "tags": ["team:infra"]}, {"content": NOISE}])
        assert answer.success
        stored = held(rig, bank)
        assert [m["memory"] for m in stored] == [FACT]  # the noise never reached Mem0
        tags = stored[0]["metadata"]["mw_tags"]
        assert "team:infra" in tags
        assert any(t.startswith("topic:") for t in tags)
        assert any(t.startswith("stage:") for t in tags)
        assert stored[0]["metadata"]["mw_document"].startswith("mw-")

        recalled = await client.arecall(bank, "how often does the staging deploy key rotate?")
        assert [r.text for r in recalled.results] == [FACT]
        # memwarden's labels are invisible to a filter that does not name them; the client's tag works
        mine = await client.arecall(bank, "deploy key", tags=["team:infra"], tags_match="all_strict")
        assert [r.text for r in mine.results] == [FACT]
        assert (await client.arecall(bank, "deploy key", tags=["team:web"], tags_match="any_strict")).results == []

        listed = await client.alist_memories(bank)
        assert [m.text for m in listed.items] == [FACT]
    finally:
        await client.aclose()


@pytest.mark.parametrize("document", ["runbook-7", "run book 7 (ops)"])  # the second no Mem0 entity id
def test_a_document_retained_again_replaces_it_and_a_redelivery_stores_nothing_twice(
    warden: tuple[str, Any], document: str
) -> None:
    url, rig = warden
    bank = bank_id()
    body = {"items": [{"content": FACT, "document_id": document}]}
    for _ in range(2):  # the same delivery twice (its first answer lost): one memory
        assert httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=body, timeout=60).status_code == 200
    assert [m["memory"] for m in held(rig, bank)] == [FACT]
    body = {"items": [{"content": OTHER, "document_id": document}]}
    assert httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=body, timeout=60).status_code == 200
    assert [m["memory"] for m in held(rig, bank)] == [OTHER]  # the document replaced, as Hindsight does
    assert [d["id"] for d in httpx.get(f"{url}/v1/default/banks/{bank}/documents", timeout=30).json()["items"]] == [
        document
    ]


def test_mem0_down_the_write_is_queued_and_delivered_once_when_it_is_back(warden: tuple[str, Any]) -> None:
    url, rig = warden
    bank = bank_id()
    rig.down = True
    try:
        r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": [{"content": FACT}]}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["async"] is True  # accepted, queued in the outbox
        assert held(rig, bank) == []
    finally:
        rig.down = False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not held(rig, bank):
        time.sleep(0.1)
    time.sleep(0.5)  # a second delivery would land by now
    assert [m["memory"] for m in held(rig, bank)] == [FACT]
    ledger = mem0_rig.ledger(url, bank)
    assert [m["status"] for m in ledger] == ["active"]


def test_what_mem0_cannot_do_is_a_precise_error_and_changes_nothing(warden: tuple[str, Any]) -> None:
    url, rig = warden
    bank = bank_id()
    httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": [{"content": FACT}]}, timeout=60)
    before = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": "1000"}, timeout=30).json()["events"]
    for method, path, body in (
        ("PATCH", "config", {"updates": {"retain_mission": "keep everything"}}),
        ("GET", "config", None),
        ("POST", "reflect", {"query": "what do we know?"}),
        ("GET", "mental-models", None),
    ):
        r = httpx.request(method, f"{url}/v1/default/banks/{bank}/{path}", json=body, timeout=30)
        assert r.status_code == 501, (path, r.status_code, r.text)
        assert "Mem0" in r.text or "mem0" in r.text
    after = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": "1000"}, timeout=30).json()["events"]
    assert [e["action"] for e in after] == [e["action"] for e in before]
    assert [m["memory"] for m in held(rig, bank)] == [FACT]


def test_health_names_mem0_and_what_it_cannot_do(warden: tuple[str, Any]) -> None:
    url, rig = warden
    health = httpx.get(f"{url}/warden/health", timeout=30).json()
    assert health["backend"]["kind"] == "mem0"
    assert health["backend"]["healthy"] is True
    assert "config_guard" not in health["backend"]["capabilities"]
    rig.down = True
    try:
        health = httpx.get(f"{url}/warden/health", timeout=30).json()
        assert health["status"] == "degraded"
        assert health["backend"]["healthy"] is False
    finally:
        rig.down = False


def test_a_mem0_client_delete_all_erases_the_user_from_mem0(warden: tuple[str, Any]) -> None:
    url, rig = warden
    from mem0 import MemoryClient

    client = MemoryClient(host=f"{url}/mem0", api_key="any-key-on-loopback")
    try:
        bank = client.project_id  # the Mem0 front's bank: one Mem0 user in the engine
        before = {m["memory"] for m in held(rig, bank)}
        user = f"u-{uuid.uuid4().hex[:6]}"
        added = client.add(
            [{"role": "user", "content": FACT}, {"role": "user", "content": OTHER}], user_id=user, infer=False
        )
        assert mem0_rig.event(url, added["event_id"])["status"] == "SUCCEEDED"
        assert {m["memory"] for m in held(rig, bank)} == before | {FACT, OTHER}
        assert {m["memory"] for m in client.search("Postgres primary host", filters={"user_id": user})["results"]} >= {
            OTHER
        }
        client.delete_all(user_id=user)
        assert {m["memory"] for m in held(rig, bank)} == before  # out of Mem0's vector store
    finally:
        client.client.close()
