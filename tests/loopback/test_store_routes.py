"""The Hindsight routes a self-hosted user reads beyond retain and recall — the operations list, a
document's chunks and history, a chunk, the entities, the bank delete's count — driven by the real
``hindsight-client`` against memwarden self-hosted on loopback (governance on); and what the store
answers for the rest of Hindsight's route table (501 saying what is missing, Hindsight's 405, 404,
307). The same requests against the real Hindsight are in ``tests/hindsight_cases.py`` and
``tests/interop/test_interop_local.py``.
"""

from __future__ import annotations

import asyncio
import json
import re
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any, cast

import httpx
import pytest
from hindsight_client import Hindsight
from hindsight_client_api.exceptions import ApiException
from starlette.routing import Match, Route

from memwarden.backends.hindsight_router import HindsightFallback, hindsight_routes
from memwarden.backends.types import MemoryQuery
from memwarden.db.database import Database
from memwarden.settings import load_settings
from memwarden.store.embedder import HashingEmbedder
from memwarden.store.local import LocalStore
from memwarden.store.schema import STORE_MIGRATIONS
from memwarden.store.server.app import create_local_app
from tests.conftest import running_warden

pytestmark = pytest.mark.anyio

ITEMS = [
    {
        "content": "Alice prefers dark roast coffee in the morning.",
        "tags": ["user:alice"],
        "document_id": "notes/alice/1",  # a document id with slashes
        "entities": [{"text": "Alice", "type": "person"}, {"text": "coffee"}],
    },
    {
        "content": "Alice and Bob moved the weekly deploy to Friday afternoon.",
        "tags": ["user:bob"],
        "document_id": "notes/alice/1",
        "entities": [{"text": "bob"}, {"text": "ALICE"}],  # one Alice, whatever the spelling
    },
    {
        "content": "The staging cluster runs three nodes with sixteen gigabytes each.",
        "tags": ["team:ops"],
        "document_id": "ops",
        "entities": [{"text": "staging  cluster"}],
    },
]


@pytest.fixture
def warden(tmp_path: Path) -> Iterator[str]:
    """memwarden self-hosted, governance enforcing; its destructive routes need no confirmation
    header (the official client cannot send one)."""
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path),
            "local": {"embedder": "hashing"},
            "config_guard": {"settle_interval": 0.05, "missions": {"mode": "off"}, "destructive": "allow"},
            "retention": {"enabled": False},
        },
    )
    with running_warden(settings) as url:
        yield url


async def _settled(client: Hindsight, bank: str, operation_id: str) -> None:
    for _ in range(200):
        if (await client.operations.get_operation_status(bank, operation_id)).status == "completed":
            return
        await asyncio.sleep(0.05)
    raise AssertionError(f"operation {operation_id} did not complete")


