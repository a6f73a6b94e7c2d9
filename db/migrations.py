"""Schema migrations: named functions applied in order, each recorded in ``schema_migrations``.

The ledger's tables are migrated here (:data:`LEDGER_MIGRATIONS`); the self-hosted store owns
its tables and brings its own steps (``memwarden.store.schema``), applied through the same
:func:`migrate` when the store attaches to the database. Names are global: a step is applied once
per database, whoever brings it.
"""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Callable, Sequence

from memwarden.db.common import now, on_postgres

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
    if not on_postgres(db):
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


# A bank's memories counted as they change — by status × topic × stage, and by the day they were
# recorded — so the dashboard's overview and a listing's total read a few rows, not the bank (the
# overview scanned it: 0.24 s at 100,000 memories). Kept by triggers on ``memories``: every writer
# (the repositories, an import, ``migrate-state``'s copy) keeps them true. A label never given is ''.
# Read through the views ``memory_counts_now`` and ``memory_days_now`` (db/bank_stats.py).
#
# SQLite's triggers update the counts in place. PostgreSQL's append a row of ``memory_deltas``
# instead (+1 for the new row, -1 for the old): updating one counter row thousands of times in one
# transaction leaves a chain of row versions each update walks — 20,000 inserts took 10 s that way,
# 1.4 s without — so the deltas are folded into the counts now and then (``fold_counts``: the
# instance that writes the checkpoints, every few seconds), and the views add what is not folded yet.
_SQLITE_COUNT_TRIGGERS = """
CREATE TRIGGER memories_counted_insert AFTER INSERT ON memories BEGIN
    INSERT INTO memory_counts (bank, status, topic, stage, n)
        VALUES (NEW.bank, NEW.status, COALESCE(NEW.topic, ''), COALESCE(NEW.stage, ''), 1)
        ON CONFLICT (bank, status, topic, stage) DO UPDATE SET n = n + 1;
    INSERT INTO memory_days (bank, day, n) VALUES (NEW.bank, substr(NEW.created_at, 1, 10), 1)
        ON CONFLICT (bank, day) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memories_counted_delete AFTER DELETE ON memories BEGIN
    UPDATE memory_counts SET n = n - 1 WHERE bank = OLD.bank AND status = OLD.status
        AND topic = COALESCE(OLD.topic, '') AND stage = COALESCE(OLD.stage, '');
    UPDATE memory_days SET n = n - 1 WHERE bank = OLD.bank AND day = substr(OLD.created_at, 1, 10);
END;
CREATE TRIGGER memories_counted_update AFTER UPDATE OF bank, status, topic, stage ON memories
WHEN OLD.bank IS NOT NEW.bank OR OLD.status IS NOT NEW.status OR OLD.topic IS NOT NEW.topic
    OR OLD.stage IS NOT NEW.stage
BEGIN
    UPDATE memory_counts SET n = n - 1 WHERE bank = OLD.bank AND status = OLD.status
        AND topic = COALESCE(OLD.topic, '') AND stage = COALESCE(OLD.stage, '');
    INSERT INTO memory_counts (bank, status, topic, stage, n)
        VALUES (NEW.bank, NEW.status, COALESCE(NEW.topic, ''), COALESCE(NEW.stage, ''), 1)
        ON CONFLICT (bank, status, topic, stage) DO UPDATE SET n = n + 1;
END;
CREATE TRIGGER memories_counted_day AFTER UPDATE OF bank, created_at ON memories
WHEN OLD.bank IS NOT NEW.bank OR OLD.created_at IS NOT NEW.created_at
BEGIN
    UPDATE memory_days SET n = n - 1 WHERE bank = OLD.bank AND day = substr(OLD.created_at, 1, 10);
    INSERT INTO memory_days (bank, day, n) VALUES (NEW.bank, substr(NEW.created_at, 1, 10), 1)
        ON CONFLICT (bank, day) DO UPDATE SET n = n + 1;
END;
"""
_POSTGRES_COUNT_TRIGGERS = (
    """CREATE OR REPLACE FUNCTION memwarden_count_memories() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
        IF TG_OP = 'UPDATE' AND OLD.bank = NEW.bank AND OLD.status = NEW.status AND OLD.created_at = NEW.created_at
            AND OLD.topic IS NOT DISTINCT FROM NEW.topic AND OLD.stage IS NOT DISTINCT FROM NEW.stage THEN
            RETURN NULL;
        END IF;
        IF TG_OP <> 'INSERT' THEN
            INSERT INTO memory_deltas (bank, status, topic, stage, day, d) VALUES
                (OLD.bank, OLD.status, COALESCE(OLD.topic, ''), COALESCE(OLD.stage, ''),
                 substr(OLD.created_at, 1, 10), -1);
        END IF;
        IF TG_OP <> 'DELETE' THEN
            INSERT INTO memory_deltas (bank, status, topic, stage, day, d) VALUES
                (NEW.bank, NEW.status, COALESCE(NEW.topic, ''), COALESCE(NEW.stage, ''),
                 substr(NEW.created_at, 1, 10), 1);
        END IF;
        RETURN NULL;
    END $$""",
    "CREATE TRIGGER memories_counted AFTER INSERT OR DELETE OR UPDATE OF bank, status, topic, stage, created_at"
    " ON memories FOR EACH ROW EXECUTE FUNCTION memwarden_count_memories()",
)


