"""The ``banks_seen`` table: the banks memwarden has met, and when their mission templates were
seeded (so that seeding happens once per bank)."""

from __future__ import annotations

import sqlite3

from memwarden.db.common import now


def seeded_at(db: sqlite3.Connection, bank: str) -> str | None:
    """When ``bank``'s missions were seeded (None: not yet)."""
    row = db.execute("SELECT seeded_at FROM banks_seen WHERE bank = ?", (bank,)).fetchone()
    return row["seeded_at"] if row is not None else None


def mark_seeded(db: sqlite3.Connection, bank: str) -> None:
    ts = now()
    db.execute(
        "INSERT INTO banks_seen (bank, first_seen, seeded_at) VALUES (?, ?, ?)"
        " ON CONFLICT (bank) DO UPDATE SET seeded_at = excluded.seeded_at",
        (bank, ts, ts),
    )
