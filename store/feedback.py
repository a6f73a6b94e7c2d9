"""Feedback on memories: net votes per memory (the ``feedback`` column), which nudge its rank in
recall (:func:`store.fusion.nudge`)."""

from __future__ import annotations

import sqlite3

from memwarden.db.database import Database


class Feedback:
    def __init__(self, ledger: Database) -> None:
        self.ledger = ledger
        self._votes: dict[str, dict[str, int]] = {}  # bank -> unit id -> net votes (non-zero only)

    async def votes(self, bank: str) -> dict[str, int]:
        """The bank's net votes by memory id (non-zero only); the cache itself, kept current."""
        votes = self._votes.get(bank)
        if votes is None:
            rows = await self.ledger.read(
                lambda db: db.execute(
                    "SELECT id, feedback FROM store_units WHERE bank_id = ? AND feedback != 0", (bank,)
                ).fetchall()
            )
            votes = self._votes[bank] = {r[0]: r[1] for r in rows}
        return votes

    async def add(self, bank: str, document_id: str, score: int) -> list[str]:
        """Add ``score`` to the net votes of a document's facts (they rank a little higher or
        lower in recall); the facts' ids."""

        def write(db: sqlite3.Connection) -> list[tuple[str, int]]:
            db.execute(
                "UPDATE store_units SET feedback = feedback + ? WHERE bank_id = ? AND document_id = ?",
                (score, bank, document_id),
            )
            return [
                (r[0], r[1])
                for r in db.execute(
                    "SELECT id, feedback FROM store_units WHERE bank_id = ? AND document_id = ?", (bank, document_id)
                )
            ]

        units = await self.ledger.write(write)
        votes = await self.votes(bank)
        for unit_id, net in units:
            if net:
                votes[unit_id] = net
            else:
                votes.pop(unit_id, None)
        return [u for u, _ in units]

    def forget(self, bank: str) -> None:
        """Drop the bank's cached votes (the bank is gone)."""
        self._votes.pop(bank, None)
