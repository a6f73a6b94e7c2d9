"""governance/retain.py as a service, without ASGI: a batch judged, recorded, delivered through a
:mod:`memwarden.governance.delivery` to a fake backend, settled — and the typed errors a front maps
(busy, queue full) raised with nothing written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from memwarden.backends.base import BackendRejected, BackendUnavailable
from memwarden.backends.types import Item, Receipt
from memwarden.db.database import Database
from memwarden.governance.deliveries import OutboxFull
from memwarden.governance.delivery import Neutral
from memwarden.governance.errors import Busy, QueueFull, ServiceError
from memwarden.governance.locks import BankGates
from memwarden.governance.outbox import Outbox
from memwarden.governance.retain import Batch, Retainer
from memwarden.governance.review import Review
from memwarden.governance.rewrite import rewrite
from memwarden.governance.state import build_pipeline
from memwarden.governance.turns import LastTurns
from memwarden.metrics import Metrics
from memwarden.settings import GovernanceSettings, OutboxSettings
from tests.conftest import database_url

pytestmark = [pytest.mark.anyio, pytest.mark.usefixtures("engine")]


class FakeBackend:
    """A MemoryBackend's retain, recording what it was given; ``fail`` is raised instead."""

    kind = "fake"
    capabilities: frozenset[str] = frozenset()

    def __init__(self) -> None:
        self.retained: list[tuple[str, list[Item], bool]] = []
        self.fail: Exception | None = None

    async def retain(self, bank_id: str, items: Sequence[Item], *, document_tags: Sequence[str], wait: bool) -> Receipt:
        if self.fail is not None:
            raise self.fail
        self.retained.append((bank_id, list(items), wait))
        return Receipt(items=len(items))

    async def set_memory_state(self, bank_id: str, memory_id: str, state: str, *, reason: str | None = None) -> None:
        pass

    async def delete_document(self, bank_id: str, document_id: str) -> None:
        pass


@pytest.fixture
def fake() -> FakeBackend:
    return FakeBackend()


@pytest.fixture
def retainer(tmp_path: Path, fake: FakeBackend) -> Iterator[Retainer]:
    """The retain service composed as the app composes it, from only what it needs."""
    governance = GovernanceSettings()  # type: ignore[call-arg]
    ledger = Database.open(tmp_path, url=database_url())
    memory: Any = fake
    pipeline, review = build_pipeline(governance), Review(ledger, memory)
    yield Retainer(ledger, pipeline, governance, BankGates(), 0.05, review, None, Metrics(), LastTurns())
    ledger.close()


def batch(*texts: str, bank: str = "b") -> Batch:
    return Batch(
        bank=bank,
        raw_items=[{"content": t} for t in texts],
        contents=list(texts),
        tags=[[] for _ in texts],
        document_tags=[],
        fields={},
        request_id="req-1",
    )


async def statuses(retainer: Retainer) -> list[tuple[str, str]]:
    rows = await retainer.ledger.read(lambda db: db.execute("SELECT content, status FROM memories ORDER BY content"))
    return [(r["content"], r["status"]) for r in rows]


async def test_a_batch_is_judged_delivered_neutrally_and_settled(retainer: Retainer, fake: FakeBackend) -> None:
    b = batch("Bob is allergic to peanuts.", "ok thanks!")
    judgements = await retainer.judge(b)
    assert [j.verdict for j in judgements] == ["store", "reject"]
    retained = await retainer.write(b, judgements, Neutral(fake, "b", wait=False))
    assert retained.delivered is not None
    assert retained.delivered.status == 200
    assert retained.delivered.receipt == Receipt(items=1)
    [(bank, items, wait)] = fake.retained
    assert (bank, wait) == ("b", False)
    assert [i.content for i in items] == ["Bob is allergic to peanuts."]
    assert any(t.startswith("topic") for t in items[0].tags)  # labelled on the way
    assert await statuses(retainer) == [("Bob is allergic to peanuts.", "active")]  # a rejected item: audited, no row
    assert list(retained.memory_ids) == [0]


async def test_a_refusal_comes_back_as_the_backends_answer_and_the_rows_fail(
    retainer: Retainer, fake: FakeBackend
) -> None:
    fake.fail = BackendRejected(400, {"detail": "no"})
    b = batch("Alice works at the Lisbon office.")
    retained = await retainer.write(b, await retainer.judge(b), Neutral(fake, "b"))
    assert retained.delivered is not None
    assert (retained.delivered.status, retained.delivered.body) == (400, b'{"detail":"no"}')
    assert await statuses(retainer) == [("Alice works at the Lisbon office.", "failed")]


