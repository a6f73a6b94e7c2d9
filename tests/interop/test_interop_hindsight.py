"""Interoperability with the real Hindsight 1.1.0 server, driven by the real ``hindsight-client``.

The same client script runs twice — straight at Hindsight and through memwarden — on two banks
fed identically; the answers must be equal once ids, timestamps and bank names are set aside.
"""

from __future__ import annotations

import asyncio
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from tests.conftest import make_settings, running_warden

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

VOLATILE = {
    "id",
    "bank_id",
    "document_id",
    "chunk_id",
    "operation_id",
    "operation_ids",
    "mentioned_at",
    "occurred_start",
    "occurred_end",
    "created_at",
    "updated_at",
    "last_consolidated_at",
    "last_memory_write_at",
    "usage",
    "source_fact_ids",
    "content_hash",
    "name",
}


def scrub(value: Any, bank: str) -> Any:
    """Drop ids and timestamps; replace the bank name so two banks compare equal."""
    if isinstance(value, dict):
        return {k: scrub(v, bank) for k, v in sorted(value.items()) if k not in VOLATILE}
    if isinstance(value, list):
        return [scrub(v, bank) for v in value]
    if isinstance(value, str):
        return value.replace(bank, "<bank>")
    return value


def as_dict(model: Any) -> Any:
    return model.to_dict() if hasattr(model, "to_dict") else model


async def wait_settled(client: Hindsight, bank: str) -> None:
    """Until no retain or consolidation work is pending for the bank (60 s at most)."""
    deadline = asyncio.get_running_loop().time() + 60
    while True:
        stats = await client.banks.get_agent_stats(bank, refresh=True)
        busy = stats.pending_operations or (stats.pending_consolidation or 0)
        processing = (stats.operations_by_status or {}).get("processing", 0)
        if not busy and not processing:
            return
        if asyncio.get_running_loop().time() > deadline:
            raise AssertionError(f"bank {bank} did not settle: {stats}")
        await asyncio.sleep(0.3)


ITEMS = [
    {"content": "Alice prefers dark roast coffee in the morning.", "tags": ["user:alice", "topic:food"]},
    {"content": "Bob is allergic to peanuts.", "tags": ["user:bob", "topic:health"]},
    {"content": "Carol drives a red Tesla to the office.", "tags": ["user:carol"], "metadata": {"source": "chat"}},
]


async def scenario(base_url: str, bank: str) -> dict[str, Any]:
    client = Hindsight(base_url=base_url)
    out: dict[str, Any] = {}
    try:
        out["version"] = as_dict(await client.aget_version())
        out["create"] = await client.acreate_bank(bank, retain_mission="Remember durable user facts")
        out["create"] = as_dict(out["create"])
        sync = await client.aretain(
            bank, ITEMS[0]["content"], tags=ITEMS[0]["tags"], context="chat", metadata={"turn": "1"}
        )
        out["retain_sync"] = as_dict(sync)
        batch = await client.aretain_batch(bank, ITEMS[1:], retain_async=True)
        out["retain_async"] = as_dict(batch)
        assert batch.operation_id, "async retain must return an operation id"
        await wait_settled(client, bank)
        operation = await client.operations.get_operation_status(bank, batch.operation_id)
        out["operation_status"] = operation.status

        for name, tags, match in [
            ("alice_any_strict", ["user:alice"], "any_strict"),
            ("bob_all", ["user:bob", "topic:health"], "all_strict"),
            ("nobody", ["user:zed"], "any_strict"),
        ]:
            recall = await client.arecall(
                bank, "Alice coffee Bob peanuts Carol Tesla", tags=tags, tags_match=match, types=["world"]
            )
            out[f"recall_{name}"] = sorted((r.text, tuple(sorted(r.tags or []))) for r in recall.results)
        everything = await client.arecall(bank, "coffee peanuts Tesla", types=["world"])
        out["recall_all_texts"] = sorted(r.text for r in everything.results)

        memories = await client.alist_memories(bank, type="world")
        out["list_memories"] = sorted(
            (m["text"], tuple(sorted(m.get("tags") or []))) for m in as_dict(memories)["items"]
        )
        out["list_memories_total"] = memories.total

        out["config_before"] = scrub(await client.aget_bank_config(bank), bank)
        patched = await client.aupdate_bank_config(
            bank,
            retain_mission="Store durable facts only",
            entity_labels=[
                {
                    "key": "topic",
                    "description": "Topic",
                    "type": "value",
                    "values": [{"value": "food", "description": "food"}],
                }
            ],
        )
        out["config_patched"] = scrub(patched, bank)
        out["config_after_patch"] = scrub(await client.aget_bank_config(bank), bank)
        out["config_reset"] = scrub(await client.areset_bank_config(bank), bank)

        stats = await client.banks.get_agent_stats(bank, refresh=True)
        out["stats"] = {
            "total_nodes": stats.total_nodes,
            "total_documents": stats.total_documents,
            "nodes_by_fact_type": stats.nodes_by_fact_type,
        }
        documents = await client.documents.list_documents(bank)
        out["documents_total"] = documents.total
        first = documents.items[0].id
        document = await client.documents.get_document(bank, first)
        out["document"] = {"original_text": document.original_text, "tags": sorted(document.tags or [])}
        banks = await client.banks.list_banks()
        out["bank_listed"] = any(b.bank_id == bank for b in banks.banks)
        out["delete"] = scrub(as_dict(await client.adelete_bank(bank)), bank)
    finally:
        await client.aclose()
    return scrub(out, bank)


