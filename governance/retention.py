"""Retention: archive what a bank's retention periods say is due, on demand or on a schedule."""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from functools import partial
from typing import Any

import structlog

from memwarden.db import mem0
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.retention import deletion_rows, deletions_past, due_for_retention, still_open
from memwarden.db.snapshots import set_outcome_row
from memwarden.governance.archive import Archiver
from memwarden.governance.erase import Eraser
from memwarden.governance.errors import Refused
from memwarden.governance.locks import BankLocks
from memwarden.settings import RetentionSettings

FIRST_RUN_DELAY = 60.0


log = structlog.get_logger("memwarden.retention")


@dataclass(frozen=True)
class Retention:
    """Retention: the ledger, the banks' locks, the retention periods, how long a deletion stays
    restorable, and the archive and erase services it acts through."""

    ledger: Database
    bank_locks: BankLocks
    settings: RetentionSettings
    restore_days: float
    archiver: Archiver
    eraser: Eraser

    async def run(self, *, dry_run: bool, bank: str | None = None, request_id: str = "retention") -> dict[str, Any]:
        """One retention pass: what is due, and (unless ``dry_run``) what was archived or skipped."""
        settings = self.settings
        now = datetime.now(UTC)
        candidates = await self.ledger.read(lambda db: due_for_retention(db, settings.period_for, bank=bank, at=now))
        archived: list[str] = []
        skipped: list[dict[str, Any]] = []
        if not dry_run:
            for memory in candidates:
                stage, period, age = memory["stage"], memory["period_days"], memory["age_days"]
                reason = f"retention: {stage} memory older than {period} days ({age})"
                try:
                    await self.archiver.archive(
                        memory["bank"],
                        memory["id"],
                        reason=reason,
                        request_id=request_id,
                        action="expire",
                        source="retention",
                    )
                except Refused as exc:
                    skipped.append(
                        {"id": memory["id"], "bank": memory["bank"], "status": exc.status, "reason": exc.detail}
                    )
                else:
                    archived.append(memory["id"])
            if candidates:
                log.info("retention", due=len(candidates), archived=len(archived), skipped=len(skipped))
        expired = await self.expire_deletions(dry_run=dry_run, bank=bank, request_id=request_id, at=now)
        return {"dry_run": dry_run, "due": candidates, "archived": archived, "skipped": skipped, "expired": expired}

    async def expire_deletions(
        self, *, dry_run: bool, bank: str | None, request_id: str, at: datetime
    ) -> list[dict[str, Any]]:
        """What a DELETE removed stays restorable for ``config_guard.restore_days``; past that, the
        memories its snapshot would re-create are erased from the ledger (text gone, a hash in the
        audit) and the snapshot is marked ``expired``: the undo window is closed. 0 days: never. Each
        deletion under its bank's lock, its memories read again inside the erasing transaction: one a
        restore brought back meanwhile is not erased."""
        days = self.restore_days
        if days <= 0:
            return []
        cutoff = (at - timedelta(days=days)).isoformat(timespec="microseconds")
        due = await self.ledger.read(lambda db: deletions_past(db, cutoff, bank=bank))
        reason = f"restore window of {days:g} days past: what the deletion removed is erased"
        expired: list[dict[str, Any]] = []
        for snapshot_id, snap_bank in due:
            if dry_run:
                ids = await self.ledger.read(partial(deletion_rows, bank=snap_bank, snapshot_id=snapshot_id))
                expired.append({"snapshot_id": snapshot_id, "bank": snap_bank, "memories": len(ids)})
                continue

            def write(db: Connection, snapshot_id: str = snapshot_id, snap_bank: str = snap_bank) -> int | None:
                if not still_open(db, snapshot_id):  # restored meanwhile: its window is not this one's to close
                    return None
                ids = deletion_rows(db, snap_bank, snapshot_id)
                mem0.erase(db, snap_bank, ids, source="retention", reason=reason, request_id=request_id)
                set_outcome_row(db, snapshot_id, "expired", {"erased": len(ids), "restore_days": days})
                return len(ids)

            async with self.bank_locks(snap_bank):
                erased = await self.ledger.write(write)
            if erased is not None:
                expired.append({"snapshot_id": snapshot_id, "bank": snap_bank, "memories": erased})
        if expired and not dry_run:
            await self.eraser.purge_files()
            log.info("deletions_expired", snapshots=len(expired), memories=sum(e["memories"] for e in expired))
        return expired

    async def scheduled(self) -> None:
        """The retention job, forever (cancelled at shutdown). Instances sharing one database run it
        on one of them: the one that writes the audit checkpoints."""
        await asyncio.sleep(min(FIRST_RUN_DELAY, self.settings.interval))
        while True:
            try:
                if self.ledger.leads():
                    await self.run(dry_run=False)
            except Exception:  # the next run tries again; the server keeps serving
                log.exception("retention_failed")
            await asyncio.sleep(self.settings.interval)