async def test_the_hindsight_client_reads_operations_chunks_history_and_entities(warden: str) -> None:
    client = Hindsight(base_url=warden)
    bank = f"reads-{uuid.uuid4().hex[:6]}"
    try:
        await client.aretain_batch(bank, ITEMS[:2])  # synchronous: no operation, no history
        queued = await client.aretain_batch(
            bank,
            [{**ITEMS[2], "content": "The staging cluster runs four nodes with sixteen gigabytes each."}],
            retain_async=True,
        )
        await _settled(client, bank, queued.operation_id)
        replaced = await client.aretain_batch(bank, [ITEMS[2]], retain_async=True)  # the document again
        await _settled(client, bank, replaced.operation_id)

        operations = await client.operations.list_operations(bank)
        assert [o.id for o in operations.operations] == [replaced.operation_id, queued.operation_id]  # newest first
        assert operations.total == 2
        assert [(o.status, o.task_type, o.items_count) for o in operations.operations] == [
            ("completed", "batch_retain", 1)
        ] * 2
        page = await client.operations.list_operations(bank, status="completed", limit=1, offset=1)
        assert (page.total, [o.id for o in page.operations]) == (2, [queued.operation_id])
        assert (await client.operations.list_operations(bank, status="failed")).total == 0

        chunks = await client.documents.list_document_chunks(bank, "notes/alice/1")
        assert [(c.chunk_index, c.chunk_text) for c in chunks.items] == [
            (0, ITEMS[0]["content"]),
            (1, ITEMS[1]["content"]),
        ]
        assert chunks.items[1].chunk_id == f"{bank}_notes/alice/1_1"
        chunk = await client.documents.get_chunk(chunks.items[1].chunk_id)
        assert (chunk.document_id, chunk.bank_id, chunk.chunk_text) == ("notes/alice/1", bank, ITEMS[1]["content"])
        listed = await client.alist_memories(bank)
        assert {m["chunk_id"] for m in listed.to_dict()["items"]} == {
            f"{bank}_notes/alice/1_0",
            f"{bank}_notes/alice/1_1",
            f"{bank}_ops_0",
        }

        history = await client.documents.get_document_history(bank, "ops")
        assert history.total == 2
        assert [(e.kind, e.operation_id, e.facts_added, e.facts_removed) for e in history.items] == [
            ("retain", replaced.operation_id, 1, 1),
            ("retain", queued.operation_id, 1, 0),
        ]
        assert (await client.documents.get_document_history(bank, "notes/alice/1")).items == []  # sync retains

        entities = await client.entities.list_entities(bank)
        named = {e.canonical_name: e.mention_count for e in entities.items}
        assert named == {"Alice": 2, "coffee": 1, "bob": 1, "staging cluster": 1}
        assert entities.items[0].canonical_name == "Alice"  # the most mentioned first
        scoped = await client.entities.list_entities(bank, tags=["user:bob"], tags_match="any_strict")
        assert {e.canonical_name: e.mention_count for e in scoped.items} == {"Alice": 1, "bob": 1}
        grouped = await client.entities.list_entities(bank, tag_groups=json.dumps([{"tags": ["team:ops"]}]))
        assert [e.canonical_name for e in grouped.items] == ["staging cluster"]
        # memwarden's labels are invisible to the filter, which also finds the other separator:
        # every memory here carries a topic and a stage beside its own tag.
        exact = await client.entities.list_entities(bank, tags=["user:bob"], tags_match="exact")
        assert {e.canonical_name: e.mention_count for e in exact.items} == {"Alice": 1, "bob": 1}
        other = await client.entities.list_entities(bank, tags=["team=ops"], tags_match="all_strict")
        assert [e.canonical_name for e in other.items] == ["staging cluster"]
        alice = next(e for e in entities.items if e.canonical_name == "Alice")
        detail = await client.entities.get_entity(bank, alice.id)
        assert (detail.canonical_name, detail.mention_count, detail.observations) == ("Alice", 2, [])
        with pytest.raises(ApiException) as hidden:  # no memory the filter lets through names it
            await client.entities.get_entity(bank, alice.id, tags=["team:ops"], tags_match="all_strict")
        assert hidden.value.status == 404

        deleted = await client.adelete_bank(bank)
        assert deleted.deleted_count == 3 + 4 + 2  # memories, entities, documents
        assert (await client.adelete_bank(bank)).deleted_count == 0  # a bank that is gone: a no-op
    finally:
        await client.aclose()


def test_entities_follow_their_memories(warden: str) -> None:
    """A memory ``PATCH`` replaces its entities; an archived or deleted memory stops counting; an
    entity no valid memory names is not listed."""
    bank = f"ent-{uuid.uuid4().hex[:6]}"
    p = f"/v1/default/banks/{bank}"
    with httpx.Client(base_url=warden, timeout=60) as http:
        http.post(f"{p}/memories", json={"items": ITEMS}).raise_for_status()
        first = next(m for m in http.get(f"{p}/memories/list").json()["items"] if m["document_id"] == "ops")
        assert first["entities"] == "staging cluster"
        r = http.patch(f"{p}/memories/{first['id']}", json={"entities": ["Ops Team", "ops  team", "Bob"]})
        assert r.status_code == 200, r.text
        assert r.json()["entities"] == ["Ops Team", "Bob"]
        names = {e["canonical_name"]: e["mention_count"] for e in http.get(f"{p}/entities").json()["items"]}
        assert names == {"Alice": 2, "coffee": 1, "bob": 2, "Ops Team": 1}  # the first spelling of Bob names him
        http.patch(f"{p}/memories/{first['id']}", json={"state": "invalidated"}).raise_for_status()
        names = {e["canonical_name"]: e["mention_count"] for e in http.get(f"{p}/entities").json()["items"]}
        assert names == {"Alice": 2, "coffee": 1, "bob": 1}
        http.delete(f"{p}/documents/notes%2Falice%2F1").raise_for_status()
        assert http.get(f"{p}/entities").json() == {"items": [], "total": 0, "limit": 100, "offset": 0}
        assert http.get(f"{p}/documents/notes/alice/1/chunks").json() == {"detail": "Document not found"}


