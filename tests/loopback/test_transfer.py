"""A bank exported and imported in Hindsight's transfer archive, on the self-hosted store: what
survives the trip (documents, facts, tags, metadata, timestamps, the ledger's rows, archived and
held memories), and what is refused — precisely, with nothing written."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import sqlite3
import subprocess
import sys
import zipfile
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import httpx
import pytest
from pydantic import SecretStr

from memwarden.db.memory_transfer import LEDGER_FIELDS
from memwarden.proxy.app import create_app
from memwarden.store import archive, archive_read
from testing.postgres import drop_database, fresh_database
from tests.loopback.test_local_store import local_settings

pytestmark = pytest.mark.anyio
BANK = "team-a"
B = f"/v1/default/banks/{BANK}"
ITEMS = [
    {
        "content": "Alice prefers dark roast coffee in the morning.",
        "tags": ["user:alice"],
        "metadata": {"source": "chat"},
        "document_id": "pref-alice",
        "timestamp": "2025-03-04T10:00:00Z",
        "context": "chat",
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
    },
    {"content": "默认模型：deepseek/deepseek-v4-flash"},
]
HELD = "默认模型：gpt-4.1"  # conflicts with the model above on its topic key: held for review


# The memwardens whose state is on PostgreSQL: their data folder, their database's URL.
ON_POSTGRES: dict[Path, str] = {}


@contextlib.asynccontextmanager
async def local(data_dir: Path, **governance: Any) -> AsyncIterator[httpx.AsyncClient]:
    """A self-hosted memwarden in process (lifespan run), through ASGITransport; its state on the
    PostgreSQL database ``ON_POSTGRES`` names for ``data_dir``, if it names one."""
    settings = local_settings(data_dir)
    if data_dir in ON_POSTGRES:
        settings = settings.model_copy(
            update={"database": settings.database.model_copy(update={"url": SecretStr(ON_POSTGRES[data_dir])})}
        )
    if governance:
        settings = settings.model_copy(update={"governance": settings.governance.model_copy(update=governance)})
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1", timeout=60) as client:
            yield client


def rows(data_dir: Path, sql: str, *args: Any) -> list[dict[str, Any]]:
    if data_dir in ON_POSTGRES:
        from memwarden.db.postgres import connect

        pg = connect(ON_POSTGRES[data_dir])
        try:
            return [dict(r) for r in pg.execute(sql, args)]
        finally:
            pg.close()
    db = sqlite3.connect(data_dir / "memwarden.db")
    db.row_factory = sqlite3.Row
    try:
        return [dict(r) for r in db.execute(sql, args)]
    finally:
        db.close()


def counts(data_dir: Path) -> dict[str, int]:
    """How much the database holds, table by table: what a refused import must leave as it was."""
    tables = ("memories", "audit_events", "store_banks", "store_documents", "store_units", "store_operations")
    return {t: rows(data_dir, f"SELECT COUNT(*) AS n FROM {t}")[0]["n"] for t in tables}  # noqa: S608


async def fill(client: httpx.AsyncClient) -> None:
    """The bank: four memories (one archived, one with feedback) and one held for review."""
    r = await client.post(f"{B}/memories", json={"items": ITEMS})
    assert r.status_code == 200, r.text
    r = await client.post(f"{B}/memories", json={"items": [{"content": HELD}]})
    assert json.loads(r.headers["x-warden-decisions"]) == {"review": 1}
    ledger = (await client.get(f"/warden/v1/banks/{BANK}/memories", params={"limit": 100})).json()["items"]
    by_text = {m["content"]: m["id"] for m in ledger}
    backups = by_text[str(ITEMS[2]["content"])]
    assert (await client.post(f"/warden/v1/banks/{BANK}/memories/{backups}/archive", json={})).status_code == 200
    alice = by_text[str(ITEMS[0]["content"])]
    r = await client.post(f"/warden/v1/banks/{BANK}/memories/{alice}/feedback", json={"score": 1})
    assert r.status_code == 200, r.text


async def export(client: httpx.AsyncClient, bank: str = BANK, **params: Any) -> bytes:
    r = await client.post(f"/v1/default/banks/{bank}/transfer/export", params=params)
    assert r.status_code == 202, r.text
    status = (await client.get(f"/v1/default/banks/{bank}/operations/{r.json()['operation_id']}")).json()
    assert status["status"] == "completed"
    download = await client.get(status["result_metadata"]["download_url"])
    assert download.status_code == 200
    assert download.headers["content-type"] == "application/zip"
    return download.content


async def make_landing(client: httpx.AsyncClient, data_dir: Path) -> None:
    """The bank a restore's operation is recorded against (Hindsight's rule: one that exists),
    made and settled (its guarded change verified) before a test counts what the database holds."""
    assert (await client.put("/v1/default/banks/landing", json={})).status_code == 200
    for _ in range(200):
        if rows(data_dir, "SELECT 1 FROM audit_events WHERE action = 'config_verify' AND bank = 'landing'"):
            return
        await asyncio.sleep(0.025)
    raise AssertionError("the landing bank's change was not verified")


async def restore(
    client: httpx.AsyncClient, data: bytes, target: str = BANK, landing: str = "landing"
) -> httpx.Response:
    """Hindsight's restore: the operation is recorded against a bank that exists (``landing``)."""
    return await client.post(
        f"/v1/default/banks/{landing}/transfer/import",
        params={"target_bank_id": target},
        files={"file": ("bank.zip", data, "application/zip")},
    )


