"""The store's refusals, answered as Hindsight answers them."""

from __future__ import annotations

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
