"""The ``memories`` table: every memory memwarden has judged, its status and its labels.

Statuses: ``pending`` (recorded, being forwarded), ``active`` (in the backend), ``review`` (held:
conflicts with the memory holding its topic key), ``superseded``, ``archived``, ``failed`` (the
backend refused or could not be reached, and the client was told; or the process stopped before
the store answered). Only ``active`` rows count for dedup and topic-key conflicts. A status
changes through :func:`move` (or :func:`transition` plus one :func:`append_events`), so every
change has its audit event in the same transaction.
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Callable, Collection, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from memwarden.db.audit import AuditEvent, append_events, current_actor
from memwarden.db.common import chunked, now
from memwarden.db.records import Provenance
from memwarden.policies.judgement import Judgement
from memwarden.policies.normalize import content_hash
from memwarden.policies.resolve import KeyHolder

ACTION_OF_VERDICT = {
    "store": "add",
    "redact": "redact",
    "duplicate": "duplicate",
    "reject": "reject",
    "review": "review",
}
PREVIEW_CHARS = 200


@dataclass(frozen=True)
class Facts:
    """What the bank already holds, for :func:`policies.pipeline.resolve`."""

    active_hashes: dict[str, str]
    key_holders: dict[str, KeyHolder]


def lookup_facts(
    db: sqlite3.Connection,
    bank: str,
    hashes: Iterable[str],
    keys: Iterable[str],
    within: Callable[[Sequence[str]], bool] | None = None,
    replacing: Collection[str] = (),
) -> Facts:
    """The active memories of ``bank`` holding ``hashes`` and ``keys``; ``within``: only those
    whose tags it accepts count (None: all). A memory of a document in ``replacing`` (the request
    retains it again: the backend replaces it) does not count: an item repeating it is part of the
    document's new version, not a duplicate to drop."""
    hashes, keys = sorted(set(hashes)), sorted(set(keys))
    active: dict[str, str] = {}
    holders: dict[str, KeyHolder] = {}

    def counts(row: sqlite3.Row) -> bool:
        if replacing and row["document_id"] in replacing:
            return False
        return within is None or within(json.loads(row["tags"] or "[]"))

    for chunk in chunked(hashes):
        marks = ",".join("?" * len(chunk))
        for row in db.execute(
            f"SELECT id, content_hash, tags, document_id FROM memories WHERE bank = ? AND status = 'active'"  # noqa: S608
            f" AND content_hash IN ({marks})",
            (bank, *chunk),
        ):
            if counts(row):
                active.setdefault(row["content_hash"], row["id"])
    for chunk in chunked(keys):
        marks = ",".join("?" * len(chunk))
        for row in db.execute(
            f"SELECT id, topic_key, content_hash, tags, document_id FROM memories WHERE bank = ? AND status = 'active'"  # noqa: S608
            f" AND topic_key IN ({marks}) ORDER BY created_at DESC",
            (bank, *chunk),
        ):
            if counts(row):
                holders.setdefault(row["topic_key"], KeyHolder(row["id"], row["content_hash"]))
    return Facts(active, holders)


@dataclass(frozen=True)
class Recorded:
    """Ids given to the items of one request (by index) and the events written."""

    memory_ids: dict[int, str]