async def documents(client: httpx.AsyncClient, bank: str = BANK) -> list[dict[str, Any]]:
    items = (await client.get(f"/v1/default/banks/{bank}/documents")).json()["items"]
    keep = ("id", "original_text", "tags", "created_at", "retain_params", "document_metadata")
    out = []
    for item in items:
        full = (await client.get(f"/v1/default/banks/{bank}/documents/{item['id']}")).json()
        out.append({k: full[k] for k in keep})
    return sorted(out, key=lambda d: d["id"])


async def facts(client: httpx.AsyncClient, state: str, bank: str = BANK) -> list[dict[str, Any]]:
    listed = (await client.get(f"/v1/default/banks/{bank}/memories/list", params={"state": state})).json()["items"]
    keep = ("text", "document_id", "tags", "metadata", "context", "mentioned_at", "fact_type", "state")
    return sorted(({k: u[k] for k in keep} for u in listed), key=lambda u: u["text"])


def ledger(data_dir: Path, bank: str = BANK) -> list[dict[str, Any]]:
    return rows(data_dir, f"SELECT {', '.join(LEDGER_FIELDS)} FROM memories WHERE bank = ? ORDER BY id", bank)  # noqa: S608


async def top_document(client: httpx.AsyncClient, query: str, bank: str = BANK) -> str | None:
    r = await client.post(f"/v1/default/banks/{bank}/memories/recall", json={"query": query, "types": ["world"]})
    results = r.json()["results"]
    return results[0]["document_id"] if results else None


QUESTIONS = ("dark roast coffee", "staging cluster nodes", "billing backups nightly")


async def test_a_bank_restored_in_another_memwarden_is_the_same_bank(tmp_path: Path) -> None:
    source, target = tmp_path / "a", tmp_path / "b"
    async with local(source) as a:
        await fill(a)
        found = [await top_document(a, q) for q in QUESTIONS]
        data = await export(a)
        before = (await documents(a), await facts(a, "valid"), await facts(a, "invalidated"), ledger(source))
    assert found[:2] == ["pref-alice", "infra-staging"]
    async with local(target) as b:
        await make_landing(b, target)
        r = await restore(b, data)
        assert r.status_code == 202, r.text
        status = (await b.get(f"/v1/default/banks/landing/operations/{r.json()['operation_id']}")).json()
        assert status["status"] == "completed"
        assert status["result_metadata"]["documents_imported"] == 4
        assert status["result_metadata"]["memwarden"]["memories_imported"] == 5
        after = (await documents(b), await facts(b, "valid"), await facts(b, "invalidated"), ledger(target))
        assert after == before
        assert [await top_document(b, q) for q in QUESTIONS] == found
        # The memory held for review came along, and is approved here as it would have been there.
        (held,) = (await b.get(f"/warden/v1/banks/{BANK}/review")).json()["items"]
        assert held["held"]["content"] == HELD
        approved = await b.post(f"/warden/v1/banks/{BANK}/review/{held['held']['id']}/approve")
        assert approved.json()["status"] == "active"
        # The feedback given there still ranks the memory here.
        votes = rows(target, "SELECT feedback FROM store_units WHERE document_id = 'pref-alice'")
        assert votes == [{"feedback": 1}]
        # Audited: one event for the bank, one per memory (its timeline says where it came from).
        events = rows(target, "SELECT memory_id, after FROM audit_events WHERE action = 'import'")
        assert len(events) == 6
        assert sum(e["memory_id"] is None for e in events) == 1
        (alice,) = [m for m in before[3] if m["document_id"] == "pref-alice"]
        account = (await b.get(f"/warden/v1/banks/{BANK}/memories/{alice['id']}")).json()
        assert [e["action"] for e in account["events"]] == ["import"]


