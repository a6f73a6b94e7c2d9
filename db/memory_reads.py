"""The memories as the layers above read them: an operator's listing and one memory's account,
the review queue, what a recall must withhold, what a rollback can restore."""

from __future__ import annotations

import base64
import json
import sqlite3
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

from memwarden.db.bank_stats import counted
from memwarden.db.common import chunked
from memwarden.db.records import MEMORY_RECORD, LedgerMemory
from memwarden.policies.tag_query import spellings

STATUSES = ("pending", "active", "review", "rejected", "archived", "superseded", "failed", "erased")


MEMORY_COLUMNS = (
    "id, bank, status, content, content_hash, topic, stage, topic_key, tags, hit_count, document_id,"
    " conflict_with, created_at, updated_at, writer, channel"
)


def memory_view(row: sqlite3.Row | None) -> dict[str, Any] | None:
    if row is None:
        return None
    out = dict(row)
    out["tags"] = json.loads(out["tags"])
    return out


@dataclass(frozen=True)
class LedgerQuery:
    """Which of a bank's memories an operator's listing shows: any of ``statuses`` (all when
    empty), the labels, every tag of ``tags`` (in either spelling), text holding ``q``; one page."""

    statuses: tuple[str, ...] = ()
    topic: str | None = None
    stage: str | None = None
    topic_key: str | None = None
    tags: tuple[str, ...] = ()
    q: str | None = None
    limit: int = 100
    offset: int = 0
    after: tuple[str, str] | None = None  # the page after this memory's (created_at, id): a cursor's


def cursor_of(created_at: str, memory_id: str) -> str:
    """The cursor of the page after this memory: opaque to the caller (URL-safe)."""
    return base64.urlsafe_b64encode(json.dumps([created_at, memory_id]).encode()).decode().rstrip("=")


def read_cursor(cursor: str) -> tuple[str, str]:
    """:func:`cursor_of` read back. Raises ``ValueError`` for anything it did not make."""
    try:
        value = json.loads(base64.urlsafe_b64decode(cursor + "=" * (-len(cursor) % 4)))
    except (ValueError, UnicodeDecodeError):
        raise ValueError("not a cursor this listing gave") from None
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(v, str) for v in value)):
        raise ValueError("not a cursor this listing gave")
    return value[0], value[1]


