"""What a governance service raises for an operation it cannot do."""

from __future__ import annotations


class Refused(Exception):
    """An operation on a memory that cannot be done: ``status`` and ``detail`` are the HTTP answer.
    Nothing was changed, or what was left is named in ``detail``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail)
        self.status, self.detail = status, detail
