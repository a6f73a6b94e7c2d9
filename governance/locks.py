"""Per-bank locks: config changes and destructive operations on one bank run one at a time."""

from __future__ import annotations

import asyncio


class BankLocks:
    """One lock per bank: config changes and destructive operations on a bank run one at a time."""

    def __init__(self) -> None:
        self._locks: dict[str, asyncio.Lock] = {}

    def __call__(self, bank: str) -> asyncio.Lock:
        lock = self._locks.get(bank)
        if lock is None:
            lock = self._locks[bank] = asyncio.Lock()
        return lock
