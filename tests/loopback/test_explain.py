"""Explain: a recall made white-box, over HTTP and from the command line (self-hosted store)."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import running_warden

FACTS = [
    ("The search service listens on port 9200 in the staging cluster.", ["topic:infra", "user:ops"]),
    ("The billing service listens on port 9300 in the staging cluster.", ["topic:infra", "user:alice"]),
    ("Alice prefers dark roast coffee in the morning.", ["user:alice"]),
    ("The staging cluster has 3 nodes with 16 GB RAM each.", ["topic:infra"]),
]


@pytest.fixture
def url(tmp_path: Path) -> Iterator[str]:
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path),
            "local": {"embedder": "hashing"},
            "config_guard": {"missions": {"mode": "off"}},
        },
    )
    with running_warden(settings) as base:
        r = httpx.post(
            f"{base}/v1/default/banks/b/memories",
            json={"items": [{"content": text, "tags": tags} for text, tags in FACTS]},
            timeout=60,
        )
        assert r.status_code == 200, r.text
        assert r.json()["items_count"] == len(FACTS)
        yield base


def explain(url: str, **body: Any) -> dict[str, Any]:
    r = httpx.post(f"{url}/warden/v1/banks/b/explain", json=body, timeout=60)
    assert r.status_code == 200, r.text
    account: dict[str, Any] = r.json()
    return account


def test_explain_accounts_for_every_candidate_and_agrees_with_recall(url: str) -> None:
    body = {"query": "which port does the staging search service use", "tags": ["user=ops"], "tags_match": "any_strict"}
    account = explain(url, **body)
    recalled = httpx.post(f"{url}/v1/default/banks/b/memories/recall", json=body, timeout=60).json()["results"]

    # The tag filter, as sent and as expanded to both spellings.
    assert account["tag_filter"] == {
        "sent": {"tags": ["user=ops"], "tags_match": "any_strict"},
        "expanded": {"tags": ["user=ops", "user:ops"], "tags_match": "any_strict"},
        "normalized": True,
    }
    assert account["backend"] == "local"
    assert len(account["query_vector_head"]) == 8
    assert account["arms"]["semantic"] == len(FACTS)
    # The keyword arm's terms, stemmed, with their frequency in the bank; the stopwords it skipped.
    assert "port(df " in account["fts_query"]
    assert "servic(df " in account["fts_query"]
    assert account["fts_query"].endswith("stopwords: which doe the")
    assert account["fusion"].startswith("the semantic arm's cosines as z-scores")
    # Every memory the retrievers produced is there once; the returned ones are recall's answer.
    assert len(account["candidates"]) == len({c["id"] for c in account["candidates"]}) == len(FACTS)
    returned = [c for c in account["candidates"] if c["outcome"] == "returned"]
    assert [c["id"] for c in returned] == [r["id"] for r in recalled]
    assert [c["text"] for c in returned] == [FACTS[0][0]]
    assert returned[0]["fused"] == pytest.approx(recalled[0]["scores"]["final"])
    assert returned[0]["semantic"]["rank"] == 1
    assert returned[0]["keyword"]["rank"] == 1
    excluded = [c for c in account["candidates"] if c["outcome"] == "excluded"]
    assert {c["reason"] for c in excluded} == {"tag filter"}
    assert account["summary"] == {"candidates": 4, "returned": 1, "excluded": {"tag filter": 3}}


def test_explain_names_the_budget_cut_and_the_ledger(url: str) -> None:
    account = explain(url, query="staging cluster port", max_tokens=20)
    reasons = {c["reason"] for c in account["candidates"] if c["outcome"] == "excluded"}
    assert any(r.startswith("cut by the max_tokens budget") for r in reasons)
    assert account["summary"]["returned"] == 1

    # A memory superseded in the ledger while its (client-named) document stays in the store.
    for n, what in enumerate(("search relevance", "billing export")):
        r = httpx.post(
            f"{url}/v1/default/banks/b/memories",
            json={"items": [{"content": f"active_context: working on {what}", "document_id": f"ctx-{n}"}]},
            timeout=60,
        )
        assert r.json()["items_count"] == 1
    account = explain(url, query="active_context working on")
    by_doc = {c["document_id"]: c for c in account["candidates"]}
    assert by_doc["ctx-1"]["outcome"] == "returned"
    assert by_doc["ctx-0"]["outcome"] == "excluded"
    assert by_doc["ctx-0"]["reason"].startswith("withheld: its document holds only memories memwarden")
    recalled = httpx.post(
        f"{url}/v1/default/banks/b/memories/recall", json={"query": "active_context working on"}, timeout=60
    ).json()["results"]
    assert "ctx-0" not in {r["document_id"] for r in recalled}


def test_explain_refuses_bad_input_clearly(url: str) -> None:
    with httpx.Client(base_url=url, timeout=60) as client:
        post = client.post
        assert post("/warden/v1/banks/b/explain", content=b"{nope").status_code == 422
        r = post("/warden/v1/banks/b/explain", json={"tags": ["x"]})
        assert r.status_code == 422
        assert r.json()["detail"][0]["loc"] == ["body", "query"]
        assert post("/warden/v1/banks/b/explain", json={"query": 5}).status_code == 422
        r = post("/warden/v1/banks/nope/explain", json={"query": "x"})
        assert r.status_code == 404
        assert r.json() == {"detail": "Bank 'nope' not found"}
        r = post(
            "/warden/v1/banks/b/explain",
            json={"query": "x", "tags": [f"k{i}:v" for i in range(5)], "tags_match": "exact"},
        )
        assert r.status_code == 400
        r = post("/warden/v1/banks/b/explain", json={"query": "x", "tag_groups": [{"bogus": 1}]})
        assert r.status_code == 422
        assert r.json()["detail"][0]["loc"] == ["body", "tag_groups"]
        assert post("/warden/v1/banks/b/explain", json={"query": "?!"}).status_code == 422  # no word in it
        assert post("/warden/v1/banks/b/explain", json={"query": "port"}).status_code == 200  # still serving


def test_memwarden_explain_prints_the_account(url: str) -> None:
    memwarden = [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", "explain"]
    cmd = [*memwarden, "b", "staging port", "--url", url]
    text = subprocess.run(
        [*cmd, "--tag", "topic=infra", "--tags-match", "all_strict"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert "tag filter:" in text
    assert "expanded to both spellings" in text
    assert "returned" in text
    assert "↳ tag filter" in text
    as_json = subprocess.run([*cmd, "--json"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert '"candidates"' in as_json
    missing = subprocess.run(
        [*memwarden, "nope", "x", "--url", url], capture_output=True, text=True, timeout=60, check=False
    )
    assert missing.returncode != 0
    assert "404" in missing.stderr