@pytest.fixture(scope="module")
def warden_in_front(hindsight_url: str) -> Iterator[str]:
    """memwarden with governance off: these tests prove the pass-through is transparent (the
    governed behaviour has its own interop tests in test_interop_governance.py)."""
    with running_warden(make_settings(hindsight_url, governance={"mode": "off"})) as url:
        yield url


async def test_client_script_gives_the_same_answers_direct_and_through_memwarden(
    hindsight_url: str, warden_in_front: str
) -> None:
    suffix = uuid.uuid4().hex[:8]
    direct = await scenario(hindsight_url, f"interop-direct-{suffix}")
    proxied = await scenario(warden_in_front, f"interop-proxied-{suffix}")
    # The script exercised what it meant to: facts were stored and found, filters filtered.
    assert direct["recall_alice_any_strict"] == [(ITEMS[0]["content"], ("topic:food", "user:alice"))]
    assert direct["recall_nobody"] == []
    assert direct["list_memories_total"] == 3
    assert direct["operation_status"] == "completed"
    assert direct["config_after_patch"]["overrides"]["retain_mission"] == "Store durable facts only"
    assert direct["bank_listed"] is True
    for key in direct:
        assert proxied[key] == direct[key], f"step {key!r} differs through memwarden"
    assert proxied == direct


async def test_errors_come_back_in_hindsights_shape(hindsight_url: str, warden_in_front: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        for base in (hindsight_url, warden_in_front):
            missing = await http.get(f"{base}/v1/default/banks/no-such-bank-{uuid.uuid4().hex[:6]}/stats")
            assert missing.status_code == 404
            assert missing.json()["detail"].startswith("Bank '")
        flat = {"entity_labels": []}
        direct = await http.patch(f"{hindsight_url}/v1/default/banks/x-flat/config", json=flat)
        proxied = await http.patch(f"{warden_in_front}/v1/default/banks/x-flat/config", json=flat)
        assert (
            (proxied.status_code, proxied.json())
            == (direct.status_code, direct.json())
            == (
                422,
                {"detail": [{"type": "missing", "loc": ["body", "updates"], "msg": "Field required", "input": flat}]},
            )
        )
        assert proxied.headers.get("x-ignored-params") == direct.headers.get("x-ignored-params") == "entity_labels"


async def test_health_and_version_reflect_the_backend(hindsight_url: str, warden_in_front: str) -> None:
    async with httpx.AsyncClient(timeout=30) as http:
        direct = (await http.get(f"{hindsight_url}/version")).json()
        proxied = (await http.get(f"{warden_in_front}/version")).json()
        assert proxied == direct
        health = await http.get(f"{warden_in_front}/health")
        assert health.status_code == 200
        assert health.json()["status"] == "healthy"
        warden = (await http.get(f"{warden_in_front}/warden/health")).json()
        assert warden["status"] == "ok"
        assert warden["backend"]["api_version"] == "1.1.0"


async def _wait_operation(http: httpx.AsyncClient, base: str, bank: str, operation_id: str) -> dict[str, Any]:
    for _ in range(200):
        op = (await http.get(f"{base}/v1/default/banks/{bank}/operations/{operation_id}")).json()
        if op["status"] in {"completed", "failed"}:
            return dict(op)
        await asyncio.sleep(0.1)
    raise AssertionError(f"operation {operation_id} did not finish")


async def test_file_upload_and_export_zip_pass_through(hindsight_url: str, warden_in_front: str) -> None:
    bank = f"interop-files-{uuid.uuid4().hex[:8]}"
    text = "Dana runs the Berlin office.\nEve manages the payroll system.\n"
    async with httpx.AsyncClient(timeout=60) as http:
        assert (await http.put(f"{warden_in_front}/v1/default/banks/{bank}", json={})).status_code == 200
        # Multipart upload to /files/retain through memwarden.
        upload = await http.post(
            f"{warden_in_front}/v1/default/banks/{bank}/files/retain",
            files={"files": ("notes.txt", text.encode(), "text/plain")},
            data={"request": '{"files_metadata": [{"tags": ["src:file"]}]}'},
        )
        assert upload.status_code == 200, upload.text
        for operation_id in upload.json()["operation_ids"]:
            assert (await _wait_operation(http, warden_in_front, bank, operation_id))["status"] == "completed"
        # The conversion operation completes by queueing a retain operation of its own.
        for _ in range(100):
            documents = (await http.get(f"{hindsight_url}/v1/default/banks/{bank}/documents")).json()
            if documents["total"]:
                break
            await asyncio.sleep(0.2)
        assert documents["total"] == 1
        assert documents["items"][0]["tags"] == ["src:file"]

        # The export zip, streamed back through memwarden byte for byte.
        started = await http.post(f"{warden_in_front}/v1/default/banks/{bank}/document-transfer/export", json={})
        op = await _wait_operation(http, warden_in_front, bank, started.json()["operation_id"])
        download = op["result_metadata"]["download_url"]
        direct = await http.get(f"{hindsight_url}{download}")
        proxied = await http.get(f"{warden_in_front}{download}")
        assert direct.status_code == proxied.status_code == 200
        assert proxied.content == direct.content
        assert proxied.content[:2] == b"PK"  # a zip archive
        assert proxied.headers["content-type"] == direct.headers["content-type"]
        await http.delete(f"{hindsight_url}/v1/default/banks/{bank}")
