"""Self-hosted mode: memwarden as the memory server, on loopback, driven by the real
hindsight-client and plain HTTP."""

from __future__ import annotations

import time
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from memwarden.backends.types import RecallQuery
from memwarden.settings import Settings, load_settings
from tests.conftest import database_url, ledger_db, running_warden

# The store on both engines: SQLite, and PostgreSQL with pgvector and the posting list.
pytestmark = pytest.mark.usefixtures("engine")


def local_settings(
    data_dir: Path,
    *,
    governance: str = "enforce",
    body_timeout: float | None = None,
    server: dict[str, Any] | None = None,
    **local: Any,
) -> Settings:
    served = {**({"body_timeout": body_timeout} if body_timeout is not None else {}), **(server or {})}
    return load_settings(
        environ={},
        overrides={
            "data_dir": str(data_dir),
            **({"server": served} if served else {}),
            "local": {"embedder": "hashing", **local},
            "governance": {"mode": governance},
            "config_guard": {"settle_interval": 0.05, "missions": {"mode": "off"}},
            "database": {"url": database_url()},  # the running test's engine (tests/conftest.py: engine)
        },
    )


@pytest.fixture
def local_url(tmp_path: Path) -> Iterator[str]:
    with running_warden(local_settings(tmp_path)) as url:
        yield url


@pytest.fixture
def http(local_url: str) -> Iterator[httpx.Client]:
    with httpx.Client(base_url=local_url, timeout=60) as client:
        yield client


FACTS = [
    ("Alice prefers dark roast coffee.", ["user:alice", "topic:content"]),
    ("服务 svc-1 的内网端口统一设为 9000，部署在 search 命名空间", ["user:ops"]),
    ("The staging cluster has 3 nodes with 16 GB RAM each.", ["user:ops", "team:infra"]),
    ("决定用激活码订阅模式", []),
]


def retain_facts(http: httpx.Client, bank: str) -> None:
    items = [{"content": text, "tags": tags} for text, tags in FACTS]
    r = http.post(f"/v1/default/banks/{bank}/memories", json={"items": items})
    assert r.status_code == 200, r.text
    assert r.json()["items_count"] == len(FACTS)


def recall_texts(http: httpx.Client, bank: str, **body: Any) -> list[str]:
    r = http.post(f"/v1/default/banks/{bank}/memories/recall", json=body)
    assert r.status_code == 200, r.text
    return [x["text"] for x in r.json()["results"]]


@pytest.mark.anyio
async def test_serve_with_no_configuration_is_a_memory_server(local_url: str) -> None:
    client = Hindsight(base_url=local_url)
    try:
        bank = await client.acreate_bank("team", name="Team")
        assert bank.bank_id == "team"
        response = await client.aretain_batch(
            "team",
            [
                {"content": "Bob is allergic to peanuts.", "tags": ["user:bob"]},
                {"content": "这个功能有没有必要？"},  # noise: memwarden's pipeline still runs
            ],
        )
        assert response.items_count == 1
        recalled = await client.arecall("team", "What is Bob allergic to?", tags=["user:bob"], tags_match="any_strict")
        assert [r.text for r in recalled.results] == ["Bob is allergic to peanuts."]
        tags = recalled.results[0].tags or []
        assert "user:bob" in tags
        assert any(t.startswith("topic:") for t in tags)  # labelled by memwarden's pipeline
        assert any(t.startswith("stage:") for t in tags)
    finally:
        await client.aclose()


def test_chinese_and_english_full_text(http: httpx.Client) -> None:
    retain_facts(http, "b")
    assert recall_texts(http, "b", query="服务端口")[0].startswith("服务 svc-1")
    assert recall_texts(http, "b", query="staging nodes RAM")[0].startswith("The staging cluster")
    assert recall_texts(http, "b", query="订阅")[0] == "决定用激活码订阅模式"


@pytest.mark.parametrize(
    ("tags", "mode", "expected"),
    [
        (["user:ops"], "any", {1, 2, 3}),  # untagged memories match "any"
        (["user:ops"], "any_strict", {1, 2}),
        (["user:ops", "team:infra"], "all", {2, 3}),
        (["user:ops", "team:infra"], "all_strict", {2}),
        (["user:ops"], "exact", {1}),
        ([], "exact", {3}),
        ([], "any", {0, 1, 2, 3}),
    ],
)
def test_tags_match_has_hindsights_semantics(tmp_path: Path, tags: list[str], mode: str, expected: set[int]) -> None:
    # Governance off: the store's own semantics, on exactly the tags the client sent (governed
    # writes would add topic:/stage: labels to every memory, leaving none untagged).
    with running_warden(local_settings(tmp_path, governance="off")) as url, httpx.Client(base_url=url) as http:
        retain_facts(http, "b")
        got = set(recall_texts(http, "b", query="the", tags=tags, tags_match=mode, budget="high"))
        assert got == {FACTS[i][0] for i in expected}
        groups = [{"or": [{"tags": ["user:alice"]}, {"tags": ["team:infra"]}]}, {"not": {"tags": ["topic:content"]}}]
        got = set(recall_texts(http, "b", query="the", tag_groups=groups, budget="high"))
        assert got == {FACTS[2][0]}


