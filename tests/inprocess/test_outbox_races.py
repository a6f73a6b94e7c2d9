"""The outbox's worker against races and failures a real run hits only now and then, made to happen
on purpose: a backend stand-in that counts deliveries (a fake: failure injection), the real ledger.
Each test is a defect a review found (a lost wakeup, an operator's give-up or retry racing a
delivery, a corrupt row, a stale age, backoff cut by every write, a failing ledger write, a body
cut mid-answer); each asserts what the operator or the backend would see."""

from __future__ import annotations

import asyncio
import contextlib
import json
import sqlite3
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.db import outbox as rows
from memwarden.db.database import Database
from memwarden.governance.errors import Refused
from memwarden.governance.outbox import OutboxFull
from tests.conftest import asgi_warden, database_url, make_settings
from tests.outbox_rig import Backend, add_entry, make_outbox, status_of, until

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]


@pytest.fixture
async def ledger(tmp_path: Path) -> AsyncIterator[Database]:
    db = Database.open(tmp_path, mirror=False, url=database_url())
    yield db
    db.close()


async def until_state(ledger: Database, entry: rows.Entry, state: str) -> None:
    """Wait until the outbox entry is in ``state``."""

    async def reached() -> bool:
        found = await ledger.read(lambda db: rows.find(db, entry.operation_id))
        return found is not None and found.state == state

    await until(reached)


async def called(backend: Backend) -> None:
    async def once() -> bool:
        return backend.calls >= 1

    await until(once)


async def test_an_entry_queued_while_the_worker_finds_its_queue_empty_is_still_delivered(ledger: Database) -> None:
    backend = Backend()
    outbox = make_outbox(ledger, backend)
    real_write, injected = ledger.write, []

    async def racing_write(fn: Any) -> Any:
        result = await real_write(fn)
        if result is None and not injected:  # the worker's claim found nothing, before this commit
            entry = await real_write(lambda db: add_entry(db, "b", "x"))
            injected.append(entry)
            outbox.queued(entry)
        return result

    ledger.write = racing_write  # type: ignore[method-assign]
    outbox.wake("b")

    async def delivered() -> bool:  # sent, and settled (on PostgreSQL the settling write lands a little later)
        return backend.calls == 1 and not outbox.busy("b")

    await until(delivered)
    assert backend.calls == 1
    await outbox.stop(1)


async def test_a_give_up_racing_a_delivery_is_one_or_the_other(ledger: Database) -> None:
    backend = Backend(fail_first=1)
    outbox = make_outbox(ledger, backend, retry_initial=0.3, retry_max=0.3)
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))
    outbox.queued(entry)
    await called(backend)  # the first attempt failed: the worker sleeps its backoff
    ledger._writer.submit(time.sleep, 0.8)  # the ledger's writer is busy with other requests' writes
    try:
        settled = await outbox.give_up(entry.operation_id, actor="op", request_id="g")
    except Refused:  # the delivery got there first: told so
        settled = None
    await asyncio.sleep(0.6)
    final = await ledger.read(lambda db: rows.find(db, entry.operation_id))
    assert final is not None
    if settled is not None:  # given up: never delivered, its memory failed
        assert (settled.state, final.state, backend.calls, await status_of(ledger, "m-x")) == (
            "given_up",
            "given_up",
            1,
            "failed",
        )
    else:  # delivered: its memory active
        assert (final.state, backend.calls, await status_of(ledger, "m-x")) == ("delivered", 2, "active")
    await outbox.stop(1)


async def test_give_up_then_retry_during_the_backoff_delivers_once(ledger: Database) -> None:
    backend = Backend(fail_first=1)
    outbox = make_outbox(ledger, backend, retry_initial=0.5, retry_max=0.5)
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))
    outbox.queued(entry)
    await called(backend)
    await outbox.give_up(entry.operation_id, actor="op", request_id="g")
    again = await outbox.retry(entry.operation_id, actor="op", request_id="r")
    assert again.seq != entry.seq  # at the end of the bank's queue

    await until_state(ledger, entry, "delivered")
    await asyncio.sleep(0.7)  # a second delivery would have come by now
    assert (backend.calls - 1, backend.items) == (1, ["x"])
    assert await status_of(ledger, "m-x") == "active"
    await outbox.stop(1)


