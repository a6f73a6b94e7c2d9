"""Plans (dry run, confirmation phrase, refusals, partial application) and reports (cleanup,
health) on the self-hosted store."""

from __future__ import annotations

import sqlite3
import subprocess
import sys
import threading
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import running_warden

FACTS = [
    "The search service listens on port 9200 in the staging cluster.",
    "Alice prefers dark roast coffee in the morning.",
    "The billing service listens on port 9300.",
]


def settings(data_dir: Path, **plans: Any) -> Any:
    return load_settings(
        environ={},
        overrides={
            "data_dir": str(data_dir),
            "local": {"embedder": "hashing"},
            "config_guard": {"missions": {"mode": "off"}},
            "retention": {"enabled": False},
            "plans": plans,
        },
    )


@pytest.fixture
def http(tmp_path: Path) -> Iterator[httpx.Client]:
    with (
        running_warden(settings(tmp_path)) as url,
        httpx.Client(base_url=url, timeout=60, headers={"x-test-db": str(tmp_path / "memwarden.db")}) as client,
    ):
        r = client.post("/v1/default/banks/b/memories", json={"items": [{"content": t} for t in FACTS]})
        assert r.json()["items_count"] == len(FACTS)
        yield client


def ids(http: httpx.Client) -> dict[str, str]:
    items = http.get("/warden/v1/banks/b/memories").json()["items"]
    return {m["content"]: m["id"] for m in items}


def status_of(http: httpx.Client, memory_id: str) -> str:
    return str(http.get(f"/warden/v1/banks/b/memories/{memory_id}").json()["status"])


def make(http: httpx.Client, ops: list[tuple[str, str]], **extra: Any) -> dict[str, Any]:
    r = http.post("/warden/v1/banks/b/plans", json={"operations": [{"op": o, "memory_id": m} for o, m in ops], **extra})
    assert r.status_code == 201, r.text
    plan: dict[str, Any] = r.json()
    return plan


def test_a_plan_is_a_dry_run_until_applied_with_its_phrase(http: httpx.Client) -> None:
    known = ids(http)
    a, b = known[FACTS[0]], known[FACTS[1]]
    plan = make(http, [("archive", a), ("archive", b)], reason="tidy up")
    assert plan["status"] == "planned"
    assert plan["phrase"] == f"我确认执行计划 {plan['id']}"
    assert plan["operations"][0]["expected"]["status"] == "active"
    assert plan["operations"][0]["effect"].startswith("out of the backend")
    assert {status_of(http, a), status_of(http, b)} == {"active"}  # nothing changed yet
    assert http.get("/warden/v1/banks/b/plans").json()["items"][0]["operations"] == 2

    apply = f"/warden/v1/banks/b/plans/{plan['id']}/apply"
    r = http.post(apply, json={"phrase": "wrong"})
    assert r.status_code == 403
    r = http.post(apply, json={"phrase": f"  我确认执行计划  {plan['id']} "})
    assert r.status_code == 403
    assert "type it exactly" in r.json()["detail"]
    assert http.post(apply, json={}).status_code == 422
    assert status_of(http, a) == "active"

    r = http.post(apply, json={"phrase": plan["phrase"]})
    assert r.status_code == 200, r.text
    assert r.json()["status"] == "applied"
    assert [x["memory_id"] for x in r.json()["result"]["applied"]] == [a, b]
    assert {status_of(http, a), status_of(http, b)} == {"archived"}
    recalled = http.post("/v1/default/banks/b/memories/recall", json={"query": "coffee port search"}).json()["results"]
    assert {x["text"] for x in recalled} == {FACTS[2]}
    r = http.post(apply, json={"phrase": plan["phrase"]})
    assert r.status_code == 409
    assert "applied once" in r.json()["detail"]
    events = http.get("/warden/v1/audit", params={"bank": "b"}).json()["events"]
    actions = [(e["action"], e["source"]) for e in events]
    assert actions.count(("plan_create", "plan")) == 1
    assert actions.count(("plan_apply", "plan")) == 1
    assert actions.count(("archive", "plan")) == 2