def test_governed_filters_see_what_the_client_tagged_not_memwardens_labels(tmp_path: Path) -> None:
    """The same filters with governance on: memwarden labels every memory with a topic and a stage,
    yet a filter that names neither selects exactly what the store selects ungoverned (above)."""
    with running_warden(local_settings(tmp_path)) as url, httpx.Client(base_url=url) as http:
        retain_facts(http, "b")
        for tags, mode, expected in [
            (["user:ops"], "any", {1, 2, 3}),
            (["user:ops"], "any_strict", {1, 2}),
            (["user:ops", "team:infra"], "all", {2, 3}),
            (["user:ops", "team:infra"], "all_strict", {2}),
            (["user:ops"], "exact", {1}),
            ([], "exact", {3}),
        ]:
            got = set(recall_texts(http, "b", query="the", tags=tags, tags_match=mode, budget="high"))
            assert got == {FACTS[i][0] for i in expected}, (tags, mode)


def test_memory_lifecycle_list_get_invalidate_history(http: httpx.Client) -> None:
    retain_facts(http, "b")
    listed = http.get("/v1/default/banks/b/memories/list").json()
    assert listed["total"] == 4
    memory = next(m for m in listed["items"] if m["text"].startswith("Alice"))
    assert memory["fact_type"] == "world"
    assert memory["state"] == "valid"
    got = http.get(f"/v1/default/banks/b/memories/{memory['id']}").json()
    assert got["type"] == "world"
    assert got["text"] == memory["text"]

    r = http.patch(f"/v1/default/banks/b/memories/{memory['id']}", json={"state": "invalidated", "reason": "wrong"})
    assert r.status_code == 200
    assert r.json()["state"] == "invalidated"
    assert r.json()["invalidation_reason"] == "wrong"
    assert "Alice prefers dark roast coffee." not in recall_texts(http, "b", query="Alice coffee")
    assert http.get("/v1/default/banks/b/memories/list").json()["total"] == 3
    archived = http.get(f"/v1/default/banks/b/memories/{memory['id']}").json()  # kept, and says so
    assert (archived["text"], archived["state"]) == (memory["text"], "invalidated")
    r = http.patch(f"/v1/default/banks/b/memories/{memory['id']}", json={"text": "Alice prefers tea."})
    assert r.json() == {"detail": "Cannot edit an invalidated memory; revert it to 'valid' first."}

    r = http.patch(f"/v1/default/banks/b/memories/{memory['id']}", json={"state": "valid"})
    assert r.json()["state"] == "valid"
    assert "Alice prefers dark roast coffee." in recall_texts(http, "b", query="Alice coffee")
    history = http.get(f"/v1/default/banks/b/memories/{memory['id']}/history").json()
    assert [h["action"] for h in history] == ["archive", "restore"]
    assert history[0]["reason"] == "wrong"


def test_a_replaced_document_is_recalled_as_its_new_text(http: httpx.Client) -> None:
    # Recall reads its rows by the keys the indexes hold: a replaced row must never come back.
    doc = {"document_id": "runbook"}
    http.post("/v1/default/banks/r/memories", json={"items": [{"content": "Deploys go out on Friday.", **doc}]})
    assert recall_texts(http, "r", query="When do deploys go out?") == ["Deploys go out on Friday."]
    http.post("/v1/default/banks/r/memories", json={"items": [{"content": "Deploys go out on Tuesday.", **doc}]})
    assert recall_texts(http, "r", query="When do deploys go out?") == ["Deploys go out on Tuesday."]


def test_documents_tags_stats_config(http: httpx.Client) -> None:
    r = http.post(
        "/v1/default/banks/b/memories",
        json={
            "items": [{"content": "Alice works from the Lisbon office.", "document_id": "d1", "tags": ["user:alice"]}]
        },
    )
    assert r.status_code == 200
    retain_facts(http, "b")
    docs = http.get("/v1/default/banks/b/documents").json()
    assert docs["total"] == 5
    assert "d1" in {d["id"] for d in docs["items"]}
    doc = http.get("/v1/default/banks/b/documents/d1").json()
    assert doc["original_text"] == "Alice works from the Lisbon office."
    assert doc["memory_unit_count"] == 1
    tags = {t["tag"]: t["count"] for t in http.get("/v1/default/banks/b/tags").json()["items"]}
    assert tags["user:ops"] == 2
    assert tags["user:alice"] == 2
    stats = http.get("/v1/default/banks/b/stats").json()
    assert stats["nodes_by_fact_type"] == {"world": 5}
    assert stats["total_documents"] == 5
    assert stats["pending_operations"] == 0

    cfg = http.get("/v1/default/banks/b/config").json()
    assert cfg["config"]["retain_chunk_size"] == 3000
    r = http.patch("/v1/default/banks/b/config", json={"updates": {"retain_mission": "facts only"}})
    assert r.status_code == 200
    assert r.json()["overrides"] == {"retain_mission": "facts only"}

    r = http.delete("/v1/default/banks/b/documents/d1", headers={"X-Warden-Confirm": "b"})
    assert r.status_code == 200
    assert r.json()["memory_units_deleted"] == 1
    assert http.get("/v1/default/banks/b/documents/d1").status_code == 404


