"""What a governance service raises for an operation it cannot do: one family, each front maps it in
one place to its dialect's answer (``status``, ``detail``; ``retry_after`` seconds when trying again
later can succeed).

* :class:`Refused` — the operation is not done (an unknown memory, a memory not held, a backend that
  failed): its status is the answer's.
* :class:`Forbidden` — the request's key may not do this (403).
* :class:`Invalid` — the request's content cannot be taken as it is (422).
* :class:`Busy` — a guarded change holds the bank: nothing was written, retry shortly (503).
* :class:`QueueFull` — the outbox is past a limit: nothing was written, retry later (503).
"""

from __future__ import annotations


class ServiceError(Exception):
    """The family: ``str(exc)`` is what happened (for logs); ``detail`` is what the client reads."""

    status: int = 400
    retry_after: int | None = None

    def __init__(self, message: str, *, detail: str | None = None, status: int | None = None) -> None:
        super().__init__(message)
        self.detail = message if detail is None else detail
        if status is not None:
            self.status = status


class Refused(ServiceError):
    """An operation on a memory that cannot be done: ``status`` and ``detail`` are the HTTP answer.
    Nothing was changed, or what was left is named in ``detail``."""

    def __init__(self, status: int, detail: str) -> None:
        super().__init__(detail, status=status)


class Forbidden(ServiceError):
    """The request's key may not do this (a tag the bank reserves to admin keys): nothing was written."""

    status = 403


class Invalid(ServiceError):
    """The request's content cannot be taken as it is; nothing was written."""

    status = 422


class Busy(ServiceError):
    """The bank is held by a guarded change: nothing was written; the same request can succeed shortly."""

    status = 503
    retry_after = 5

    def __init__(self, message: str) -> None:
        super().__init__(message, detail=f"memwarden: {message}; nothing was written, retry shortly")


class QueueFull(ServiceError):
    """The outbox is past a limit: nothing was written; the same request can succeed once it drains."""

    status = 503
    retry_after = 30

    def __init__(self, message: str) -> None:
        super().__init__(message, detail=f"memwarden: {message}; nothing was written, retry later")