def test_bad_plans_are_refused_and_nothing_is_made(http: httpx.Client) -> None:
    a = ids(http)[FACTS[0]]
    for body in (
        {"operations": []},
        {"operations": "x"},
        {"operations": [{"op": "explode", "memory_id": a}]},
        {"operations": [{"op": "archive", "memory_id": "nope"}]},
        {"operations": [{"op": "restore", "memory_id": a}]},  # active: nothing to restore
        {"operations": [{"op": "archive", "memory_id": a}, {"op": "archive", "memory_id": a}]},
        {"from": "elsewhere"},
    ):
        r = http.post("/warden/v1/banks/b/plans", json=body)
        assert r.status_code == 422, body
    assert http.post("/warden/v1/banks/b/plans", content=b"{nope").status_code == 422
    assert http.get("/warden/v1/banks/b/plans").json()["items"] == []
    assert http.get("/warden/v1/banks/b/plans/nope").status_code == 404
    assert http.post("/warden/v1/banks/b/plans/nope/apply", json={"phrase": "x"}).status_code == 404


def test_a_target_changed_since_planning_makes_the_plan_stale(http: httpx.Client) -> None:
    a = ids(http)[FACTS[0]]
    plan = make(http, [("archive", a)])
    assert http.post(f"/warden/v1/banks/b/memories/{a}/archive").status_code == 200
    assert http.post(f"/warden/v1/banks/b/memories/{a}/restore").status_code == 200  # active again, but changed
    r = http.post(f"/warden/v1/banks/b/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]})
    assert r.status_code == 409
    assert r.json()["detail"]["changed"][0]["memory_id"] == a
    assert status_of(http, a) == "active"
    assert http.get(f"/warden/v1/banks/b/plans/{plan['id']}").json()["status"] == "stale"


def test_an_expired_plan_is_refused(tmp_path: Path) -> None:
    with running_warden(settings(tmp_path, ttl=0.001)) as url, httpx.Client(base_url=url, timeout=60) as http:
        http.post("/v1/default/banks/b/memories", json={"items": [{"content": FACTS[0]}]})
        plan = make(http, [("archive", ids(http)[FACTS[0]])])
        r = http.post(f"/warden/v1/banks/b/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]})
        assert r.status_code == 410


def test_concurrent_applies_apply_once(http: httpx.Client) -> None:
    plan = make(http, [("archive", m) for m in ids(http).values()])
    codes: list[int] = []

    def apply() -> None:
        with httpx.Client(base_url=http.base_url, timeout=60) as client:
            codes.append(
                client.post(f"/warden/v1/banks/b/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]}).status_code
            )

    threads = [threading.Thread(target=apply) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(codes) == [200, 409, 409, 409]
    events = http.get("/warden/v1/audit", params={"action": "archive"}).json()["events"]
    assert len([e for e in events if e["source"] == "plan"]) == len(FACTS)


def test_a_failing_operation_is_reported_exactly(http: httpx.Client) -> None:
    """A memory whose document gained another active memory after the plan was made: the plan
    archives the first target, the second is refused (its archive would take the newcomer too), and
    the answer reports what was applied, what failed and what was not attempted."""
    r = http.post(
        "/v1/default/banks/b/memories",
        json={
            "items": [
                {"content": "The refund service belongs to payments.", "document_id": "d"},
                {"content": "The refund service is written in Go.", "document_id": "e"},
            ]
        },
    )
    assert r.json()["items_count"] == 2
    known = ids(http)
    first, shared = known[FACTS[2]], known["The refund service belongs to payments."]
    last = known["The refund service is written in Go."]
    plan = make(http, [("archive", first), ("archive", shared), ("archive", last)])
    appended = http.post(
        "/v1/default/banks/b/memories",
        json={
            "items": [{"content": "The refund service runs in eu-west.", "document_id": "d", "update_mode": "append"}]
        },
    )
    assert appended.json()["items_count"] == 1
    r = http.post(f"/warden/v1/banks/b/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]})
    assert r.status_code == 502
    body = r.json()
    assert body["status"] == "partially_applied"
    assert [x["memory_id"] for x in body["result"]["applied"]] == [first]
    assert body["result"]["failed"]["memory_id"] == shared
    assert "shares document 'd'" in body["result"]["failed"]["detail"]
    assert body["result"]["not_attempted"] == [{"op": "archive", "memory_id": last}]
    assert (status_of(http, first), status_of(http, shared), status_of(http, last)) == ("archived", "active", "active")


def test_cleanup_report_and_its_plan(http: httpx.Client) -> None:
    old = (datetime.now(UTC) - timedelta(days=12)).isoformat()
    r = http.post(
        "/v1/default/banks/b/memories",
        json={
            "items": [
                {"content": "active_context: working on the search relevance sprint"},
                {"content": "active_context: working on the billing export rewrite"},
                {"content": "Migrating the billing tables this sprint.", "tags": ["stage:process"], "timestamp": old},
            ]
        },
    )
    assert r.json()["items_count"] == 3
    report = http.get("/warden/v1/banks/b/reports/cleanup").json()
    kinds = {c["content"].split(":")[0][:20]: c["kinds"] for c in report["candidates"]}
    assert kinds == {"Migrating the billin": ["expired"]}  # the active_context was superseded on write
    before = ids(http)
    assert http.get("/warden/v1/banks/b/reports/cleanup").json() == report  # a pure read
    assert ids(http) == before
    r = http.post("/warden/v1/banks/b/plans", json={"from": "cleanup"})
    assert r.status_code == 201, r.text
    plan = r.json()
    assert [o["memory_id"] for o in plan["operations"]] == [c["id"] for c in report["candidates"]]
    r = http.post(f"/warden/v1/banks/b/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]})
    assert r.status_code == 200
    assert http.get("/warden/v1/banks/b/reports/cleanup").json()["candidates"] == []


def test_health_report(http: httpx.Client) -> None:
    health = http.get("/warden/v1/banks/b/reports/health").json()
    assert health["status"] == "ok", health["reasons"]
    assert health["memories"] == {"active": 3}
    assert health["consistency"]["store"]["rows"] == health["consistency"]["store"]["vectors"] == 3
    assert health["consistency"]["missing_from_backend"] == []
    # A document memwarden thinks active, lost from the store behind its back: critical.
    a = ids(http)[FACTS[0]]
    doc = http.get(f"/warden/v1/banks/b/memories/{a}").json()["document_id"]
    with sqlite3.connect(http.headers["x-test-db"]) as db:
        db.execute("DELETE FROM store_units WHERE document_id = ?", (doc,))
        db.execute("DELETE FROM store_documents WHERE id = ?", (doc,))
    health = http.get("/warden/v1/banks/b/reports/health").json()
    assert health["status"] == "critical"
    assert health["reasons"][0] == "1 documents of active memories are missing from the backend"
    assert health["consistency"]["missing_from_backend"] == [doc]
    assert http.get("/warden/v1/banks/b/reports/health", params={"days": "0"}).status_code == 422


def test_report_commands(http: httpx.Client) -> None:
    cmd = [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", "report"]
    out = subprocess.run(
        [*cmd, "health", "b", "--url", str(http.base_url)], capture_output=True, text=True, timeout=60, check=True
    ).stdout
    assert out.splitlines()[0].startswith("bank b: ok")
    out = subprocess.run(
        [*cmd, "cleanup", "b", "--url", str(http.base_url), "--json"],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    ).stdout
    assert '"candidates": []' in out


def test_plan_commands(http: httpx.Client) -> None:
    base = [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", "plan"]
    url = ["--url", str(http.base_url)]
    a = ids(http)[FACTS[1]]

    def run(*args: str, stdin: str | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [*base, *args, *url], input=stdin, capture_output=True, text=True, timeout=60, check=False
        )

    made = run("create", "b", "--archive", a, "--reason", "coffee is personal")
    assert made.returncode == 0, made.stderr
    plan_id = made.stdout.split()[1]
    assert f"to apply, confirm with: 我确认执行计划 {plan_id}" in made.stdout
    assert plan_id in run("list", "b").stdout
    wrong = run("apply", "b", plan_id, stdin="我确认\n")
    assert wrong.returncode == 1
    assert "403: the confirmation phrase does not match" in wrong.stderr
    assert status_of(http, a) == "active"
    done = run("apply", "b", plan_id, stdin=f"我确认执行计划 {plan_id}\n")
    assert done.returncode == 0, done.stderr
    assert "applied; 1 of 1 operations applied" in done.stdout
    assert status_of(http, a) == "archived"
    again = run("apply", "b", plan_id, "--phrase", f"我确认执行计划 {plan_id}")
    assert again.returncode == 1
    assert "409" in again.stderr
