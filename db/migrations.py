"""Schema migrations: named functions applied in order, each recorded in ``schema_migrations``.

The ledger's tables are migrated here (:data:`LEDGER_MIGRATIONS`); the self-hosted store owns
its tables and brings its own steps (``memwarden.store.schema``), applied through the same
:func:`migrate` when the store attaches to the database. Names are global: a step is applied once
per database, whoever brings it.
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable, Sequence

from memwarden.db.common import now

Migration = tuple[str, Callable[[sqlite3.Connection], None]]


def run_script(db: sqlite3.Connection, script: str) -> None:
    """Execute statement by statement: ``executescript`` would commit the caller's transaction."""
    buffer = ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            db.execute(buffer)
            buffer = ""
    if buffer.strip():
        raise ValueError(f"incomplete SQL statement in migration: {buffer.strip()[:80]}")


def _m0001_initial(db: sqlite3.Connection) -> None:
    run_script(
        db,
        """
        CREATE TABLE memories (
            id TEXT PRIMARY KEY,
            bank TEXT NOT NULL,
            status TEXT NOT NULL,
            content TEXT NOT NULL,
            content_hash TEXT NOT NULL,
            topic TEXT,
            stage TEXT,
            topic_key TEXT,
            cardinality TEXT,
            tags TEXT NOT NULL DEFAULT '[]',
            hit_count INTEGER NOT NULL DEFAULT 0,
            document_id TEXT,
            item TEXT NOT NULL DEFAULT '{}',
            rule TEXT,
            reason TEXT,
            conflict_with TEXT,
            event_time TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            request_id TEXT
        );
        CREATE INDEX memories_bank_hash ON memories (bank, content_hash, status);
        CREATE INDEX memories_bank_key ON memories (bank, topic_key, status);
        CREATE INDEX memories_bank_status ON memories (bank, status, created_at);

        CREATE TABLE audit_events (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            id TEXT NOT NULL UNIQUE,
            ts TEXT NOT NULL,
            bank TEXT,
            memory_id TEXT,
            action TEXT NOT NULL,
            actor TEXT,
            source TEXT,
            rule TEXT,
            reason TEXT,
            before TEXT,
            after TEXT,
            request_id TEXT,
            prev_hash TEXT NOT NULL,
            hash TEXT NOT NULL
        );
        CREATE INDEX audit_bank ON audit_events (bank, seq);
        CREATE INDEX audit_action ON audit_events (action, seq);
        CREATE INDEX audit_memory ON audit_events (memory_id, seq);
        CREATE TRIGGER audit_no_update BEFORE UPDATE ON audit_events
            BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
        CREATE TRIGGER audit_no_delete BEFORE DELETE ON audit_events
            BEGIN SELECT RAISE(ABORT, 'audit events are append-only'); END;
        """,
    )


def _m0002_config_snapshots(db: sqlite3.Connection) -> None:
    run_script(
        db,
        """
        CREATE TABLE config_snapshots (
            id TEXT PRIMARY KEY,
            bank TEXT NOT NULL,
            created_at TEXT NOT NULL,
            reason TEXT NOT NULL,
            request_id TEXT,
            settled INTEGER NOT NULL,
            config TEXT NOT NULL,
            overrides TEXT NOT NULL,
            stats TEXT NOT NULL,
            counts TEXT NOT NULL,
            inventory TEXT NOT NULL,
            change TEXT,
            outcome TEXT,
            outcome_detail TEXT,
            updated_at TEXT NOT NULL
        );
        CREATE INDEX config_snapshots_bank ON config_snapshots (bank, created_at);
        CREATE TABLE banks_seen (
            bank TEXT PRIMARY KEY,
            first_seen TEXT NOT NULL,
            seeded_at TEXT
        );
        """,
    )


def _m0004_memories_by_document(db: sqlite3.Connection) -> None:
    # The read path asks, for every recall, which of the results' documents memwarden retired.
    db.execute("CREATE INDEX memories_bank_document ON memories (bank, document_id)")


def _m0005_plans(db: sqlite3.Connection) -> None:
    run_script(
        db,
        """
        CREATE TABLE plans (
            id TEXT PRIMARY KEY,
            bank TEXT NOT NULL,
            status TEXT NOT NULL,
            phrase TEXT NOT NULL,
            reason TEXT,
            operations TEXT NOT NULL,
            result TEXT,
            created_at TEXT NOT NULL,
            expires_at TEXT NOT NULL,
            applied_at TEXT
        );
        CREATE INDEX plans_bank ON plans (bank, created_at);
        """,
    )


def _m0006_outbox(db: sqlite3.Connection) -> None:
    run_script(
        db,
        """
        CREATE TABLE outbox (
            seq INTEGER PRIMARY KEY AUTOINCREMENT,
            operation_id TEXT NOT NULL UNIQUE,
            bank TEXT NOT NULL,
            state TEXT NOT NULL,
            body TEXT,
            memory_ids TEXT NOT NULL,
            supersede TEXT NOT NULL DEFAULT '[]',
            items INTEGER NOT NULL,
            request_id TEXT,
            actor TEXT NOT NULL,
            attempts INTEGER NOT NULL DEFAULT 0,
            last_error TEXT,
            answer TEXT,
            backend_operation_id TEXT,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            settled_at TEXT
        );
        CREATE INDEX outbox_state ON outbox (state, bank, seq);
        """,
    )