def test_async_retain_is_acknowledged_then_stored(http: httpx.Client) -> None:
    r = http.post(
        "/v1/default/banks/b/memories", json={"items": [{"content": "Carol runs the Berlin office."}], "async": True}
    )
    assert r.status_code == 200
    body = r.json()
    assert body["async"] is True
    operation = body["operation_id"]
    for _ in range(100):
        status = http.get(f"/v1/default/banks/b/operations/{operation}").json()["status"]
        if status == "completed":
            break
        time.sleep(0.05)
    assert status == "completed"
    assert recall_texts(http, "b", query="Berlin office") == ["Carol runs the Berlin office."]


def test_unknown_banks_and_bad_input_get_hindsights_answers(http: httpx.Client) -> None:
    r = http.get("/v1/default/banks/nope/stats")
    assert (r.status_code, r.json()) == (404, {"detail": "Bank 'nope' not found"})
    r = http.post("/v1/default/banks/nope/memories/recall", json={"query": "x"})
    assert r.status_code == 404
    retain_facts(http, "b")
    r = http.post("/v1/default/banks/b/memories/recall", json={"query": "x", "tags_match": "bogus"})
    assert r.status_code == 422
    assert r.json()["detail"][0]["loc"] == ["body", "tags_match"]
    r = http.post("/v1/default/banks/b/memories/recall", json={})
    assert r.json()["detail"][0]["type"] == "missing"
    # A query of 100,000 characters is answered, as Hindsight answers it (its first 510 tokens are
    # embedded); an empty one is refused with Hindsight's words.
    long_query = " ".join(["Alice coffee"] * 8_334)[:100_000]
    r = http.post("/v1/default/banks/b/memories/recall", json={"query": long_query})
    assert r.status_code == 200
    assert "Alice prefers dark roast coffee." in [m["text"] for m in r.json()["results"]]
    r = http.post("/v1/default/banks/b/memories/recall", json={"query": ""})
    assert r.status_code == 422
    assert r.json()["detail"][0]["msg"].endswith("query must contain at least one word character after normalization")
    r = http.post("/v1/default/banks/b/memories/recall", json={"query": "x", "tag_groups": [{"bogus": 1}]})
    assert r.status_code == 422
    r = http.get(f"/v1/default/banks/b/memories/{'0' * 32}")
    assert r.json() == {"detail": f"Memory unit '{'0' * 32}' not found"}
    for path, raw in (
        ("/v1/default/banks/b/memories", b'{"items": [{"content": "port \\ud800 fact for the ops team"}]}'),
        ("/v1/default/banks/b/memories/recall", b'{"query": "\\udfff"}'),
    ):
        r = http.post(path, content=raw, headers={"content-type": "application/json"})
        assert r.status_code == 422, path
        assert r.json()["detail"][0]["type"] == "string_unicode"
    r = http.patch(
        "/v1/default/banks/b/config",
        content=b'{"retain_mission": "\\ud83d"}',
        headers={"content-type": "application/json"},
    )
    assert r.status_code == 422
    r = http.post("/v1/default/banks/b/reflect", json={"query": "x"})
    assert r.status_code == 501
    assert "self-hosted" in r.json()["detail"]
    assert http.get("/health").json()["status"] == "healthy"


def test_the_store_survives_a_restart(tmp_path: Path) -> None:
    with running_warden(local_settings(tmp_path)) as url, httpx.Client(base_url=url) as http:
        retain_facts(http, "b")
    with running_warden(local_settings(tmp_path)) as url, httpx.Client(base_url=url) as http:
        assert recall_texts(http, "b", query="服务端口")[0].startswith("服务 svc-1")
        assert http.get("/v1/default/banks/b/stats").json()["nodes_by_fact_type"] == {"world": 4}


def test_a_bank_keeps_its_embedder(tmp_path: Path) -> None:
    with running_warden(local_settings(tmp_path)) as url, httpx.Client(base_url=url) as http:
        retain_facts(http, "b")
    with (
        running_warden(local_settings(tmp_path, embedder="e5")) as url,
        httpx.Client(base_url=url, timeout=120) as http,
    ):
        r = http.post("/v1/default/banks/b/memories", json={"items": [{"content": "Dave moved to Lisbon in May."}]})
        assert r.status_code == 409
        assert "hashing-384" in r.text
        assert http.get("/v1/default/banks/b/stats").json()["nodes_by_fact_type"] == {"world": 4}
        # Old vectors are never mixed into a search with the new model: keyword retrieval only.
        r = http.post(
            "/v1/default/banks/b/memories/recall", json={"query": "What does Alice like to drink?", "trace": True}
        )
        assert r.json()["trace"]["semantic_candidates"] == 0
        # The planned re-embed, then writes and semantic search work again.
        r = http.post("/warden/v1/banks/b/reembed")
        assert r.status_code == 200
        assert r.json() == {
            "bank_id": "b",
            "embedder": "e5-small-q4",
            "previous_embedder": "hashing-384",
            "reembedded": 4,
        }
        r = http.post("/v1/default/banks/b/memories", json={"items": [{"content": "Dave moved to Lisbon in May."}]})
        assert r.status_code == 200
        assert recall_texts(http, "b", query="What does Alice like to drink?")[0].startswith("Alice")


