"""A background loop that waits for an event with a time bound stops when cancelled, even when the
event is set in the same turn as the cancel. On Python 3.11 ``asyncio.wait_for`` returned the
event's result there and swallowed the cancel: the cluster's loop beat on, and the app's shutdown
waited for it forever (CI: an in-process test on PostgreSQL hung 300 s after its last request —
the notices' connection, just up, had asked for a beat as the test ended)."""

from __future__ import annotations

import asyncio
from typing import Any, cast

import pytest

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
