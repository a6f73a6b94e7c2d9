"""The self-hosted store's tables, in the same database as the ledger and the audit log.

``store_units`` holds one row per memory (Hindsight's "memory unit"): text, the derived full-text
terms (:func:`store.text.index_text`), labels, tags, times, state, and its vector as a float32
BLOB with the name of the embedder that made it. ``store_units_fts`` is an FTS5 external-content
index over the terms (each with its bank's prefix, migration 0010), kept in step by triggers inside
the same transaction as the row, so a row is never visible without its index entry or the other way
round. ``store_operations`` holds async
retains, payload included, from the moment they are acknowledged until they are done.


index over the terms, kept in step by triggers inside the same transaction as the row, so a row is
never visible without its index entry or the other way round. ``store_operations`` holds async
retains, payload included, from the moment they are acknowledged until they are done (and the
mental-model refreshes, written once done), and the document events of the finished ones (a
document's history). ``store_chunks`` keeps each retained item's text as Hindsight's chunk of its
document (one chunk per item: there is no extraction that splits it); a memory names its chunk
(``chunk_id``) and the entities its retain gave it (``entities``, a JSON object of the names by
their key, :mod:`store.entities`). ``store_directives``, ``store_mental_models`` and their history
serve reflect (:mod:`store.reflect`).
"""

from __future__ import annotations

import sqlite3

from memwarden.db.common import on_postgres
from memwarden.db.migrations import Migration, run_script
from memwarden.store import attachments, schema_postgres
from memwarden.store.text import index_text, token_estimate

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
    if on_postgres(db):
        schema_postgres.units(db, SCHEMA)
        return
    run_script(db, SCHEMA)


def _m0006_unit_feedback(db: sqlite3.Connection) -> None:
    # Operators' feedback on a memory nudges the self-hosted store's ranking of its facts.
    db.execute("ALTER TABLE store_units ADD COLUMN feedback INTEGER NOT NULL DEFAULT 0")


def _m0007_unit_tokens(db: sqlite3.Connection) -> None:
    # Each memory's cost against a recall's max_tokens, kept with the row: recall picks what fits
    # from the candidates' costs and reads only the rows it returns.
    db.execute("ALTER TABLE store_units ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0")
    if on_postgres(db):  # a store on PostgreSQL begins empty at 0003
        return
    db.create_function("memwarden_tokens", 1, token_estimate, deterministic=True)
    db.execute("UPDATE store_units SET tokens = memwarden_tokens(text)")


# The tokenizer keeps inside a token letters, digits, private use and marks (a term of a script with
# combining marks stays whole) and keeps diacritics: the terms are folded before they reach it.
FULL_TEXT = """
CREATE VIRTUAL TABLE store_units_fts USING fts5(
    terms, content='store_units', content_rowid='seq', tokenize="unicode61 remove_diacritics 0 categories 'L* N* Co M*'"
);
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
CREATE VIRTUAL TABLE store_units_vocab_instance USING fts5vocab(store_units_fts, 'instance');
"""


def _m0010_keyword_terms_per_bank(db: sqlite3.Connection) -> None:
    # The keyword retriever's statistics per bank: every term in the index carries its bank's
    # prefix, English words are stemmed, each memory's length in terms is kept for BM25, and the
    # index keeps diacritics and combining marks (the terms are folded before they reach it).
    if on_postgres(db):
        schema_postgres.keyword_terms(db)
        return
    run_script(
        db,
        """
        DROP TRIGGER store_units_ai;
        DROP TRIGGER store_units_ad;
        DROP TRIGGER store_units_au;
        DROP TABLE store_units_vocab;
        DROP TABLE store_units_fts;
        ALTER TABLE store_units ADD COLUMN term_count INTEGER NOT NULL DEFAULT 0;
        """,
    )
    rows = db.execute("SELECT seq, text, bank_id FROM store_units").fetchall()
    db.executemany(
        "UPDATE store_units SET terms = ?, term_count = ? WHERE seq = ?",
        [(*index_text(r[1], r[2]), r[0]) for r in rows],
    )
    run_script(db, FULL_TEXT)
    db.execute("INSERT INTO store_units_fts (store_units_fts) VALUES ('rebuild')")
    # A bank's size and mean length (BM25's statistics) read from the index alone.
    db.execute("CREATE INDEX store_units_bank_length ON store_units (bank_id, state, term_count)")


TRANSFERS = """
CREATE TABLE store_transfers (
    operation_id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    storage_key TEXT UNIQUE,
    archive BLOB,
    result_metadata TEXT NOT NULL,
    created_at TEXT NOT NULL
);
CREATE INDEX store_transfers_bank ON store_transfers (bank_id);
CREATE TRIGGER store_transfers_bank_gone AFTER DELETE ON store_banks BEGIN
    DELETE FROM store_transfers WHERE bank_id = old.bank_id;
END;
"""


