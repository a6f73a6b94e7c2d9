"""Guarded config changes, the service side: the audit of a change, its verification against the
snapshot, the rollback when it lost memories (one :func:`verify_and_repair` for every path), and
the missions seeded into a bank the first time memwarden sees it."""

from __future__ import annotations

import time
from collections.abc import Callable, Coroutine, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from memwarden.backends.base import CONFIG_GUARD, BackendError, MemoryBackend
from memwarden.backends.types import BankConfig
from memwarden.db.audit import AuditEvent
from memwarden.db.banks import mark_seeded, seeded_at
from memwarden.db.database import Database
from memwarden.db.snapshots import Snapshot
from memwarden.governance.config_guard import (
    RollbackPlan,
    RollbackResult,
    apply_rollback,
    inventory,
    inventory_counts,
    plan_rollback,
    set_outcome,
    settle,
    shortfall,
    take_snapshot,
    templates_of,
)
from memwarden.governance.locks import BankGates, BankLocks
from memwarden.metrics import Metrics
from memwarden.policies.bank_config import (
    ConfigInputError,
    MissionsMode,
    plan_update,
)
from memwarden.settings import Settings

log = structlog.get_logger("memwarden.config")
SEED_RETRY_SECONDS = 300.0  # a bank whose seeding failed is tried again after this long


@dataclass(frozen=True)
class Repair:
    """What :func:`verify_and_repair` found and did. ``outcome``: ``kept`` (no watched count
    dropped), ``unverified`` (the backend failed while verifying: whether memories were lost is
    unknown), ``rolled_back`` (they were, and the rollback is complete) or ``rollback_incomplete``
    (it could not be planned, or stopped: ``error`` says why; the snapshot can resume it)."""

    outcome: str
    dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    plan: RollbackPlan | None = None
    result: RollbackResult | None = None
    error: str | None = None


class ChangeFailed(Exception):
    """The backend failed before the change was in: taking the snapshot (``stage`` ``snapshot``)
    or applying the change (``apply``). Nothing was changed; ``error`` is the backend's."""

    def __init__(self, stage: str, error: BackendError) -> None:
        super().__init__(f"{stage}: {error}")
        self.stage, self.error = stage, error


@dataclass(frozen=True)
class Changed:
    """A guarded change that reached the backend: its snapshot, what was sent (None: a reset) and
    which of the client's values memwarden's templates overrode, the backend's answer, and what
    :func:`verify_and_repair` found."""

    snapshot: Snapshot
    sent: dict[str, Any] | None
    overridden: list[str]
    answer: BankConfig
    repair: Repair


