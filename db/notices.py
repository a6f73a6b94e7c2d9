"""Notices between the instances on one PostgreSQL (``LISTEN``/``NOTIFY``): what one instance did
that another should act on now rather than at its next beat (``instances.HEARTBEAT``), which stays
the fallback — a notice is a hint, never the only way work is found. Sent inside the writing
transaction (PostgreSQL delivers it at the commit, and not at all on a rollback); on SQLite there is
one instance and nothing is sent.

- :data:`QUEUED`: an entry of a bank was queued behind a request's delivery (or handed by its
  request to the workers) — the instance whose request delivers an earlier entry of the bank now
  knows that someone waits for it, without a look at the outbox on every write.
- :data:`SETTLED`: a request settled its own delivery of a bank's write while later entries of the
  bank wait behind it — the worker waiting for it (``outbox.claim_first``'s ``WAIT``), on whichever
  instance, goes on.
- :data:`POKE`: an operator's retry-now or give-up — the bank's backoff is cut short wherever its
  worker runs.
- :data:`KEYS`: a key was made or revoked — every instance reads the keys again.
- :data:`LEFT`: an instance stopped — the others take over its claims now.

A notice names its kind, the instance that sent it and, where it has one, a bank; each is at most
one row's worth of text (a bank id too long for PostgreSQL's 8,000-byte payload is sent as "every
bank", which the receiver reads as a beat now)."""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Final

from memwarden.db.common import on_postgres

CHANNEL: Final = "memwarden_notices"
QUEUED: Final = "queued"
SETTLED: Final = "settled"
POKE: Final = "poke"
KEYS: Final = "keys"
LEFT: Final = "left"
KINDS: Final = frozenset({QUEUED, SETTLED, POKE, KEYS, LEFT})
MAX_PAYLOAD = 7_900  # bytes: PostgreSQL refuses a payload of 8,000 or more
RECONNECT = 1.0  # seconds before the first attempt to listen again after the connection was lost,
RECONNECT_MAX = 30.0  # doubled after each failed one up to this (the beat covers the gap)


@dataclass(frozen=True)
class Notice:
    kind: str
    origin: str  # the instance that sent it ("" for a command)
    bank: str | None = None  # None: every bank (or none named)


def send(db: Any, kind: str, origin: str, bank: str | None = None) -> None:
    """Tell the other instances (at this transaction's commit); nothing on SQLite."""
    if not on_postgres(db):
        return
    payload = json.dumps({"k": kind, "o": origin, "b": bank}, ensure_ascii=False)
    if len(payload.encode()) > MAX_PAYLOAD:
        payload = json.dumps({"k": kind, "o": origin[:200], "b": None})
    db.execute("SELECT pg_notify(?, ?)", (CHANNEL, payload))


def parse(payload: str) -> Notice | None:
    """The notice ``payload`` says (None: not one of memwarden's, or of an unknown kind)."""
    try:
        fields = json.loads(payload)
    except ValueError:
        return None
    if not isinstance(fields, dict):
        return None
    kind, origin, bank = fields.get("k"), fields.get("o"), fields.get("b")
    if kind not in KINDS or not isinstance(origin, str) or not (bank is None or isinstance(bank, str)):
        return None
    return Notice(kind, origin, bank)


async def listen(
    url: str,
    on_notice: Callable[[Notice], None],
    on_listening: Callable[[], None],
    on_lost: Callable[[str], None],
) -> None:
    """Listen on :data:`CHANNEL` until cancelled: ``on_listening`` each time a connection listens
    (notices sent while none did are lost: the caller looks again), ``on_notice`` for each notice,
    ``on_lost`` with why a connection ended — once per outage: tried again after :data:`RECONNECT`
    seconds, then twice as long each time up to :data:`RECONNECT_MAX`."""
    import psycopg

    from memwarden.db.postgres import CONNECT_TIMEOUT, KEEPALIVES, scrub

    pause, said = RECONNECT, False
    while True:
        try:
            conn = await psycopg.AsyncConnection.connect(
                url, autocommit=True, connect_timeout=CONNECT_TIMEOUT, **KEEPALIVES
            )
            async with conn:
                await conn.execute(f"LISTEN {CHANNEL}")
                pause, said = RECONNECT, False
                on_listening()
                async for note in conn.notifies():
                    notice = parse(note.payload)
                    if notice is not None:
                        on_notice(notice)
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # the server gone or restarted, the connection cut: listened to again
            if not said:
                on_lost(scrub(f"{type(exc).__name__}: {exc}", url))
                said = True
        await asyncio.sleep(pause)
        pause = min(pause * 2, RECONNECT_MAX)
