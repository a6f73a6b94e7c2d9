"""governance/retain.py as a service, without ASGI: a batch judged, recorded, delivered through a
:mod:`memwarden.governance.delivery` to a fake backend, settled — and the typed errors a front maps
(busy, queue full) raised with nothing written."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest

from memwarden.backends.base import BackendRejected, BackendUnavailable
from memwarden.backends.types import Item, Receipt
from memwarden.db.database import Database
from memwarden.governance.deliveries import OutboxFull
from memwarden.governance.delivery import Neutral
from memwarden.governance.errors import Busy, QueueFull, ServiceError
from memwarden.governance.retain import Batch, judge, write
from memwarden.governance.rewrite import rewrite
from memwarden.governance.state import AppState, build_pipeline
from memwarden.settings import load_settings

pytestmark = pytest.mark.anyio


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
def state(tmp_path: Path) -> Iterator[AppState]:
    settings = load_settings(environ={}, overrides={"data_dir": str(tmp_path), "config_guard": {"write_wait": 0.05}})
    fake = FakeBackend()
    ledger = Database.open(tmp_path)
    yield AppState(
        settings=settings,
        backend=fake,  # type: ignore[arg-type]  # never used: no raw delivery here
        memory=fake,  # type: ignore[arg-type]
        read_retries=0,
        pipeline=build_pipeline(settings.governance),
        ledger=ledger,
    )
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


async def statuses(state: AppState) -> list[tuple[str, str]]:
    rows = await state.ledger.read(lambda db: db.execute("SELECT content, status FROM memories ORDER BY content"))
    return [(r["content"], r["status"]) for r in rows]


async def test_a_batch_is_judged_delivered_neutrally_and_settled(state: AppState) -> None:
    fake: Any = state.memory
    b = batch("Bob is allergic to peanuts.", "ok thanks!")
    judgements = await judge(state, b)
    assert [j.verdict for j in judgements] == ["store", "reject"]
    retained = await write(state, b, judgements, Neutral(state.memory, "b", wait=False))
    assert retained.delivered is not None
    assert retained.delivered.status == 200
    assert retained.delivered.receipt == Receipt(items=1)
    [(bank, items, wait)] = fake.retained
    assert (bank, wait) == ("b", False)
    assert [i.content for i in items] == ["Bob is allergic to peanuts."]
    assert any(t.startswith("topic") for t in items[0].tags)  # labelled on the way
    assert await statuses(state) == [("Bob is allergic to peanuts.", "active")]  # a rejected item: audited, no row
    assert list(retained.memory_ids) == [0]


async def test_a_refusal_comes_back_as_the_backends_answer_and_the_rows_fail(state: AppState) -> None:
    fake: Any = state.memory
    fake.fail = BackendRejected(400, {"detail": "no"})
    b = batch("Alice works at the Lisbon office.")
    retained = await write(state, b, await judge(state, b), Neutral(state.memory, "b"))
    assert retained.delivered is not None
    assert (retained.delivered.status, retained.delivered.body) == (400, b'{"detail":"no"}')
    assert await statuses(state) == [("Alice works at the Lisbon office.", "failed")]


async def test_an_unreachable_store_is_said_and_the_rows_fail(state: AppState) -> None:
    fake: Any = state.memory
    fake.fail = BackendUnavailable("connection refused")
    b = batch("Alice works at the Lisbon office.")
    retained = await write(state, b, await judge(state, b), Neutral(state.memory, "b"))
    assert retained.unreachable == "connection refused"
    assert await statuses(state) == [("Alice works at the Lisbon office.", "failed")]


async def test_a_bank_held_by_a_guarded_change_is_busy_and_nothing_is_written(state: AppState) -> None:
    fake: Any = state.memory
    b = batch("Alice works at the Lisbon office.")
    judgements = await judge(state, b)
    async with state.gates.changing("b"):
        with pytest.raises(Busy) as caught:
            await write(state, b, judgements, Neutral(state.memory, "b"))
        with pytest.raises(Busy):
            await rewrite(state, b, "mw-old", Neutral(state.memory, "b"))
        other = batch("Carol lives in Porto.", bank="other")  # another bank is not held
        await write(state, other, await judge(state, other), Neutral(state.memory, "other"))
    assert (caught.value.status, caught.value.retry_after) == (503, 5)
    assert caught.value.detail.endswith("nothing was written, retry shortly")
    assert [bank for bank, _, _ in fake.retained] == ["other"]
    assert await statuses(state) == [("Carol lives in Porto.", "active")]


async def test_a_full_outbox_is_a_queue_full_refusal_and_nothing_is_written(state: AppState) -> None:
    class Full:
        def check_room(self, bank: str) -> None:
            raise OutboxFull(f"the delivery outbox is full for bank '{bank}'")

    state.outbox = Full()  # type: ignore[assignment]
    b = batch("Alice works at the Lisbon office.")
    with pytest.raises(QueueFull) as caught:
        await write(state, b, await judge(state, b), Neutral(state.memory, "b"))
    assert isinstance(caught.value, ServiceError)
    assert (caught.value.status, caught.value.retry_after) == (503, 30)
    assert caught.value.detail.endswith("nothing was written, retry later")
    assert await statuses(state) == []


async def test_writes_to_one_bank_wait_for_a_change_then_go(state: AppState) -> None:
    guard = state.settings.config_guard.model_copy(update={"write_wait": 5.0})
    state.settings = state.settings.model_copy(update={"config_guard": guard})
    fake: Any = state.memory
    b = batch("Alice works at the Lisbon office.")
    judgements = await judge(state, b)
    await state.gates.begin_change("b")
    pending = asyncio.create_task(write(state, b, judgements, Neutral(state.memory, "b")))
    await asyncio.sleep(0.05)
    assert fake.retained == []  # it waits while the change holds the bank
    await state.gates.end_change("b")
    retained = await pending
    assert retained.delivered is not None
    assert len(fake.retained) == 1