@pytest.mark.slow
async def test_a_bank_moves_from_sqlite_to_postgresql_and_back_unchanged(tmp_path: Path, postgres_server: str) -> None:
    """``bank export`` on one engine, ``bank import`` on the other: the same documents, facts,
    ledger rows and answers — SQLite to PostgreSQL (pgvector, the posting list), then back."""
    first, middle, last = tmp_path / "sqlite", tmp_path / "postgresql", tmp_path / "sqlite-again"
    ON_POSTGRES[middle] = fresh_database(postgres_server)
    try:
        async with local(first) as a:
            await fill(a)
            found = [await top_document(a, q) for q in QUESTIONS]
            data = await export(a)
            before = (await documents(a), await facts(a, "valid"), await facts(a, "invalidated"), ledger(first))
        for target in (middle, last):
            async with local(target) as b:
                await make_landing(b, target)
                r = await restore(b, data)
                assert r.status_code == 202, r.text
                status = (await b.get(f"/v1/default/banks/landing/operations/{r.json()['operation_id']}")).json()
                assert status["status"] == "completed", status
                after = (await documents(b), await facts(b, "valid"), await facts(b, "invalidated"), ledger(target))
                assert after == before, target.name
                assert [await top_document(b, q) for q in QUESTIONS] == found, target.name
                assert rows(target, "SELECT feedback FROM store_units WHERE document_id = 'pref-alice'") == [
                    {"feedback": 1}
                ]
                data = await export(b)  # what goes on to the next engine: this one's export
    finally:
        drop_database(ON_POSTGRES.pop(middle))


async def test_a_documents_chunks_and_its_memories_entities_survive_the_trip(tmp_path: Path) -> None:
    """A document retained as two items keeps its two chunks (each memory pointing at its own) and
    the entities its items named: exported in Hindsight's fields (``chunks``, a fact's
    ``chunk_index`` and ``entities``) and restored as they were."""
    trip = [
        {"content": "Alice moved the standup to 9:30.", "document_id": "notes", "entities": [{"text": "Alice"}]},
        {"content": "Bob owns the billing migration.", "document_id": "notes", "entities": [{"text": "Bob"}]},
    ]
    source, target = tmp_path / "a", tmp_path / "b"

    async def seen(client: httpx.AsyncClient) -> tuple[Any, ...]:
        chunks = (await client.get(f"{B}/documents/notes/chunks")).json()["items"]
        named = (await client.get(f"{B}/entities")).json()["items"]
        units = rows(
            source if client is a else target,
            "SELECT u.text, c.chunk_index FROM store_units u JOIN store_chunks c ON c.chunk_id = u.chunk_id"
            " WHERE u.bank_id = ? ORDER BY u.text",
            BANK,
        )
        return (
            [(c["chunk_index"], c["chunk_text"]) for c in chunks],
            sorted((e["canonical_name"], e["mention_count"]) for e in named),
            [(u["text"], u["chunk_index"]) for u in units],
        )

    async with local(source) as a:
        r = await a.post(f"{B}/memories", json={"items": trip})
        assert r.status_code == 200, r.text
        before = await seen(a)
        data = await export(a)
    assert before[0] == [(0, trip[0]["content"]), (1, trip[1]["content"])]
    assert before[1] == [("Alice", 1), ("Bob", 1)]
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        exported = [json.loads(z.read(n)) for n in z.namelist() if n.startswith("documents/")]
    (notes,) = [d for d in exported if d["id"] == "notes"]
    assert [c["chunk_index"] for c in notes["chunks"]] == [0, 1]
    assert sorted((f["text"], f["chunk_index"], f["entities"]) for f in notes["facts"]) == [
        (trip[0]["content"], 0, ["Alice"]),
        (trip[1]["content"], 1, ["Bob"]),
    ]
    async with local(target) as b:
        await make_landing(b, target)
        assert (await restore(b, data)).status_code == 202
        assert await seen(b) == before