def test_bad_entities_in_a_retain_are_refused_and_nothing_is_written(warden: str) -> None:
    bank = f"bad-{uuid.uuid4().hex[:6]}"
    with httpx.Client(base_url=warden, timeout=60) as http:
        for entities, loc, msg in (
            ("Alice", ["body", "items", 0, "entities"], "Input should be a valid list"),
            ([{"text": 5}], ["body", "items", 0, "entities", 0, "text"], "Input should be a valid string"),
            (["Alice"], ["body", "items", 0, "entities", 0], "Input should be a valid dictionary"),
        ):
            body = {"items": [{"content": ITEMS[0]["content"], "entities": entities}]}
            r = http.post(f"/v1/default/banks/{bank}/memories", json=body)
            assert r.status_code == 422, r.text
            assert r.json()["detail"][0]["loc"] == loc
            assert r.json()["detail"][0]["msg"].startswith(msg)
        assert http.get(f"/v1/default/banks/{bank}/entities").status_code == 404  # no bank was made


def test_unknown_paths_and_methods_are_answered_as_hindsight_answers_them(warden: str) -> None:
    with httpx.Client(base_url=warden, timeout=60) as http:
        for path in ("/v1/default/banks/b/nope", "/nope", "/v1/other/banks/b/stats", "/docs"):
            r = http.get(path)
            assert (r.status_code, r.json(), r.headers["content-type"]) == (
                404,
                {"detail": "Not Found"},
                "application/json",
            ), path
        for method, path, allow in (
            ("POST", "/v1/default/banks/b/stats", "GET"),
            ("HEAD", "/v1/default/banks/b/entities", "GET"),
            ("HEAD", "/v1/default/banks/b/config", "GET"),  # a governed route: HEAD was read as a PATCH (422)
            ("HEAD", "/health", "GET"),
            ("DELETE", "/v1/default/banks/b/profile", "GET"),
            ("POST", "/v1/default/banks/b/documents/a/b/chunks", "GET"),
            ("POST", "/v1/default/chunks/a/b", "GET"),
            ("GET", "/v1/default/banks/b", "PUT"),
            ("POST", "/v1/default/banks/b/operations", "GET"),
            ("PUT", "/v1/default/banks/b/reflect", "POST"),  # a path it does not build, asked with another method
        ):
            r = http.request(method, path)
            assert (r.status_code, r.headers["allow"]) == (405, allow), (method, path)
            assert r.content == b"" if method == "HEAD" else r.json() == {"detail": "Method Not Allowed"}
        r = http.get("/v1/default/banks/b/stats/?refresh=true")
        assert (r.status_code, r.headers["location"]) == (307, "/v1/default/banks/b/stats?refresh=true")
        r = http.get("/v1/default/banks/b/stats/", follow_redirects=True)
        assert r.json() == {"detail": "Bank 'b' not found"}
        # …/documents/{id}/reprocess is Hindsight's; GET reads a document of that name
        assert http.get("/v1/default/banks/b/documents/x/reprocess").json() == {"detail": "Bank 'b' not found"}