def record_verdicts(
    db: sqlite3.Connection,
    *,
    bank: str,
    judgements: Sequence[Judgement],
    items: Sequence[dict[str, Any]],
    request_id: str,
    actor: str,
    source: str,
    record_rows: bool = True,
    previews: bool = True,
    provenance: Provenance | None = None,
    instance: str | None = None,
) -> Recorded:
    """Write every verdict of one request: rows for stored and held items, hit counts for
    duplicates, one audit event per item. ``items`` are the items as they would be forwarded.
    ``previews`` False: the events name the content by its hash only (no text in the audit).
    ``provenance``: who wrote them, through which channel (kept on each row); ``instance``: the
    memwarden instance recording them (its pending rows are its own while it lives)."""
    made_by = provenance or Provenance(actor, None, source)
    ts = now()
    ids: dict[int, str] = {}
    events: list[AuditEvent] = []
    for j in judgements:
        memory_id = None
        j = j._replace(existing_id=real_id(j.existing_id, ids), supersedes=real_id(j.supersedes, ids))
        if record_rows and j.verdict in ("store", "redact", "review"):
            memory_id = uuid.uuid4().hex
            item = items[j.position]
            db.execute(
                "INSERT INTO memories (id, bank, status, content, content_hash, topic, stage, topic_key, cardinality,"
                " tags, document_id, item, rule, reason, conflict_with, event_time, created_at, updated_at, request_id,"
                " writer, writer_scope, channel, instance) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
                (
                    memory_id,
                    bank,
                    "pending" if j.verdict != "review" else "review",
                    j.text,
                    j.content_hash,
                    j.topic,
                    j.stage,
                    j.topic_key,
                    j.cardinality,
                    json.dumps(list(j.tags), ensure_ascii=False),
                    item.get("document_id"),
                    json.dumps(item, ensure_ascii=False),
                    j.rule,
                    j.reason,
                    j.existing_id,
                    item.get("timestamp") if isinstance(item.get("timestamp"), str) else ts,
                    ts,
                    ts,
                    request_id,
                    made_by.writer,
                    made_by.scope,
                    made_by.channel,
                    instance,
                ),
            )
            ids[j.position] = memory_id
        elif record_rows and j.verdict == "duplicate" and j.existing_id:
            db.execute(
                "UPDATE memories SET hit_count = hit_count + 1, updated_at = ? WHERE id = ?", (ts, j.existing_id)
            )
            memory_id = j.existing_id
        events.append(
            AuditEvent(
                action=ACTION_OF_VERDICT[j.verdict],
                bank=bank,
                memory_id=memory_id,
                actor=actor,
                source=source,
                rule=j.rule,
                reason=j.reason,
                after=_after(j, items[j.position] if j.position < len(items) else {}, previews),
                request_id=request_id,
            )
        )
    append_events(db, events)
    return Recorded(ids)


def _after(j: Judgement, item: dict[str, Any], previews: bool = True) -> dict[str, Any]:
    after: dict[str, Any] = {
        "verdict": j.verdict,
        "content_hash": j.content_hash or None,
        # secrets are already masked in j.text
        "preview": j.text[:PREVIEW_CHARS] if j.text and previews else None,
        "topic": j.topic,
        "stage": j.stage,
        "topic_key": j.topic_key,
        "tags": list(j.tags),
    }
    if item.get("document_id"):
        after["document_id"] = item["document_id"]
    if j.existing_id:
        after["existing_id"] = j.existing_id
    if j.secrets:
        after["secrets"] = list(j.secrets)
    if j.non_text_blocks:
        after["unfiltered_blocks"] = j.non_text_blocks  # images/files passed without judgement
    if j.threat is not None:  # instructions aimed at the agent: severity, rules, fields, the bank's action
        after["injection"] = j.threat.summary()
    if j.segments:
        after["segments"] = len(j.segments)
        if j.verdict == "reject":  # every segment noise: which rules said so
            after["segment_rules"] = [s.rule for s in j.segments]
        else:
            after["noise_segments"] = j.noise  # offsets in the text as judged (stripped, masked), speaker, rule
            after["trimmed"] = j.trimmed
    return after


PENDING_PREFIX = "request-item-"


def real_id(ref: str | None, ids: Mapping[int, str]) -> str | None:
    """A memory id for ``ref``: resolve() names an earlier item of the same request
    ``request-item-<position>`` (it had no id yet); once recorded, that is ``ids[position]``."""
    if ref and ref.startswith(PENDING_PREFIX):
        return ids.get(int(ref[len(PENDING_PREFIX) :]))
    return ref


@dataclass(frozen=True)
class Change:
    """One status change, as the audit log tells it: from ``frm`` to ``to``, by which action, from
    which source, for which request; ``by`` names the memory that took a superseded one's place."""

    frm: str
    to: str
    action: str
    source: str
    request_id: str | None
    actor: str = field(default_factory=current_actor)
    rule: str | None = None
    reason: str | None = None
    by: str | None = None
    snapshot: str | None = None  # the snapshot a DELETE took before this change: what can undo it

    def event(self, bank: str, memory_id: str, before: dict[str, Any], after: dict[str, Any]) -> AuditEvent:
        """The audit event of this change of ``memory_id``; ``after`` gains ``by`` and ``snapshot``."""
        if self.by:
            after["by"] = self.by
        if self.snapshot:
            after["snapshot"] = self.snapshot
        return AuditEvent(
            action=self.action,
            bank=bank,
            memory_id=memory_id,
            actor=self.actor,
            source=self.source,
            rule=self.rule,
            reason=self.reason,
            before=before,
            after=after,
            request_id=self.request_id,
        )


