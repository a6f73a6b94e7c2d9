"""The store's refusals, answered as Hindsight answers them."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import Any, TypeVar


class StoreError(Exception):
    """A request the store cannot serve; ``status`` and ``detail`` are Hindsight's answer."""

    def __init__(self, status: int, detail: Any) -> None:
        super().__init__(str(detail))
        self.status = status
        self.detail = detail


_T = TypeVar("_T")


def obey(rule: Callable[..., _T], *args: Any) -> _T:
    """Apply one of Hindsight's input rules (``store.rules``); its refusal is the client's ``400``."""
    try:
        return rule(*args)
    except ValueError as exc:
        raise StoreError(400, str(exc)) from None


def bank_not_found(bank: str) -> StoreError:
    return StoreError(404, f"Bank '{bank}' not found")


def storage_failure(exc: BaseException) -> StoreError | None:
    """The client's answer when the database itself failed (``None``: not such a failure). Nothing
    was written: the transaction rolled back. Full disk is 507, anything else (locked, busy) 503."""
    if not isinstance(exc, sqlite3.OperationalError):
        return None
    if "full" in str(exc):
        return StoreError(507, f"memwarden's database is full: {exc}")
    return StoreError(503, f"memwarden's database is busy: {exc}")