async def test_an_export_is_audited_and_says_what_it_holds(tmp_path: Path) -> None:
    async with local(tmp_path) as a:
        await fill(a)
        data = await export(a)
    checked = archive_read.read(data)
    assert checked.checked == "memwarden"
    assert checked.manifest.archive_type == "bank"
    assert {d.id for d in checked.documents} >= {"pref-alice", "infra-staging"}
    assert checked.ledger_rows == 5
    assert len(checked.carried) == 1  # the held memory: the bank holds no document of it
    (event,) = rows(tmp_path, "SELECT after FROM audit_events WHERE action = 'export'")
    assert json.loads(event["after"])["sha256"] == checked.sha256
    # The archived memory is not a fact of the archive (another server would recall it) …
    assert not any("Backups" in f.text for d in checked.documents for f in d.facts)
    # … but rides in its document's ledger block.
    (backups,) = [b for b in checked.blocks.values() if b.archived_units]
    assert backups.archived_units[0].text.startswith("Backups")


async def test_secrets_are_not_in_an_export(tmp_path: Path) -> None:
    secret = "AKIAQ3EGRT5LZ7YXK2PB"
    async with local(tmp_path, secrets="redact") as a:
        r = await a.post(
            f"{B}/memories",
            json={"items": [{"content": f"The CI deploy key is {secret} for the staging bucket.", "tags": ["ci"]}]},
        )
        assert json.loads(r.headers["x-warden-decisions"]) == {"redact": 1}
        data = await export(a)
    with zipfile.ZipFile(io.BytesIO(data)) as zf:
        everything = b"".join(zf.read(n) for n in zf.namelist())
    assert b"CI deploy key" in everything  # the memory is there …
    assert secret.encode() not in everything  # … its secret is not