def _m0011_store_transfers(db: sqlite3.Connection) -> None:
    # Bank exports and imports (store/transfer.py): an operation's answer, and an export's archive
    # until its bank goes.
    if on_postgres(db):
        schema_postgres.run(db, TRANSFERS, skip=("CREATE TRIGGER",))
        schema_postgres.on_delete(
            db, "store_transfers_bank_gone", "store_banks", "DELETE FROM store_transfers WHERE bank_id = OLD.bank_id;"
        )
        return
    run_script(db, TRANSFERS)


REFLECT_SCHEMA = """
CREATE TABLE store_directives (
    id TEXT PRIMARY KEY,
    bank_id TEXT NOT NULL,
    name TEXT NOT NULL,
    content TEXT NOT NULL,
    priority INTEGER NOT NULL DEFAULT 0,
    is_active INTEGER NOT NULL DEFAULT 1,
    tags TEXT NOT NULL DEFAULT '[]',
    created_at TEXT NOT NULL,
    updated_at TEXT NOT NULL
);
CREATE INDEX store_directives_bank ON store_directives (bank_id, priority, created_at);

CREATE TABLE store_mental_models (
    bank_id TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    source_query TEXT NOT NULL,
    content TEXT NOT NULL DEFAULT '',
    tags TEXT NOT NULL DEFAULT '[]',
    max_tokens INTEGER NOT NULL DEFAULT 2048,
    trigger_json TEXT NOT NULL DEFAULT '{}',
    reflect_response TEXT,
    created_at TEXT NOT NULL,
    last_refreshed_at TEXT,
    last_full_refreshed_at TEXT,
    last_memory_seen_at TEXT,
    PRIMARY KEY (bank_id, id)
);

CREATE TABLE store_mental_model_history (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    bank_id TEXT NOT NULL,
    mental_model_id TEXT NOT NULL,
    previous_content TEXT,
    previous_reflect_response TEXT,
    changed_at TEXT NOT NULL
);
CREATE INDEX store_mental_model_history_model ON store_mental_model_history (bank_id, mental_model_id, seq);

CREATE TRIGGER store_mental_models_ad AFTER DELETE ON store_mental_models BEGIN
    DELETE FROM store_mental_model_history WHERE bank_id = old.bank_id AND mental_model_id = old.id;
END;
CREATE TRIGGER store_banks_ad_reflect AFTER DELETE ON store_banks BEGIN
    DELETE FROM store_directives WHERE bank_id = old.bank_id;
    DELETE FROM store_mental_models WHERE bank_id = old.bank_id;
END;
"""


def _m0012_reflect(db: sqlite3.Connection) -> None:
    # Directives and mental models (reflect with an LLM, [llm]); a bank's go with it, by trigger,
    # whichever code deletes the bank.
    if on_postgres(db):
        schema_postgres.run(db, REFLECT_SCHEMA, skip=("CREATE TRIGGER",))
        schema_postgres.on_delete(
            db,
            "store_mental_models_ad",
            "store_mental_models",
            "DELETE FROM store_mental_model_history WHERE bank_id = OLD.bank_id AND mental_model_id = OLD.id;",
        )
        schema_postgres.on_delete(
            db,
            "store_banks_ad_reflect",
            "store_banks",
            "DELETE FROM store_directives WHERE bank_id = OLD.bank_id;"
            " DELETE FROM store_mental_models WHERE bank_id = OLD.bank_id;",
        )
        return
    run_script(db, REFLECT_SCHEMA)


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


def _m0013_chunks_entities(db: sqlite3.Connection) -> None:
    # A document's chunks, and the entities a retain names. The memories written before have no
    # chunk rows: each becomes its document's chunk, in the order they were written.
    run_script(db, CHUNKS)
    if on_postgres(db):  # a store on PostgreSQL begins empty at 0003
        return
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


def _m0016_attachments(db: sqlite3.Connection) -> None:
    # Image and file content blocks' bytes (store/attachments.py); none were kept before.
    run_script(db, attachments.SCHEMA)


def _m0023_operations_instance(db: sqlite3.Connection) -> None:
    # The instance that acknowledged an async retain: resumed by a start, or by another instance's
    # beat, only once that instance is no longer alive (never run twice beside it).
    db.execute("ALTER TABLE store_operations ADD COLUMN instance TEXT")


# Applied when the store attaches to the database (:class:`memwarden.store.local.LocalStore`); the
# names continue the ledger's numbering, which they shared when one list held both.
STORE_MIGRATIONS: tuple[Migration, ...] = (
    ("0003_local_store", _m0003_local_store),
    ("0006_unit_feedback", _m0006_unit_feedback),
    ("0007_unit_tokens", _m0007_unit_tokens),
    ("0010_keyword_terms_per_bank", _m0010_keyword_terms_per_bank),
    ("0011_store_transfers", _m0011_store_transfers),
    ("0012_store_reflect", _m0012_reflect),
    ("0013_store_chunks_entities", _m0013_chunks_entities),
    ("0016_store_attachments", _m0016_attachments),
    ("0023_store_operations_instance", _m0023_operations_instance),
)
