"""A bank moved from memwarden's self-hosted store to the real Hindsight 1.1.0 and back, in Hindsight's
own transfer archive, driven by the real ``hindsight-client`` (``aexport_bank``, ``aimport_bank``,
the operations it polls) and by ``memwarden bank export|import``: every document, fact and tag, and
memwarden's ledger rows, come back equal; recall through memwarden in front of that Hindsight finds
what it found before."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import sqlite3
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from memwarden.db.memory_transfer import LEDGER_FIELDS
from tests.conftest import make_settings, running_warden
from tests.loopback.test_local_store import local_settings

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

ITEMS: list[dict[str, Any]] = [
    {
        "content": "Alice prefers dark roast coffee in the morning.",
        "tags": ["user:alice", "team:a"],
        "metadata": {"source": "chat", "channel": "dm"},
        "document_id": "pref-alice",
        "timestamp": "2025-03-04T10:00:00Z",
        "context": "chat",
        "entities": [{"text": "Alice", "type": "person"}],
    },
    {
        "content": "The staging cluster has 3 nodes with 16 GB RAM each.",
        "tags": ["team:infra"],
        "document_id": "infra-staging",
        "timestamp": "2024-11-02T08:30:00+00:00",
    },
    {
        "content": "Backups of the billing database run nightly at 02:00 UTC.",
        "tags": ["team:infra", "svc:billing"],
        "metadata": {"owner": "ops"},
        "document_id": "billing-backups",
    },
    {
        "content": "The quarterly security review happens in the Lisbon office.",
        "tags": ["team:security"],
        "document_id": "security-review",
        "timestamp": "2025-01-15T14:00:00Z",
        "context": "meeting notes",
        "entities": [{"text": "Lisbon"}, {"text": "security review"}],
    },
    {"content": "The retired payroll service ran on a Solaris box in rack 7.", "document_id": "payroll-box"},
    {"content": "默认模型：deepseek/deepseek-v4-flash"},
]
HELD = "默认模型：gpt-4.1"  # the same topic key as the model above: held for review
QUESTIONS = {
    "Which coffee does Alice prefer?": "pref-alice",
    "How many nodes does the staging cluster have?": "infra-staging",
    "When do the billing database backups run?": "billing-backups",
    "Where does the quarterly security review happen?": "security-review",
}
ARCHIVED = "payroll-box"  # archived in memwarden: recalled nowhere, kept in the ledger and the archive


@pytest.fixture
def servers(tmp_path: Path, hindsight_url: str) -> Iterator[tuple[str, str, str]]:
    """memwarden self-hosted (the source), memwarden in front of the real Hindsight, and a fresh
    self-hosted memwarden (the destination)."""
    front = make_settings(hindsight_url, data_dir=tmp_path / "front")
    with (
        running_warden(local_settings(tmp_path / "source")) as source,
        running_warden(front) as in_front,
        running_warden(local_settings(tmp_path / "destination")) as destination,
    ):
        yield source, in_front, destination


@contextlib.asynccontextmanager
async def hindsight_client(base: str) -> AsyncIterator[Hindsight]:
    client = Hindsight(base_url=base)
    try:
        yield client
    finally:
        await client.aclose()


async def fill(base: str, bank: str) -> None:
    async with hindsight_client(base) as client:
        await client.acreate_bank(bank, mission="Remember the team's infrastructure and preferences")
        await client.aupdate_bank_config(bank, retain_mission="Durable infrastructure facts")
        await client.aretain_batch(bank, ITEMS)
        await client.aretain(bank, HELD)
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        ledger = (await http.get(f"/warden/v1/banks/{bank}/memories")).json()["items"]
        (payroll,) = [m["id"] for m in ledger if m["document_id"] == ARCHIVED]
        r = await http.post(f"/warden/v1/banks/{bank}/memories/{payroll}/archive", json={"reason": "retired"})
        assert r.status_code == 200, r.text
        assert [m["status"] for m in ledger].count("review") == 1


async def found(base: str, bank: str) -> dict[str, str | None]:
    """The document of each question's first fact (a world fact: Hindsight's observations, which
    its consolidation writes, belong to no document)."""
    out = {}
    async with hindsight_client(base) as client:
        for question in QUESTIONS:
            answer = await client.arecall(bank, question, types=["world"], budget="high")
            out[question] = answer.results[0].document_id if answer.results else None
    return out


async def bank_state(base: str, bank: str) -> dict[str, Any]:
    """What a client sees of the bank: its documents (text, tags, metadata, times) and their
    chunks, its facts (valid and archived), its tags, its entities, its config."""
    async with httpx.AsyncClient(base_url=base, timeout=60) as http:
        p = f"/v1/default/banks/{bank}"
        listed = (await http.get(f"{p}/documents")).json()["items"]
        documents = []
        for item in sorted(listed, key=lambda d: d["id"]):
            full = (await http.get(f"{p}/documents/{item['id']}")).json()
            chunks = (await http.get(f"{p}/documents/{item['id']}/chunks")).json()["items"]
            documents.append(
                {
                    **{
                        k: full[k]
                        for k in ("id", "original_text", "tags", "created_at", "retain_params", "document_metadata")
                    },
                    "chunks": [(c["chunk_index"], c["chunk_text"]) for c in chunks],
                }
            )
        facts = {}
        for state in ("valid", "invalidated"):
            units = (await http.get(f"{p}/memories/list", params={"state": state})).json()["items"]
            keep = ("text", "document_id", "tags", "metadata", "context", "mentioned_at", "fact_type")
            facts[state] = sorted(({k: u[k] for k in keep} for u in units), key=lambda u: u["text"])
        tags = (await http.get(f"{p}/tags")).json()["items"]
        named = (await http.get(f"{p}/entities")).json()["items"]
        entities = sorted((e["canonical_name"], e["mention_count"]) for e in named)
        config = (await http.get(f"{p}/config")).json()["overrides"]
    return {"documents": documents, "facts": facts, "tags": tags, "entities": entities, "config": config}


def rows(data_dir: Path, sql: str, *args: Any) -> list[dict[str, Any]]:
    db = sqlite3.connect(data_dir / "memwarden.db")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(sql, args)]
    finally:
        db.close()


def ledger(data_dir: Path, bank: str) -> list[dict[str, Any]]:
    return rows(data_dir, f"SELECT {', '.join(LEDGER_FIELDS)} FROM memories WHERE bank = ? ORDER BY id", bank)  # noqa: S608


async def completed(client: Hindsight, bank: str, operation_id: str) -> dict[str, Any]:
    for _ in range(600):
        status = await client.operations.get_operation_status(bank, operation_id)
        if status.status in ("completed", "failed", "cancelled"):
            assert status.status == "completed", status.error_message
            return dict(status.result_metadata or {})
        await asyncio.sleep(0.1)
    raise AssertionError(f"operation {operation_id} did not finish")


async def test_a_bank_goes_to_hindsight_and_back(
    servers: tuple[str, str, str], hindsight_url: str, tmp_path: Path
) -> None:
    source, in_front, destination = servers
    bank, landing = f"move-{uuid.uuid4().hex[:8]}", f"landing-{uuid.uuid4().hex[:8]}"
    copy = f"{bank}-copy"
    async with (
        hindsight_client(source) as mine,
        hindsight_client(hindsight_url) as hindsight,
        hindsight_client(destination) as fresh,
    ):
        try:
            await fill(source, bank)
            before = await bank_state(source, bank)
            assert ("Alice", 1) in before["entities"]
            assert ("Lisbon", 1) in before["entities"]
            assert all(d["chunks"] for d in before["documents"] if d["original_text"])
            found_before = await found(source, bank)
            assert found_before == QUESTIONS

            # memwarden → Hindsight: the archive memwarden exports, restored by Hindsight itself.
            archive = await mine.aexport_bank(bank, poll_interval=0.1)
            await hindsight.acreate_bank(landing)
            operation = await hindsight.aimport_bank(landing, archive, target_bank_id=bank)
            restored = await completed(hindsight, landing, operation)
            assert restored["documents_imported"] == len(before["documents"]) + 1  # and the ledger's carrier
            assert restored["facts_imported"] == len(before["facts"]["valid"])
            # Hindsight holds every document, fact and tag; the archived memory is no fact of it.
            there = await bank_state(hindsight_url, bank)
            assert [d["id"] for d in there["documents"]] == sorted(
                [*(d["id"] for d in before["documents"]), "memwarden-ledger"]
            )
            assert [(u["text"], u["tags"]) for u in there["facts"]["valid"]] == [
                (u["text"], u["tags"]) for u in before["facts"]["valid"]
            ]
            assert there["tags"] == before["tags"]
            # Recall through memwarden in front of that Hindsight finds what it found before.
            assert await found(in_front, bank) == found_before
            # An import through memwarden in front of Hindsight goes to Hindsight as sent, audited.
            async with hindsight_client(in_front) as front:
                submitted = await front.bank_transfer.import_bank_transfer(copy, ("bank.zip", archive), mode="merge")
                merged = await completed(front, copy, submitted.operation_id)
            assert merged["documents_imported"] == restored["documents_imported"]
            (event,) = rows(tmp_path / "front", "SELECT bank, after FROM audit_events WHERE action = 'import'")
            assert event["bank"] == copy
            assert json.loads(event["after"])["backend_operation_id"] == submitted.operation_id

            # Hindsight → memwarden: Hindsight's own export, restored in a fresh memwarden.
            back = await hindsight.aexport_bank(bank, poll_interval=0.2)
            await fresh.acreate_bank(landing)
            result = await completed(fresh, landing, await fresh.aimport_bank(landing, back, target_bank_id=bank))
            assert result["memwarden"]["checked"] == "hindsight"  # Hindsight's archive: no memwarden checksums
            assert await bank_state(destination, bank) == before
            assert ledger(tmp_path / "destination", bank) == ledger(tmp_path / "source", bank)
            assert await found(destination, bank) == found_before
            # The held memory is still held, and approved here as it would have been at the source.
            async with httpx.AsyncClient(base_url=destination, timeout=60) as http:
                (held,) = (await http.get(f"/warden/v1/banks/{bank}/review")).json()["items"]
                approved = await http.post(f"/warden/v1/banks/{bank}/review/{held['held']['id']}/approve")
                assert approved.json()["status"] == "active"
        finally:
            for name in (bank, landing, copy):
                with contextlib.suppress(Exception):
                    await hindsight.adelete_bank(name)


def memwarden(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    return subprocess.run(
        [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", *args],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


async def test_the_command_line_moves_a_bank_to_hindsight_and_back(
    servers: tuple[str, str, str], hindsight_url: str, tmp_path: Path
) -> None:
    source, _, destination = servers
    bank = f"cli-{uuid.uuid4().hex[:8]}"
    try:
        await fill(source, bank)
        before = await bank_state(source, bank)
        out = memwarden("bank", "export", bank, "a.zip", "--url", source, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        assert "6 documents, 5 facts, 7 ledger rows" in out.stdout  # the archived memory is no fact
        # An edited file is refused before anything is sent.
        spoiled = bytearray((tmp_path / "a.zip").read_bytes())
        spoiled[len(spoiled) // 3] ^= 0xFF
        (tmp_path / "spoiled.zip").write_bytes(bytes(spoiled))
        refused = memwarden("bank", "import", "spoiled.zip", "--into", hindsight_url, cwd=tmp_path)
        assert refused.returncode == 1
        assert "spoiled.zip is refused:" in refused.stderr
        async with httpx.AsyncClient(base_url=hindsight_url) as http:
            assert (await http.get(f"/v1/default/banks/{bank}/config")).status_code == 404

        moved = memwarden("bank", "import", "a.zip", "--into", hindsight_url, cwd=tmp_path)
        assert moved.returncode == 0, moved.stderr
        assert f"bank {bank} at {hindsight_url}: 7 documents imported" in moved.stdout  # and the ledger's carrier
        again = memwarden("bank", "import", "a.zip", "--into", hindsight_url, cwd=tmp_path)
        assert again.returncode == 1
        assert f"bank '{bank}' already exists" in again.stderr
        out = memwarden("bank", "export", bank, "b.zip", "--url", hindsight_url, cwd=tmp_path)
        assert out.returncode == 0, out.stderr
        moved = memwarden("bank", "import", "b.zip", "--into", destination, cwd=tmp_path)
        assert moved.returncode == 0, moved.stderr
        assert "7 ledger rows" in moved.stdout
        merged = memwarden("bank", "import", "b.zip", "--into", destination, "--merge", cwd=tmp_path)
        assert merged.returncode == 0, merged.stderr
        assert "0 documents imported (6 skipped), 0 facts, 0 ledger rows" in merged.stdout  # it holds them all
        after = await bank_state(destination, bank)
        assert after["documents"] == before["documents"]
        assert after["facts"] == before["facts"]
        assert ledger(tmp_path / "destination", bank) == ledger(tmp_path / "source", bank)
        # The bank's config came along (applied as Hindsight keeps it: its overrides).
        assert json.dumps(after["config"]).count("Durable infrastructure facts") == 1
    finally:
        async with httpx.AsyncClient(base_url=hindsight_url) as http:
            await http.delete(f"/v1/default/banks/{bank}")
