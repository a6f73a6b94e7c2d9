"""Memories through /warden/v1 on the self-hosted store: list and filter, detail with the event
timeline, archive and restore end to end (recall stops and starts returning it), feedback, and
clear refusals."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import running_warden

FACTS = [
    ("The search service listens on port 9200 in the staging cluster.", ["topic=infra", "user:ops"]),
    ("Alice prefers dark roast coffee in the morning.", ["user:alice"]),
    ("决定用激活码订阅模式", ["topic:business"]),
]


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path),
            "local": {"embedder": "hashing"},
            "config_guard": {"missions": {"mode": "off"}},
        },
    )
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=60) as client:
        r = client.post("/v1/default/banks/b/memories", json={"items": [{"content": t, "tags": g} for t, g in FACTS]})
        assert r.json()["items_count"] == len(FACTS)
        yield client


def ledger(http: httpx.Client, **params: Any) -> dict[str, Any]:
    r = http.get("/warden/v1/banks/b/memories", params=params)
    assert r.status_code == 200, r.text
    page: dict[str, Any] = r.json()
    return page


def recalled(http: httpx.Client, query: str) -> list[str]:
    r = http.post("/v1/default/banks/b/memories/recall", json={"query": query})
    return [x["text"] for x in r.json()["results"]]


def test_list_and_filter(http: httpx.Client) -> None:
    page = ledger(http)
    assert page["total"] == 3
    assert {m["status"] for m in page["items"]} == {"active"}
    assert [m["content"] for m in ledger(http, topic="infra")["items"]] == [FACTS[0][0]]
    # A tag in either spelling (stored canonical: topic:infra).
    assert ledger(http, tag="topic=infra")["total"] == 1
    assert ledger(http, tag="user=alice")["items"][0]["content"] == FACTS[1][0]
    assert ledger(http, q="COFFEE")["total"] == 1
    assert ledger(http, q="激活码")["total"] == 1
    assert ledger(http, status="archived")["total"] == 0
    assert ledger(http, limit=2)["items"][1]["id"] == ledger(http, limit=1, offset=1)["items"][0]["id"]


def test_archive_and_restore_take_it_out_of_recall_and_back(http: httpx.Client) -> None:
    memory = ledger(http, q="coffee")["items"][0]
    assert FACTS[1][0] in recalled(http, "coffee")

    r = http.post(f"/warden/v1/banks/b/memories/{memory['id']}/archive", json={"reason": "stale preference"})
    assert r.status_code == 200, r.text
    assert len(r.json()["backend"]["invalidated"]) == 1
    assert FACTS[1][0] not in recalled(http, "coffee")
    assert ledger(http, status="archived")["items"][0]["id"] == memory["id"]
    # Kept: the store still has it, invalidated; the ledger has it, archived.
    units = http.get("/v1/default/banks/b/memories/list", params={"q": "coffee", "state": "invalidated"}).json()[
        "items"
    ]
    assert [u["state"] for u in units] == ["invalidated"]

    r = http.post(f"/warden/v1/banks/b/memories/{memory['id']}/restore")
    assert r.status_code == 200, r.text
    assert r.json()["backend"] == {"revalidated": [units[0]["id"]]}
    assert FACTS[1][0] in recalled(http, "coffee")

    detail = http.get(f"/warden/v1/banks/b/memories/{memory['id']}").json()
    assert [e["action"] for e in detail["events"]] == ["add", "archive", "restore"]
    archive = detail["events"][1]
    assert archive["before"] == {"status": "active"}
    assert archive["after"] == {"status": "archived"}
    assert archive["reason"].startswith("stale preference")
    assert detail["status"] == "active"


def test_curating_a_fact_moves_the_ledger_with_it(http: httpx.Client) -> None:
    """Issue #33: a fact hidden through Hindsight's curation route left the ledger saying active."""
    memory = ledger(http, q="coffee")["items"][0]
    units = http.get("/v1/default/banks/b/memories/list", params={"q": "coffee"}).json()["items"]
    assert len(units) == 1
    fact = f"/v1/default/banks/b/memories/{units[0]['id']}"

    r = http.patch(fact, json={"state": "invalidated", "reason": "moved to tea"})
    assert r.status_code == 200, r.text
    assert FACTS[1][0] not in recalled(http, "coffee")
    assert ledger(http, status="archived")["items"][0]["id"] == memory["id"]

    assert http.patch(fact, json={"state": "valid"}).status_code == 200
    detail = http.get(f"/warden/v1/banks/b/memories/{memory['id']}").json()
    assert detail["status"] == "active", detail
    assert [(e["action"], e["source"]) for e in detail["events"]][1:] == [("archive", "curate"), ("restore", "curate")]
    assert detail["events"][1]["reason"] == "moved to tea"
    # An edit that leaves the state alone moves nothing.
    assert http.patch(fact, json={"text": "Alice prefers green tea."}).status_code == 200
    assert len(http.get(f"/warden/v1/banks/b/memories/{memory['id']}").json()["events"]) == 3