def list_memories(db: sqlite3.Connection, bank: str, query: LedgerQuery) -> dict[str, Any]:
    """One page of the ledger's memories for ``query``, newest first: by keyset after
    ``query.after`` (a cursor's: an index range whatever the depth), else by ``offset`` (which
    reads every row it skips). ``next`` is the cursor of the page after it (None: the last).
    ``total`` is read from the bank's counts unless the query filters by tag, topic key or text
    (then counted). A pure read, shared by the API and the command line's ``--data-dir`` mode."""
    where, args = ["bank = ?"], [bank]
    if query.statuses:
        where.append(f"status IN ({','.join('?' * len(query.statuses))})")
        args += query.statuses
    for column, value in (("topic", query.topic), ("stage", query.stage), ("topic_key", query.topic_key)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    for tag in query.tags:
        forms = spellings(tag)
        marks = ",".join("?" * len(forms))
        where.append(f"EXISTS (SELECT 1 FROM json_each(memories.tags) WHERE value IN ({marks}))")  # noqa: S608
        args += forms
    if query.q:
        where.append("instr(lower(content), lower(?)) > 0")
        args.append(query.q)
    clause = " AND ".join(where)
    page, page_args = clause, list(args)
    if query.after is not None:
        page += " AND (created_at, id) < (?, ?)"  # a row value: an index range on both engines (an OR is not)
        page_args += [query.after[0], query.after[1]]
    rows = db.execute(
        f"SELECT {MEMORY_COLUMNS} FROM memories WHERE {page}"  # noqa: S608
        " ORDER BY created_at DESC, id DESC LIMIT ? OFFSET ?",
        (*page_args, query.limit + 1, query.offset if query.after is None else 0),
    ).fetchall()
    more = len(rows) > query.limit
    rows = rows[: query.limit]
    if query.tags or query.q or query.topic_key:
        total = db.execute(f"SELECT count(*) FROM memories WHERE {clause}", args).fetchone()[0]  # noqa: S608
    else:
        total = _counted(db, bank, query)
    items = [memory_view(r) for r in rows]
    following = cursor_of(rows[-1]["created_at"], rows[-1]["id"]) if more and rows else None
    return {
        "bank_id": bank,
        "items": items,
        "total": total,
        "limit": query.limit,
        "offset": query.offset if query.after is None else 0,
        "next": following,
    }


def _counted(db: sqlite3.Connection, bank: str, query: LedgerQuery) -> int:
    """How many of the bank's memories have the query's statuses and labels, from its counts."""
    where, args = ["bank = ?"], [bank]
    if query.statuses:
        where.append(f"status IN ({','.join('?' * len(query.statuses))})")
        args += query.statuses
    for column, value in (("topic", query.topic), ("stage", query.stage)):
        if value:
            where.append(f"{column} = ?")
            args.append(value)
    clause = " AND ".join(where)
    counts, _ = counted(db)
    return int(db.execute(f"SELECT COALESCE(SUM(n), 0) FROM {counts} WHERE {clause}", args).fetchone()[0])  # noqa: S608


def memory_account(db: sqlite3.Connection, bank: str, memory_id: str) -> dict[str, Any] | None:
    """One memory with its item, who wrote it (``writer``, ``writer_scope``, ``channel``), its
    feedback score and audit timeline (None: unknown). A pure read."""
    row = db.execute(
        f"SELECT {MEMORY_COLUMNS}, item, rule, reason, writer_scope FROM memories WHERE bank = ? AND id = ?",  # noqa: S608
        (bank, memory_id),
    ).fetchone()
    if row is None:
        return None
    events = memory_events(db, memory_id)
    view = memory_view(row) or {}
    view.update(rule=row["rule"], reason=row["reason"], item=json.loads(row["item"] or "{}"))
    view["writer_scope"] = json.loads(row["writer_scope"]) if row["writer_scope"] else None
    feedback = [e["after"] for e in events if e["action"] == "feedback" and e["after"]]
    view["feedback"] = {"score": sum(int(f.get("score", 0)) for f in feedback), "count": len(feedback)}
    view["events"] = events
    return view


def row_by_id(db: sqlite3.Connection, memory_id: str, *, bank: str | None = None) -> LedgerMemory | None:
    """One memory (of ``bank``, when given); None: unknown."""
    select = f"SELECT {MEMORY_RECORD} FROM memories WHERE id = ?"  # noqa: S608
    if bank is None:
        row = db.execute(select, (memory_id,)).fetchone()
    else:
        row = db.execute(f"{select} AND bank = ?", (memory_id, bank)).fetchone()
    return None if row is None else LedgerMemory.of(row)


def active_siblings(
    db: sqlite3.Connection,
    bank: str,
    document_id: str | None,
    memory_id: str,
    *,
    besides: Collection[str] = (),
    status: str = "active",
) -> list[str]:
    """The other memories in ``status`` that share ``memory_id``'s document (``besides``: ids not
    counted, a plan's other operations), oldest first."""
    found = db.execute(  # sorted here: an ORDER BY made SQLite read the bank's (bank, status) index instead
        "SELECT id, created_at FROM memories WHERE bank = ? AND document_id = ? AND status = ? AND id != ?",
        (bank, document_id, status, memory_id),
    ).fetchall()
    return [r["id"] for r in sorted(found, key=lambda r: (r["created_at"], r["id"])) if r["id"] not in besides]


NO_LIMIT = 2**62  # SQLite's LIMIT -1, which PostgreSQL refuses


def review_queue(db: sqlite3.Connection, bank: str, *, limit: int = -1, offset: int = 0) -> list[dict[str, Any]]:
    """The items held for review, oldest first, each with why it is held (its rule and reason: a
    topic-key conflict, instructions aimed at the agent …) beside the memory it conflicts with, if
    any (a page of ``limit`` from ``offset``; -1: all)."""
    held = db.execute(
        f"SELECT {MEMORY_COLUMNS}, rule, reason FROM memories WHERE bank = ? AND status = 'review'"  # noqa: S608
        " ORDER BY created_at, id LIMIT ? OFFSET ?",
        (bank, limit if limit >= 0 else NO_LIMIT, offset),
    ).fetchall()
    out = []
    for row in held:
        other = db.execute(
            f"SELECT {MEMORY_COLUMNS} FROM memories WHERE id = ?",  # noqa: S608
            (row["conflict_with"],),
        ).fetchone()
        out.append({"held": memory_view(row), "conflicts_with": memory_view(other)})
    return out


def review_count(db: sqlite3.Connection, bank: str) -> int:
    """How many items the bank holds for review."""
    count: int = db.execute("SELECT count(*) FROM memories WHERE bank = ? AND status = 'review'", (bank,)).fetchone()[0]
    return count


def memory_events(db: sqlite3.Connection, memory_id: str) -> list[dict[str, Any]]:
    out = []
    for e in db.execute(
        "SELECT seq, id, ts, action, actor, source, rule, reason, before, after, request_id FROM audit_events"
        " WHERE memory_id = ? ORDER BY seq",
        (memory_id,),
    ):
        event = dict(e)
        for key in ("before", "after"):
            event[key] = json.loads(event[key]) if event[key] else None
        out.append(event)
    return out


KEPT_RULE = "deletion.kept"  # a row a DELETE kept of a document memwarden never wrote


def withheld_documents(db: sqlite3.Connection, bank: str, document_ids: Sequence[str]) -> set[str]:
    """Of ``document_ids``, those holding a memory memwarden archived, superseded or rejected and
    none that is active (or on its way there). A copy a DELETE kept of a document memwarden never
    wrote withholds nothing: the same id written again around memwarden is not its memory."""
    if not document_ids:
        return set()
    out: set[str] = set()
    for chunk in chunked(list(dict.fromkeys(document_ids))):
        marks = ",".join("?" * len(chunk))
        sql = (
            "SELECT document_id, SUM(CASE WHEN status IN ('archived', 'superseded', 'rejected')"  # noqa: S608
            f" AND COALESCE(rule, '') != '{KEPT_RULE}' THEN 1 ELSE 0 END) AS gone,"
            " SUM(CASE WHEN status IN ('active', 'pending') THEN 1 ELSE 0 END) AS live FROM memories"
            f" WHERE bank = ? AND document_id IN ({marks}) GROUP BY document_id"
        )
        for row in db.execute(sql, (bank, *chunk)):
            if row["gone"] and not row["live"]:
                out.add(row["document_id"])
    return out


def provenance_by_document(db: sqlite3.Connection, bank: str, document_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
    """Who wrote each of ``document_ids``, as the ledger recorded it (its latest live memory's
    writer, channel and time); a document the ledger does not know is not in the answer."""
    out: dict[str, dict[str, Any]] = {}
    for chunk in chunked(list(dict.fromkeys(document_ids))):
        marks = ",".join("?" * len(chunk))
        sql = (
            "SELECT document_id, writer, channel, created_at FROM memories"  # noqa: S608
            f" WHERE bank = ? AND document_id IN ({marks}) AND status IN ('active', 'pending')"
            " ORDER BY created_at, id"
        )
        for row in db.execute(sql, (bank, *chunk)):
            out[row["document_id"]] = {
                "writer": row["writer"],
                "channel": row["channel"],
                "written_at": row["created_at"],
            }
    return out


def restorable_rows(db: sqlite3.Connection, bank: str, document_ids: Sequence[str]) -> dict[str, list[dict[str, Any]]]:
    """The ledger's copies (active or archived rows, with the items as forwarded) of the memories of
    ``document_ids``, by document, oldest first: what a config rollback re-creates."""
    out: dict[str, list[dict[str, Any]]] = {}
    for chunk in chunked(document_ids):
        marks = ",".join("?" * len(chunk))
        for row in db.execute(
            f"SELECT id, status, document_id, item, event_time FROM memories WHERE bank = ?"  # noqa: S608
            f" AND status IN ('active', 'archived') AND document_id IN ({marks}) ORDER BY created_at",
            (bank, *chunk),
        ):
            out.setdefault(row["document_id"], []).append(
                {"id": row["id"], "status": row["status"], "item": json.loads(row["item"])}
            )
    return out


def document_memory_ids(db: sqlite3.Connection, bank: str, document_id: str, status: str) -> list[str]:
    """The ids of the ledger's memories of one document in ``status``."""
    rows = db.execute(
        "SELECT id FROM memories WHERE bank = ? AND document_id = ? AND status = ?", (bank, document_id, status)
    ).fetchall()
    return [row["id"] for row in rows]


def active_ids(db: sqlite3.Connection, bank: str, document_id: str | None = None) -> list[str]:
    """The ids of the bank's active memories (those of one document, when given)."""
    query, args = "SELECT id FROM memories WHERE bank = ? AND status = 'active'", [bank]
    if document_id is not None:
        query, args = query + " AND document_id = ?", [bank, document_id]
    return [row["id"] for row in db.execute(query, args).fetchall()]


def document_statuses(db: sqlite3.Connection, bank: str, document_id: str) -> dict[str, list[str]]:
    """The ledger's memories of one document, their ids by status; for a document no row holds,
    ``rejected`` when the audit knows of it (a rejected item has an event, not a row: the audit is
    read only then, the costly case)."""
    out: dict[str, list[str]] = {}
    for row in db.execute("SELECT id, status FROM memories WHERE bank = ? AND document_id = ?", (bank, document_id)):
        out.setdefault(row["status"], []).append(row["id"])
    if (
        not out
        and db.execute(
            "SELECT 1 FROM audit_events WHERE bank = ? AND action = 'reject'"
            " AND json_extract(after, '$.document_id') = ? LIMIT 1",
            (bank, document_id),
        ).fetchone()
    ):
        out["rejected"] = []
    return out


def active_by_document(db: sqlite3.Connection, bank: str) -> dict[str, list[str]]:
    """The bank's active memories that belong to a document: their ids by document."""
    out: dict[str, list[str]] = {}
    for row in db.execute(
        "SELECT id, document_id FROM memories WHERE bank = ? AND status = 'active' AND document_id IS NOT NULL", (bank,)
    ):
        out.setdefault(row["document_id"], []).append(row["id"])
    return out
