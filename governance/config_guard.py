"""Safe bank config changes: snapshot → apply → settle → verify → roll back.

A config change (``PATCH``/``DELETE …/config``) on a bank runs, serialized per bank:

1. **settle** — wait (bounded) until the bank has no pending operations or consolidation, reading
   stats with ``refresh=true`` (Hindsight caches stats for 60 s otherwise);
2. **snapshot** — full config and overrides, stats, watched counts and the inventory of memories
   and documents (ids, fact types, document ids, tags, content hashes), in the ledger;
3. **apply** — the body adapted to what the backend accepts (wrapped), ``entity_labels`` in list
   form with ``tag: true`` on topic and stage, containers merged read-modify-write, missions;
4. **settle** and **verify** — the watched counts again; a drop beyond the tolerance triggers
5. **rollback** — the previous overrides restored exactly, every memory that disappeared
   re-created from the ledger (its document re-retained with the same content, tags, timestamp
   and document id), verified again, and the client answered ``409`` with what happened.

A rollback is computed from the snapshot and the bank's current state, so running it again
(``memwarden config rollback``) resumes one that a failing backend interrupted. Every step is
audited: ``config_snapshot``, ``config_patch``, ``config_verify``, ``config_rollback``, ``restore``.
"""

from __future__ import annotations

import asyncio
import hashlib
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from typing import Any, TypeVar

import structlog

from memwarden.backends.base import BackendError, BackendRejected, MemoryBackend
from memwarden.backends.types import BankConfig, BankStats, Item, MemoryQuery, Page
from memwarden.db.audit import AuditEvent, append_events, current_actor
from memwarden.db.common import Connection, now
from memwarden.db.database import Database
from memwarden.db.memories import Change, transition
from memwarden.db.memory_reads import restorable_rows
from memwarden.db.snapshots import Snapshot, insert_snapshot, set_outcome_row
from memwarden.policies.bank_config import (
    WATCHABLE,
    Templates,
    restore_updates,
)
from memwarden.settings import ConfigGuardSettings

log = structlog.get_logger("memwarden.config")
RESTORE_BATCH = 50
T = TypeVar("T")


def templates_of(settings: ConfigGuardSettings) -> Templates:
    m = settings.missions
    return Templates(m.topics, m.stages, m.retain_mission, m.observations_mission)


# -- reading the bank -----------------------------------------------------------------------------


def _text_hash(text: Any) -> str | None:
    return hashlib.sha256(text.encode()).hexdigest() if isinstance(text, str) else None


NO_CONFIG = (404, 501)  # a bank not there yet, a backend with no per-bank config (Mem0): nothing to keep


async def _stats(memory: MemoryBackend, bank: str) -> BankStats:
    try:
        return await memory.stats(bank, refresh=True)
    except BackendRejected as exc:
        if exc.status == 404:  # a bank that does not exist yet holds nothing
            return BankStats(counts={}, raw={"bank_id": bank, "nodes_by_fact_type": {}, "total_documents": 0})
        raise


async def settle(memory: MemoryBackend, bank: str, cfg: ConfigGuardSettings) -> tuple[BankStats, bool, float]:
    """Fresh stats once the bank has settled (or when ``settle_timeout`` ran out): stats, whether
    it settled, seconds waited."""
    started = time.monotonic()
    while True:
        stats = await _stats(memory, bank)
        waited = time.monotonic() - started
        if stats.pending == 0:
            return stats, True, waited
        if waited + cfg.settle_interval > cfg.settle_timeout:
            return stats, False, waited
        await asyncio.sleep(cfg.settle_interval)


async def _pages(read: Callable[[int, int], Awaitable[Page[T]]], page: int) -> list[T]:
    """Every item of a listing, ``page`` at a time (none when the bank does not exist)."""
    out: list[T] = []
    offset = 0
    while True:
        try:
            got = await read(page, offset)
        except BackendRejected as exc:
            if exc.status == 404:
                return out
            raise
        out.extend(got.items)
        offset += len(got.items)
        if not got.items or len(got.items) < page or (got.total is not None and offset >= got.total):
            return out