def test_restore_recreates_a_memory_whose_facts_are_gone(http: httpx.Client) -> None:
    memory = ledger(http, q="9200")["items"][0]
    assert http.post(f"/warden/v1/banks/b/memories/{memory['id']}/archive").status_code == 200
    r = http.delete(f"/v1/default/banks/b/documents/{memory['document_id']}", headers={"x-warden-confirm": "b"})
    assert r.status_code == 200, r.text
    r = http.post(f"/warden/v1/banks/b/memories/{memory['id']}/restore")
    assert r.status_code == 200, r.text
    assert r.json()["backend"] == {"recreated": True}
    assert FACTS[0][0] in recalled(http, "port 9200")
    units = http.get("/v1/default/banks/b/memories/list", params={"q": "9200"}).json()["items"]
    assert units[0]["document_id"] == memory["document_id"]
    assert "topic:infra" in units[0]["tags"]


def test_feedback_is_stored_and_audited(http: httpx.Client) -> None:
    memory = ledger(http, q="coffee")["items"][0]
    for score in (1, 1, -1):
        r = http.post(f"/warden/v1/banks/b/memories/{memory['id']}/feedback", json={"score": score, "reason": "r"})
        assert r.status_code == 200, r.text
    detail = http.get(f"/warden/v1/banks/b/memories/{memory['id']}").json()
    assert detail["feedback"] == {"score": 1, "count": 3}
    assert http.get("/warden/v1/audit", params={"action": "feedback"}).json()["events"][0]["after"]["score"] in (1, -1)


def test_bad_input_is_refused_and_changes_nothing(http: httpx.Client) -> None:
    memory = ledger(http, q="coffee")["items"][0]
    base = f"/warden/v1/banks/b/memories/{memory['id']}"
    assert http.get("/warden/v1/banks/b/memories/nope").status_code == 404
    assert http.post("/warden/v1/banks/b/memories/nope/archive").status_code == 404
    assert http.get("/warden/v1/banks/b/memories", params={"status": "bogus"}).status_code == 422
    assert http.get("/warden/v1/banks/b/memories", params={"limit": "x"}).status_code == 422
    assert http.get("/warden/v1/banks/b/memories", params={"limit": 0}).status_code == 422
    assert http.post(f"{base}/archive", content=b"{nope").status_code == 422
    assert http.post(f"{base}/archive", json=[1]).status_code == 422
    assert http.post(f"{base}/archive", json={"reason": 5}).status_code == 422
    long = http.post(f"{base}/archive", json={"reason": "x" * 2001})
    assert (long.status_code, long.json()["detail"][0]["loc"]) == (422, ["body", "reason"])
    for bad in ({"score": 2}, {"score": True}, {"score": 1.0}, {"score": "1"}, {}):
        refused = http.post(f"{base}/feedback", json=bad)
        assert (refused.status_code, refused.json()["detail"][0]["loc"]) == (422, ["body", "score"])
    r = http.post(f"{base}/restore")
    assert r.status_code == 409
    assert "only archived memories can be restored" in r.json()["detail"]
    assert http.post(f"{base}/archive").status_code == 200
    r = http.post(f"{base}/archive")
    assert r.status_code == 409
    assert "is archived" in r.json()["detail"]
    events = http.get(base).json()["events"]
    assert [e["action"] for e in events] == ["add", "archive"]  # the refusals left no trace


def test_a_memory_sharing_its_document_is_not_archived_alone(http: httpx.Client) -> None:
    r = http.post(
        "/v1/default/banks/b/memories",
        json={
            "items": [
                {"content": "The payments team owns the refund service.", "document_id": "shared"},
                {"content": "The refund service runs in the eu-west region.", "document_id": "shared"},
            ]
        },
    )
    assert r.json()["items_count"] == 2
    one = ledger(http, q="payments team")["items"][0]
    r = http.post(f"/warden/v1/banks/b/memories/{one['id']}/archive")
    assert r.status_code == 409
    assert "shares document 'shared' with 1 other active" in r.json()["detail"]
    assert "The payments team owns the refund service." in recalled(http, "refund service payments team")