@dataclass(frozen=True)
class ConfigChanges:
    """Guarded config changes and mission seeding: the ledger, the backend, the settings, the banks'
    locks and write gates, the metrics, and how background work is started (``spawn``); which
    banks were seeded (or are being), and when a failed seeding may be tried again."""

    ledger: Database
    memory: MemoryBackend
    settings: Settings
    bank_locks: BankLocks
    gates: BankGates
    metrics: Metrics
    spawn: Callable[[Coroutine[Any, Any, None]], None]
    seeded: set[str] = field(default_factory=set)
    seed_retry_at: dict[str, float] = field(default_factory=dict)

    def governed(self, bank: str) -> bool:
        """Changes to ``bank`` (its config, its deletions) are snapshotted and verified."""
        return self.settings.governance.mode_for(bank) != "off"

    def config_governed(self, bank: str) -> bool:
        """Its config changes are: never on a backend that has no per-bank config (Mem0: its config
        routes answer what it lacks, and nothing is recorded)."""
        return CONFIG_GUARD in self.memory.capabilities and self.governed(bank)

    def missions_mode(self, bank: str) -> MissionsMode:
        """Missions change what a bank's config says, so a bank in ``shadow`` mode (observe, change
        nothing) gets none; the snapshot/verify/rollback safety net applies in every mode but ``off``."""
        if self.settings.governance.mode_for(bank) == "shadow":
            return "off"
        return self.settings.config_guard.missions.mode

    async def audit_patch(
        self,
        snap: Snapshot,
        sent: dict[str, Any] | None,
        overridden: list[str],
        request_id: str | None,
        *,
        failed: str | None = None,
    ) -> None:
        await self.ledger.audit(
            AuditEvent(
                action="config_patch",
                bank=snap.bank,
                source="config",
                reason=(f"backend refused: {failed}" if failed else None)
                or ("config reset to server defaults" if sent is None else None),
                before={"overrides": snap.overrides},
                after={"updates": sent, "overridden": overridden, "snapshot_id": snap.id, "applied": not failed},
                request_id=request_id,
            )
        )

    async def verify(self, snap: Snapshot, request_id: str | None) -> dict[str, dict[str, int]]:
        """Settle, take the inventory again, and check that every memory and document of the snapshot
        is still there (by id, or re-created: the same text in the same document); audit the verdict;
        what is missing (empty: nothing). Counts are reported, not compared: a write around memwarden
        could hide a loss behind an equal count. Governed writes wait while this runs
        (:class:`~memwarden.governance.locks.BankGates`), so none is mistaken for a loss."""
        cfg = self.settings.config_guard
        _, is_settled, waited = await settle(self.memory, snap.bank, cfg)
        now = await inventory(self.memory, snap.bank, cfg.inventory_page)
        counts = inventory_counts(now)
        dropped = shortfall(snap.inventory, now, cfg.watched, cfg.tolerance)
        summary = (
            "missing since the snapshot: " + ", ".join(f"{k} {v['before']} → {v['after']}" for k, v in dropped.items())
            if dropped
            else "every memory and document of the snapshot is there"
        )
        await self.ledger.audit(
            AuditEvent(
                action="config_verify",
                bank=snap.bank,
                source="config",
                rule="config.drop" if dropped else "config.ok",
                reason=summary + ("" if is_settled else f" (bank not settled after {waited:.1f} s)"),
                before={"counts": snap.counts, "snapshot_id": snap.id},
                after={"counts": counts, "dropped": dropped, "settled": is_settled},
                request_id=request_id,
            )
        )
        return dropped

    async def verify_and_repair(
        self, snap: Snapshot, request_id: str | None, *, change: dict[str, Any] | None = None
    ) -> Repair:
        """After a guarded change: settle, verify against the snapshot, and roll back when a watched
        count dropped. Records the outcome on the snapshot (and in the metrics); the one path for a
        client PATCH, a bank profile change and the mission seeder. Call with the bank's lock held."""
        repair = await self._verify_and_repair(snap, request_id, change=change)
        self.metrics.guarded_changes.labels(repair.outcome).inc()
        return repair

    async def _verify_and_repair(
        self, snap: Snapshot, request_id: str | None, *, change: dict[str, Any] | None
    ) -> Repair:
        cfg = self.settings.config_guard
        try:
            dropped = await self.verify(snap, request_id)
        except BackendError as exc:
            await set_outcome(self.ledger, snap, "unverified", {"reason": str(exc)}, change=change)
            return Repair("unverified", error=str(exc))
        if not dropped:
            await set_outcome(self.ledger, snap, "kept", {"counts": snap.counts}, change=change)
            return Repair("kept")
        await set_outcome(self.ledger, snap, "dropped", {"dropped": dropped}, change=change)
        try:
            plan = await plan_rollback(memory=self.memory, ledger=self.ledger, cfg=cfg, snapshot=snap)
        except BackendError as exc:
            await set_outcome(self.ledger, snap, "rollback_incomplete", {"dropped": dropped, "error": str(exc)})
            return Repair("rollback_incomplete", dropped, error=str(exc))
        result = await apply_rollback(
            memory=self.memory, ledger=self.ledger, cfg=cfg, snapshot=snap, plan=plan, request_id=request_id
        )
        outcome = "rolled_back" if result.complete else "rollback_incomplete"
        return Repair(outcome, dropped, plan, result, result.error)

    async def change_config(
        self,
        bank: str,
        *,
        reason: str,
        updates: dict[str, Any] | None,
        request_id: str,
        replace: Sequence[str] = (),
    ) -> Changed:
        """A client's config change, guarded: snapshot, apply (``updates`` None: reset the config to
        the server's defaults), settle, verify, roll back — under the bank's lock. Raises
        :class:`~memwarden.policies.bank_config.ConfigInputError` when the change cannot be planned
        against the bank's overrides (the snapshot records the refusal) and :class:`ChangeFailed` when
        the backend failed before the change was in."""
        cfg = self.settings.config_guard
        # The bank's governed writes wait from the snapshot to the verification (BankGates).
        async with self.bank_locks(bank), self.gates.changing(bank):
            try:
                snap = await take_snapshot(
                    memory=self.memory, ledger=self.ledger, cfg=cfg, bank=bank, reason=reason, request_id=request_id
                )
            except BackendError as exc:
                raise ChangeFailed("snapshot", exc) from exc
            sent: dict[str, Any] | None = None
            overridden: list[str] = []
            if updates is not None:
                try:
                    sent, overridden = plan_update(
                        updates,
                        snap.overrides,
                        mode=self.missions_mode(bank),
                        templates=templates_of(cfg),
                        replace=list(replace),
                    )
                except ConfigInputError as exc:
                    await set_outcome(self.ledger, snap, "refused", {"reason": str(exc)})
                    raise
            try:
                answer = (
                    await self.memory.patch_config(bank, sent)
                    if sent is not None
                    else await self.memory.reset_config(bank)
                )
            except BackendError as exc:
                await self.audit_patch(snap, sent, overridden, request_id, failed=str(exc))
                await set_outcome(self.ledger, snap, "failed", {"reason": str(exc)}, change=sent)
                raise ChangeFailed("apply", exc) from exc
            await self.audit_patch(snap, sent, overridden, request_id)
            repair = await self.verify_and_repair(snap, request_id, change=sent)
        return Changed(snap, sent, overridden, answer, repair)

    def seed_in_background(self, bank: str) -> None:
        """The first time memwarden sees a bank (missions ``seed`` or ``enforce``), put the mission
        templates in its config — in the background, through the same guarded change, so the request
        that revealed the bank is not held up. Once done it is recorded in the ledger; a failure is
        logged and retried on the next sight."""
        if self.missions_mode(bank) == "off" or bank in self.seeded or CONFIG_GUARD not in self.memory.capabilities:
            return
        if time.monotonic() < self.seed_retry_at.get(bank, 0.0):
            return  # the last attempt failed recently: not on every request
        self.seeded.add(bank)
        self.spawn(self._seed(bank))

    async def _seed(self, bank: str) -> None:
        cfg = self.settings.config_guard
        if await self.ledger.read(lambda db: seeded_at(db, bank)):
            return
        try:
            # The same gate as a client's change: it waits until the bank is quiet (the writes in
            # flight settled), and writes that arrive meanwhile wait for its verification.
            async with self.bank_locks(bank), self.gates.changing(bank):
                snap = await take_snapshot(
                    memory=self.memory, ledger=self.ledger, cfg=cfg, bank=bank, reason="seed", request_id=None
                )
                sent, _ = plan_update({}, snap.overrides, mode=self.missions_mode(bank), templates=templates_of(cfg))
                if sent:
                    await self.memory.patch_config(bank, sent)
                    await self.audit_patch(snap, sent, [], None)
                    repair = await self.verify_and_repair(snap, None, change=sent)
                    if repair.outcome == "unverified" or (
                        repair.outcome == "rollback_incomplete" and not repair.result
                    ):
                        raise BackendError(repair.error or "verification failed")  # tried again later
                    if repair.outcome != "kept":
                        return
                else:
                    await set_outcome(self.ledger, snap, "kept", {"counts": snap.counts}, change=None)
        except BackendError as exc:
            self.seeded.discard(bank)
            self.seed_retry_at[bank] = time.monotonic() + SEED_RETRY_SECONDS
            log.warning("seed_failed", bank=bank, error=str(exc), retry_in_s=SEED_RETRY_SECONDS)
            return
        await self.ledger.write(lambda db: mark_seeded(db, bank))
        log.info("bank_seeded", bank=bank, keys=sorted(sent))
