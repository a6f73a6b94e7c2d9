"""Cleanup and health reports over a bank: what the ledger and the backend hold."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memwarden.backends.base import BackendError, MemoryBackend, self_hosted
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.records import MemoryBrief
from memwarden.db.reports import active_oldest_first, active_per_document, health_counts
from memwarden.db.retention import due_for_retention
from memwarden.governance.outbox import Outbox
from memwarden.policies.pipeline import SURE_RULES, Pipeline
from memwarden.settings import RetentionSettings

DOCUMENT_PAGE = 1000


MAX_DOCUMENTS = 100_000


@dataclass(frozen=True)
class Reports:
    """Cleanup and health reports: the ledger, the backend, the policies (today's rules), the
    retention periods, and the outbox when there is one."""

    ledger: Database
    memory: MemoryBackend
    pipeline: Pipeline
    retention: RetentionSettings
    outbox: Outbox | None

    async def cleanup_candidates(self, bank: str) -> dict[str, Any]:
        """The cleanup report's data (a pure read)."""
        at = datetime.now(UTC)

        def read(db: Connection) -> tuple[list[MemoryBrief], list[dict[str, Any]], dict[str | None, int]]:
            rows = active_oldest_first(db, bank)
            expired = due_for_retention(db, self.retention.period_for, bank=bank, at=at)
            return rows, expired, active_per_document(db, bank)

        rows, expired, per_document = await self.ledger.read(read)
        found: dict[str, dict[str, Any]] = {}

        def add(row: MemoryBrief, kind: str, why: str) -> None:
            entry = found.get(row.id)
            if entry is None:
                shared = per_document.get(row.document_id, 0) > 1
                entry = found[row.id] = {
                    "id": row.id,
                    "content": row.content,
                    "topic": row.topic,
                    "stage": row.stage,
                    "document_id": row.document_id,
                    "kinds": [],
                    "reasons": [],
                    "plannable": not shared,
                    "note": f"shares document {row.document_id} with other active memories" if shared else None,
                }
            entry["kinds"].append(kind)
            entry["reasons"].append(why)

        by_id = {r.id: r for r in rows}
        # Today's rules alone (an embedding per memory of the bank would cost minutes); with the learned
        # layer on, only the rules it never overrides, so a fact it kept is not proposed for archiving.
        rules = self.pipeline.rules_only
        learned = self.pipeline.learned is not None
        for row in rows:  # noise by today's rules
            j = rules.judge(0, row.content, list(row.tags))
            if j.verdict == "reject" and (not learned or j.rule in SURE_RULES):
                add(row, "noise", f"today's rules reject it: {j.rule} ({j.reason})")
        for m in expired:
            add(
                by_id[m["id"]], "expired", f"{m['stage']} memory {m['age_days']} days old, past {m['period_days']} days"
            )
        first_of: dict[str, str] = {}
        newest_context: dict[str, MemoryBrief] = {}
        for row in rows:  # oldest first
            if row.content_hash in first_of:
                add(row, "duplicate", f"duplicate of {first_of[row.content_hash]}")
            else:
                first_of[row.content_hash] = row.id
            key = row.topic_key or ""
            if key.startswith("active_context"):
                older = newest_context.get(key)
                if older is not None:
                    add(older, "stale_active_context", f"replaced by the newer {key} {row.id}")
                newest_context[key] = row
        candidates = sorted(found.values(), key=lambda c: (c["kinds"][0], c["id"]))
        kinds: dict[str, int] = {}
        for c in candidates:
            for k in c["kinds"]:
                kinds[k] = kinds.get(k, 0) + 1
        return {"bank_id": bank, "active": len(rows), "candidates": candidates, "by_kind": kinds}

    async def _backend_documents(self, bank: str) -> tuple[set[str], bool] | None:
        """Every document id the backend holds for ``bank``, and whether that is all of them (a
        backend that lists only part of a bank — Mem0: 1,000 memories a call — says no total).
        None: they could not be listed."""
        ids: set[str] = set()
        offset = 0
        whole = True
        try:
            while offset < MAX_DOCUMENTS:
                page = await self.memory.list_documents(bank, limit=DOCUMENT_PAGE, offset=offset)
                whole = whole and page.total is not None
                if not page.items:
                    break
                ids.update(d.id for d in page.items)
                offset += len(page.items)
                if len(page.items) < DOCUMENT_PAGE:
                    break
        except BackendError:
            return None
        return ids, whole

    async def health(self, bank: str, days: int) -> dict[str, Any]:
        since = (datetime.now(UTC) - timedelta(days=days)).isoformat()

        data = await self.ledger.read(lambda db: health_counts(db, bank, since))
        # The self-hosted store's rows vs vectors vs full-text entries (a read of its own tables).
        own = self_hosted(self.memory)
        store = await own.index_counts(bank) if own is not None else None
        cleanup = await self.cleanup_candidates(bank)
        reasons_critical: list[str] = []
        reasons_attention: list[str] = []
        missing: list[str] = []
        listed = await self._backend_documents(bank)
        if listed is None:
            reasons_critical.append("the backend's documents could not be listed")
        elif not listed[1]:
            reasons_attention.append(
                f"the backend lists only part of the bank ({len(listed[0])} documents): missing documents not checked"
            )
        else:
            backend_docs = listed[0]
            missing = [d for d in data["documents"] if d not in backend_docs]
            if missing:
                reasons_critical.append(f"{len(missing)} documents of active memories are missing from the backend")
            unknown = len(backend_docs - data["known_documents"])
            if unknown:
                reasons_attention.append(f"{unknown} backend documents memwarden never saw (written around it)")
        if store is not None:
            if store["vectors"] != store["rows"]:
                reasons_critical.append(
                    f"self-hosted store: {store['rows']} rows but {store['vectors']} vectors from {store['embedder']}"
                )
            if store["all_banks_fulltext_entries"] != store["all_banks_rows"]:
                rows, entries = store["all_banks_rows"], store["all_banks_fulltext_entries"]
                reasons_critical.append(f"self-hosted store: {rows} rows but {entries} full-text entries")
        review = data["statuses"].get("review", 0)
        if review:
            reasons_attention.append(f"{review} items wait in the review queue")
        if cleanup["candidates"]:
            reasons_attention.append(f"{len(cleanup['candidates'])} cleanup candidates")
        if data["conflicts"]:
            reasons_attention.append(
                f"{len(data['conflicts'])} single-valued topic keys held by more than one active memory"
            )
        failed = data["statuses"].get("failed", 0)
        if failed:
            reasons_attention.append(f"{failed} memories failed to reach the backend")
        outbox = await self.outbox.summary(bank) if self.outbox is not None else None
        if outbox is not None:
            if outbox.dead_letters:
                reasons_attention.append(f"{outbox.dead_letters} deliveries refused by the backend (dead letters)")
            if outbox.queued_items:
                reasons_attention.append(
                    f"{outbox.queued_items} memories wait in the delivery outbox"
                    f" (oldest {outbox.oldest_age_s or 0:.0f} s)"
                )
        status = "critical" if reasons_critical else "attention" if reasons_attention else "ok"
        return {
            "bank_id": bank,
            "status": status,
            "reasons": reasons_critical + reasons_attention,
            "window_days": days,
            "memories": data["statuses"],
            "new_in_window": data["new"],
            "events_in_window": data["actions"],
            "review_queue": review,
            "cleanup_candidates": cleanup["by_kind"],
            "topic_conflicts": data["conflicts"],
            "outbox": outbox.as_json() if outbox is not None else None,
            "consistency": {
                "active_documents": len(data["documents"]),
                "backend_documents": len(listed[0]) if listed is not None else None,
                "missing_from_backend": missing[:50],
                "store": store,
            },
        }