async def test_two_retries_of_a_dead_letter_at_once_queue_it_once(ledger: Database) -> None:
    backend = Backend(fail_first=10**9)
    outbox = make_outbox(ledger, backend)
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))

    def dead(db: Any) -> None:
        rows.settle(db, entry.seq, "dead", answer="{}", error="422")
        db.execute("UPDATE memories SET status = 'failed'")

    await ledger.write(dead)
    ledger._writer.submit(time.sleep, 0.3)  # other writes ahead: both clicks read 'dead'
    results = await asyncio.gather(
        outbox.retry(entry.operation_id, actor="op", request_id="1"),
        outbox.retry(entry.operation_id, actor="op", request_id="2"),
        return_exceptions=True,
    )
    assert not [r for r in results if not isinstance(r, rows.Entry | Refused)]  # no 500
    queued = await ledger.read(lambda db: db.execute("SELECT COUNT(*) FROM outbox WHERE state = 'queued'").fetchone())
    assert queued[0] == 1
    await outbox.stop(0.1)


async def test_a_corrupt_row_is_a_dead_letter_and_its_memories_are_not_delivered_at_the_next_start(
    ledger: Database,
) -> None:
    from memwarden.governance.recovery import _adopt_orphans

    outbox = make_outbox(ledger, Backend())
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))
    await ledger.write(lambda db: db.execute("UPDATE outbox SET body = '{broken' WHERE seq = ?", (entry.seq,)))
    outbox.queued(entry)

    await until_state(ledger, entry, "dead")
    assert await status_of(ledger, "m-x") == "failed"
    await ledger.write(_adopt_orphans)  # the next start
    assert await ledger.read(rows.sending) == []
    await outbox.stop(0.1)


async def test_an_old_dead_letter_retried_counts_its_age_from_the_retry(ledger: Database) -> None:
    outbox = make_outbox(ledger, Backend(), max_age=3600)
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))
    long_ago = "2000-01-01T00:00:00+00:00"
    await ledger.write(
        lambda db: db.execute("UPDATE outbox SET state = 'dead', created_at = ? WHERE seq = ?", (long_ago, entry.seq))
    )
    await ledger.write(lambda db: rows.requeue(db, entry.seq))  # an operator's retry, then a restart
    await outbox.load()
    outbox.check_room("b")  # no 503: it has waited since the retry, not since 2000
    outbox.check_room("other")


async def test_one_bank_past_the_age_limit_does_not_stop_the_others(ledger: Database) -> None:
    outbox = make_outbox(ledger, Backend(), max_age=3600)
    entry = await ledger.write(lambda db: add_entry(db, "stuck", "x"))
    await ledger.write(lambda db: db.execute("UPDATE outbox SET queued_at = '2000-01-01T00:00:00+00:00'"))
    await outbox.load()
    with pytest.raises(OutboxFull, match="bank 'stuck'"):
        outbox.check_room("stuck")
    outbox.check_room("healthy")
    assert entry.bank == "stuck"


async def test_new_writes_do_not_cut_the_backoff_short(ledger: Database) -> None:
    backend = Backend(fail_first=10**9)
    outbox = make_outbox(ledger, backend, retry_initial=5.0, retry_max=5.0)
    first = await ledger.write(lambda db: add_entry(db, "b", "x0"))
    outbox.queued(first)
    for i in range(1, 11):  # ten writes in ~1 s during a 5 s backoff
        await asyncio.sleep(0.1)
        outbox.queued(await ledger.write(lambda db, i=i: add_entry(db, "b", f"x{i}")))
    assert backend.calls == 1
    await outbox.stop(0.5)


async def test_a_server_error_answered_again_and_again_becomes_a_dead_letter(ledger: Database) -> None:
    backend = Backend(fail_first=10**9, status=500)
    outbox = make_outbox(ledger, backend, max_errors=3)
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))
    outbox.queued(entry)

    await until_state(ledger, entry, "dead")

    async def released() -> bool:  # the ledger says dead a moment before the queue lets the bank go
        return not outbox.busy("b")

    await until(released)  # the bank's later writes are not held behind it (30 s: else a failure)
    assert backend.calls == 3
    await outbox.stop(0.1)