def test_the_default_embedder_is_semantic_in_chinese_and_english(tmp_path: Path) -> None:
    with running_warden(local_settings(tmp_path, embedder="e5")) as url, httpx.Client(base_url=url, timeout=60) as http:
        retain_facts(http, "b")
        # No shared words: only meaning connects these queries to their facts.
        assert recall_texts(http, "b", query="What does Alice like to drink?")[0].startswith("Alice")
        assert recall_texts(http, "b", query="产品怎么收钱")[0] == "决定用激活码订阅模式"


@pytest.mark.timeout(1200)  # the batch's own limits are 600 s (the suite's default per test is 300)
def test_kill_9_mid_batch_loses_nothing_acknowledged_and_leaves_nothing_half_indexed(tmp_path: Path) -> None:
    import signal
    import threading

    from testing.loopback import free_port
    from tests.servers import spawn_memwarden, wait_memwarden

    port = free_port()
    url = f"http://127.0.0.1:{port}"
    args = ("serve", "--port", str(port), "--data-dir", str(tmp_path / "data"))
    env = {
        "MEMWARDEN_LOCAL__EMBEDDER": "hashing",
        "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
        # A batch large enough to kill in the middle of its write on a fast CPU too (a batch of
        # 900 was all written within 0.3 s on a Xeon with AVX-512).
        "MEMWARDEN_GOVERNANCE__MAX_ITEMS": "20000",
        "MEMWARDEN_GOVERNANCE__MAX_REQUEST_CHARS": "5000000",  # the batch is 1.1 M characters
    }
    proc = spawn_memwarden(*args, cwd=tmp_path, env=env)
    acknowledged: list[str] = []
    try:
        wait_memwarden(url, proc)
        with httpx.Client(base_url=url, timeout=60) as http:
            for b in range(10):  # async batches: acknowledged once their payload is committed
                texts = [f"Project p{b}-{i} deploys to the eu-west region every Friday." for i in range(40)]
                r = http.post(
                    "/v1/default/banks/k/memories", json={"items": [{"content": t} for t in texts], "async": True}
                )
                assert r.status_code == 200
                acknowledged += texts
            big = [f"Service s{i} uses the shared postgres cluster in eu-west." for i in range(20_000)]

            answered: list[int] = []  # the batch must not be answered: the kill lands before

            def sync_batch() -> None:
                try:
                    # Minutes, not seconds: on PostgreSQL governance's verdicts for the batch take
                    # ~20 s on a quiet 2-core machine and three times that beside the whole suite.
                    with httpx.Client(base_url=url, timeout=600) as other:
                        r = other.post("/v1/default/banks/k/memories", json={"items": [{"content": t} for t in big]})
                        answered.append(r.status_code)
                except httpx.HTTPError:
                    pass  # the process dies under it

            # The kill lands inside the store's transaction for the batch. Governance commits its
            # verdicts first; then the batch is embedded (nothing written); then one transaction
            # writes every row, vector and full-text entry, its pages spilling into the
            # write-ahead log long before it commits (SQLite's page cache holds ~2 MiB, the batch
            # tens of MiB). So the first change to the log after the verdicts is that transaction.
            # On PostgreSQL: the transaction holds its lock on the store's table until it ends.
            pg = database_url() is not None
            wal = tmp_path / "data" / "memwarden.db-wal"
            watch = ledger_db(tmp_path / "data")
            try:

                def writing() -> Any:
                    if pg:
                        return count(
                            "SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                            " WHERE c.relname = 'store_units' AND l.mode = 'RowExclusiveLock' AND l.pid <> pg_backend_pid()"
                        )
                    return wal.stat().st_mtime_ns, wal.stat().st_size

                def count(sql: str) -> int:
                    return int(watch.execute(sql).fetchone()[0])

                worker = threading.Thread(target=sync_batch)
                worker.start()
                deadline = time.monotonic() + 600
                verdicts = "SELECT COUNT(*) FROM memories WHERE bank = 'k' AND content LIKE 'Service s%'"
                while worker.is_alive() and count(verdicts) < len(big) and time.monotonic() < deadline:
                    time.sleep(0.005)
                assert not answered, f"the batch was answered {answered} before its store write"
                assert count(verdicts) == len(big), "governance's verdicts for the batch were not seen"
                seen = 0 if pg else writing()
                while worker.is_alive() and writing() == seen and time.monotonic() < deadline:
                    time.sleep(0.001)
                assert worker.is_alive(), "the batch ended before its store write was seen under way"
                # the store's transaction has not committed: none of the batch's rows are visible
                assert count("SELECT COUNT(*) FROM store_units WHERE text LIKE 'Service s%'") == 0
            finally:
                watch.close()
            proc.send_signal(signal.SIGKILL)
            proc.wait(10)
            worker.join(30)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait(10)
        if proc.stderr:
            proc.stderr.close()

    proc = spawn_memwarden(*args, cwd=tmp_path, env=env)  # restart: pending async retains resume
    try:
        wait_memwarden(url, proc)
        with httpx.Client(base_url=url, timeout=60) as http:
            for _ in range(200):
                stats = http.get("/v1/default/banks/k/stats").json()
                if stats["pending_operations"] == 0:
                    break
                time.sleep(0.1)
            assert stats["pending_operations"] == 0
            listed = http.get("/v1/default/banks/k/memories/list", params={"limit": 10_000}).json()
            stored = {m["text"] for m in listed["items"]}
            assert set(acknowledged) <= stored  # every acknowledged item is there
            assert not [t for t in stored if t.startswith("Service s")]  # none of the killed batch
            # The client had no answer and sends again: the verdicts left pending by the killed
            # request do not count as duplicates, so the items are stored.
            retry = big[:200]
            r = http.post("/v1/default/banks/k/memories", json={"items": [{"content": t} for t in retry]})
            assert r.status_code == 200
            listed = http.get("/v1/default/banks/k/memories/list", params={"limit": 10_000}).json()
            stored = {m["text"] for m in listed["items"]}
            assert stored == {*acknowledged, *retry}
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
        if proc.stderr:
            proc.stderr.close()
    db = ledger_db(tmp_path / "data")
    try:
        if pg:  # every memory's terms and vector are there, and no term of a memory that is not
            assert (
                db.execute(
                    "SELECT count(*) FROM store_units u WHERE u.embedding_v IS NULL OR (u.term_count > 0"
                    " AND NOT EXISTS (SELECT 1 FROM store_terms t WHERE t.seq = u.seq))"
                ).fetchone()[0]
                == 0
            )
            assert (
                db.execute(
                    "SELECT count(*) FROM store_terms t WHERE NOT EXISTS (SELECT 1 FROM store_units u WHERE u.seq = t.seq)"
                ).fetchone()[0]
                == 0
            )
        else:
            db.execute(
                "INSERT INTO store_units_fts (store_units_fts) VALUES ('integrity-check')"
            )  # raises if not in step
        units = db.execute("SELECT COUNT(*) FROM store_units").fetchone()[0]
        assert units == len(stored)
        # The killed batch's verdicts were settled at the restart: failed, saying why; none pending.
        # Those the client sent again and were stored are resolved by the retry (superseded).
        statuses = dict(db.execute("SELECT status, COUNT(*) FROM memories GROUP BY status").fetchall())
        assert statuses == {
            "active": len(acknowledged) + len(retry),
            "failed": len(big) - len(retry),
            "superseded": len(retry),
        }
        reasons = {r[0] for r in db.execute("SELECT reason FROM memories WHERE status = 'failed'")}
        assert reasons == {"interrupted: memwarden stopped before the store answered"}
    finally:
        db.close()


