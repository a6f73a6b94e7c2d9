"""A background loop that waits for an event with a time bound stops when cancelled, even when the
event is set in the same turn as the cancel. On Python 3.11 ``asyncio.wait_for`` returned the
event's result there and swallowed the cancel: the cluster's loop beat on, and the app's shutdown
waited for it forever (CI: an in-process test on PostgreSQL hung 300 s after its last request —
the notices' connection, just up, had asked for a beat as the test ended). The waits are
``asyncio.timeout`` now; where its meaning differs from ``wait_for``'s (a bound of zero), the code
says what it means."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

from memwarden.fronts.middleware import RequestContextMiddleware
from memwarden.governance.cluster import Cluster
from memwarden.governance.locks import BankGates

pytestmark = pytest.mark.anyio


class Ledger:
    """What a beat reads and writes: nothing to take over, no queue, not the leader."""

    url = None
    instance_id = "i-test"

    def __init__(self) -> None:
        self.beats = 0
        self.beaten = asyncio.Event()

    async def heartbeat(self) -> None:
        self.beats += 1
        self.beaten.set()

    async def write(self, _: Any) -> tuple[list[Any], list[str], list[str]]:
        return [], [], []

    async def read(self, _: Any) -> list[Any]:
        return []

    def leads(self) -> bool:
        return False


class Keys:
    def stale(self) -> None:
        pass


async def test_the_cluster_stops_when_a_beat_is_asked_for_in_the_same_turn_as_the_stop() -> None:
    ledger = Ledger()
    cluster = Cluster(cast(Any, ledger), None, cast(Any, Keys()), every=60.0)
    task = asyncio.create_task(cluster.run())
    await ledger.beaten.wait()
    await asyncio.sleep(0.01)  # the first beat done: waiting for the next
    cluster.listening()  # the notices' connection (again) up: a beat asked for ...
    task.cancel()  # ... as the app stops
    done, _ = await asyncio.wait({task}, timeout=2.0)
    assert task in done, "the cluster's loop went on after its cancel"
    assert task.cancelled()
    assert ledger.beats == 1


async def test_a_write_waiting_for_a_change_is_cancelled_when_the_change_ends_in_the_same_turn() -> None:
    gates = BankGates()
    entered: list[str] = []

    async def write() -> None:
        async with gates.writing("b", 30.0):
            entered.append("write")

    await gates.begin_change("b")
    waiting = asyncio.create_task(write())
    await asyncio.sleep(0.01)  # the write waits for the change
    await gates.end_change("b")  # the change ends: the write is woken ...
    waiting.cancel()  # ... in the turn its client went away
    done, _ = await asyncio.wait({waiting}, timeout=2.0)
    assert waiting in done
    assert waiting.cancelled()
    assert entered == []
    assert not gates.busy("b")


async def test_a_body_past_its_whole_deadline_is_refused_even_when_its_next_chunk_is_already_there() -> None:
    """The body's read bounded with ``asyncio.timeout`` keeps ``wait_for``'s meaning at the deadline:
    a bound of zero lets an await that need not wait go through, so the deadline is checked first."""

    async def app(scope: Any, receive: Any, send: Any) -> None:
        await receive()
        await asyncio.sleep(0.15)  # past the whole body's deadline before asking for the rest
        await receive()
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"read"})

    chunks = [
        {"type": "http.request", "body": b"a", "more_body": True},
        {"type": "http.request", "body": b"b", "more_body": False},
    ]

    async def receive() -> Any:
        return chunks.pop(0)  # every chunk already buffered: no wait

    sent: list[Any] = []

    async def send(message: Any) -> None:
        sent.append(message)

    guard = RequestContextMiddleware(app, max_body_bytes=1000, access_log=False, body_timeout=5.0, body_deadline=0.1)
    scope = {"type": "http", "method": "POST", "path": "/x", "headers": [(b"content-length", b"2")]}
    await guard(scope, receive, send)
    assert sent[0]["status"] == 408
    assert b"took longer than 0.1 s in all" in sent[1]["body"]