async def inventory(memory: MemoryBackend, bank: str, page: int) -> dict[str, list[dict[str, Any]]]:
    """Every memory and document of the bank: ids, kinds, document ids, tags, content hashes."""
    units = await _pages(
        lambda limit, offset: memory.list_memories(bank, MemoryQuery(limit=limit, offset=offset)), page
    )
    docs = await _pages(lambda limit, offset: memory.list_documents(bank, limit=limit, offset=offset), page)
    return {
        "memories": [
            {
                "id": u.id,
                "fact_type": u.kind,
                "document_id": u.document_id,
                "tags": list(u.tags),
                "content_hash": _text_hash(u.text),
            }
            for u in units
        ],
        "documents": [{"id": d.id, "tags": list(d.tags), "content_hash": d.content_hash} for d in docs],
    }


Inventory = Mapping[str, Sequence[Mapping[str, Any]]]
FACTS_AND_DOCUMENTS = ("world", "experience", "documents")  # what a rollback re-creates


def inventory_counts(inv: Inventory) -> dict[str, int]:
    """The counts a snapshot keeps and reports, from its inventory (one read: they agree)."""
    counts = dict.fromkeys(WATCHABLE, 0)
    for u in inv["memories"]:
        kind = str(u.get("fact_type") or "world")
        if kind in counts:
            counts[kind] += 1
    counts["documents"] = len(inv["documents"])
    return counts


def lost(
    before: Mapping[str, Sequence[Mapping[str, Any]]],
    now: Mapping[str, Sequence[Mapping[str, Any]]],
    watched: Sequence[str],
) -> tuple[list[Mapping[str, Any]], list[str]]:
    """The memories (of the watched kinds) and documents of ``before`` that ``now`` lacks. A
    memory re-created with a new id counts as present when its document holds the same text."""
    present_units = {u["id"] for u in now["memories"]}
    present_content = {(u.get("document_id"), u.get("content_hash")) for u in now["memories"]}
    present_docs = {d["id"] for d in now["documents"]}
    units = [
        u
        for u in before["memories"]
        if str(u.get("fact_type") or "world") in watched
        and u["id"] not in present_units
        and (u.get("document_id"), u.get("content_hash")) not in present_content
    ]
    docs = [d["id"] for d in before["documents"] if "documents" in watched and d["id"] not in present_docs]
    return units, docs


def shortfall(before: Inventory, now: Inventory, watched: Sequence[str], tolerance: int) -> dict[str, dict[str, int]]:
    """What of the snapshot is gone, beyond ``tolerance`` items: ``memories`` and ``documents``,
    each with how many the snapshot held (``before``), how many of those remain (``after``) and
    the difference (``delta``). Empty: nothing of the snapshot was lost."""
    units, docs = lost(before, now, watched)
    if len(units) + len(docs) <= tolerance:
        return {}
    held = sum(1 for u in before["memories"] if str(u.get("fact_type") or "world") in watched)
    out = {}
    if units:
        out["memories"] = {"before": held, "after": held - len(units), "delta": -len(units)}
    if docs:
        total = len(before["documents"])
        out["documents"] = {"before": total, "after": total - len(docs), "delta": -len(docs)}
    return out


# -- snapshots ------------------------------------------------------------------------------------


async def take_snapshot(
    *,
    memory: MemoryBackend,
    ledger: Database,
    cfg: ConfigGuardSettings,
    bank: str,
    reason: str,
    request_id: str | None,
    actor: str | None = None,
) -> Snapshot:
    """Settle, read everything, store it. Raises :class:`BackendError` if the bank cannot be read.
    ``actor``: the request's (:func:`current_actor`) unless given."""
    actor = actor or current_actor()
    stats, is_settled, waited = await settle(memory, bank, cfg)
    try:
        config = await memory.get_config(bank)
    except BackendRejected as exc:
        if exc.status not in NO_CONFIG:
            raise
        config = BankConfig(values={}, overrides={})
    taken = await inventory(memory, bank, cfg.inventory_page)
    snap = Snapshot(
        id=uuid.uuid4().hex[:16],
        bank=bank,
        created_at=now(),
        reason=reason,
        settled=is_settled,
        config=dict(config.values),
        overrides=dict(config.overrides),
        stats=dict(stats.raw),
        counts=inventory_counts(taken),
        inventory=taken,
        request_id=request_id,
    )

    def store(db: Connection) -> None:
        insert_snapshot(db, snap)
        append_events(
            db,
            [
                AuditEvent(
                    action="config_snapshot",
                    bank=bank,
                    actor=actor,
                    source="config",
                    reason=reason if is_settled else f"{reason}; bank not settled after {waited:.1f} s",
                    after={
                        "snapshot_id": snap.id,
                        "settled": is_settled,
                        "counts": snap.counts,
                        "memories": len(snap.inventory["memories"]),
                        "documents": len(snap.inventory["documents"]),
                        "override_keys": sorted(snap.overrides),
                    },
                    request_id=request_id,
                )
            ],
        )

    await ledger.write(store)
    return snap