def test_at_start_a_delivery_the_ledger_missed_is_settled_from_what_the_store_holds(tmp_path: Path) -> None:
    settings = local_settings(tmp_path)
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        retain_facts(http, "b")
    # As if the process had died after the store's commit but before the ledger marked the
    # delivery (every row still pending), and, for one item, before the store's commit.
    db = ledger_db(tmp_path)
    try:
        with db:
            rows = db.execute("SELECT id, document_id FROM memories WHERE bank = 'b' ORDER BY content").fetchall()
            assert len(rows) == len(FACTS)
            db.execute("UPDATE memories SET status = 'pending' WHERE bank = 'b'")
            lost_id, lost_doc = rows[0]
            db.execute("DELETE FROM store_units WHERE bank_id = 'b' AND document_id = ?", (lost_doc,))
            db.execute("DELETE FROM store_documents WHERE bank_id = 'b' AND id = ?", (lost_doc,))
    finally:
        db.close()
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=30) as http:
        page = http.get("/warden/v1/banks/b/memories", params={"limit": 100}).json()
        statuses = {m["id"]: m["status"] for m in page["items"]}
        assert statuses == {i: "failed" if i == lost_id else "active" for i, _ in rows}
        shown = http.get(f"/warden/v1/banks/b/memories/{lost_id}").json()
        assert shown["reason"] == "interrupted: memwarden stopped before the store answered"
        assert [e["action"] for e in shown["events"]] == ["add", "forward_failed"]