def _m0020_views_at_scale(db: sqlite3.Connection) -> None:
    # The operator's views at a million memories: the counts above; a listing paged by keyset (newest
    # first: created_at, then id), with or without a status; a snapshot's inventory size kept beside
    # it, so a list of snapshots reads no inventory.
    run_script(
        db,
        """
        CREATE TABLE memory_counts (
            bank TEXT NOT NULL,
            status TEXT NOT NULL,
            topic TEXT NOT NULL,
            stage TEXT NOT NULL,
            n INTEGER NOT NULL,
            PRIMARY KEY (bank, status, topic, stage)
        );
        CREATE TABLE memory_days (bank TEXT NOT NULL, day TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (bank, day));
        CREATE TABLE memory_deltas (
            bank TEXT NOT NULL,
            status TEXT NOT NULL,
            topic TEXT NOT NULL,
            stage TEXT NOT NULL,
            day TEXT NOT NULL,
            d INTEGER NOT NULL
        );
        CREATE VIEW memory_counts_now AS
            SELECT bank, status, topic, stage, SUM(n) AS n FROM (
                SELECT bank, status, topic, stage, n FROM memory_counts
                UNION ALL SELECT bank, status, topic, stage, d FROM memory_deltas
            ) AS counted GROUP BY bank, status, topic, stage;
        CREATE VIEW memory_days_now AS
            SELECT bank, day, SUM(n) AS n FROM (
                SELECT bank, day, n FROM memory_days UNION ALL SELECT bank, day, d FROM memory_deltas
            ) AS counted GROUP BY bank, day;
        INSERT INTO memory_counts (bank, status, topic, stage, n)
            SELECT bank, status, COALESCE(topic, ''), COALESCE(stage, ''), count(*) FROM memories
            GROUP BY bank, status, COALESCE(topic, ''), COALESCE(stage, '');
        INSERT INTO memory_days (bank, day, n)
            SELECT bank, substr(created_at, 1, 10), count(*) FROM memories GROUP BY bank, substr(created_at, 1, 10);
        DROP INDEX memories_bank_status;
        CREATE INDEX memories_bank_status_created ON memories (bank, status, created_at, id);
        CREATE INDEX memories_bank_created ON memories (bank, created_at, id);
        ALTER TABLE config_snapshots ADD COLUMN inventory_memories INTEGER;
        ALTER TABLE config_snapshots ADD COLUMN inventory_documents INTEGER;
        """,
    )
    if on_postgres(db):
        for statement in _POSTGRES_COUNT_TRIGGERS:
            db.execute(statement)
    else:
        run_script(db, _SQLITE_COUNT_TRIGGERS)
    for (snapshot_id,) in db.execute("SELECT id FROM config_snapshots").fetchall():  # one inventory at a time
        raw = db.execute("SELECT inventory FROM config_snapshots WHERE id = ?", (snapshot_id,)).fetchone()[0]
        try:
            inventory = json.loads(raw or "{}")
        except ValueError:  # an inventory that cannot be read: its sizes unknown (null), the rest migrated
            continue
        db.execute(
            "UPDATE config_snapshots SET inventory_memories = ?, inventory_documents = ? WHERE id = ?",
            (len(inventory.get("memories", [])), len(inventory.get("documents", [])), snapshot_id),
        )


def _m0021_memories_provenance(db: sqlite3.Connection) -> None:
    # Who wrote a memory, as memwarden saw it (never as the caller said): the API key's id and its
    # scopes then, and the channel (hindsight, mem0, mcp); what one writer wrote in a window is
    # found by (bank, writer, created_at) — an undo plan's selection.
    db.execute("ALTER TABLE memories ADD COLUMN writer TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN writer_scope TEXT")
    db.execute("ALTER TABLE memories ADD COLUMN channel TEXT")
    db.execute("CREATE INDEX memories_writer ON memories (bank, writer, created_at)")


def _m0022_memories_instance(db: sqlite3.Connection) -> None:
    # The instance that recorded a memory: a start (or a beat) settles only the pending rows of
    # instances no longer alive — never another live instance's write in flight.
    db.execute("ALTER TABLE memories ADD COLUMN instance TEXT")


def _m0024_outbox_attempt(db: sqlite3.Connection) -> None:
    # The instance whose worker is delivering a queued entry right now (PostgreSQL): an operator's
    # give-up on another instance waits for the attempt instead of failing memories it is landing.
    db.execute("ALTER TABLE outbox ADD COLUMN attempt_by TEXT")


def _m0025_memories_by_document_status(db: sqlite3.Connection) -> None:
    # A document's memories in one status (a delivery superseding a document's earlier memories, an
    # approval's or a restore's siblings): with (bank, document_id) alone SQLite chose the (bank,
    # status) index and read every active memory of the bank for each document — 1.1 s for a retain
    # of 100 items with documents into a bank of 50,000. This index serves (bank, document_id) too.
    db.execute("CREATE INDEX memories_bank_document_status ON memories (bank, document_id, status)")
    db.execute("DROP INDEX IF EXISTS memories_bank_document")


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
    ("0020_views_at_scale", _m0020_views_at_scale),
    ("0021_memories_provenance", _m0021_memories_provenance),
    ("0022_memories_instance", _m0022_memories_instance),
    ("0024_outbox_attempt", _m0024_outbox_attempt),
    ("0025_memories_by_document_status", _m0025_memories_by_document_status),
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