async def set_outcome(
    ledger: Database, snapshot: Snapshot, outcome: str, detail: Any = None, change: Any = None
) -> None:
    snapshot.outcome, snapshot.outcome_detail = outcome, detail
    if change is not None:
        snapshot.change = change

    await ledger.write(lambda db: set_outcome_row(db, snapshot.id, outcome, detail, change))


# -- rollback -------------------------------------------------------------------------------------


@dataclass
class RollbackPlan:
    """What a rollback to a snapshot would do, given the bank as it is now."""

    snapshot_id: str
    restore_overrides: dict[str, Any]
    missing_memories: list[str]
    missing_documents: list[str]
    restorable: dict[str, list[dict[str, Any]]]  # document id → ledger rows (id, item)
    unrestorable: list[str]  # document ids (or memory ids without one) the ledger has no copy of
    current_counts: dict[str, int]
    # Documents to restore that the bank still lists without a fact (a DELETE of one kind of memory
    # leaves them): Hindsight would take the same text again for them as nothing new.
    bare_documents: list[str] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return {
            "snapshot_id": self.snapshot_id,
            "restore_overrides": self.restore_overrides,
            "missing_memories": len(self.missing_memories),
            "missing_documents": len(self.missing_documents),
            "documents_to_restore": sorted(self.restorable),
            "memories_to_restore": sum(len(v) for v in self.restorable.values()),
            "unrestorable": self.unrestorable,
            "current_counts": self.current_counts,
        }


@dataclass
class RollbackResult:
    plan: RollbackPlan
    overrides_restored: bool = False
    documents_restored: list[str] = field(default_factory=list)
    memories_restored: int = 0
    verified_counts: dict[str, int] = field(default_factory=dict)
    still_dropped: dict[str, dict[str, int]] = field(default_factory=dict)
    error: str | None = None

    @property
    def complete(self) -> bool:
        return self.error is None

    def as_dict(self) -> dict[str, Any]:
        return {
            "overrides_restored": sorted(self.plan.restore_overrides) if self.overrides_restored else [],
            "documents_restored": len(self.documents_restored),
            "memories_restored": self.memories_restored,
            "unrestorable": self.plan.unrestorable,
            "verified_counts": self.verified_counts,
            "still_dropped": self.still_dropped,
            "complete": self.complete,
            "error": self.error,
        }


async def plan_rollback(
    *, memory: MemoryBackend, ledger: Database, cfg: ConfigGuardSettings, snapshot: Snapshot
) -> RollbackPlan:
    bank = snapshot.bank
    try:
        current = await memory.get_config(bank)
    except BackendRejected as exc:
        if exc.status not in NO_CONFIG:
            raise
        current = BankConfig(values={}, overrides={})
    now_inventory = await inventory(memory, bank, cfg.inventory_page)
    # Observations are consolidation's to reshape; facts and documents are what must come back.
    lost_units, lost_docs = lost(snapshot.inventory, now_inventory, FACTS_AND_DOCUMENTS)
    wanted = sorted({*lost_docs, *(u["document_id"] for u in lost_units if u.get("document_id"))})
    rows = await ledger.read(lambda db: restorable_rows(db, bank, wanted))
    listed = {d["id"] for d in now_inventory["documents"]}
    with_facts = {u["document_id"] for u in now_inventory["memories"] if u["fact_type"] in ("world", "experience")}
    unrestorable = [d for d in wanted if d not in rows]
    unrestorable += [f"memory:{u['id']}" for u in lost_units if not u.get("document_id")]
    return RollbackPlan(
        snapshot_id=snapshot.id,
        restore_overrides=restore_updates(snapshot.overrides, current.overrides),
        missing_memories=[u["id"] for u in lost_units],
        missing_documents=lost_docs,
        restorable=rows,
        unrestorable=unrestorable,
        current_counts=inventory_counts(now_inventory),
        bare_documents=sorted(d for d in rows if d in listed and d not in with_facts),
    )