@pytest.mark.anyio
async def test_verdicts_left_pending_by_a_stopped_process_are_settled_against_the_store(tmp_path: Path) -> None:
    import json

    from memwarden.db.database import Database
    from memwarden.governance.recovery import INTERRUPTED, settle_interrupted
    from memwarden.store.embedder import HashingEmbedder
    from memwarden.store.local import LocalStore, RetainItem

    ledger = Database.open(tmp_path, mirror=False, url=database_url())
    try:
        store = LocalStore(ledger, HashingEmbedder())
        await store.retain("b", [RetainItem(content="written before the kill", document_id="doc-written")])

        def setup(db: Any) -> None:
            # An async retain the store acknowledged and had not finished: its payload waits.
            payload = {"items": [{"content": "queued", "document_id": "doc-queued"}]}
            db.execute(
                "INSERT INTO store_operations (id, bank_id, type, status, items_count, payload, created_at, updated_at)"
                " VALUES ('op1', 'b', 'batch_retain', 'pending', 1, ?, 't', 't')",
                (json.dumps(payload),),
            )
            for memory_id, bank, document_id, status in (
                ("m-written", "b", "doc-written", "pending"),
                ("m-queued", "b", "doc-queued", "pending"),
                ("m-lost", "b", "doc-lost", "pending"),
                ("m-other-bank", "c", "doc-written", "pending"),  # the same id, another bank
                ("m-done", "b", "doc-written", "active"),
            ):
                db.execute(
                    "INSERT INTO memories (id, bank, status, content, content_hash, document_id, created_at, updated_at)"
                    " VALUES (?, ?, ?, 'x', 'h', ?, 't', 't')",
                    (memory_id, bank, status, document_id),
                )

        await ledger.write(setup)
        assert await settle_interrupted(ledger, store.held_documents) == (2, 2)
        rows = await ledger.read(lambda db: db.execute("SELECT id, status, reason FROM memories").fetchall())
        assert {r[0]: (r[1], r[2]) for r in rows} == {
            "m-written": ("active", None),
            "m-queued": ("active", None),
            "m-lost": ("failed", INTERRUPTED),
            "m-other-bank": ("failed", INTERRUPTED),
            "m-done": ("active", None),
        }
        events = await ledger.read(
            lambda db: db.execute("SELECT memory_id, action FROM audit_events ORDER BY seq").fetchall()
        )
        assert sorted((r[0], r[1]) for r in events) == [
            ("m-lost", "forward_failed"),
            ("m-other-bank", "forward_failed"),
        ]
        assert await settle_interrupted(ledger, store.held_documents) == (0, 0)  # nothing left pending
    finally:
        ledger.close()


@pytest.mark.anyio
@pytest.mark.sqlite_only("SQLite's full disk, made with max_page_count")
async def test_a_full_disk_is_a_clear_error_and_writes_nothing(tmp_path: Path) -> None:
    from memwarden.db.database import Database
    from memwarden.store.embedder import HashingEmbedder
    from memwarden.store.local import LocalStore
    from memwarden.store.server.app import create_local_app

    ledger = Database.open(tmp_path, mirror=False, url=database_url())
    try:
        app = create_local_app(LocalStore(ledger, HashingEmbedder()))
        async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://store") as client:
            r = await client.post("/v1/default/banks/b/memories", json={"items": [{"content": "first fact"}]})
            assert r.status_code == 200
            # The database may not grow any more: what SQLite says when the disk is full.
            await ledger.write(lambda db: db.execute("PRAGMA max_page_count = 1"))
            big = [{"content": f"fact number {i} " + "x" * 2000} for i in range(50)]
            r = await client.post("/v1/default/banks/b/memories", json={"items": big})
            assert r.status_code == 507, r.text
            assert "full" in r.json()["detail"]
            stats = (await client.get("/v1/default/banks/b/stats")).json()
            assert stats["nodes_by_fact_type"] == {"world": 1}  # the failed batch left nothing behind
    finally:
        ledger.close()


def test_past_the_ann_threshold_recall_uses_the_graph_and_keeps_its_answers(tmp_path: Path) -> None:
    """A bank past ``local.ann_threshold`` gets an HNSW graph in the background; recall answers
    what exact search answered, archived memories stay out, and a restart rebuilds the graph."""
    facts = [f"Service svc-{i} listens on port {9000 + i} in the search namespace." for i in range(600)]

    def graph_ready(http: httpx.Client) -> bool:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            r = http.post("/v1/default/banks/big/memories/recall", json={"query": "port", "trace": True})
            if r.json()["trace"]["vector_index"].startswith("hnsw"):  # PostgreSQL: "hnsw (pgvector)"
                return True
            time.sleep(0.1)
        return False

    def top(http: httpx.Client, query: str) -> str:
        return recall_texts(http, "big", query=query, max_tokens=200)[0]

    settings = local_settings(tmp_path, governance="off", ann_threshold=500)
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=60) as http:
        for i in range(0, len(facts), 200):
            r = http.post(
                "/v1/default/banks/big/memories", json={"items": [{"content": f} for f in facts[i : i + 200]]}
            )
            assert r.status_code == 200, r.text
        assert graph_ready(http)
        assert top(http, "Which port does svc-417 listen on?") == facts[417]
        listed = http.get("/v1/default/banks/big/memories/list", params={"q": "svc-417 ", "limit": 5}).json()
        target = next(m for m in listed["items"] if m["text"] == facts[417])
        r = http.patch(f"/v1/default/banks/big/memories/{target['id']}", json={"state": "invalidated"})
        assert r.status_code == 200, r.text
        assert facts[417] not in recall_texts(http, "big", query="Which port does svc-417 listen on?")
        r = http.post("/v1/default/banks/big/memories", json={"items": [{"content": "Dave moved to Lisbon in May."}]})
        assert top(http, "Where did Dave move?") == "Dave moved to Lisbon in May."
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=60) as http:
        assert graph_ready(http)
        assert top(http, "Which port does svc-233 listen on?") == facts[233]
        assert facts[417] not in recall_texts(http, "big", query="Which port does svc-417 listen on?")


