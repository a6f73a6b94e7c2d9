"""Retention: process memories archived after 7 days, reference after 30, decision never — by the
scheduled job, the API and the command, through the audited archive path."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.settings import RetentionSettings, load_settings
from tests.conftest import running_warden


def days_ago(n: float) -> str:
    return (datetime.now(UTC) - timedelta(days=n)).isoformat()


ITEMS = [
    ("OLD-PROCESS: migrating the billing tables to the new schema this sprint.", "stage:process", 10, None),
    ("RECENT-PROCESS: rolling out the search cache to staging nodes.", "stage:process", 2, None),
    ("OLD-REFERENCE: the staging cluster has 3 nodes with 16 GB RAM each.", "stage:reference", 40, None),
    ("MID-REFERENCE: the billing service listens on port 9300.", "stage:reference", 20, None),
    ("OLD-DECISION: we decided to bill by activation code subscriptions.", "stage:decision", 400, None),
    ("SHARED-1: the refund service belongs to the payments team.", "stage:process", 30, "shared-doc"),
    ("SHARED-2: the refund service runs in the eu-west region.", "stage:process", 30, "shared-doc"),
]


def settings(data_dir: Path, **retention: Any) -> Any:
    return load_settings(
        environ={},
        overrides={
            "data_dir": str(data_dir),
            "local": {"embedder": "hashing"},
            "config_guard": {"missions": {"mode": "off"}},
            "retention": {"enabled": False, **retention},
        },
    )


def seed(http: httpx.Client) -> None:
    items = []
    for text, stage, age, doc in ITEMS:
        item: dict[str, Any] = {"content": text, "tags": ["topic:infra", stage], "timestamp": days_ago(age)}
        if doc:
            item["document_id"] = doc
        items.append(item)
    r = http.post("/v1/default/banks/b/memories", json={"items": items})
    assert r.status_code == 200, r.text
    assert r.json()["items_count"] == len(ITEMS)


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with running_warden(settings(tmp_path)) as url, httpx.Client(base_url=url, timeout=60) as client:
        seed(client)
        yield client


def names(memories: list[dict[str, Any]]) -> set[str]:
    return {m["content"].split(":")[0] for m in memories}


def statuses(http: httpx.Client) -> dict[str, str]:
    items = http.get("/warden/v1/banks/b/memories").json()["items"]
    return {m["content"].split(":")[0]: m["status"] for m in items}


def test_the_lifecycle_by_stage() -> None:
    s = RetentionSettings()
    assert (s.period_for("infra", "process"), s.period_for("infra", "reference"), s.period_for("x", "decision")) == (
        7,
        30,
        None,
    )
    s = RetentionSettings(periods={"process": 7, "research/process": 90})
    assert s.period_for("research", "process") == 90
    assert s.period_for("infra", "process") == 7
    assert s.period_for("infra", "reference") is None
    with pytest.raises(ValueError, match="greater than 0"):
        RetentionSettings(periods={"process": 0})


def test_a_dry_run_lists_what_is_due_and_changes_nothing(http: httpx.Client) -> None:
    before = statuses(http)
    r = http.post("/warden/v1/retention/run", params={"dry_run": "true"})
    assert r.status_code == 200
    result = r.json()
    assert names(result["due"]) == {"OLD-PROCESS", "OLD-REFERENCE", "SHARED-1", "SHARED-2"}
    assert result["archived"] == []
    assert statuses(http) == before
    assert http.get("/warden/v1/audit", params={"action": "expire"}).json()["events"] == []


def test_a_run_archives_through_the_audited_path(http: httpx.Client) -> None:
    result = http.post("/warden/v1/retention/run").json()
    assert len(result["archived"]) == 2
    # Two memories sharing a document are never archived one without the other: reported, kept.
    assert {s["status"] for s in result["skipped"]} == {409}
    assert all("shares document 'shared-doc'" in s["reason"] for s in result["skipped"])
    after = statuses(http)
    assert after["OLD-PROCESS"] == after["OLD-REFERENCE"] == "archived"
    assert {after[k] for k in ("RECENT-PROCESS", "MID-REFERENCE", "OLD-DECISION", "SHARED-1", "SHARED-2")} == {"active"}
    events = http.get("/warden/v1/audit", params={"action": "expire"}).json()["events"]
    assert len(events) == 2
    assert {e["source"] for e in events} == {"retention"}
    assert all(e["reason"].startswith("retention: ") for e in events)
    recalled = http.post(
        "/v1/default/banks/b/memories/recall", json={"query": "billing tables schema staging cluster nodes"}
    )
    assert not names([{"content": x["text"]} for x in recalled.json()["results"]]) & {"OLD-PROCESS", "OLD-REFERENCE"}
    # Nothing left due but the skipped pair.
    assert names(http.post("/warden/v1/retention/run", params={"dry_run": "true"}).json()["due"]) == {
        "SHARED-1",
        "SHARED-2",
    }
    assert http.post("/warden/v1/retention/run", params={"dry_run": "perhaps"}).status_code == 422


def test_the_scheduled_job_runs_by_itself(tmp_path: Path) -> None:
    with (
        running_warden(settings(tmp_path, enabled=True, interval=0.3)) as url,
        httpx.Client(base_url=url, timeout=60) as http,
    ):
        seed(http)
        deadline = time.monotonic() + 30
        while statuses(http)["OLD-PROCESS"] != "archived" and time.monotonic() < deadline:
            time.sleep(0.1)
        assert statuses(http)["OLD-PROCESS"] == "archived"
        assert statuses(http)["OLD-DECISION"] == "active"


def test_memwarden_retention_run(http: httpx.Client) -> None:
    cmd = [
        sys.executable,
        "-c",
        "from memwarden.proxy.cli import main; main()",
        "retention",
        "run",
        "--url",
        str(http.base_url),
    ]
    dry = subprocess.run([*cmd, "--dry-run"], capture_output=True, text=True, timeout=60, check=True).stdout
    assert "OLD-PROCESS" in dry
    assert "4 due; 4 would be archived" in dry
    assert statuses(http)["OLD-PROCESS"] == "active"
    real = subprocess.run(cmd, capture_output=True, text=True, timeout=60, check=True).stdout
    assert "4 due; 2 archived" in real
    assert "skipped" in real
