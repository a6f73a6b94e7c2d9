"""``/warden/metrics``: what an operator alerts on, read by Prometheus' own parser after real
traffic — in front of the Hindsight stand-in (with an outage) and self-hosted."""

from __future__ import annotations

import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from prometheus_client.parser import text_string_to_metric_families

from testing.standin import running_standin
from testing.switch import Switch
from tests.conftest import make_settings, running_warden
from tests.loopback.test_local_store import local_settings

Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


def scrape(client: httpx.Client) -> Samples:
    r = client.get("/warden/metrics")
    assert r.status_code == 200
    assert r.headers["content-type"].startswith("text/plain; version=")
    return {
        (s.name, frozenset(s.labels.items())): s.value
        for family in text_string_to_metric_families(r.text)
        for s in family.samples
    }


def value(samples: Samples, name: str, **labels: str) -> float:
    return samples.get((name, frozenset(labels.items())), 0.0)


def total(samples: Samples, name: str, **labels: str) -> float:
    """Summed over the labels not given."""
    return sum(v for (n, ls), v in samples.items() if n == name and set(labels.items()) <= set(ls))


@pytest.fixture
def proxied(tmp_path: Path) -> Iterator[tuple[httpx.Client, Switch]]:
    with running_standin(tmp_path / "backend") as backend, Switch(backend.url) as switch:
        settings = make_settings(
            switch.url,
            data_dir=tmp_path / "data",
            outbox={"retry_initial": 0.05, "retry_max": 0.2},
            config_guard={"settle_interval": 0.05, "missions": {"mode": "off"}},
        )
        with running_warden(settings) as url, httpx.Client(base_url=url, timeout=60) as client:
            yield client, switch


def test_requests_verdicts_backend_latency_guarded_changes_and_the_outbox(
    proxied: tuple[httpx.Client, Switch],
) -> None:
    client, switch = proxied
    items = [
        {"content": "The staging cluster has 3 nodes with 16 GB RAM each."},
        {"content": "ok thanks"},
    ]
    assert client.post("/v1/default/banks/ops/memories", json={"items": items}).status_code == 200
    assert client.patch("/v1/default/banks/ops/config", json={"updates": {"retain_mission": "x"}}).status_code == 200
    before = scrape(client)
    assert value(before, "memwarden_requests_total", route="retain_memories", method="POST", status="200") == 1
    assert value(before, "memwarden_verdicts_total", verdict="store", rule="keep.default") == 1
    assert total(before, "memwarden_verdicts_total", verdict="reject") == 1
    assert value(before, "memwarden_guarded_changes_total", outcome="kept") == 1
    assert total(before, "memwarden_backend_request_duration_seconds_count", kind="passthrough", outcome="2xx") >= 1
    assert value(before, "memwarden_ledger_memories", status="active") == 1
    assert value(before, "memwarden_database_bytes") > 0
    assert value(before, "memwarden_outbox_queued_items") == 0

    switch.down()
    one = [{"content": "The billing service moved to the Hetzner cluster."}]
    assert client.post("/v1/default/banks/ops/memories", json={"items": one}).json()["async"] is True
    down = scrape(client)
    assert value(down, "memwarden_outbox_queued_items") == 1
    assert value(down, "memwarden_outbox_oldest_age_seconds") >= 0
    assert total(down, "memwarden_backend_request_duration_seconds_count", outcome="unreachable") >= 1
    switch.up()
    deadline = time.monotonic() + 60  # a loaded machine: the retry backoff and the worker take their time
    while time.monotonic() < deadline:
        after = scrape(client)
        # The ledger's counts are read before the queue: a delivery settling between is counted
        # at the next scrape.
        if (
            value(after, "memwarden_outbox_delivered_total") == 1
            and value(after, "memwarden_ledger_memories", status="active") == 2
        ):
            break
        time.sleep(0.05)
    assert value(after, "memwarden_outbox_delivered_total") == 1
    assert value(after, "memwarden_outbox_queued_items") == 0
    assert value(after, "memwarden_ledger_memories", status="active") == 2
    assert value(after, "memwarden_ledger_memories", status="pending") == 0  # not the last count it had


def test_self_hosted_metrics_have_the_store_and_no_outbox(tmp_path: Path) -> None:
    with running_warden(local_settings(tmp_path)) as url, httpx.Client(base_url=url, timeout=60) as client:
        items = [{"content": "The staging cluster has 3 nodes with 16 GB RAM each."}]
        assert client.post("/v1/default/banks/ops/memories", json={"items": items}).status_code == 200
        samples = scrape(client)
        assert value(samples, "memwarden_store_units") == 1
        assert value(samples, "memwarden_ledger_memories", status="active") == 1
        assert value(samples, "memwarden_outbox_queued_items") == 0  # no outbox: the store is the database
        assert client.get("/warden/v1/outbox").status_code == 404