@pytest.mark.anyio
@pytest.mark.sqlite_only("a store on PostgreSQL begins at the schema with token costs")
async def test_a_store_from_before_token_costs_gets_them_on_open(tmp_path: Path) -> None:
    """Migration 0007 (the store's, applied when it attaches) adds each memory's token cost to a store written before it (recall picks what
    fits from these costs): after it, every row's cost is its text's, and recall spends the budget."""
    import sqlite3

    from memwarden.db.database import Database
    from memwarden.store.embedder import HashingEmbedder
    from memwarden.store.local import LocalStore, RetainItem
    from memwarden.store.text import token_estimate

    texts = ["Alice prefers dark roast coffee.", "服务 svc-1 的内网端口统一设为 9000", "短"]
    ledger = Database.open(tmp_path, mirror=False, url=database_url())
    await LocalStore(ledger, HashingEmbedder()).retain("b", [RetainItem(content=t) for t in texts])
    ledger.close()
    db = sqlite3.connect(tmp_path / "memwarden.db")  # back to the schema of 0006
    db.execute("ALTER TABLE store_units DROP COLUMN tokens")
    db.execute("DELETE FROM schema_migrations WHERE name = '0007_unit_tokens'")
    db.commit()
    db.close()

    ledger = Database.open(tmp_path, mirror=False, url=database_url())
    try:
        store = LocalStore(ledger, HashingEmbedder())  # the store brings its own migrations
        costs = await ledger.read(lambda db: dict(db.execute("SELECT text, tokens FROM store_units").fetchall()))
        assert costs == {t: token_estimate(t) for t in texts}
        budget = token_estimate(texts[0]) + token_estimate(texts[2])
        got = [m.text for m in (await store.recall("b", RecallQuery("Alice coffee 短", max_tokens=budget))).memories]
        assert 1 <= len(got) < 3  # with costs of 0 all three would fit
        assert sum(map(token_estimate, got)) <= budget
    finally:
        ledger.close()


@pytest.mark.anyio
async def test_recall_fills_the_token_budget_in_rank_order(tmp_path: Path) -> None:
    """``max_tokens`` is spent on the ranked list as Hindsight spends it, whatever the mix of
    lengths and scripts and whichever retriever found a memory, across the reads of growing size
    that fetch the rows: in rank order, a memory that does not fit is skipped and later, shorter
    ones still go in; when none fits, the first alone; none for a budget of 0 or less."""
    from memwarden.db.database import Database
    from memwarden.store.embedder import HashingEmbedder
    from memwarden.store.local import LocalStore, RetainItem
    from memwarden.store.text import token_estimate

    texts = []
    for i in range(400):
        filler = " ".join(["quarterly"] * (i % 13)) if i % 2 else "季度" * (i % 11)
        mark = f"k{i % 25}"  # each mark in 16 memories: rare enough for the full-text arm
        texts.append(
            f"report {i} on the budget review {mark} {filler}" if i % 3 else f"预算评审第 {i} 号报告 {mark} {filler}"
        )
    ledger = Database.open(tmp_path, mirror=False, url=database_url())
    try:
        store = LocalStore(ledger, HashingEmbedder())
        await store.retain("b", [RetainItem(content=t) for t in texts])
        for query in ("k3 k7 k11 budget review", "预算评审 k4 k9", "quarterly k1"):
            uncut = (await store.recall("b", RecallQuery(query, max_tokens=10**6))).memories
            whole = [m.text for m in uncut]
            assert len(whole) >= 300  # a retriever's pool, uncut
            assert sum(m.extra["scores"]["keyword"] is not None for m in uncut[:40]) >= 10  # full-text rows first
            skipped_then_filled = 0
            for budget in (-1, 0, 1, 40, 700, 2500, 4096):
                got = [m.text for m in (await store.recall("b", RecallQuery(query, max_tokens=budget))).memories]
                used, expected, gap = 0, [], False
                for text in whole:
                    if used + token_estimate(text) > budget:
                        gap = True
                        continue
                    skipped_then_filled += gap
                    used += token_estimate(text)
                    expected.append(text)
                if not expected and budget > 0:
                    expected = whole[:1]
                assert got == expected, (query, budget)
            assert skipped_then_filled  # the data has memories that fit after one that did not
    finally:
        ledger.close()


def test_bad_input_gets_hindsights_status_and_words(tmp_path: Path) -> None:
    """The store on its own (governance off, as a client of a bare Hindsight sees it): each case of
    ``tests/hindsight_cases.py`` gets the real server's status and message (the interop test keeps
    the table true to the real server), and nothing refused is written."""
    from tests.hindsight_cases import run_cases

    with (
        running_warden(local_settings(tmp_path, governance="off")) as url,
        httpx.Client(base_url=url, timeout=60) as http,
    ):
        assert run_cases(http, "cases") == []
        listed = http.get("/v1/default/banks/cases/memories/list").json()["items"]
        assert sorted(m["text"] for m in listed) == [
            "Alice prefers dark roast coffee.",
            "Bob moved the deploy to Friday.",
        ]
        assert all(m["state"] == "valid" for m in listed)  # archived and restored by the cases
        config = http.get("/v1/default/banks/cases/config").json()
        assert config["overrides"] == {}  # every refused PATCH left the config alone
        banks = {b["bank_id"] for b in http.get("/v1/default/banks").json()["banks"]}
        assert banks == {"cases"}  # no refused bank id was created
        r = http.put("/v1/default/banks/a%00b", json={})  # Hindsight's database answers this with a 500
        assert r.json() == {"detail": "Bank id must not contain control characters"}
        assert r.status_code == 400


