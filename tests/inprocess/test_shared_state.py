"""Two instances' worth of memwarden's state on one PostgreSQL, in one process (two Database objects,
two gate sets): an outbox claim is one instance's until it dies, a dead instance's deliveries are
taken over, a guarded change on one holds the writes of the other, the chain never forks, and the
checkpoints are written by one."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memwarden.db import instances
from memwarden.db import outbox as rows
from memwarden.db.audit import AuditEvent, all_event_rows, append_events, audit_key, verify_chain
from memwarden.db.bank_locks import SharedBankLocks
from memwarden.db.database import Database
from memwarden.governance.cluster import _tick
from memwarden.governance.locks import BankGates, GateClosed
from testing.postgres import drop_database, fresh_database

pytestmark = [pytest.mark.anyio, pytest.mark.postgresql]


@pytest.fixture
async def pair(tmp_path: Path, postgres_server: str) -> AsyncIterator[tuple[Database, Database]]:
    url = fresh_database(postgres_server)
    first = Database.open(tmp_path / "a", mirror=False, url=url, checkpoint_dir=tmp_path / "checkpoints")
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "installation.key").write_bytes((tmp_path / "a" / "installation.key").read_bytes())
    second = Database.open(tmp_path / "b", mirror=False, url=url, checkpoint_dir=tmp_path / "checkpoints")
    try:
        yield first, second
    finally:
        first.close()
        second.close()
        drop_database(url)


def entry(db: Any, bank: str, text: str, *, state: str = "queued", owner: str | None = None) -> rows.Entry:
    return rows.enqueue(
        db,
        bank=bank,
        body={"items": [{"content": text}]},
        memory_ids=[f"m-{text}"],
        supersede=(),
        request_id=None,
        actor="t",
        state=state,
        owner=owner,
    )


def dies(db: Database) -> None:
    """The instance's connection holding its lock ends (as when its process is killed)."""
    db._alive_db.close()


async def test_a_claim_is_one_instances_until_it_dies_then_the_others(pair: tuple[Database, Database]) -> None:
    a, b = pair
    first = await a.write(lambda db: entry(db, "bank", "one"))
    await a.write(lambda db: entry(db, "bank", "two"))
    claimed = await a.write(lambda db: rows.claim_first(db, "bank", a.instance_id))
    assert claimed is not None
    assert claimed.seq == first.seq
    # The other instance does not take the bank's first entry, nor skip to the second (order per bank).
    assert await b.write(lambda db: rows.claim_first(db, "bank", b.instance_id)) is None
    dies(a)
    taken = await b.write(lambda db: rows.claim_first(db, "bank", b.instance_id))
    assert taken is not None
    assert taken.seq == first.seq
    assert taken.owner == b.instance_id


async def test_a_dead_instances_deliveries_in_flight_are_queued_for_another_and_audited(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    mine = await a.write(lambda db: entry(db, "bank", "in flight", state="sending", owner=a.instance_id))
    assert await b.write(_tick) == ([], [])  # a is alive: its own to finish
    dies(a)
    taken, banks = await b.write(_tick)
    assert [e.seq for e in taken] == [mine.seq]
    assert banks == ["bank"]
    now = await b.read(lambda db: rows.find(db, mine.operation_id))
    assert now is not None
    assert (now.state, now.owner) == ("queued", None)
    events = await b.read(lambda db: [r["reason"] for r in all_event_rows(db) if r["action"] == "outbox_queue"])
    assert any(a.instance_id in reason for reason in events)
    # The dead instance's registration is gone; it registers again at its next beat.
    assert a.instance_id not in [i.id for i in await b.read(instances.live)]
    await a.heartbeat()
    assert a.instance_id in [i.id for i in await b.read(instances.live)]


async def test_a_guarded_change_on_one_instance_holds_the_writes_of_the_other(
    pair: tuple[Database, Database],
) -> None:
    a, _ = pair
    assert a.url is not None
    gates_a = BankGates(SharedBankLocks(a.url, max_size=4))
    gates_b = BankGates(SharedBankLocks(a.url, max_size=4))
    assert gates_a.shared is not None
    assert gates_b.shared is not None
    await gates_a.shared.open()
    await gates_b.shared.open()
    try:
        async with gates_b.writing("ops", 1.0):  # a write in flight on b: a's change waits for it
            change = asyncio.create_task(gates_a.begin_change("ops"))
            await asyncio.sleep(0.3)
            assert not change.done()
        await asyncio.wait_for(change, 5)
        with pytest.raises(GateClosed):  # b's writes wait for a's change, within their bound
            async with gates_b.writing("ops", 0.3):
                pass
        async with gates_b.writing("other", 0.3):  # another bank is not held
            pass
        order: list[str] = []

        async def write() -> None:
            async with gates_b.writing("ops", 5.0):
                order.append("write")

        waiting = asyncio.create_task(write())
        await asyncio.sleep(0.2)
        order.append("change ends")
        await gates_a.end_change("ops")
        await asyncio.wait_for(waiting, 5)
        assert order == ["change ends", "write"]
    finally:
        await gates_a.shared.close()
        await gates_b.shared.close()


async def test_two_instances_writing_at_once_make_one_chain(pair: tuple[Database, Database]) -> None:
    a, b = pair

    async def burst(db: Database, who: str) -> None:
        for i in range(40):
            await db.write(lambda tx, i=i: append_events(tx, [AuditEvent(action="add", bank=who, reason=str(i))]))

    await asyncio.gather(burst(a, "a"), burst(b, "b"))
    events = await a.read(all_event_rows)
    assert [r["seq"] for r in events] == list(range(1, len(events) + 1))
    assert verify_chain(events, key=audit_key(a.installation_key), keyed_from=1) == []


async def test_one_instance_writes_the_checkpoints(pair: tuple[Database, Database], tmp_path: Path) -> None:
    a, b = pair
    assert a.checkpoints is not None
    assert b.checkpoints is not None
    assert a.checkpoints.lead() is True  # the first to open took the leader's lock
    assert b.checkpoints.lead() is False
    assert (a.leads(), b.leads()) == (True, False)  # and runs the scheduled retention job alone
    lines = (tmp_path / "checkpoints").glob("*")
    before = sum(len(f.read_text().splitlines()) for f in lines)
    await b.audit(AuditEvent(action="add"))
    await b.checkpoint_due()
    await a.checkpoint_due()
    after = sum(len(f.read_text().splitlines()) for f in (tmp_path / "checkpoints").glob("*"))
    assert after == before + 1  # the head checkpointed once, by the leader


async def test_an_instance_whose_lock_connection_the_server_ended_takes_it_again(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    pid = a._alive_db.execute("SELECT pg_backend_pid()").fetchone()[0]
    b._alive_db.execute("SELECT pg_terminate_backend(?)", (pid,))  # the server ends it: a looks dead
    await asyncio.sleep(0.2)
    assert a.instance_id not in [i.id for i in await b.read(instances.live)]
    await a.heartbeat()  # the lost connection noticed at the next beat, the lock taken again
    assert a.instance_id in [i.id for i in await b.read(instances.live)]
