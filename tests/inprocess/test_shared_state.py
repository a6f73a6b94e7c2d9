"""Two instances' worth of memwarden's state on one PostgreSQL, in one process (two Database objects,
two gate sets): an outbox claim is one instance's until it dies, a dead instance's deliveries are
taken over, a guarded change on one holds the writes of the other, the chain never forks, and the
checkpoints are written by one."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest

from memwarden.db import instances, notices
from memwarden.db import outbox as rows
from memwarden.db.audit import AuditEvent, all_event_rows, append_events, audit_key, verify_chain
from memwarden.db.bank_locks import SharedBankLocks
from memwarden.db.common import now
from memwarden.db.database import Database
from memwarden.db.deliveries import orphaned_rows
from memwarden.governance import keys as keys_service
from memwarden.governance.cluster import Cluster, _tick
from memwarden.governance.errors import Refused
from memwarden.governance.keys import KeyRing
from memwarden.governance.locks import BankGates, BankLocks, GateClosed
from memwarden.governance.recovery import settle_interrupted
from memwarden.store.operations import Operations
from memwarden.store.schema import STORE_MIGRATIONS
from testing.postgres import drop_database, fresh_database
from tests.outbox_rig import Backend, add_entry, make_outbox, status_of, until

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


async def dies(db: Database, other: Database) -> None:
    """The instance's connection holding its lock ends (as when its process is killed) — and the
    server has seen it end (it lets go of the lock a moment after the client closed)."""
    db._alive_db.close()

    async def gone() -> bool:
        return db.instance_id not in [i.id for i in await other.read(instances.live)]

    await until(gone)


async def test_a_claim_is_one_instances_until_it_dies_then_the_others(pair: tuple[Database, Database]) -> None:
    a, b = pair
    first = await a.write(lambda db: entry(db, "bank", "one"))
    await a.write(lambda db: entry(db, "bank", "two"))
    claimed = await a.write(lambda db: rows.claim_first(db, "bank", a.instance_id))
    assert claimed is not None
    assert claimed.seq == first.seq
    # The other instance does not take the bank's first entry, nor skip to the second (order per bank).
    assert await b.write(lambda db: rows.claim_first(db, "bank", b.instance_id)) is None
    await dies(a, b)
    taken = await b.write(lambda db: rows.claim_first(db, "bank", b.instance_id))
    assert taken is not None
    assert taken.seq == first.seq
    assert taken.owner == b.instance_id


async def test_a_dead_instances_deliveries_in_flight_are_queued_for_another_and_audited(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    mine = await a.write(lambda db: entry(db, "bank", "in flight", state="sending", owner=a.instance_id))
    assert await b.write(_tick) == ([], [], [])  # a is alive: its own to finish
    await dies(a, b)
    taken, banks, dead = await b.write(_tick)
    assert [e.seq for e in taken] == [mine.seq]
    assert banks == ["bank"]
    assert dead == [a.instance_id]
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


async def test_an_archive_on_one_instance_waits_for_a_config_change_on_another(
    pair: tuple[Database, Database],
) -> None:
    """Config changes and destructive operations (archive, restore, erase, plans) take the bank's
    serial lock: one at a time per bank across the instances, as within one."""
    a, _ = pair
    assert a.url is not None
    shared_a, shared_b = SharedBankLocks(a.url, max_size=4), SharedBankLocks(a.url, max_size=4)
    await shared_a.open()
    await shared_b.open()
    locks_a, locks_b = BankLocks(shared_a), BankLocks(shared_b)
    gates_a = BankGates(shared_a)
    try:
        async with locks_a("ops"), gates_a.changing("ops"):  # a's guarded change, snapshot to verification
            archive = asyncio.create_task(locks_b("ops").acquire())  # b's archive of a memory of the bank
            await asyncio.sleep(0.3)
            assert not archive.done()
            async with locks_b("other"):  # another bank is not held
                pass
        await asyncio.wait_for(archive, 5)
        await locks_b("ops").release()
        # Taken by one task and released by another (a profile change's verification in the background).
        held = locks_a("ops")
        await held.acquire()
        await asyncio.create_task(held.release())
        async with locks_b("ops"):
            pass
    finally:
        await shared_a.close()
        await shared_b.close()


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


# -- notices between the instances (LISTEN/NOTIFY): the beat below is an hour, the backoff a minute,
# so only a notice explains what each test sees within seconds.

SLOW_BEAT = 3600.0


@contextlib.asynccontextmanager
async def running(cluster: Cluster) -> AsyncIterator[Cluster]:
    """``cluster`` running, listening, until the block ends."""
    task = asyncio.create_task(cluster.run())

    async def listening() -> bool:
        return cluster.listens >= 1

    try:
        await until(listening)
        yield cluster
    finally:
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
        if cluster.outbox is not None:
            await cluster.outbox.stop(grace=1.0)


def cluster_of(db: Database, backend: Backend | None = None) -> Cluster:
    outbox = make_outbox(db, backend, retry_initial=30.0, retry_max=60.0) if backend is not None else None
    return Cluster(db, outbox, KeyRing(db, exposed=False), every=SLOW_BEAT)


async def test_a_notice_is_sent_at_the_commit_and_never_for_a_rollback(pair: tuple[Database, Database]) -> None:
    a, _ = pair
    assert a.url is not None
    heard: list[notices.Notice] = []
    listens: list[int] = []
    listener = asyncio.create_task(notices.listen(a.url, heard.append, lambda: listens.append(1), lambda why: None))

    async def listening() -> bool:
        return bool(listens)

    await until(listening)

    def rolled_back(db: Any) -> None:
        notices.send(db, notices.POKE, a.instance_id, "never")
        raise RuntimeError("the transaction fails")

    with pytest.raises(RuntimeError):
        await a.write(rolled_back)
    await a.write(lambda db: notices.send(db, notices.POKE, a.instance_id, "ops"))
    await a.write(lambda db: notices.send(db, notices.SETTLED, a.instance_id, "b" * 10_000))  # past the payload

    async def both() -> bool:
        return len(heard) >= 2

    await until(both)
    listener.cancel()
    await asyncio.gather(listener, return_exceptions=True)
    assert heard == [
        notices.Notice(notices.POKE, a.instance_id, "ops"),
        notices.Notice(notices.SETTLED, a.instance_id, None),  # too long to name: every bank
    ]
    assert notices.parse('{"k": "drop", "o": "x", "b": null}') is None  # not a kind memwarden sends
    assert notices.parse("[1]") is None


async def test_a_delivery_settled_on_one_instance_wakes_the_worker_waiting_for_it_on_another(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    first = await a.write(lambda db: add_entry(db, "ops", "first", state="sending", owner=a.instance_id))
    backend = Backend()  # one backend behind both instances: whichever delivers, it gets it once
    async with running(cluster_of(a, backend)) as on_a, running(cluster_of(b, backend)) as on_b:
        assert on_a.outbox is not None
        assert on_b.outbox is not None
        queuer = on_b.outbox

        def behind(db: Any) -> None:  # b's request goes behind a's (as its retain does), and says so
            add_entry(db, "ops", "second")
            queuer.tell_queued(db, "ops")

        await b.write(behind)
        on_b.outbox.wake("ops")  # its worker waits: a's request still delivers the bank's earlier write

        async def a_knows() -> bool:
            return on_a.heard >= 1

        await until(a_knows)  # without reading the outbox: b's notice
        await asyncio.sleep(0.3)
        assert backend.items == []
        settler = on_a.outbox

        def delivered(db: Any) -> None:  # a's request has the backend's answer (as its retain settles it)
            rows.delivered(db, first.seq, keep=False)
            settler.tell_settled(db, "ops")

        await a.write(delivered)

        async def second_delivered() -> bool:
            return backend.items == ["second"]

        await until(second_delivered)


async def test_an_operators_retry_on_one_instance_cuts_short_the_backoff_of_the_worker_on_another(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    entry = await a.write(lambda db: add_entry(db, "ops", "late"))
    backend = Backend(fail_first=1)  # down at the first attempt: a's worker waits 30 s before the next
    async with running(cluster_of(a, backend)) as cluster:
        assert cluster.outbox is not None
        cluster.outbox.wake("ops")

        async def tried() -> bool:
            return backend.calls == 1

        await until(tried)
        await asyncio.sleep(0.3)
        assert backend.items == []
        other = make_outbox(b, Backend())  # the operator's retry reaches b
        await other.retry(entry.operation_id, actor="ops-team", request_id="r-retry")

        async def delivered() -> bool:
            return backend.items == ["late"]

        await until(delivered)
        await other.stop(grace=1.0)


async def test_a_key_revoked_on_one_instance_is_refused_by_another_at_once(
    pair: tuple[Database, Database], monkeypatch: pytest.MonkeyPatch
) -> None:
    a, b = pair
    monkeypatch.setattr(keys_service, "REFRESH", SLOW_BEAT)  # no re-read by age: only the notice
    ring_a = KeyRing(a, exposed=False)
    made = await ring_a.create(name="agent", read=["*"], write=[], admin=[])
    cluster = cluster_of(b)
    assert await cluster.keys.find(made.token) is not None
    async with running(cluster):
        assert await cluster.keys.find(made.token) is not None
        await ring_a.revoke(made.key.id, reason="leaked")

        async def refused() -> bool:
            return await cluster.keys.find(made.token) is None

        await until(refused)
        # The listening connection cut (a restarted server, a proxy's idle timeout): it listens again,
        # looks (the keys read again), and hears the next notice.
        pids = await b.read(
            lambda db: db.execute(
                "SELECT pid FROM pg_stat_activity WHERE query LIKE 'LISTEN %' AND datname = current_database()"
            ).fetchall()
        )
        assert len(pids) == 1  # this test's database: the one listener, b's
        await b.write(lambda db: db.execute("SELECT pg_terminate_backend(?)", (pids[0][0],)))

        async def again() -> bool:
            return cluster.listens >= 2

        await until(again)
        other = await ring_a.create(name="second", read=["*"], write=[], admin=[])
        assert await cluster.keys.find(other.token) is not None  # an unknown id is looked up (MISS_REFRESH)
        await ring_a.revoke(other.key.id, reason="rotated")
        await until(lambda: _refused(cluster, other.token))


async def _refused(cluster: Cluster, token: str) -> bool:
    return await cluster.keys.find(token) is None


async def test_an_instance_that_stops_hands_its_claims_to_another_at_once(pair: tuple[Database, Database]) -> None:
    a, b = pair
    await a.write(lambda db: add_entry(db, "ops", "claimed"))
    assert await a.write(lambda db: rows.claim_first(db, "ops", a.instance_id)) is not None
    backend = Backend()
    async with running(cluster_of(b, backend)):
        await asyncio.sleep(0.5)
        assert backend.items == []  # a is alive: its claim is its own
        a.close()  # a stops (its outbox stopped first): the others are told

        async def delivered() -> bool:
            return backend.items == ["claimed"]

        await until(delivered)


# -- the self-hosted store on one PostgreSQL: what a start (or a beat) recovers is a dead instance's
# work, never a live one's in flight.


def pending_memory(db: Any, instance: str, text: str) -> str:
    """A memory recorded by ``instance`` whose write to the store has not answered yet."""
    ts = now()
    db.execute(
        "INSERT INTO memories (id, bank, status, content, content_hash, item, document_id, created_at, updated_at,"
        " instance) VALUES (?,?,?,?,?,?,?,?,?,?)",
        (
            f"m-{text}",
            "notes",
            "pending",
            text,
            f"h-{text}",
            json.dumps({"content": text}),
            f"doc-{text}",
            ts,
            ts,
            instance,
        ),
    )
    return f"m-{text}"


async def nothing_held(bank: str, document_ids: Any) -> set[str]:
    return set()


async def test_a_start_settles_a_dead_instances_pending_writes_never_a_live_ones(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    memory_id = await a.write(lambda db: pending_memory(db, a.instance_id, "in flight on a"))
    assert await settle_interrupted(b, nothing_held) == (0, 0)  # b starts while a writes: a's own
    assert await status_of(b, memory_id) == "pending"
    await dies(a, b)
    assert await settle_interrupted(b, nothing_held) == (0, 1)  # a was killed mid-write: settled
    assert await status_of(b, memory_id) == "failed"


async def test_a_dead_instances_async_retains_are_resumed_once_by_another(pair: tuple[Database, Database]) -> None:
    a, b = pair
    for db in (a, b):
        db.migrate_sync(STORE_MIGRATIONS)
    ran: list[str] = []

    async def retain(bank: str, items: Any, tags: Any) -> list[Any]:
        ran.extend(i.content for i in items)
        return []

    mine = Operations(a, retain)
    await a.write(
        lambda db: db.execute(
            "INSERT INTO store_operations (id, bank_id, type, status, items_count, payload, created_at, updated_at,"
            " instance) VALUES ('op-1', 'notes', 'batch_retain', 'pending', 1, ?, ?, ?, ?)",
            (json.dumps({"items": [{"content": "acknowledged on a"}]}), now(), now(), a.instance_id),
        )
    )
    others = Operations(b, retain)
    assert await others.resume() == 0  # a lives: its acknowledged retain is its own to finish
    await dies(a, b)
    assert await others.resume() == 1
    assert await mine.resume() == 0  # claimed by b: never run twice
    await others.drain(grace=5.0)
    assert ran == ["acknowledged on a"]


async def test_an_instance_that_stops_has_its_store_work_recovered_by_another(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    recovered: list[int] = []

    async def recover() -> None:
        recovered.append(len(await b.read(orphaned_rows)))

    await a.write(lambda db: pending_memory(db, a.instance_id, "left by a"))
    cluster = Cluster(b, None, KeyRing(b, exposed=False), every=SLOW_BEAT, recover=recover)
    async with running(cluster):
        await asyncio.sleep(0.3)
        assert recovered == []  # no instance died
        a.close()

        async def ran() -> bool:
            return bool(recovered)

        await until(ran)
    assert recovered == [1]


async def test_a_give_up_on_one_instance_waits_for_the_delivery_under_way_on_another(
    pair: tuple[Database, Database],
) -> None:
    a, b = pair
    entry = await a.write(lambda db: add_entry(db, "ops", "landing"))
    backend = Backend()
    answer = asyncio.Event()
    plain = backend.retain

    async def slow(bank: str, items: Any, **kw: Any) -> Any:
        backend.calls += 1
        await answer.wait()  # the backend takes its time: a's worker is mid-delivery
        backend.calls -= 1
        return await plain(bank, items, **kw)

    backend.retain = slow  # type: ignore[method-assign]
    delivering = make_outbox(a, backend)
    delivering.wake("ops")
    await until(lambda: _called(backend))
    operator = make_outbox(b, Backend())
    with pytest.raises(Refused) as refused:
        await operator.give_up(entry.operation_id, actor="ops-team", request_id="r-give-up")
    assert refused.value.status == 409
    assert a.instance_id in str(refused.value)
    answer.set()

    async def settled() -> bool:  # the backend took it, then a settled its delivery in the ledger
        return backend.items == ["landing"] and await status_of(b, "m-landing") != "pending"

    await until(settled)
    assert await status_of(b, "m-landing") == "active"  # landed, and not marked failed by the give-up
    await delivering.stop(grace=1.0)
    await operator.stop(grace=1.0)


async def _called(backend: Backend) -> bool:
    return backend.calls >= 1