@pytest.mark.parametrize(
    ("method", "path", "words"),
    [
        # Served with an LLM ([llm]); without one, 501 saying to configure it.
        ("POST", "/v1/default/banks/b/reflect", "configure [llm]"),
        ("GET", "/v1/default/banks/b/mental-models", "configure [llm]"),
        ("POST", "/v1/default/banks/b/directives", "configure [llm]"),
        # Not built in self-hosted mode: 501 saying how to get it.
        ("POST", "/v1/default/banks/b/consolidate", "needs an LLM"),
        ("GET", "/v1/default/banks/b/entities/graph", "keeps no memory or entity graph"),
        ("GET", "/v1/default/banks/b/audit-logs", "GET /warden/v1/audit"),
        ("GET", "/metrics", "GET /warden/metrics"),
        ("POST", "/v1/default/banks/b/documents/a/b/reprocess", "needs an LLM"),
        ("DELETE", "/v1/default/banks/b/operations/x", "cannot be cancelled, retried or deleted"),
    ],
)
def test_documented_operations_it_does_not_build_are_501_saying_what_they_need(
    warden: str, method: str, path: str, words: str
) -> None:
    with httpx.Client(base_url=warden, timeout=60) as http:
        r = http.request(method, path, json={"query": "q"} if method == "POST" else None)
    assert r.status_code == 501, r.text
    assert words in r.json()["detail"]
    how = "configure [llm]" if words == "configure [llm]" else "memwarden serve --upstream URL"
    assert how in r.json()["detail"]


def _concrete(template: str) -> str:
    return re.sub(r"\{[^}]+\}", "x", template)


def test_each_hindsight_operation_reaches_its_own_route_or_the_501() -> None:
    """The store's routes take a documented operation only when they are its route (a route of the
    store's placed before one of Hindsight's it overlaps would answer for it: GET …/entities/graph
    read as the entity 'graph'); the rest reach the fallback."""
    store_routes = [r for r in create_local_app(cast(Any, None)).routes if isinstance(r, Route)]
    served = 0
    for hindsight in hindsight_routes():
        if hindsight.template is None:
            continue
        method = next(iter(hindsight.route.methods or ()))
        scope = {"type": "http", "method": method, "path": _concrete(hindsight.template)}
        mine = next(r for r in store_routes if r.matches(scope)[0] == Match.FULL)
        if isinstance(mine.endpoint, HindsightFallback):
            continue
        assert re.sub(r"\{(\w+):path\}", r"{\1}", mine.path) == hindsight.template, (method, hindsight.template)
        served += 1
    assert served >= 30


async def _old_store(data_dir: Path) -> None:
    """The store as it was before chunks and entities: a document of two memories."""
    ledger = Database.open(data_dir, mirror=False)
    ledger.migrate_sync([m for m in STORE_MIGRATIONS if m[0] < "0013"])  # those before chunks
    ts = "2026-01-01T00:00:00+00:00"

    def write(db: sqlite3.Connection) -> None:
        db.execute("INSERT INTO store_banks (bank_id, created_at, updated_at) VALUES ('b', ?, ?)", (ts, ts))
        db.execute(
            "INSERT INTO store_documents (bank_id, id, created_at, updated_at) VALUES ('b', 'd', ?, ?)", (ts, ts)
        )
        for n, text in enumerate(["first fact of the document", "second fact of the document"]):
            db.execute(
                "INSERT INTO store_units (id, bank_id, document_id, text, terms, created_at, updated_at)"
                " VALUES (?, 'b', 'd', ?, ?, ?, ?)",
                (f"u{n}", text, text, ts, ts),
            )

    await ledger.write(write)
    ledger.close()


async def test_memories_written_before_chunks_existed_become_their_documents_chunks(tmp_path: Path) -> None:
    await _old_store(tmp_path)
    ledger = Database.open(tmp_path, mirror=False)
    store = LocalStore(ledger, HashingEmbedder())
    try:
        chunks = await store.list_chunks("b", "d", 100, 0)
        listed = await store.list_units("b", MemoryQuery())
        by_id = await store.get_chunk("b_d_1")
    finally:
        await store.drain()
        ledger.close()
    assert [(c["chunk_id"], c["chunk_index"], c["chunk_text"]) for c in chunks["items"]] == [
        ("b_d_0", 0, "first fact of the document"),
        ("b_d_1", 1, "second fact of the document"),
    ]
    assert sorted((m.id, m.extra["chunk_id"], m.extra["entities"]) for m in listed.items) == [
        ("u0", "b_d_0", ""),
        ("u1", "b_d_1", ""),
    ]
    assert by_id["chunk_text"] == "second fact of the document"
