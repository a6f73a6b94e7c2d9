"""The read path against the real Hindsight 1.1.0: a bank holding old ``topic=x`` and new
``topic:x`` data is searched through memwarden in either spelling, and for every ``tags_match``
mode the result is the set the same query finds on the same data written in one spelling; archived
and superseded memories never come back."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.conftest import make_settings, running_warden

pytestmark = [pytest.mark.interop]

MODES = ("any", "all", "any_strict", "all_strict", "exact")
# Each item says who it is before the colon; the same items in mixed spellings and in one.
MIXED = [
    ("A", ["topic:infra", "user:alice"]),
    ("B", ["topic=infra"]),
    ("C", ["user=alice", "topic=infra"]),
    ("D", []),
    ("E", ["topic:research"]),
    ("F", ["urgent", "user:alice"]),
    ("G", ["topic=infra", "user:alice"]),
    ("H", ["topic=infra", "topic:infra"]),
]
QUERIES = [["topic:infra"], ["topic=infra", "user:alice"], ["user=alice"], ["urgent", "user=alice"]]


def colon(tag: str) -> str:
    return tag.replace("=", ":", 1)


def items(one_spelling: bool) -> list[dict[str, Any]]:
    return [
        {
            "content": f"{who}: deploy note {who} for the search cluster.",
            "tags": list(dict.fromkeys(colon(t) for t in tags)) if one_spelling else tags,
            "document_id": f"doc-{who}",
        }
        for who, tags in MIXED
    ]


@pytest.fixture(scope="module")
def banks(hindsight_url: str) -> Iterator[tuple[str, str]]:
    """Two banks written straight to Hindsight (around memwarden, as old data was)."""
    mixed, reference = f"mixed-{uuid.uuid4().hex[:8]}", f"ref-{uuid.uuid4().hex[:8]}"
    with httpx.Client(base_url=hindsight_url, timeout=120) as http:
        for bank, one in ((mixed, False), (reference, True)):
            http.post(f"/v1/default/banks/{bank}/memories", json={"items": items(one)}).raise_for_status()
        yield mixed, reference
        for bank in (mixed, reference):
            http.delete(f"/v1/default/banks/{bank}")


@pytest.fixture(scope="module")
def warden(hindsight_url: str, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = make_settings(hindsight_url, data_dir=tmp_path_factory.mktemp("read"))
    with running_warden(settings) as url:
        yield url


def recall(base: str, bank: str, **filters: Any) -> set[str]:
    body = {"query": "deploy note search cluster", "types": ["world"], "budget": "high", **filters}
    r = httpx.post(f"{base}/v1/default/banks/{bank}/memories/recall", json=body, timeout=120)
    assert r.status_code == 200, r.text
    return {x["text"].split(":")[0] for x in r.json()["results"]}


def listed(base: str, bank: str, tags: list[str], mode: str) -> set[str]:
    r = httpx.get(
        f"{base}/v1/default/banks/{bank}/memories/list",
        params=[("type", "world"), *(("tags", t) for t in tags), ("tags_match", mode)],
        timeout=120,
    )
    assert r.status_code == 200, r.text
    page = r.json()
    assert page["total"] == len(page["items"])
    return {x["text"].split(":")[0] for x in page["items"]}


def test_recall_in_either_spelling_finds_both_with_each_modes_semantics(
    hindsight_url: str, warden: str, banks: tuple[str, str]
) -> None:
    mixed, reference = banks
    assert recall(hindsight_url, reference) == {who for who, _ in MIXED}  # every item is there to find
    for tags in QUERIES:
        for mode in MODES:
            expected = recall(hindsight_url, reference, tags=[colon(t) for t in tags], tags_match=mode)
            for spelled in (tags, [colon(t) for t in tags], [t.replace(":", "=", 1) for t in tags]):
                got = recall(warden, mixed, tags=spelled, tags_match=mode)
                assert got == expected, (spelled, mode)
    # Not vacuous: directly, one spelling misses the other's data; through memwarden it does not.
    assert recall(hindsight_url, mixed, tags=["topic:infra"], tags_match="any_strict") == {"A", "H"}
    assert recall(warden, mixed, tags=["topic:infra"], tags_match="any_strict") == {"A", "B", "C", "G", "H"}
    assert recall(warden, mixed, tags=["topic:infra", "user:alice"], tags_match="exact") == {"A", "C", "G"}


def test_tag_groups_leaves_find_both_spellings(hindsight_url: str, warden: str, banks: tuple[str, str]) -> None:
    mixed, reference = banks
    groups = [{"or": [{"tags": ["user=alice"], "match": "all_strict"}, {"not": {"tags": ["topic:infra"]}}]}]
    expected = recall(
        hindsight_url,
        reference,
        tag_groups=[{"or": [{"tags": ["user:alice"], "match": "all_strict"}, {"not": {"tags": ["topic:infra"]}}]}],
    )
    assert recall(warden, mixed, tag_groups=groups) == expected
    assert expected == {"A", "C", "D", "E", "F", "G"}


def test_memory_list_and_tags_find_both_spellings(hindsight_url: str, warden: str, banks: tuple[str, str]) -> None:
    mixed, reference = banks
    for tags in QUERIES:
        for mode in MODES:
            expected = listed(hindsight_url, reference, [colon(t) for t in tags], mode)
            assert listed(warden, mixed, tags, mode) == expected, (tags, mode)
    r = httpx.get(f"{warden}/v1/default/banks/{mixed}/tags", params={"q": "topic:*"}, timeout=60)
    assert r.status_code == 200
    assert {x["tag"] for x in r.json()["items"]} == {"topic:infra", "topic=infra", "topic:research"}
    assert r.headers["x-warden-tags"].startswith("normalized")


INCLUDE = {"chunks": {}, "source_facts": {}}


def test_superseded_and_archived_memories_never_come_back(hindsight_url: str, tmp_path: Path) -> None:
    bank = f"status-{uuid.uuid4().hex[:8]}"
    settings = make_settings(hindsight_url, data_dir=tmp_path)
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=120) as http:
        p = f"/v1/default/banks/{bank}/memories"
        # The client names the documents, so a superseded one stays in Hindsight.
        for n, what in enumerate(("search relevance tuning", "billing export rewrite")):
            r = http.post(
                p, json={"items": [{"content": f"active_context: working on {what}", "document_id": f"ctx-{n}"}]}
            )
            assert r.status_code == 200, r.text
            assert r.json()["items_count"] == 1
        direct = httpx.post(
            f"{hindsight_url}{p}/recall",
            json={"query": "active_context working on", "budget": "high", "types": ["world"], "include": INCLUDE},
            timeout=120,
        )
        assert {x["document_id"] for x in direct.json()["results"]} == {"ctx-0", "ctx-1"}
        assert "search relevance" in json.dumps(direct.json()["chunks"])
        r = http.post(
            f"{p}/recall",
            json={"query": "active_context working on", "budget": "high", "types": ["world"], "trace": True,
                  "include": INCLUDE},
        )  # fmt: skip
        assert r.status_code == 200
        assert {x["document_id"] for x in r.json()["results"]} == {"ctx-1"}
        # Nor by a side door: the superseded memory's chunk is not among the included chunks.
        assert "search relevance" not in json.dumps(r.json()["chunks"])
        assert "billing export" in json.dumps(r.json()["chunks"])
        assert int(r.headers["x-warden-excluded"]) >= 1
        assert r.json()["trace"]["warden"]["excluded_by_status"] >= 1
        http.delete(f"/v1/default/banks/{bank}", headers={"x-warden-confirm": bank})


def test_recall_refuses_a_filter_too_wide_to_rewrite(warden: str, banks: tuple[str, str]) -> None:
    mixed, _ = banks
    tags = [f"k{i}:v" for i in range(5)]
    r = httpx.post(
        f"{warden}/v1/default/banks/{mixed}/memories/recall",
        json={"query": "x", "tags": tags, "tags_match": "exact"},
        timeout=60,
    )
    assert r.status_code == 400
    assert "exact" in r.json()["detail"]
    # Malformed bodies get the same answers as before.
    r = httpx.post(f"{warden}/v1/default/banks/{mixed}/memories/recall", content=b"{nope", timeout=60)
    assert r.status_code == 422
    r = httpx.post(f"{warden}/v1/default/banks/{mixed}/memories/recall", json=[1, 2], timeout=60)
    assert r.status_code == 422


def test_explain_in_front_of_hindsight(hindsight_url: str, warden: str, banks: tuple[str, str]) -> None:
    mixed, _ = banks
    body = {"query": "deploy note search cluster", "types": ["world"], "budget": "high", "tags": ["topic=infra"]}
    r = httpx.post(f"{warden}/warden/v1/banks/{mixed}/explain", json={**body, "tags_match": "any_strict"}, timeout=120)
    assert r.status_code == 200, r.text
    account = r.json()
    assert account["backend"] == "hindsight"
    assert account["tag_filter"]["expanded"] == {"tags": ["topic=infra", "topic:infra"], "tags_match": "any_strict"}
    assert account["backend_trace"] is not None  # Hindsight's own account, passed on
    returned = {c["text"].split(":")[0] for c in account["candidates"] if c["outcome"] == "returned"}
    assert returned == recall(warden, mixed, tags=["topic=infra"], tags_match="any_strict") == {"A", "B", "C", "G", "H"}
    r = httpx.post(f"{warden}/warden/v1/banks/nope-{mixed}/explain", json={"query": "x"}, timeout=60)
    assert r.status_code == 404


def test_archive_and_restore_on_hindsight(hindsight_url: str, tmp_path: Path) -> None:
    bank = f"arch-{uuid.uuid4().hex[:8]}"
    with (
        running_warden(make_settings(hindsight_url, data_dir=tmp_path)) as url,
        httpx.Client(base_url=url, timeout=120) as http,
    ):
        r = http.post(
            f"/v1/default/banks/{bank}/memories",
            json={
                "items": [
                    {"content": "Alice prefers dark roast coffee in the morning."},
                    {"content": "The staging cluster has 3 nodes."},
                ]
            },
        )
        assert r.json()["items_count"] == 2
        memory = http.get(f"/warden/v1/banks/{bank}/memories", params={"q": "coffee"}).json()["items"][0]

        def direct_texts() -> set[str]:
            found = httpx.post(
                f"{hindsight_url}/v1/default/banks/{bank}/memories/recall",
                json={"query": "coffee morning"},
                timeout=120,
            ).json()["results"]
            return {x["document_id"] for x in found}

        assert memory["document_id"] in direct_texts()
        r = http.post(f"/warden/v1/banks/{bank}/memories/{memory['id']}/archive", json={"reason": "stale"})
        assert r.status_code == 200, r.text
        assert r.json()["backend"]["invalidated"]
        # Out of Hindsight's own recall (invalidated there, not deleted), and out of memwarden's.
        assert memory["document_id"] not in direct_texts()
        via = http.post(f"/v1/default/banks/{bank}/memories/recall", json={"query": "coffee morning"}).json()["results"]
        assert memory["document_id"] not in {x["document_id"] for x in via}
        r = http.post(f"/warden/v1/banks/{bank}/memories/{memory['id']}/restore")
        assert r.status_code == 200, r.text
        assert r.json()["backend"]["revalidated"]
        assert memory["document_id"] in direct_texts()

        # Gone from Hindsight meanwhile: restore re-creates it from the ledger.
        assert http.post(f"/warden/v1/banks/{bank}/memories/{memory['id']}/archive").status_code == 200
        httpx.delete(f"{hindsight_url}/v1/default/banks/{bank}/documents/{memory['document_id']}", timeout=60)
        r = http.post(f"/warden/v1/banks/{bank}/memories/{memory['id']}/restore")
        assert r.status_code == 200, r.text
        assert r.json()["backend"] == {"recreated": True}
        assert memory["document_id"] in direct_texts()
        http.delete(f"/v1/default/banks/{bank}", headers={"x-warden-confirm": bank})


def test_plans_reports_and_retention_on_hindsight(hindsight_url: str, tmp_path: Path) -> None:
    """A plan that archives one memory and approves a held one; health over Hindsight's documents;
    retention archiving an old process memory — all against the real server."""
    bank = f"ops-{uuid.uuid4().hex[:8]}"
    old = (datetime.now(UTC) - timedelta(days=9)).isoformat()
    with (
        running_warden(make_settings(hindsight_url, data_dir=tmp_path)) as url,
        httpx.Client(base_url=url, timeout=120) as http,
    ):
        p = f"/v1/default/banks/{bank}/memories"
        items = [
            {"content": "Alice prefers dark roast coffee in the morning."},
            {"content": "当前默认模型是 gpt-4o"},
            {
                "content": "Migrating the billing tables to the new schema this sprint.",
                "tags": ["stage:process"],
                "timestamp": old,
            },
        ]
        assert http.post(p, json={"items": items}).json()["items_count"] == 3
        held = http.post(p, json={"items": [{"content": "当前默认模型是 claude-3"}]})
        assert json.loads(held.headers["x-warden-decisions"]) == {"review": 1}
        memories = {
            m["content"]: m for m in http.get(f"/warden/v1/banks/{bank}/memories", params={"limit": 10}).json()["items"]
        }
        coffee, review = memories[items[0]["content"]], memories["当前默认模型是 claude-3"]

        health = http.get(f"/warden/v1/banks/{bank}/reports/health").json()
        assert health["consistency"]["missing_from_backend"] == []
        assert health["review_queue"] == 1
        assert health["status"] == "attention"

        r = http.post(
            f"/warden/v1/banks/{bank}/plans",
            json={
                "operations": [
                    {"op": "archive", "memory_id": coffee["id"]},
                    {"op": "approve", "memory_id": review["id"]},
                ]
            },
        )
        assert r.status_code == 201, r.text
        plan = r.json()
        r = http.post(f"/warden/v1/banks/{bank}/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]})
        assert r.status_code == 200, r.text
        after = {
            m["content"]: m["status"]
            for m in http.get(f"/warden/v1/banks/{bank}/memories", params={"limit": 10}).json()["items"]
        }
        assert after[items[0]["content"]] == "archived"
        assert after["当前默认模型是 claude-3"] == "active"
        assert after["当前默认模型是 gpt-4o"] == "superseded"
        listed = httpx.get(f"{hindsight_url}{p}/list", params={"limit": 100}, timeout=120).json()["items"]
        texts = " ".join(x["text"] for x in listed)  # Hindsight's valid facts
        assert "claude-3" in texts
        assert "coffee" not in texts

        result = http.post("/warden/v1/retention/run", params={"bank": bank}).json()
        assert [m["content"] for m in result["due"]] == [items[2]["content"]]
        assert len(result["archived"]) == 1
        health = http.get(f"/warden/v1/banks/{bank}/reports/health").json()
        assert health["status"] == "ok", health["reasons"]
        http.delete(f"/v1/default/banks/{bank}", headers={"x-warden-confirm": bank})


LABEL_BLIND = [("A", ["user:alice"]), ("B", []), ("C", ["user:alice", "team:ops"]), ("D", ["team:ops"])]


def named(base: str, bank: str, tags: list[str], mode: str) -> set[str]:
    """The entities (``owner …``, the ones the items name) of the memories a tag filter selects."""
    r = httpx.get(
        f"{base}/v1/default/banks/{bank}/entities",
        params={"tags": tags, "tags_match": mode, "limit": 1000},
        timeout=120,
    )
    r.raise_for_status()
    return {e["canonical_name"].casefold() for e in r.json()["items"] if e["canonical_name"].startswith("owner")}


def test_memwardens_labels_are_invisible_to_filters_that_do_not_name_them(hindsight_url: str, tmp_path: Path) -> None:
    """The same items straight into one bank and through memwarden (which adds a topic and a stage
    to each) into another: every client filter that names no label selects the same items."""
    direct, governed = f"plain-{uuid.uuid4().hex[:8]}", f"labelled-{uuid.uuid4().hex[:8]}"
    items = [
        {
            "content": f"{who}: the search cluster {who} runs five nodes in Frankfurt.",
            "tags": tags,
            "entities": [{"text": f"owner {who.lower()}"}],
        }
        for who, tags in LABEL_BLIND
    ]
    with (
        running_warden(make_settings(hindsight_url, data_dir=tmp_path)) as warden_url,
        httpx.Client(timeout=120) as http,
    ):
        http.post(f"{hindsight_url}/v1/default/banks/{direct}/memories", json={"items": items}).raise_for_status()
        r = http.post(f"{warden_url}/v1/default/banks/{governed}/memories", json={"items": items})
        assert r.json()["items_count"] == 4, r.text
        # E: written when the deployment's separator was "=" (labels and the client's tags in it).
        old = "E: the search cluster E runs five nodes in Frankfurt."
        http.post(
            f"{hindsight_url}/v1/default/banks/{direct}/memories",
            json={"items": [{"content": old, "tags": ["user:alice"], "entities": [{"text": "owner e"}]}]},
        ).raise_for_status()
        http.post(
            f"{hindsight_url}/v1/default/banks/{governed}/memories",
            json={
                "items": [
                    {
                        "content": old,
                        "tags": ["user=alice", "topic=infra", "stage=reference"],
                        "entities": [{"text": "owner e"}],
                    }
                ]
            },
        ).raise_for_status()
        try:
            # Not vacuous: straight at Hindsight, the labelled bank's exact filter finds nothing.
            assert recall(hindsight_url, governed, tags=["user:alice"], tags_match="exact") == set()
            for tags in (["user:alice"], ["user:alice", "team:ops"], ["team:ops"]):
                for mode in MODES:
                    expected = recall(hindsight_url, direct, tags=tags, tags_match=mode)
                    assert recall(warden_url, governed, tags=tags, tags_match=mode) == expected, (tags, mode)
                    assert listed(warden_url, governed, tags, mode) == listed(hindsight_url, direct, tags, mode)
                    # The entities, counted over the memories the filter selects.
                    assert named(warden_url, governed, tags, mode) == named(hindsight_url, direct, tags, mode)
            assert recall(warden_url, governed, tags=["user:alice"], tags_match="exact") == {"A", "E"}
            assert recall(warden_url, governed, tags=["user:alice"], tags_match="any") == {"A", "B", "C", "E"}
            assert {"owner a", "owner e"} <= named(warden_url, governed, ["user:alice"], "exact")
            nested = [
                {"or": [{"tags": ["team:ops"], "match": "exact"}, {"not": {"tags": ["user:alice"], "match": "any"}}]}
            ]
            assert recall(warden_url, governed, tag_groups=nested) == recall(hindsight_url, direct, tag_groups=nested)
            # A filter that names a label sees the labels.
            assert recall(
                warden_url,
                governed,
                tags=["stage:reference", "stage:decision", "stage:process"],
                tags_match="any_strict",
            ) == {"A", "B", "C", "D", "E"}
        finally:
            for bank in (direct, governed):
                http.delete(f"{hindsight_url}/v1/default/banks/{bank}")


def test_what_hindsight_answers_with_a_500_is_memwardens_4xx(
    hindsight_url: str, warden: str, banks: tuple[str, str]
) -> None:
    """Issue #33: a count past PostgreSQL's integer, a body nested 1,000 deep to reflect and
    dry-run-extract, and curating with a secret reached the real Hindsight (its 500, PostgreSQL's
    text relayed, or the secret stored). memwarden answers them itself; Hindsight alone shows why."""
    mixed, _ = banks
    huge = "99999999999999999999999"
    with httpx.Client(timeout=120) as http:
        direct = http.get(f"{hindsight_url}/v1/default/banks/{mixed}/memories/list", params={"limit": huge})
        assert direct.status_code >= 500  # what the attack found: the reason for the check
        for path in ("memories/list", "documents", "tags", "entities"):
            for name in ("limit", "offset"):
                r = http.get(f"{warden}/v1/default/banks/{mixed}/{path}", params={name: huge})
                assert r.status_code == 422, (path, name, r.text)
                assert r.json()["detail"][0]["loc"] == ["query", name]
        deep = "[" * 1000 + "]" * 1000
        for path in ("reflect", "memories/dry-run-extract"):
            r = http.post(
                f"{warden}/v1/default/banks/{mixed}/{path}", content=deep, headers={"content-type": "application/json"}
            )
            assert r.status_code == 422, (path, r.text)
        listed = http.get(f"{warden}/v1/default/banks/{mixed}/memories/list", params={"limit": 1}).json()["items"]
        unit = listed[0]["id"]
        planted = "sk-proj-" + "Qz7" * 10
        r = http.patch(f"{warden}/v1/default/banks/{mixed}/memories/{unit}", json={"text": f"key {planted}"})
        assert r.status_code == 422, r.text
        stored = http.get(f"{hindsight_url}/v1/default/banks/{mixed}/memories/{unit}").json()
        assert planted not in json.dumps(stored)
        r = http.get(f"{warden}/v1/default/banks/{mixed}/stats", headers={"user-agent": "数据库".encode()})
        assert r.status_code == 400, r.text
