"""The database layer's repositories on a real database: what each writes, what each reads back."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from memwarden.db import audit, banks, memories, memory_reads, plans, reports, retention, snapshots
from memwarden.db.database import Database

pytestmark = pytest.mark.usefixtures("engine")


@pytest.fixture
def ledger(tmp_path: Path, engine: str | None) -> Iterator[Database]:
    database = Database.open(tmp_path, mirror=False, url=engine)
    yield database
    database.close()


def add_memory(
    db: sqlite3.Connection,
    memory_id: str,
    *,
    bank: str = "b",
    status: str = "active",
    document_id: str | None = None,
    created_at: str = "2026-01-01T00:00:00+00:00",
    event_time: str | None = None,
    stage: str | None = None,
    tags: tuple[str, ...] = (),
) -> None:
    db.execute(
        "INSERT INTO memories (id, bank, status, content, content_hash, stage, tags, document_id, item, event_time,"
        " created_at, updated_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)",
        (
            memory_id,
            bank,
            status,
            f"content of {memory_id}",
            f"hash-{memory_id}",
            stage,
            json.dumps(list(tags)),
            document_id,
            json.dumps({"content": f"content of {memory_id}", "document_id": document_id}),
            event_time,
            created_at,
            created_at,
        ),
    )


def events(ledger: Database) -> list[dict[str, object]]:
    return ledger.read_sync(lambda db: audit.fetch_events(db, audit.event_filter(), 1000))


def snapshot(snapshot_id: str, bank: str = "b", created_at: str = "2026-01-01T00:00:00+00:00") -> snapshots.Snapshot:
    return snapshots.Snapshot(
        id=snapshot_id,
        bank=bank,
        created_at=created_at,
        reason="patch",
        settled=True,
        config={"retain_mission": "m"},
        overrides={"retain_mission": "m"},
        stats={"total_documents": 1},
        counts={"world": 2},
        inventory={"memories": [{"id": "u1"}], "documents": []},
        request_id="r1",
    )


# -- snapshots ------------------------------------------------------------------------------------


def test_snapshots_are_listed_newest_first_per_bank(ledger: Database) -> None:
    ledger.write_sync(lambda db: snapshots.insert_snapshot(db, snapshot("old", created_at="2026-01-01T00:00:00")))
    ledger.write_sync(lambda db: snapshots.insert_snapshot(db, snapshot("new", created_at="2026-01-02T00:00:00")))
    # The same instant: the one written last comes first.
    ledger.write_sync(lambda db: snapshots.insert_snapshot(db, snapshot("newer", created_at="2026-01-02T00:00:00")))
    ledger.write_sync(lambda db: snapshots.insert_snapshot(db, snapshot("other", bank="c")))
    listed = ledger.read_sync(lambda db: snapshots.snapshot_summaries(db, "b"))
    assert [s["id"] for s in listed] == ["newer", "new", "old"]
    assert [s["id"] for s in ledger.read_sync(lambda db: snapshots.snapshot_summaries(db, "b", limit=1))] == ["newer"]
    # The list reads no inventory, and says what the snapshot's own summary says.
    assert listed[0] == snapshot("newer", created_at="2026-01-02T00:00:00").summary()
    got = ledger.read_sync(lambda db: snapshots.get_snapshot(db, "b", "newer"))
    assert got == snapshot("newer", created_at="2026-01-02T00:00:00")  # every field round-trips


def test_snapshot_outcome_keeps_the_change_unless_given(ledger: Database) -> None:
    ledger.write_sync(lambda db: snapshots.insert_snapshot(db, snapshot("s1")))
    ledger.write_sync(lambda db: snapshots.set_outcome_row(db, "s1", "dropped", {"dropped": 1}, change={"a": 1}))
    ledger.write_sync(lambda db: snapshots.set_outcome_row(db, "s1", "rolled_back", {"rollback": "done"}))
    got = ledger.read_sync(lambda db: snapshots.get_snapshot(db, "b", "s1"))
    assert got is not None
    assert (got.outcome, got.outcome_detail, got.change) == ("rolled_back", {"rollback": "done"}, {"a": 1})
    assert ledger.read_sync(lambda db: snapshots.get_snapshot(db, "c", "s1")) is None  # another bank's id


def test_a_bank_is_seeded_once_recorded(ledger: Database) -> None:
    assert ledger.read_sync(lambda db: banks.seeded_at(db, "b")) is None
    ledger.write_sync(lambda db: banks.mark_seeded(db, "b"))
    first = ledger.read_sync(lambda db: banks.seeded_at(db, "b"))
    assert first
    ledger.write_sync(lambda db: banks.mark_seeded(db, "b"))  # again: updated, not a second row
    assert ledger.read_sync(lambda db: banks.seeded_at(db, "b")) >= first
    assert ledger.read_sync(lambda db: banks.seeded_at(db, "c")) is None


# -- plans ----------------------------------------------------------------------------------------


def test_plan_round_trip_claim_once_and_finish(ledger: Database) -> None:
    operations = [{"op": "archive", "memory_id": "m1", "expected": {"status": "active"}, "content": "咖啡"}]
    for plan_id, created in (("p1", "2026-01-01T00:00:00"), ("p2", "2026-01-02T00:00:00")):
        ledger.write_sync(
            lambda db, plan_id=plan_id, created=created: plans.insert_plan(
                db,
                plan_id=plan_id,
                bank="b",
                phrase=f"confirm {plan_id}",
                reason=None,
                operations=operations,
                created_at=created,
                expires_at="2026-02-01T00:00:00",
            )
        )
    plan = ledger.read_sync(lambda db: plans.get_plan(db, "b", "p1"))
    assert plan is not None
    assert (plan["status"], plan["operations"]) == ("planned", operations)
    assert (plan["result"], plan["applied_at"]) == (None, None)
    assert ledger.read_sync(lambda db: plans.get_plan(db, "c", "p1")) is None
    assert [p["id"] for p in ledger.read_sync(lambda db: plans.list_plans(db, "b"))] == ["p2", "p1"]

    assert ledger.write_sync(lambda db: plans.claim_plan(db, "p1")) is True
    assert ledger.write_sync(lambda db: plans.claim_plan(db, "p1")) is False  # applied once
    result = {"applied": [{"op": "archive", "memory_id": "m1"}], "failed": None, "not_attempted": []}
    ledger.write_sync(lambda db: plans.finish_plan(db, "p1", "applied", result))
    plan = ledger.read_sync(lambda db: plans.get_plan(db, "b", "p1"))
    assert plan is not None
    assert (plan["status"], plan["result"]) == ("applied", result)
    assert plan["applied_at"]


def test_plan_target_state_changes_when_the_memory_does(ledger: Database) -> None:
    ledger.write_sync(lambda db: add_memory(db, "m1"))
    row = ledger.read_sync(lambda db: memory_reads.row_by_id(db, "m1", bank="b"))
    assert row is not None
    expected = plans.target_state(row)
    assert ledger.read_sync(lambda db: plans.current_target_state(db, "m1")) == expected
    assert ledger.read_sync(lambda db: memory_reads.row_by_id(db, "m1", bank="c")) is None
    ledger.write_sync(
        lambda db: memories.move(db, "b", ["m1"], memories.Change("active", "archived", "archive", "test", None))
    )
    now_state = ledger.read_sync(lambda db: plans.current_target_state(db, "m1"))
    assert now_state is not None
    assert now_state["status"] == "archived"
    assert now_state != expected
    assert ledger.read_sync(lambda db: plans.current_target_state(db, "gone")) is None


# -- memories -------------------------------------------------------------------------------------


def test_move_writes_an_event_only_for_rows_that_moved(ledger: Database) -> None:
    ledger.write_sync(lambda db: (add_memory(db, "a"), add_memory(db, "r", status="review")))
    moved = ledger.write_sync(
        lambda db: memories.move(db, "b", ["a", "r"], memories.Change("active", "archived", "archive", "test", "q"))
    )
    assert [e.memory_id for e in moved] == ["a"]
    logged = events(ledger)
    assert [(e["memory_id"], e["before"], e["after"]) for e in logged] == [
        ("a", {"status": "active"}, {"status": "archived"})
    ]
    statuses = {m: ledger.read_sync(lambda db, m=m: memory_reads.row_by_id(db, m)).status for m in ("a", "r")}
    assert statuses == {"a": "archived", "r": "review"}
    # Nothing left in ``frm``: no change, no event.
    again = ledger.write_sync(
        lambda db: memories.move(db, "b", ["a"], memories.Change("active", "archived", "archive", "test", "q"))
    )
    assert again == []
    assert len(events(ledger)) == 1


def test_active_ids_siblings_and_rows_by_bank(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        add_memory(db, "a1", document_id="d1")
        add_memory(db, "a2", document_id="d1")
        add_memory(db, "a3", document_id="d2")
        add_memory(db, "x1", document_id="d1", status="archived")
        add_memory(db, "o1", document_id="d1", bank="other")

    ledger.write_sync(fill)
    assert sorted(ledger.read_sync(lambda db: memory_reads.active_ids(db, "b"))) == ["a1", "a2", "a3"]
    assert sorted(ledger.read_sync(lambda db: memory_reads.active_ids(db, "b", "d1"))) == ["a1", "a2"]
    assert ledger.read_sync(lambda db: memory_reads.active_siblings(db, "b", "d1", "a1")) == ["a2"]
    assert ledger.read_sync(lambda db: memory_reads.active_siblings(db, "b", "d2", "a3")) == []
    assert ledger.read_sync(lambda db: memory_reads.row_by_id(db, "o1", bank="b")) is None
    assert ledger.read_sync(lambda db: memory_reads.row_by_id(db, "o1")) is not None


def test_restorable_rows_across_chunks(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        for n in range(1200):  # more documents than one IN list takes
            add_memory(db, f"m{n}", document_id=f"d{n}", status="archived" if n % 2 else "active")
        add_memory(db, "rejected", document_id="d7", status="rejected")

    ledger.write_sync(fill)
    wanted = [f"d{n}" for n in range(1200)] + ["unknown"]
    rows = ledger.read_sync(lambda db: memory_reads.restorable_rows(db, "b", wanted))
    assert len(rows) == 1200
    assert rows["d7"] == [{"id": "m7", "status": "archived", "item": {"content": "content of m7", "document_id": "d7"}}]
    assert rows["d1100"][0]["status"] == "active"


def test_retag_updates_the_documents_rows_with_one_event_each(ledger: Database) -> None:
    ledger.write_sync(lambda db: (add_memory(db, "a", document_id="d", tags=("x",)), add_memory(db, "c")))
    ledger.write_sync(
        lambda db: memories.retag_document(db, "b", "d", ["topic:dev", "y"], {"topic": "dev"}, request_id="q")
    )
    row = ledger.read_sync(lambda db: memory_reads.row_by_id(db, "a"))
    assert row is not None
    assert (row.tags, row.topic) == (("topic:dev", "y"), "dev")
    assert ledger.read_sync(lambda db: memory_reads.row_by_id(db, "c")).tags == ()
    ledger.write_sync(lambda db: memories.retag_document(db, "b", "nothing", ["z"], {}, request_id="q"))
    logged = events(ledger)
    assert [(e["memory_id"], e["before"], e["after"]) for e in logged] == [
        ("a", {"tags": ["x"]}, {"tags": ["topic:dev", "y"]}),
        (None, None, {"tags": ["z"]}),  # a document the ledger has no row of: still audited
    ]


def test_review_queue_pairs_each_held_item_with_its_conflict(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        add_memory(db, "holder")
        add_memory(db, "held", status="review")
        db.execute("UPDATE memories SET conflict_with = 'holder' WHERE id = 'held'")

    ledger.write_sync(fill)
    queue = ledger.read_sync(lambda db: memory_reads.review_queue(db, "b"))
    assert [(q["held"]["id"], q["conflicts_with"]["id"]) for q in queue] == [("held", "holder")]
    assert ledger.read_sync(lambda db: memory_reads.review_queue(db, "c")) == []


# -- retention and reports ------------------------------------------------------------------------


def test_due_for_retention_by_period_oldest_first(ledger: Database) -> None:
    at = datetime(2026, 3, 1, tzinfo=UTC)

    def fill(db: sqlite3.Connection) -> None:
        add_memory(db, "p-old", stage="process", event_time=(at - timedelta(days=9)).isoformat())
        add_memory(db, "p-older", stage="process", created_at=(at - timedelta(days=20)).isoformat())
        add_memory(db, "p-new", stage="process", event_time=(at - timedelta(days=2)).isoformat())
        add_memory(db, "decision", stage="decision", event_time=(at - timedelta(days=900)).isoformat())
        add_memory(db, "p-gone", stage="process", status="archived", event_time=(at - timedelta(days=90)).isoformat())
        add_memory(db, "p-other", stage="process", bank="c", event_time=(at - timedelta(days=90)).isoformat())

    ledger.write_sync(fill)

    def period(topic: str | None, stage: str | None) -> int | None:
        return 7 if stage == "process" else None

    due = ledger.read_sync(lambda db: retention.due_for_retention(db, period, bank="b", at=at))
    assert [(m["id"], m["period_days"], m["age_days"]) for m in due] == [("p-older", 7, 20.0), ("p-old", 7, 9.0)]
    everywhere = ledger.read_sync(lambda db: retention.due_for_retention(db, period, bank=None, at=at))
    assert [m["id"] for m in everywhere] == ["p-other", "p-older", "p-old"]


def test_a_reports_read_is_the_active_memories_oldest_first_with_their_tags(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        add_memory(db, "new", created_at="2026-03-01T00:00:00+00:00", tags=("topic:infra",))
        add_memory(db, "told", created_at="2026-04-01T00:00:00+00:00", event_time="2025-01-01T00:00:00+00:00")
        add_memory(db, "old", document_id="d", created_at="2026-02-01T00:00:00+00:00")
        add_memory(db, "gone", status="archived", created_at="2026-01-01T00:00:00+00:00")
        add_memory(db, "elsewhere", bank="c")

    ledger.write_sync(fill)
    briefs = ledger.read_sync(lambda db: reports.active_oldest_first(db, "b"))
    assert [b.id for b in briefs] == ["told", "old", "new"]  # by when it happened, else when seen
    assert (briefs[2].tags, briefs[2].content, briefs[1].document_id) == (("topic:infra",), "content of new", "d")


def test_health_counts_and_audit_queries(ledger: Database) -> None:
    def fill(db: sqlite3.Connection) -> None:
        add_memory(db, "a", document_id="d1")
        add_memory(db, "x", document_id="d2", status="archived")
        add_memory(db, "r", status="review")
        audit.append_events(db, [audit.AuditEvent(action=a, bank="b") for a in ("add", "add", "reject")])
        audit.append_events(db, [audit.AuditEvent(action="add", bank="c")])

    ledger.write_sync(fill)
    counts = ledger.read_sync(lambda db: reports.health_counts(db, "b", "2000-01-01"))
    assert counts["statuses"] == {"active": 1, "archived": 1, "review": 1}
    assert counts["actions"] == {"add": 2, "reject": 1}
    assert (counts["documents"], counts["known_documents"]) == (["d1"], {"d1", "d2"})
    assert ledger.read_sync(lambda db: reports.active_per_document(db, "b")) == {"d1": 1}

    assert ledger.read_sync(audit.last_seq) == 4
    only_b = audit.event_filter(bank="b", after_seq=1)
    assert [e["seq"] for e in ledger.read_sync(lambda db: audit.fetch_events(db, only_b, 10))] == [2, 3]
    assert [e["seq"] for e in ledger.read_sync(lambda db: audit.latest_events(db, audit.event_filter(), 2))] == [3, 4]
    assert [e["seq"] for e in ledger.read_sync(lambda db: audit.events_after(db, only_b, 2, 10))] == [3]
    # An empty action list matches no event (not every event).
    assert ledger.read_sync(lambda db: audit.fetch_events(db, audit.event_filter(actions=[]), 10)) == []
    rejects = audit.event_filter(actions=["reject"])
    assert [e["action"] for e in ledger.read_sync(lambda db: audit.fetch_events(db, rejects, 10))] == ["reject"]
    key = audit.audit_key(ledger.installation_key)
    assert audit.verify_chain(ledger.read_sync(audit.all_event_rows), key=key, keyed_from=1) == []