async def apply_rollback(
    *,
    memory: MemoryBackend,
    ledger: Database,
    cfg: ConfigGuardSettings,
    snapshot: Snapshot,
    plan: RollbackPlan,
    request_id: str | None,
    actor: str | None = None,
    source: str = "config",
) -> RollbackResult:
    """Carry out ``plan``; stops at the first backend failure and says so in the result (the
    snapshot's outcome becomes ``rollback_incomplete``; planning again resumes)."""
    actor = actor or current_actor()
    bank = snapshot.bank
    result = RollbackResult(plan)
    try:
        if plan.restore_overrides:
            await memory.patch_config(bank, plan.restore_overrides)
            # The restoring PATCH may itself cost memories on a backend that loses them on config
            # writes: what to re-create is decided after it, from the bank as it is then.
            plan = await plan_rollback(memory=memory, ledger=ledger, cfg=cfg, snapshot=snapshot)
            plan.restore_overrides = result.plan.restore_overrides
            result.plan = plan
        result.overrides_restored = True
        documents = sorted(plan.restorable)
        for i in range(0, len(documents), RESTORE_BATCH):
            batch = documents[i : i + RESTORE_BATCH]
            rows = [r for d in batch for r in plan.restorable[d]]
            # A document still listed without its facts (a DELETE of one kind of memory leaves it):
            # Hindsight takes the same text again for the same document as nothing new. Gone first.
            for document_id in sorted(set(batch) & set(plan.bare_documents)):
                await memory.delete_document(bank, document_id)
            await memory.retain(bank, [Item.from_json(r["item"]) for r in rows])
            result.documents_restored.extend(batch)
            result.memories_restored += len(rows)
            await ledger.write(
                partial(
                    _record_restored, bank=bank, rows=rows, snapshot_id=snapshot.id, request_id=request_id, actor=actor
                )
            )
        await settle(memory, bank, cfg)
        now_inventory = await inventory(memory, bank, cfg.inventory_page)
        result.verified_counts = inventory_counts(now_inventory)
        result.still_dropped = shortfall(snapshot.inventory, now_inventory, cfg.watched, cfg.tolerance)
    except BackendError as exc:
        result.error = f"{type(exc).__name__}: {exc}"
    outcome = "rolled_back" if result.complete else "rollback_incomplete"
    detail = result.as_dict()

    await ledger.audit(
        AuditEvent(
            action="config_rollback",
            bank=bank,
            actor=actor,
            source=source,
            reason=(
                f"restored to snapshot {snapshot.id}"
                if result.complete
                else f"rollback to snapshot {snapshot.id} incomplete: {result.error}"
            ),
            before={"counts": plan.current_counts},
            after={"snapshot_id": snapshot.id, **detail},
            request_id=request_id,
        )
    )
    await set_outcome(ledger, snapshot, outcome, {**(snapshot.outcome_detail or {}), "rollback": detail})
    return result


def _record_restored(
    db: Connection,
    bank: str,
    rows: Sequence[Mapping[str, Any]],
    snapshot_id: str,
    request_id: str | None,
    actor: str,
) -> None:
    events = []
    why = f"re-created from the ledger (snapshot {snapshot_id})"
    for row in rows:
        if row["status"] == "archived":
            change = Change("archived", "active", "restore", "config", request_id or "", actor, reason=why)
            moved = transition(db, bank, row["id"], change)
            if moved is not None:
                events.append(moved)
                continue
        events.append(
            AuditEvent(
                action="restore",
                bank=bank,
                memory_id=row["id"],
                actor=actor,
                source="config",
                reason=f"re-created from the ledger (snapshot {snapshot_id})",
                after={"document_id": row["item"].get("document_id")},
                request_id=request_id,
            )
        )
    append_events(db, events)