def test_the_memories_commands(http: httpx.Client, tmp_path: Path) -> None:
    import subprocess
    import sys

    def cli(*args: str) -> subprocess.CompletedProcess[str]:
        cmd = [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", "memories", *args]
        return subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=False)

    def memwarden(*args: str) -> str:
        done = cli(*args, "--url", str(http.base_url))
        assert done.returncode == 0, done.stderr
        return done.stdout

    listing = memwarden("list", "b", "--tag", "user=alice")
    assert "Alice prefers dark roast coffee" in listing
    assert "1 of 1" in listing
    memory_id = listing.split()[0]
    assert "archived (1 backend facts invalidated)" in memwarden("archive", "b", memory_id, "--reason", "stale")
    assert "archived" in memwarden("list", "b", "--status", "archived")
    assert "restored (1 facts re-validated)" in memwarden("restore", "b", memory_id)
    assert "recorded" in memwarden("feedback", "b", memory_id, "down", "--reason", "wrong")
    shown = memwarden("show", "b", memory_id)
    assert "feedback -1 (1)" in shown
    assert "archive" in shown
    assert "restore" in shown
    assert "stale" in shown
    missing = cli("show", "b", "nope", "--url", str(http.base_url))
    assert missing.returncode == 1
    assert "404: Memory 'nope' not found in bank 'b'" in missing.stderr

    # No server needed for the reads: the data directory, read-only, gives the same answers.
    offline = cli("list", "b", "--tag", "user=alice", "--data-dir", str(tmp_path))
    assert offline.stdout == listing, offline.stderr
    assert cli("show", "b", memory_id, "--data-dir", str(tmp_path)).stdout == shown
    bad = cli("list", "b", "--status", "bogus", "--data-dir", str(tmp_path))
    assert bad.returncode == 1
    assert "status must be one of" in bad.stderr


def test_a_backend_that_refuses_the_restore_leaves_it_archived(tmp_path: Path) -> None:
    """The facts are gone and the store refuses the re-creation (its bank waits for a re-embed after
    a change of embedder): a clear 502, the memory stays archived, no restore event."""

    def settings(embedder: str) -> Any:
        return load_settings(
            environ={},
            overrides={
                "data_dir": str(tmp_path),
                "local": {"embedder": embedder},
                "config_guard": {"missions": {"mode": "off"}},
            },
        )

    with running_warden(settings("hashing")) as url, httpx.Client(base_url=url, timeout=60) as http:
        http.post("/v1/default/banks/b/memories", json={"items": [{"content": FACTS[1][0]}]})
        memory = ledger(http)["items"][0]
        assert http.post(f"/warden/v1/banks/b/memories/{memory['id']}/archive").status_code == 200
        http.delete(f"/v1/default/banks/b/documents/{memory['document_id']}", headers={"x-warden-confirm": "b"})
    with running_warden(settings("e5")) as url, httpx.Client(base_url=url, timeout=120) as http:
        r = http.post(f"/warden/v1/banks/b/memories/{memory['id']}/restore")
        assert r.status_code == 502
        assert "the backend refused the restore" in r.json()["detail"]
        assert "stays archived" in r.json()["detail"]
        detail = http.get(f"/warden/v1/banks/b/memories/{memory['id']}").json()
        assert detail["status"] == "archived"
        assert "restore" not in [e["action"] for e in detail["events"]]


def test_feedback_nudges_the_self_hosted_ranking(http: httpx.Client) -> None:
    r = http.post(
        "/v1/default/banks/b/memories",
        json={
            "items": [
                {"content": "The payments service listens on port 9400."},
                {"content": "The refunds service listens on port 9500."},
            ]
        },
    )
    assert r.json()["items_count"] == 2

    def order() -> list[str]:
        return [t for t in recalled(http, "which service listens on port") if "payments" in t or "refunds" in t]

    first, second = order()
    top = ledger(http, q=first.split()[1])["items"][0]
    for _ in range(2):
        r = http.post(f"/warden/v1/banks/b/memories/{top['id']}/feedback", json={"score": -1, "reason": "outdated"})
        assert len(r.json()["ranking_nudged"]) == 1
    assert order() == [second, first]
    account = http.post("/warden/v1/banks/b/explain", json={"query": "which service listens on port"}).json()
    assert {c["text"]: c["feedback"] for c in account["candidates"]}[first] == -2
    for _ in range(2):
        http.post(f"/warden/v1/banks/b/memories/{top['id']}/feedback", json={"score": 1})
    assert order() == [first, second]
