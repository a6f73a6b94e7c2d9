"""What an operator alerts on, in Prometheus' text format (``GET /warden/metrics``).

One :class:`Metrics` per app (its own registry: two apps in one process, as in the tests, do not
share counts). A leaf like the settings: the layers record into it, none of it reads them.
Counters and histograms are recorded as things happen; the gauges (outbox depth and age, dead
letters, ledger rows by status, database size) are read when the page is asked for.
"""

from __future__ import annotations

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, generate_latest
from prometheus_client.exposition import CONTENT_TYPE_LATEST

CONTENT_TYPE = CONTENT_TYPE_LATEST
LATENCY_BUCKETS = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 120.0)


class Metrics:
    def __init__(self) -> None:
        r = self.registry = CollectorRegistry(auto_describe=True)
        self.requests = Counter(
            "memwarden_requests", "Requests answered, by route and status.", ["route", "method", "status"], registry=r
        )
        self.request_seconds = Histogram(
            "memwarden_request_duration_seconds",
            "Time to answer a request, by route.",
            ["route"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.backend_seconds = Histogram(
            "memwarden_backend_request_duration_seconds",
            "Time the backend took to answer (to its response headers): by kind (passthrough: a client's"
            " request relayed; governance: memwarden's own calls), method and outcome (2xx … 5xx, unreachable,"
            " timeout).",
            ["kind", "method", "outcome"],
            buckets=LATENCY_BUCKETS,
            registry=r,
        )
        self.verdicts = Counter(
            "memwarden_verdicts", "Items judged by governance, by verdict and rule.", ["verdict", "rule"], registry=r
        )
        self.guarded_changes = Counter(
            "memwarden_guarded_changes",
            "Guarded config changes, by outcome (kept, rolled_back, rollback_incomplete, unverified).",
            ["outcome"],
            registry=r,
        )
        self.outbox_delivered = Counter(
            "memwarden_outbox_delivered", "Outbox entries the worker delivered.", registry=r
        )
        self.outbox_dead = Counter(
            "memwarden_outbox_dead_lettered", "Outbox entries the backend refused on delivery.", registry=r
        )
        self.outbox_queued_items = Gauge(
            "memwarden_outbox_queued_items", "Items waiting in the outbox for the backend.", registry=r
        )
        self.outbox_queued_entries = Gauge(
            "memwarden_outbox_queued_entries", "Outbox entries (requests) waiting for the backend.", registry=r
        )
        self.outbox_oldest_seconds = Gauge(
            "memwarden_outbox_oldest_age_seconds", "Age of the oldest queued outbox entry (0: none).", registry=r
        )
        self.outbox_dead_letters = Gauge(
            "memwarden_outbox_dead_letters", "Outbox entries the backend refused, waiting for an operator.", registry=r
        )
        self.outbox_full = Gauge(
            "memwarden_outbox_full", "1 while the outbox is past a limit and governed writes answer 503.", registry=r
        )
        self.ledger_memories = Gauge(
            "memwarden_ledger_memories", "Memories in the ledger, by status.", ["status"], registry=r
        )
        self.database_bytes = Gauge(
            "memwarden_database_bytes", "Size of memwarden's database files (with the self-hosted store's).", registry=r
        )
        self.store_units = Gauge(
            "memwarden_store_units", "Memory units in the self-hosted store (all banks).", registry=r
        )

    def backend_call(self, kind: str, method: str, outcome: int | str, seconds: float) -> None:
        label = f"{outcome // 100}xx" if isinstance(outcome, int) else outcome
        self.backend_seconds.labels(kind, method, label).observe(seconds)

    def render(self) -> bytes:
        return bytes(generate_latest(self.registry))