async def test_a_503_is_retried_past_the_error_limit(ledger: Database) -> None:
    backend = Backend(fail_first=5, status=503)  # a backend restarting: unavailable, then back
    outbox = make_outbox(ledger, backend, max_errors=2)
    outbox.queued(await ledger.write(lambda db: add_entry(db, "b", "x")))

    async def settled() -> bool:  # delivered, then the ledger settles it (a write of its own, after)
        return backend.items == ["x"] and await status_of(ledger, "m-x") == "active"

    await until(settled)
    assert backend.calls == 6  # five 503s past the error limit of two, then the delivery
    await outbox.stop(0.1)


async def test_a_failing_ledger_write_does_not_end_the_worker(
    ledger: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    from memwarden.governance import outbox as service

    backend = Backend()
    outbox = make_outbox(ledger, backend, retry_max=0.1)
    entry = await ledger.write(lambda db: add_entry(db, "b", "x"))
    real, failed = service.settle_delivered, []

    def flaky(*args: Any, **kwargs: Any) -> bool:
        if not failed:  # the transaction that settles the delivery fails once (a full disk)
            failed.append(1)
            raise sqlite3.OperationalError("database or disk is full")
        return real(*args, **kwargs)

    monkeypatch.setattr(service, "settle_delivered", flaky)
    outbox.queued(entry)

    await until_state(ledger, entry, "delivered")
    assert await status_of(ledger, "m-x") == "active"
    assert backend.calls == 2  # delivered again (the same document id: once in effect)
    await outbox.stop(0.1)


async def test_a_backend_answer_cut_mid_body_queues_the_write(tmp_path: Path) -> None:
    class Broken(httpx.AsyncByteStream):
        async def __aiter__(self) -> AsyncIterator[bytes]:
            yield b'{"success": tr'
            raise httpx.ReadError("connection reset by peer")

    def handler(request: httpx.Request) -> httpx.Response:
        if request.method == "POST" and request.url.path.endswith("/memories"):
            return httpx.Response(200, headers={"content-type": "application/json"}, stream=Broken())
        return httpx.Response(503, json={"detail": "down"})

    settings = make_settings("http://backend.test", data_dir=tmp_path / "data")
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(handler)) as backend,
        asgi_warden(settings, backend) as client,
    ):
        fact = "Service svc-1 listens on port 9001 in the eu-1 region."
        r = await client.post("/v1/default/banks/ops/memories", json={"items": [{"content": fact}]})
        assert (r.status_code, r.json()["async"]) == (200, True)  # accepted: the worker makes sure of it
        summary = (await client.get("/warden/v1/outbox")).json()["summary"]
        assert summary["queued_entries"] == 1


FIRST = "Service svc-1 listens on port 9001 in the eu-1 region."
SECOND = "Service svc-2 listens on port 9002 in the eu-2 region."


async def posted(request: httpx.Request, arrived: asyncio.Event) -> tuple[str | None, bool]:
    """The content of a retain the backend stand-in got (None: another request, answered healthy),
    and whether it is the first write's first arrival (``arrived`` is set then)."""
    if request.method != "POST" or not request.url.path.endswith("/memories"):
        return None, False
    content = str(json.loads(await request.aread())["items"][0]["content"])
    first = content == FIRST and not arrived.is_set()
    if first:
        arrived.set()
    return content, first


def stored() -> httpx.Response:
    """The backend's answer to a retain it took."""
    answer = json.dumps({"success": True, "bank_id": "ops", "items_count": 1, "async": False}).encode()
    return httpx.Response(200, headers={"content-type": "application/json"}, stream=httpx.ByteStream(answer))


@contextlib.asynccontextmanager
async def in_front(handler: Any, tmp_path: Path) -> AsyncIterator[httpx.AsyncClient]:
    """memwarden in process in front of the backend stand-in ``handler``, retrying every 0.05-0.1 s."""
    settings = make_settings(
        "http://backend.test", data_dir=tmp_path / "data", outbox={"retry_initial": 0.05, "retry_max": 0.1}
    )
    async with (
        httpx.AsyncClient(transport=httpx.MockTransport(handler)) as backend,
        asgi_warden(settings, backend) as client,
    ):
        yield client


def retain(client: httpx.AsyncClient, text: str) -> Any:
    return client.post("/v1/default/banks/ops/memories", json={"items": [{"content": text}]})


async def under_way(client: httpx.AsyncClient, arrived: asyncio.Event) -> asyncio.Task[httpx.Response]:
    """The first write's request, started: it returns once the backend has it (and holds it)."""
    one = asyncio.create_task(retain(client, FIRST))
    await arrived.wait()
    return one