def _m0007_outbox_queued_at(db: sqlite3.Connection) -> None:
    # When an entry joined the queue (handed over, or retried by an operator): what the age limit
    # measures. Before it: the entry's creation.
    db.execute("ALTER TABLE outbox ADD COLUMN queued_at TEXT")
    db.execute("UPDATE outbox SET queued_at = created_at WHERE state = 'queued'")


def _m0008_api_keys(db: sqlite3.Connection) -> None:
    # API keys: the secret's SHA-256 only (the token is shown once, at creation); scopes as JSON.
    run_script(
        db,
        """
        CREATE TABLE api_keys (
            id TEXT PRIMARY KEY,
            name TEXT NOT NULL,
            secret_hash TEXT NOT NULL,
            scopes TEXT NOT NULL,
            created_at TEXT NOT NULL,
            created_by TEXT NOT NULL,
            expires_at TEXT,
            revoked_at TEXT
        );
        """,
    )


def _m0009_audit_meta(db: sqlite3.Connection) -> None:
    # Facts about the audit chain itself: where its keyed part starts (db/checkpoints.keyed_start).
    db.execute("CREATE TABLE audit_meta (name TEXT PRIMARY KEY, value TEXT NOT NULL)")


def _m0014_mem0(db: sqlite3.Connection) -> None:
    # The Mem0 front: a memory's Mem0 id is kept in its item's metadata (every version of an updated
    # memory carries its first id), found through this index; its adds' events, polled by id.
    run_script(
        db,
        """
        CREATE INDEX memories_mem0_id ON memories (bank, json_extract(item, '$.metadata.mem0_id'));
        CREATE TABLE mem0_events (
            id TEXT PRIMARY KEY,
            bank TEXT NOT NULL,
            kind TEXT NOT NULL,
            request_id TEXT,
            results TEXT NOT NULL,
            created_at TEXT NOT NULL
        );
        """,
    )


def _m0015_memories_replaces(db: sqlite3.Connection) -> None:
    # A new version held for review names the version it is to replace (a Mem0 update): its
    # approval supersedes that one too.
    db.execute("ALTER TABLE memories ADD COLUMN replaces TEXT")


def _m0017_audit_snapshot(db: sqlite3.Connection) -> None:
    # The memories a DELETE archived, found by the snapshot its events name (db/retention.py
    # deletion_rows): without it, every archive event's JSON was read per expiring deletion.
    db.execute(
        "CREATE INDEX audit_archive_snapshot ON audit_events (json_extract(after, '$.snapshot'))"
        " WHERE action = 'archive'"
    )


# The tables read in insertion order (their rowid): PostgreSQL gives them a ``rowid`` column (0018).
ROWID_TABLES = ("memories", "config_snapshots")


def _m0018_rowid(db: sqlite3.Connection) -> None:
    # The tables read newest first by insertion (created_at, then rowid) get, on PostgreSQL, the
    # rowid SQLite gives every table: an identity column, numbering the rows already there in
    # their physical order (a new database has none).
    if getattr(db, "dialect", "sqlite") != "postgresql":
        return
    for table in ROWID_TABLES:
        db.execute(f"ALTER TABLE {table} ADD COLUMN rowid BIGINT GENERATED BY DEFAULT AS IDENTITY")


def _m0019_instances(db: sqlite3.Connection) -> None:
    # The instances sharing the database (db/instances.py), and the one holding an outbox entry.
    run_script(
        db,
        """
        CREATE TABLE instances (
            id TEXT PRIMARY KEY,
            host TEXT NOT NULL,
            pid INTEGER NOT NULL,
            started_at TEXT NOT NULL,
            seen_at TEXT NOT NULL,
            lock_key INTEGER NOT NULL
        );
        ALTER TABLE outbox ADD COLUMN owner TEXT;
        """,
    )


LEDGER_MIGRATIONS: tuple[Migration, ...] = (
    ("0001_initial", _m0001_initial),
    ("0002_config_snapshots", _m0002_config_snapshots),
    ("0004_memories_by_document", _m0004_memories_by_document),
    ("0005_plans", _m0005_plans),
    ("0006_outbox", _m0006_outbox),
    ("0007_outbox_queued_at", _m0007_outbox_queued_at),
    ("0008_api_keys", _m0008_api_keys),
    ("0009_audit_meta", _m0009_audit_meta),
    ("0014_mem0", _m0014_mem0),
    ("0015_memories_replaces", _m0015_memories_replaces),
    ("0017_audit_snapshot", _m0017_audit_snapshot),
    ("0018_rowid", _m0018_rowid),
    ("0019_instances", _m0019_instances),
)


def migrate(db: sqlite3.Connection, steps: Sequence[Migration]) -> list[str]:
    """Apply those of ``steps`` not yet recorded, in order, each in its own transaction; return
    their names. Call outside any transaction. Each step is taken under the write lock and checked
    again there: instances starting together on one PostgreSQL apply it once."""
    db.execute("BEGIN IMMEDIATE")
    try:
        db.execute("CREATE TABLE IF NOT EXISTS schema_migrations (name TEXT PRIMARY KEY, applied_at TEXT NOT NULL)")
        done = {row[0] for row in db.execute("SELECT name FROM schema_migrations")}
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    applied = []
    for name, step in steps:
        if name in done:
            continue
        db.execute("BEGIN IMMEDIATE")
        try:
            if db.execute("SELECT 1 FROM schema_migrations WHERE name = ?", (name,)).fetchone():
                db.execute("ROLLBACK")  # another instance applied it meanwhile
                continue
            step(db)
            db.execute("INSERT INTO schema_migrations (name, applied_at) VALUES (?, ?)", (name, now()))
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        applied.append(name)
    return applied
