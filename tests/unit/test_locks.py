"""governance/locks.py: a guarded config change and the bank's governed writes kept apart."""

from __future__ import annotations

import asyncio

import pytest

from memwarden.governance.locks import BankGates, GateClosed

pytestmark = pytest.mark.anyio


async def test_a_change_waits_for_the_writes_in_flight_and_new_writes_wait_for_it() -> None:
    gates, order = BankGates(), []

    async def write(name: str, hold: float) -> None:
        async with gates.writing("b", 5.0):
            order.append(f"{name} in")
            await asyncio.sleep(hold)
            order.append(f"{name} out")

    async def change() -> None:
        async with gates.changing("b"):
            order.append("change in")
            await asyncio.sleep(0.05)
            order.append("change out")

    first = asyncio.create_task(write("w1", 0.05))
    await asyncio.sleep(0.01)
    guarded = asyncio.create_task(change())
    await asyncio.sleep(0.01)
    assert gates.busy("b")
    late = asyncio.create_task(write("w2", 0.0))  # arrives while the change waits: goes after it
    await asyncio.gather(first, guarded, late)
    assert order == ["w1 in", "w1 out", "change in", "change out", "w2 in", "w2 out"]
    assert not gates.busy("b")


async def test_a_write_waits_its_bound_then_is_refused_and_other_banks_are_free() -> None:
    gates = BankGates()
    await gates.begin_change("b")
    with pytest.raises(GateClosed) as closed:
        async with gates.writing("b", 0.05):
            pass
    assert closed.value.bank == "b"
    async with gates.writing("other", 0.05) as waited:  # another bank: no wait
        assert waited < 0.05
    await gates.end_change("b")
    async with gates.writing("b", 0.05):
        pass