async def test_an_unreachable_store_is_said_and_the_rows_fail(retainer: Retainer, fake: FakeBackend) -> None:
    fake.fail = BackendUnavailable("connection refused")
    b = batch("Alice works at the Lisbon office.")
    retained = await retainer.write(b, await retainer.judge(b), Neutral(fake, "b"))
    assert retained.unreachable == "connection refused"
    assert await statuses(retainer) == [("Alice works at the Lisbon office.", "failed")]


async def test_a_bank_held_by_a_guarded_change_is_busy_and_nothing_is_written(
    retainer: Retainer, fake: FakeBackend
) -> None:
    b = batch("Alice works at the Lisbon office.")
    judgements = await retainer.judge(b)
    async with retainer.gates.changing("b"):
        with pytest.raises(Busy) as caught:
            await retainer.write(b, judgements, Neutral(fake, "b"))
        with pytest.raises(Busy):
            await rewrite(retainer, b, "mw-old", Neutral(fake, "b"))
        other = batch("Carol lives in Porto.", bank="other")  # another bank is not held
        await retainer.write(other, await retainer.judge(other), Neutral(fake, "other"))
    assert (caught.value.status, caught.value.retry_after) == (503, 5)
    assert caught.value.detail.endswith("nothing was written, retry shortly")
    assert [bank for bank, _, _ in fake.retained] == ["other"]
    assert await statuses(retainer) == [("Carol lives in Porto.", "active")]


async def test_a_full_outbox_is_a_queue_full_refusal_and_nothing_is_written(
    retainer: Retainer, fake: FakeBackend
) -> None:
    class Full:
        def check_room(self, bank: str) -> None:
            raise OutboxFull(f"the delivery outbox is full for bank '{bank}'")

    retainer = replace(retainer, outbox=Full())  # type: ignore[arg-type]
    b = batch("Alice works at the Lisbon office.")
    with pytest.raises(QueueFull) as caught:
        await retainer.write(b, await retainer.judge(b), Neutral(fake, "b"))
    assert isinstance(caught.value, ServiceError)
    assert (caught.value.status, caught.value.retry_after) == (503, 30)
    assert caught.value.detail.endswith("nothing was written, retry later")
    assert await statuses(retainer) == []


async def test_writes_to_one_bank_wait_for_a_change_then_go(retainer: Retainer, fake: FakeBackend) -> None:
    retainer = replace(retainer, write_wait=5.0)
    b = batch("Alice works at the Lisbon office.")
    judgements = await retainer.judge(b)
    await retainer.gates.begin_change("b")
    pending = asyncio.create_task(retainer.write(b, judgements, Neutral(fake, "b")))
    await asyncio.sleep(0.05)
    assert fake.retained == []  # it waits while the change holds the bank
    await retainer.gates.end_change("b")
    retained = await pending
    assert retained.delivered is not None
    assert len(fake.retained) == 1


async def test_behind_a_backend_an_unreachable_delivery_waits_in_the_outbox_then_lands(
    retainer: Retainer, fake: FakeBackend
) -> None:
    memory: Any = fake
    outbox = Outbox(
        retainer.ledger,
        memory,
        retainer.review,
        retainer.gates,
        retainer.metrics,
        OutboxSettings(retry_initial=0.01, retry_max=0.05),  # type: ignore[call-arg]
        write_wait=0.05,
    )
    retainer = replace(retainer, outbox=outbox)
    fake.fail = BackendUnavailable("connection refused")
    b = batch("Alice works at the Lisbon office.")
    retained = await retainer.write(b, await retainer.judge(b), Neutral(memory, "b"))
    assert retained.delivered is None
    assert retained.queued is not None  # the client is told: accepted, delivered later
    assert await statuses(retainer) == [("Alice works at the Lisbon office.", "pending")]
    fake.fail = None
    outbox.start()
    try:
        for _ in range(500):  # the worker's first retry is 10 ms away
            if await statuses(retainer) == [("Alice works at the Lisbon office.", "active")]:
                break
            await asyncio.sleep(0.01)
    finally:
        await outbox.stop(grace=1.0)
    assert await statuses(retainer) == [("Alice works at the Lisbon office.", "active")]
    [(bank, items, wait)] = fake.retained
    assert (bank, [i.content for i in items], wait) == ("b", ["Alice works at the Lisbon office."], False)