def transition(db: sqlite3.Connection, bank: str, memory_id: str, change: Change) -> AuditEvent | None:
    """Move one memory as ``change`` says; return the event saying so (None when the memory was
    not in ``change.frm`` any more — nothing changed, nothing to say). The caller appends it."""
    changed = db.execute(
        "UPDATE memories SET status = ?, updated_at = ? WHERE id = ? AND status = ?",
        (change.to, now(), memory_id, change.frm),
    ).rowcount
    if not changed:
        return None
    return change.event(bank, memory_id, {"status": change.frm}, {"status": change.to})


def move(db: sqlite3.Connection, bank: str, memory_ids: Iterable[str], change: Change) -> list[AuditEvent]:
    """:func:`transition` each of ``memory_ids`` and append the events of those that moved, inside
    the caller's transaction: the one way a status change is written with its audit trail."""
    return append_events(db, [transition(db, bank, memory_id, change) for memory_id in memory_ids])


def retag_document(
    db: sqlite3.Connection, bank: str, document_id: str, tags: list[str], labels: Mapping[str, str], request_id: str
) -> None:
    """A document was re-tagged in the backend: its rows take the tags (and the ``topic``/``stage``
    labels among them), each with an ``update`` event; one event says so when the ledger has none."""
    rows = db.execute(
        "SELECT id, tags FROM memories WHERE bank = ? AND document_id = ?", (bank, document_id)
    ).fetchall()
    events = []
    for row in rows:
        db.execute(
            "UPDATE memories SET tags = ?, topic = COALESCE(?, topic), stage = COALESCE(?, stage), updated_at = ?"
            " WHERE id = ?",
            (json.dumps(tags, ensure_ascii=False), labels.get("topic"), labels.get("stage"), now(), row["id"]),
        )
        events.append(
            AuditEvent(
                action="update",
                bank=bank,
                memory_id=row["id"],
                source="document_retag",
                before={"tags": json.loads(row["tags"])},
                after={"tags": tags},
                request_id=request_id,
            )
        )
    if not rows:
        events.append(
            AuditEvent(
                action="update",
                bank=bank,
                source="document_retag",
                reason=f"document {document_id}",
                after={"tags": tags},
                request_id=request_id,
            )
        )
    append_events(db, events)


def mark_replaces(db: sqlite3.Connection, memory_id: str, replaces: str) -> None:
    """Record that ``memory_id`` (a new version, held for review) is to replace ``replaces``."""
    db.execute("UPDATE memories SET replaces = ? WHERE id = ?", (replaces, memory_id))


def record_kept(db: sqlite3.Connection, bank: str, items: Sequence[dict[str, Any]], change: Change) -> list[str]:
    """Ledger rows, in ``change.to`` (archived), for documents a DELETE took from the backend that
    memwarden never wrote: their items as a retain re-creates them (text masked of secrets by the
    caller), one ``change.action`` event each naming the content by its hash. Their ids."""
    ts, ids, events = now(), [], []
    for item in items:
        memory_id = uuid.uuid4().hex
        text = str(item["content"])
        digest = content_hash(text)
        db.execute(
            "INSERT INTO memories (id, bank, status, content, content_hash, tags, document_id, item, rule, reason,"
            " event_time, created_at, updated_at, request_id) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)",
            (
                memory_id,
                bank,
                change.to,
                text,
                digest,
                json.dumps(item.get("tags") or [], ensure_ascii=False),
                item.get("document_id"),
                json.dumps(item, ensure_ascii=False),
                change.rule,
                change.reason,
                item.get("timestamp") if isinstance(item.get("timestamp"), str) else ts,
                ts,
                ts,
                change.request_id,
            ),
        )
        ids.append(memory_id)
        after = {"status": change.to, "content_hash": digest, "document_id": item.get("document_id")}
        events.append(change.event(bank, memory_id, {"status": change.frm}, after))
    append_events(db, events)
    return ids