def rezip(data: bytes, edit: Callable[[str, bytes], bytes | None], add: dict[str, bytes] | None = None) -> bytes:
    """``data`` with each entry through ``edit`` (None: dropped), and ``add``'s entries."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zout:
        for name in zin.namelist():
            content = edit(name, zin.read(name))
            if content is not None:
                zout.writestr(name, content)
        for name, content in (add or {}).items():
            zout.writestr(name, content)
    return out.getvalue()


def _edit_json(target: str, change: Callable[[Any], None]) -> Callable[[str, bytes], bytes | None]:
    def edit(name: str, content: bytes) -> bytes:
        if name != target:
            return content
        value = json.loads(content)
        change(value)
        return json.dumps(value).encode()

    return edit


def _text(doc: dict[str, Any]) -> None:
    doc["original_text"] = "Alice prefers green tea."


def _count(manifest: dict[str, Any]) -> None:
    manifest["document_count"] += 1


def _version(manifest: dict[str, Any]) -> None:
    manifest["memwarden"]["format_version"] = 2


def _schema(manifest: dict[str, Any]) -> None:
    manifest["schema_version"] = 2


def _as_hindsight_wrote_it(manifest: dict[str, Any]) -> None:
    del manifest["memwarden"]  # Hindsight rewrites the whole archive: no memwarden section


def _ledger_block(name: str) -> Callable[[str, bytes], bytes | None]:
    """An archive as Hindsight writes it, with one ledger row edited inside its block."""

    def edit(entry: str, content: bytes) -> bytes:
        if entry == "manifest.json":
            manifest = json.loads(content)
            del manifest["memwarden"]
            return json.dumps(manifest).encode()
        if entry != name:
            return content
        doc = json.loads(content)
        block = json.loads(doc["retain_params"]["memwarden"])
        block["memories"][0]["status"] = "active" if block["memories"][0]["status"] != "active" else "archived"
        doc["retain_params"]["memwarden"] = json.dumps(block)
        return json.dumps(doc).encode()

    return edit


REFUSALS: dict[str, tuple[Callable[[bytes], bytes], str]] = {
    "truncated": (lambda data: data[: len(data) // 2], "not a complete .zip archive: it is truncated"),
    "a document edited": (
        lambda data: rezip(data, _edit_json("documents/000000.json", _text)),
        "documents/000000.json was edited: its checksum does not match",
    ),
    "the manifest edited": (
        lambda data: rezip(data, _edit_json("manifest.json", _count)),
        "manifest.json was edited",
    ),
    "an entry added": (
        lambda data: rezip(data, lambda n, c: c, {"documents/000099.json": b"{}"}),
        "documents/000099.json is not listed in the manifest",
    ),
    "an entry removed": (
        lambda data: rezip(data, lambda n, c: None if n == "banks.json" else c),
        "banks.json is missing: the archive is incomplete",
    ),
    "memwarden's next format": (
        lambda data: rezip(data, _edit_json("manifest.json", _version)),
        "memwarden's transfer format version 2; this memwarden reads version 1",
    ),
    "Hindsight's next format": (
        lambda data: rezip(data, _edit_json("manifest.json", _schema)),
        "transfer schema version 2; memwarden reads version 1",
    ),
    "a document lost on Hindsight's side": (
        lambda data: rezip(
            data,
            lambda n, c: (
                None if n == "documents/000001.json" else _edit_json("manifest.json", _as_hindsight_wrote_it)(n, c)
            ),
        ),
        "the manifest counts 5 documents but the archive holds 4",
    ),
    "a ledger row edited on Hindsight's side": (
        lambda data: rezip(data, _ledger_block("documents/000000.json")),
        "documents/000000.json: memwarden's ledger block was edited",
    ),
    "not an archive": (lambda data: b"just some text", "not a complete .zip archive"),
}


@pytest.mark.parametrize("case", sorted(REFUSALS))
async def test_a_bad_archive_is_refused_by_name_and_nothing_is_written(tmp_path: Path, case: str) -> None:
    spoil, words = REFUSALS[case]
    async with local(tmp_path / "a") as a:
        await fill(a)
        data = await export(a)
    assert archive_read.read(data).documents  # the archive as exported is good
    async with local(tmp_path / "b") as b:
        await make_landing(b, tmp_path / "b")
        before = counts(tmp_path / "b")
        for params in ({"target_bank_id": BANK}, {"mode": "merge"}):
            r = await b.post(
                "/v1/default/banks/landing/transfer/import",
                params=params,
                files={"file": ("bank.zip", spoil(data), "application/zip")},
            )
            assert r.status_code == 400, r.text
            assert words in r.json()["detail"], r.json()["detail"]
        assert counts(tmp_path / "b") == before
        assert (await b.get(f"{B}/documents")).status_code == 404


async def test_an_archive_with_a_secret_is_refused(tmp_path: Path) -> None:
    async with local(tmp_path / "a", mode="off") as a:  # no governance: the store holds what it is sent
        await a.post(f"{B}/memories", json={"items": [{"content": "token ghp_" + "a1B2" * 9 + " for the bot"}]})
        data = await export(a)
    async with local(tmp_path / "b") as b:
        await make_landing(b, tmp_path / "b")
        before = counts(tmp_path / "b")
        r = await restore(b, data)
        assert r.status_code == 400
        assert "holds what looks like a secret (github_token)" in r.json()["detail"]
        assert counts(tmp_path / "b") == before


async def test_hindsights_request_rules_and_words(tmp_path: Path) -> None:
    async with local(tmp_path) as a:
        await fill(a)
        data = await export(a)
        files = {"file": ("bank.zip", data, "application/zip")}
        before = counts(tmp_path)
        imp = f"{B}/transfer/import"
        cases: list[tuple[httpx.Response, int, Any]] = [
            (await a.post(imp, json={"x": 1}), 422, [{"type": "missing", "loc": ["body", "file"]}]),
            (
                await a.post(imp, files={"file": (None, b"abc")}),
                422,
                [{"type": "value_error", "loc": ["body", "file"]}],
            ),
            (
                await a.post(imp, params={"include_data": "maybe"}),
                422,
                [{"type": "bool_parsing", "loc": ["query", "include_data"]}, {"loc": ["body", "file"]}],
            ),
            (
                await a.post(imp, params={"mode": "bad"}, files=files),
                400,
                "Invalid mode 'bad' (expected restore|merge)",
            ),
            (
                await a.post(imp, params={"document_conflict": "x"}, files=files),
                400,
                "Invalid document_conflict 'x' (expected skip|replace|new-id)",
            ),
            (
                await a.post(imp, params={"mode": "merge", "target_bank_id": "c"}, files=files),
                400,
                "target_bank_id is only valid in restore mode; merge imports into {bank_id}",
            ),
            (
                await a.post(imp, params={"mode": "merge", "include_data": "true"}, files=files),
                400,
                "include_data / include_bank_config / include_history apply to mode=restore",
            ),
            (await a.post(imp, files=files), 400, f"Target bank '{BANK}' already exists"),
            (
                await a.post("/v1/default/banks/nowhere/transfer/import", params={"target_bank_id": "c"}, files=files),
                404,
                "Bank 'nowhere' not found",
            ),
            (
                await a.post(f"{B}/document-transfer", params={"on_conflict": "x"}, files=files),
                400,
                "Invalid on_conflict 'x' (expected skip|replace|new-id)",
            ),
            (await a.post("/v1/default/banks/nowhere/transfer/export"), 404, "Bank 'nowhere' not found"),
            (
                await a.post(f"{B}/transfer/export", params={"include_data": "false", "include_bank_config": "0"}),
                400,
                "Nothing to export",
            ),
            (
                await a.post(f"{B}/transfer/export", params={"document_id": "pref-alice"}),
                400,
                "only supported for a whole-bank export",
            ),
            (await a.get(f"{B}/document-transfer"), 410, "Synchronous document export has been removed"),
            (await a.get("/v1/default/files/download/banks/team-a/exports/x/transfer.zip"), 404, "File not found"),
        ]
        for r, status, detail in cases:
            assert r.status_code == status, (r.request.url, r.text)
            said = r.json()["detail"]
            if isinstance(detail, str):
                assert detail in said, said
            else:
                assert [{k: e[k] for k in d} for e, d in zip(said, detail, strict=True)] == detail
        documents_only = await a.post(f"{B}/document-transfer/export")
        assert documents_only.status_code == 202
        op = (await a.get(f"{B}/operations/{documents_only.json()['operation_id']}")).json()
        small = (await a.get(op["result_metadata"]["download_url"])).content
        r = await a.post(imp, params={"target_bank_id": "c"}, files={"file": ("d.zip", small)})
        assert r.status_code == 400
        assert r.json()["detail"] == "Not a whole-bank archive (archive_type='documents'); use import_documents instead"
        changed = counts(tmp_path)
        # Only the export wrote (its operation, its audit event): nothing else changed.
        assert {k: changed[k] - before[k] for k in changed} == {
            "memories": 0,
            "audit_events": 1,
            "store_banks": 0,
            "store_documents": 0,
            "store_units": 0,
            "store_operations": 1,
        }


async def test_merging_skips_replaces_or_renames_the_documents_the_bank_holds(tmp_path: Path) -> None:
    async with local(tmp_path) as a:
        await fill(a)
        data = await export(a)
        files = {"file": ("bank.zip", data, "application/zip")}
        ledger_before = ledger(tmp_path)
        # skip: nothing of the bank's documents changes, and no ledger row is imported twice
        r = await a.post(f"{B}/transfer/import", params={"mode": "merge"}, files=files)
        meta = (await a.get(f"{B}/operations/{r.json()['operation_id']}")).json()["result_metadata"]
        assert (meta["documents_imported"], meta["documents_skipped"]) == (0, 4)
        assert meta["memwarden"]["memories_already_held"] == 1  # the held memory, in the carrier
        assert ledger(tmp_path) == ledger_before
        # new-id: the documents again, under new ids, their ledger rows (new ids too) pointing at them
        r = await a.post(f"{B}/document-transfer", params={"on_conflict": "new-id"}, files=files)
        meta = (await a.get(f"{B}/operations/{r.json()['operation_id']}")).json()["result_metadata"]
        assert meta["documents_imported"] == 4
        remapped = meta["remapped_document_ids"]
        assert set(remapped) >= {"pref-alice", "infra-staging"}
        copy = [m for m in ledger(tmp_path) if m["document_id"] == remapped["pref-alice"]]
        assert [m["content"] for m in copy] == [ITEMS[0]["content"]]
        assert (await a.get(f"{B}/documents/{remapped['pref-alice']}")).json()["original_text"] == ITEMS[0]["content"]
        # replace: the bank's documents rewritten from the archive, its ledger rows (the same
        # memories) left as they are, none superseded
        await a.post(
            f"{B}/memories", json={"items": [{"content": "Alice now drinks green tea.", "document_id": "pref-alice"}]}
        )
        assert (await a.get(f"{B}/documents/pref-alice")).json()["original_text"] == "Alice now drinks green tea."
        ledger_before = ledger(tmp_path)
        r = await a.post(f"{B}/transfer/import", params={"mode": "merge", "document_conflict": "replace"}, files=files)
        meta = (await a.get(f"{B}/operations/{r.json()['operation_id']}")).json()["result_metadata"]
        assert meta["documents_imported"] == 4
        assert (await a.get(f"{B}/documents/pref-alice")).json()["original_text"] == ITEMS[0]["content"]
        (tea,) = [m for m in ledger(tmp_path) if m["content"] == "Alice now drinks green tea."]
        assert tea["status"] == "superseded"  # its document was replaced by the archive's
        assert meta["memwarden"]["memories_superseded"] == 1
        assert [m for m in ledger(tmp_path) if m["id"] != tea["id"]] == [
            m for m in ledger_before if m["id"] != tea["id"]
        ]


async def test_an_import_that_fails_midway_leaves_nothing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from memwarden.store import transfer_import

    def fail(*args: Any, **kwargs: Any) -> dict[str, str]:
        raise sqlite3.OperationalError("database is locked")  # after the documents and facts were written

    async with local(tmp_path / "a") as a:
        await fill(a)
        data = await export(a)
    monkeypatch.setattr(transfer_import, "restore_rows", fail)
    async with local(tmp_path / "b") as b:
        await make_landing(b, tmp_path / "b")
        before = counts(tmp_path / "b")
        r = await restore(b, data)
        assert r.status_code == 503
        assert counts(tmp_path / "b") == before
        assert (await b.get(f"{B}/documents")).status_code == 404
        monkeypatch.undo()
        assert (await restore(b, data)).status_code == 202  # nothing half-done stands in the way


async def test_the_auth_an_export_and_an_import_need(tmp_path: Path) -> None:
    async with local(tmp_path) as a:
        await fill(a)
        root = (await a.post("/warden/v1/keys", json={"name": "root", "admin": ["*"]})).json()["token"]

        async def key(**scopes: list[str]) -> dict[str, str]:
            made = await a.post("/warden/v1/keys", json={"name": "k", **scopes}, headers=_bearer(root))
            return _bearer(made.json()["token"])

        reader, writer, owner = await key(read=[BANK]), await key(write=[BANK]), await key(admin=[BANK])
        # An export holds what readers do not see (archived and held memories, the ledger): admin.
        for who in (reader, writer):
            assert (await a.post(f"{B}/transfer/export", headers=who)).status_code == 403
            assert (await a.post(f"{B}/document-transfer/export", headers=who)).status_code == 403
        started = await a.post(f"{B}/transfer/export", headers=owner)
        assert started.status_code == 202
        status = (await a.get(f"{B}/operations/{started.json()['operation_id']}", headers=owner)).json()
        url = status["result_metadata"]["download_url"]
        assert (await a.get(url, headers=reader)).status_code == 403
        data = (await a.get(url, headers=owner)).content
        files = {"file": ("bank.zip", data, "application/zip")}
        # A merge writes the path's bank; a restore the bank it creates.
        merge = {"mode": "merge"}
        assert (await a.post(f"{B}/transfer/import", params=merge, files=files, headers=writer)).status_code == 403
        assert (await a.post(f"{B}/transfer/import", params=merge, files=files, headers=owner)).status_code == 202
        elsewhere = {"target_bank_id": "team-b"}
        assert (await a.post(f"{B}/transfer/import", params=elsewhere, files=files, headers=owner)).status_code == 403
        other = await key(admin=["team-b"])
        assert (await a.post(f"{B}/transfer/import", params=elsewhere, files=files, headers=other)).status_code == 202
        # No target named: the archive's own bank, unknown until the body is read — every bank.
        assert (await a.post(f"{B}/transfer/import", files=files, headers=owner)).status_code == 403


async def test_a_query_read_twice_cannot_carry_an_import_to_another_bank(tmp_path: Path) -> None:
    """Issue #33's escalation: a key with admin on team-a alone sent ``target_bank_id`` twice (team-a,
    then blank). The key check read team-a; the import read the blank one and restored the
    archive's own bank (team-c) — created and filled by a key with no right to it. Now a parameter
    that takes one value, given twice, is refused before anything reads it."""
    async with local(tmp_path) as a:
        await fill(a)
        data = await export(a)
        victim = "team-c"
        # An archive naming team-c: team-a's export restored as team-c, exported, then team-c deleted.
        assert (await restore(a, data, target=victim, landing=BANK)).status_code == 202
        data_c = await export(a, bank=victim)
        gone = await a.delete(f"/v1/default/banks/{victim}", headers={"x-warden-confirm": victim})
        assert gone.status_code == 200, gone.text
        root = (await a.post("/warden/v1/keys", json={"name": "root", "admin": ["*"]})).json()["token"]
        made = await a.post("/warden/v1/keys", json={"name": "a-admin", "admin": [BANK]}, headers=_bearer(root))
        owner = _bearer(made.json()["token"])
        files = {"file": ("bank.zip", data_c, "application/zip")}
        for query in (
            f"target_bank_id={BANK}&target_bank_id=",
            f"target_bank_id=&target_bank_id={BANK}",
            f"target_bank_id={BANK}&target_bank_id={victim}",
            f"mode=merge&mode=restore&target_bank_id={victim}",
        ):
            r = await a.post(f"{B}/transfer/import?{query}", files=files, headers=owner)
            assert r.status_code == 400, (query, r.text)
            assert "given 2 times" in r.json()["detail"]
        assert (await a.get(f"/v1/default/banks/{victim}/stats", headers=_bearer(root))).status_code == 404
        banks = (await a.get("/v1/default/banks", headers=_bearer(root))).json()["banks"]
        assert victim not in {b["bank_id"] for b in banks}


def _bearer(token: str) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"}


async def test_no_damage_to_an_archive_goes_unnoticed(tmp_path: Path) -> None:
    """A byte changed anywhere is refused (an ArchiveError, never another exception), unless it is
    one of the ZIP's own bookkeeping (an entry's date, the version that made it): what is read is
    then exactly what was written."""
    async with local(tmp_path) as a:
        await fill(a)
        data = await export(a)
    good = archive_read.read(data)
    unnoticed = 0
    for position in range(len(data)):
        damaged = bytearray(data)
        damaged[position] ^= 0x5A
        try:
            read = archive_read.read(bytes(damaged))
        except archive.ArchiveError:
            continue
        unnoticed += 1
        assert (read.manifest, read.documents, read.blocks, read.carried, read.bank_row) == (
            good.manifest,
            good.documents,
            good.blocks,
            good.carried,
            good.bank_row,
        )
    assert unnoticed < len(data) // 4  # the bookkeeping is a small share of the file
    for length in range(0, len(data), 211):
        with pytest.raises(archive.ArchiveError):
            archive_read.read(data[:length])


def memwarden(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    """``memwarden`` as a user runs it (the environment's MEMWARDEN_* dropped)."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    main = "from memwarden.proxy.cli import main; main()"
    return subprocess.run(
        [sys.executable, "-c", main, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=120, check=False
    )


async def test_the_command_line_exports_from_a_data_directory_and_checks_files_before_sending(tmp_path: Path) -> None:
    data_dir = tmp_path / "data"
    async with local(data_dir) as a:
        await fill(a)
        served = archive_read.read(await export(a))
    out = memwarden("bank", "export", BANK, "offline.zip", "--data-dir", str(data_dir), cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert f"bank {BANK}: 4 documents, 3 facts, 5 ledger rows → offline.zip" in out.stdout
    offline = archive_read.read((tmp_path / "offline.zip").read_bytes())
    assert (offline.documents, offline.blocks, offline.carried) == (served.documents, served.blocks, served.carried)
    missing = memwarden("bank", "export", "nobody", "x.zip", "--data-dir", str(data_dir), cwd=tmp_path)
    assert missing.returncode == 1
    assert "Bank 'nobody' not found" in missing.stderr
    assert not (tmp_path / "x.zip").exists()
    # A damaged file is refused before anything is sent (nothing listens at --into).
    (tmp_path / "cut.zip").write_bytes((tmp_path / "offline.zip").read_bytes()[:-200])
    refused = memwarden("bank", "import", "cut.zip", "--into", "http://127.0.0.1:9", cwd=tmp_path)
    assert refused.returncode == 1
    assert "cut.zip is refused: the file is not a complete .zip archive: it is truncated" in refused.stderr
