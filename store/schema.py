"""The self-hosted store's tables, in the same database as the ledger and the audit log.

``store_units`` holds one row per memory (Hindsight's "memory unit"): text, the derived full-text
terms (:func:`store.text.index_text`), labels, tags, times, state, and its vector as a float32
BLOB with the name of the embedder that made it. ``store_units_fts`` is an FTS5 external-content
index over the terms, kept in step by triggers inside the same transaction as the row, so a row is
never visible without its index entry or the other way round. ``store_operations`` holds async
retains, payload included, from the moment they are acknowledged until they are done, and the
document events of the finished ones (a document's history). ``store_chunks`` keeps each retained
item's text as Hindsight's chunk of its document (one chunk per item: there is no extraction that
splits it); a memory names its chunk (``chunk_id``) and the entities its retain gave it
(``entities``, a JSON object of the names by their key, :mod:`store.entities`).
"""

from __future__ import annotations

import sqlite3

from memwarden.db.migrations import Migration, run_script
from memwarden.store.text import token_estimate

SCHEMA = """
CREATE TABLE store_banks (
    bank_id TEXT PRIMARY KEY,
    name TEXT,
    mission TEXT NOT NULL DEFAULT '',
    background TEXT NOT NULL DEFAULT '',
    disposition TEXT NOT NULL DEFAULT '{"skepticism": 3, "literalism": 3, "empathy": 3}',
    overrides TEXT NOT NULL DEFAULT '{}',
    embedder TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    last_write_at TEXT,
    last_document_at TEXT
);

CREATE TABLE store_documents (
    bank_id TEXT NOT NULL,
    id TEXT NOT NULL,
    original_text TEXT,
    content_hash TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    metadata TEXT,
    retain_params TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE store_units (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    id TEXT NOT NULL UNIQUE,
    bank_id TEXT NOT NULL,
    document_id TEXT,
    text TEXT NOT NULL,
    terms TEXT NOT NULL,
    context TEXT NOT NULL DEFAULT '',
    fact_type TEXT NOT NULL DEFAULT 'world',
    tags TEXT NOT NULL DEFAULT '[]',
    metadata TEXT NOT NULL DEFAULT '{}',
    mentioned_at TEXT,
    occurred_start TEXT,
    occurred_end TEXT,
    state TEXT NOT NULL DEFAULT 'valid',
    invalidation_reason TEXT,
    invalidated_at TEXT,
    edited_at TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    embedder TEXT,
    embedding BLOB
);
CREATE INDEX store_units_bank ON store_units (bank_id, state, seq);
CREATE INDEX store_units_document ON store_units (bank_id, document_id);

CREATE VIRTUAL TABLE store_units_fts USING fts5(terms, content='store_units', content_rowid='seq');
CREATE TRIGGER store_units_ai AFTER INSERT ON store_units BEGIN
    INSERT INTO store_units_fts (rowid, terms) VALUES (new.seq, new.terms);
END;
CREATE TRIGGER store_units_ad AFTER DELETE ON store_units BEGIN
    INSERT INTO store_units_fts (store_units_fts, rowid, terms) VALUES ('delete', old.seq, old.terms);
END;
CREATE TRIGGER store_units_au AFTER UPDATE OF terms ON store_units BEGIN
    INSERT INTO store_units_fts (store_units_fts, rowid, terms) VALUES ('delete', old.seq, old.terms);
    INSERT INTO store_units_fts (rowid, terms) VALUES (new.seq, new.terms);
END;

CREATE VIRTUAL TABLE store_units_vocab USING fts5vocab(store_units_fts, 'row');

CREATE TABLE store_operations (
    id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    type TEXT NOT NULL,
    status TEXT NOT NULL,
    items_count INTEGER NOT NULL,
    payload TEXT,
    error_message TEXT,
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    completed_at TEXT
);
CREATE INDEX store_operations_status ON store_operations (status, created_at);
"""


def _m0003_local_store(db: sqlite3.Connection) -> None:
    run_script(db, SCHEMA)


def _m0006_unit_feedback(db: sqlite3.Connection) -> None:
    # Operators' feedback on a memory nudges the self-hosted store's ranking of its facts.
    db.execute("ALTER TABLE store_units ADD COLUMN feedback INTEGER NOT NULL DEFAULT 0")


def _m0007_unit_tokens(db: sqlite3.Connection) -> None:
    # Each memory's cost against a recall's max_tokens, kept with the row: recall picks what fits
    # from the candidates' costs and reads only the rows it returns.
    db.execute("ALTER TABLE store_units ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0")
    db.create_function("memwarden_tokens", 1, token_estimate, deterministic=True)
    db.execute("UPDATE store_units SET tokens = memwarden_tokens(text)")


CHUNKS = """
CREATE TABLE store_chunks (
    bank_id TEXT NOT NULL,
    document_id TEXT NOT NULL,
    chunk_index INTEGER NOT NULL,
    chunk_id TEXT NOT NULL,
    text TEXT NOT NULL,
    created_at TEXT NOT NULL,
    PRIMARY KEY (bank_id, document_id, chunk_index)
);
CREATE INDEX store_chunks_id ON store_chunks (chunk_id);
ALTER TABLE store_units ADD COLUMN chunk_id TEXT;
ALTER TABLE store_units ADD COLUMN entities TEXT NOT NULL DEFAULT '{}';
ALTER TABLE store_operations ADD COLUMN events TEXT;
"""


def _m0010_chunks_entities(db: sqlite3.Connection) -> None:
    # A document's chunks, and the entities a retain names. The memories written before have no
    # chunk rows: each becomes its document's chunk, in the order they were written.
    run_script(db, CHUNKS)
    db.execute(
        "CREATE TEMP TABLE chunk_of AS SELECT seq, ROW_NUMBER() OVER (PARTITION BY bank_id, document_id ORDER BY seq)"
        " - 1 AS n FROM store_units WHERE document_id IS NOT NULL"
    )
    db.execute(
        "UPDATE store_units SET chunk_id = bank_id || '_' || document_id || '_' || chunk_of.n FROM chunk_of"
        " WHERE chunk_of.seq = store_units.seq"
    )
    db.execute(
        "INSERT INTO store_chunks (bank_id, document_id, chunk_index, chunk_id, text, created_at)"
        " SELECT u.bank_id, u.document_id, chunk_of.n, u.chunk_id, u.text, u.created_at"
        " FROM store_units u JOIN chunk_of ON chunk_of.seq = u.seq"
    )
    db.execute("DROP TABLE chunk_of")


# Applied when the store attaches to the database (:class:`memwarden.store.local.LocalStore`); the
# names continue the ledger's numbering, which they shared when one list held both.
STORE_MIGRATIONS: tuple[Migration, ...] = (
    ("0003_local_store", _m0003_local_store),
    ("0006_unit_feedback", _m0006_unit_feedback),
    ("0007_unit_tokens", _m0007_unit_tokens),
    ("0010_store_chunks_entities", _m0010_chunks_entities),
)