@pytest.mark.parametrize("first_fate", ["lands", "fails"])
async def test_a_write_queued_while_an_earlier_one_is_still_on_its_way_goes_after_it(
    tmp_path: Path, first_fate: str
) -> None:
    """Two writes to a bank while the backend is down: the first request's own delivery hangs, the
    second's fails at once and is queued. The worker must not deliver the second before the first
    is settled (it did: the backend got them in the wrong order)."""
    first, second = FIRST, SECOND
    up, first_arrived, let_first_go = False, asyncio.Event(), asyncio.Event()
    got: list[str] = []

    async def handler(request: httpx.Request) -> httpx.Response:
        content, first_time = await posted(request, first_arrived)
        if content is None:
            return httpx.Response(200, json={"status": "healthy"})
        if first_time:
            await let_first_go.wait()
            if first_fate == "fails":
                raise httpx.ReadError("connection reset by peer")
        elif not up:
            raise httpx.ConnectError("connection refused")
        got.append(content)
        return stored()

    async with in_front(handler, tmp_path) as client:
        one = await under_way(client, first_arrived)
        r = await retain(client, second)
        assert (r.status_code, r.json()["async"]) == (200, True)
        up = True
        await asyncio.sleep(0.5)  # the worker's backoff is 0.05-0.1 s: time to deliver the second, were it free to
        assert got == []
        let_first_go.set()
        assert (await one).status_code == 200

        async def both() -> bool:
            return len(got) == 2

        await until(both)
        assert got == [first, second]

        async def settled() -> bool:  # the worker records a delivery after the backend took it
            summary = (await client.get("/warden/v1/outbox")).json()["summary"]
            return bool(summary["queued_entries"] == 0)

        await until(settled)


async def test_a_request_cancelled_mid_delivery_leaves_its_write_to_the_worker_and_holds_nothing_back(
    tmp_path: Path,
) -> None:
    first, second = FIRST, SECOND
    first_arrived, got = asyncio.Event(), []

    async def handler(request: httpx.Request) -> httpx.Response:
        content, first_time = await posted(request, first_arrived)
        if content is None:
            return httpx.Response(200, json={"status": "healthy"})
        if first_time:
            await asyncio.Event().wait()  # hangs until the request is cancelled
        got.append(content)
        return stored()

    async with in_front(handler, tmp_path) as client:
        one = await under_way(client, first_arrived)
        one.cancel()
        with pytest.raises(asyncio.CancelledError):
            await one
        r = await retain(client, second)
        assert r.status_code == 200

        async def both() -> bool:  # delivered, and their deliveries settled in the ledger after
            queued = (await client.get("/warden/v1/outbox")).json()["summary"]["queued_entries"]
            return len(got) == 2 and queued == 0

        await until(both)
        assert got == [first, second]  # the cancelled write was queued, and first


async def test_a_write_its_request_never_settled_holds_the_bank_back_only_for_the_grace(ledger: Database) -> None:
    """A request began to deliver the bank's first write itself and never settled it (its process
    lives on: a ledger write that failed after the backend's answer, say). A later write queued for
    the worker waits behind it — for ``outbox.request_grace``; then the worker queues the first
    (audited, saying why) and delivers both, in order: nothing stuck until a restart."""
    backend = Backend()
    outbox = make_outbox(ledger, backend, retry_max=0.1, request_grace=1.0)

    def setup(db: Any) -> rows.Entry:
        stuck = add_entry(db, "b", "first", state="queued")
        db.execute("UPDATE outbox SET state = 'sending', owner = ? WHERE seq = ?", (ledger.instance_id, stuck.seq))
        return add_entry(db, "b", "second")

    began = time.monotonic()
    waiting = await ledger.write(setup)
    outbox.queued(waiting)
    await asyncio.sleep(0.5)
    assert backend.items == []  # the second waits behind the first, still its request's
    await until_state(ledger, waiting, "delivered")
    assert backend.items == ["first", "second"]
    assert time.monotonic() - began >= 1.0
    reasons = await ledger.read(
        lambda db: [r[0] for r in db.execute("SELECT reason FROM audit_events WHERE action = 'outbox_queue'")]
    )
    assert any("had not settled it after 1 s" in r for r in reasons)
    await outbox.stop(1)