def test_tag_listing_matches_like_hindsight(tmp_path: Path) -> None:
    """``GET …/tags?q=``: the whole tag, case-insensitively, ``*`` any run and ``_`` any one
    character, ordered by count and then tag, as Hindsight's ``ILIKE`` lists them."""
    from tests.hindsight_cases import tag_listings

    with (
        running_warden(local_settings(tmp_path, governance="off")) as url,
        httpx.Client(base_url=url, timeout=60) as http,
    ):
        listed = tag_listings(http, "t")
        assert listed["?q=user:*"] == (["user:alice", "user:bob"], 2, 100, 0)
        assert listed["?q=USER:ALICE"] == (["user:alice"], 1, 100, 0)
        assert listed["?q=user"] == ([], 0, 100, 0)  # no wildcard: the whole tag
        assert listed["?q=t__m*"] == (["Team_A"], 1, 100, 0)
        assert listed["?limit=0"] == ([], 3, 0, 0)
        http.post(
            "/v1/default/banks/t/memories", json={"items": [{"content": "Bob is on call.", "tags": ["user:bob"]}]}
        )
        items = http.get("/v1/default/banks/t/tags").json()["items"]
        assert items == [
            {"tag": "user:bob", "count": 2},
            {"tag": "Team_A", "count": 1},
            {"tag": "user:alice", "count": 1},
        ]


def test_an_items_timestamp_is_stored_as_hindsight_stores_it(http: httpx.Client) -> None:
    """An ISO 8601 ``timestamp`` becomes the memory's instant in UTC (a naive one read as UTC),
    ``unset`` stores no date, none means the time of the retain."""
    items = [
        {"content": "Alice prefers dark roast coffee.", "timestamp": "2024-01-15T10:30:00+02:00"},
        {"content": "Bob moved the deploy to Friday.", "timestamp": "2024-01-15"},
        {"content": "Carol runs the Berlin office.", "timestamp": "unset"},
        {"content": "Dan is on call this week."},
    ]
    assert http.post("/v1/default/banks/d/memories", json={"items": items}).status_code == 200
    listed = {m["text"][:3]: m for m in http.get("/v1/default/banks/d/memories/list").json()["items"]}
    assert listed["Ali"]["mentioned_at"] == "2024-01-15T08:30:00+00:00"
    assert listed["Bob"]["mentioned_at"] == "2024-01-15T00:00:00+00:00"
    assert (listed["Car"]["mentioned_at"], listed["Car"]["date"]) == (None, None)
    assert listed["Dan"]["mentioned_at"].startswith(datetime.now(UTC).strftime("%Y-%m-%d"))


@pytest.mark.anyio
async def test_recall_answers_the_chunks_its_results_came_from(local_url: str) -> None:
    """#34: ``include.chunks`` was ignored self-hosted (``"chunks": null``); the official client's
    ``include_chunks=True`` now gets Hindsight's map — each result's chunk by its ``chunk_id``, its
    text, index and ``truncated`` — cut to ``max_chunk_tokens``; without it, null as before."""
    client = Hindsight(base_url=local_url)
    try:
        await client.acreate_bank("docs", name="Docs")
        items = [
            {"content": "The billing service runs on three nodes in Frankfurt.", "document_id": "ops-notes"},
            {
                "content": "Deploys go out every Tuesday at 10:00 UTC after the change review.",
                "document_id": "ops-notes",
            },
        ]
        assert (await client.aretain_batch("docs", items)).items_count == 2
        question = "where does the billing service run?"
        plain = await client.arecall("docs", question)
        assert plain.chunks is None
        full = await client.arecall("docs", question, include_chunks=True)
        assert full.chunks is not None
        hit = full.results[0]
        assert hit.text == items[0]["content"]
        assert hit.chunk_id is not None
        chunk = full.chunks[hit.chunk_id]
        assert chunk.text == items[0]["content"]
        assert chunk.truncated is False
        assert set(full.chunks) == {r.chunk_id for r in full.results}
        cut = await client.arecall("docs", question, include_chunks=True, max_chunk_tokens=5)
        assert cut.chunks is not None
        first = cut.chunks[cut.results[0].chunk_id]
        assert first.truncated is True
        assert 0 < len(first.text) < len(items[0]["content"])
        assert items[0]["content"].startswith(first.text)
        assert len(cut.chunks) == 1  # the budget spent on the first
        async with httpx.AsyncClient(base_url=local_url) as http:
            bad = await http.post(
                "/v1/default/banks/docs/memories/recall", json={"query": "x", "include": {"chunks": 5}}
            )
        assert bad.status_code == 422
    finally:
        await client.aclose()
