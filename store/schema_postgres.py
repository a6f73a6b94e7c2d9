"""The self-hosted store's tables on PostgreSQL: what :mod:`store.schema`'s migrations make there.

The tables, columns and indexes are SQLite's, through the connection's DDL translation
(``db/postgres.ddl``); what SQLite builds with its own extensions is PostgreSQL's here:

- the full-text index (FTS5 over ``store_units.terms``) is ``store_terms``, a posting list: one row
  per term of a memory — (term, the memory's ``seq``, how often the term is in it) — kept in step by
  a trigger inside the transaction that writes the memory, as FTS5's triggers do. The terms carry
  their bank's prefix (``store/text.py``), so a term's postings and document frequency are its
  bank's alone, and the keyword retriever computes the same BM25 from them (``store/keyword.py``);
- the vectors are pgvector's: ``embedding_v``, written by every write of a vector beside the
  float32 BLOB SQLite keeps (dropped here by a trigger: the vector is kept once), searched through
  an HNSW index per embedder (:func:`store.pg_vectors.ensure_index`), so every instance searches
  what every other wrote;
- SQLite's ``AFTER DELETE`` triggers that delete a bank's transfers, directives and mental models,
  and a mental model's history, are trigger functions.

A store on PostgreSQL begins at these migrations: there is no SQLite data to carry over in them
(``memwarden bank export|import`` moves a bank between the engines).
"""

from __future__ import annotations

import sqlite3

from memwarden.db.common import Connection

TERM_CHARS = 200  # a posting's term, at most (the trigger's left(t, 200))

# The terms of a memory, counted: what FTS5's tokenizer finds in ``terms`` (space-separated tokens
# that are each one word of letters, digits and marks: store/text.py makes them so), each cut to
# TERM_CHARS characters (a B-tree entry holds ~2.7 kB: a long hex or base32 run in a memory would
# fail its write; the keyword arm cuts the query's terms alike).
TERMS = """
CREATE TABLE store_terms (
    term TEXT NOT NULL,
    seq BIGINT NOT NULL,
    tf INTEGER NOT NULL,
    PRIMARY KEY (term, seq)
);
CREATE INDEX store_terms_seq ON store_terms (seq);
CREATE FUNCTION store_units_terms() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP <> 'INSERT' THEN
        DELETE FROM store_terms WHERE seq = OLD.seq;
    END IF;
    IF TG_OP <> 'DELETE' THEN
        INSERT INTO store_terms (term, seq, tf)
        SELECT left(t, 200), NEW.seq, count(*) FROM string_to_table(NEW.terms, ' ') AS t WHERE t <> ''
        GROUP BY left(t, 200);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER store_units_terms_written AFTER INSERT OR DELETE OR UPDATE OF terms ON store_units
    FOR EACH ROW EXECUTE FUNCTION store_units_terms();
"""


def statements(script: str, *, skip: tuple[str, ...] = ()) -> list[str]:
    """``script``'s statements (SQLite's), leaving out those that begin with one of ``skip``."""
    out, buffer = [], ""
    for line in script.splitlines(keepends=True):
        buffer += line
        if sqlite3.complete_statement(buffer):
            if not buffer.strip().upper().startswith(skip):
                out.append(buffer.strip())
            buffer = ""
    return out


def run(db: Connection, script: str, *, skip: tuple[str, ...] = ()) -> None:
    for statement in statements(script, skip=skip):
        db.execute(statement)


# A row's vector is kept once, as pgvector's: the float32 BLOB a write gives beside it is dropped
# (a row of both passed PostgreSQL's 2 kB threshold, and each read of it went through TOAST).
VECTOR_ONCE = """
CREATE FUNCTION store_units_vector_once() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    IF NEW.embedding_v IS NOT NULL THEN
        NEW.embedding := NULL;
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER store_units_vector_once BEFORE INSERT OR UPDATE OF embedding, embedding_v ON store_units
    FOR EACH ROW EXECUTE FUNCTION store_units_vector_once();
"""


def units(db: Connection, schema: str) -> None:
    """0003: the tables without FTS5's, and pgvector's column (the extension made if it is not)."""
    db.execute("CREATE EXTENSION IF NOT EXISTS vector")
    run(db, schema, skip=("CREATE VIRTUAL TABLE", "CREATE TRIGGER"))
    db.execute("ALTER TABLE store_units ADD COLUMN embedding_v vector")
    for statement in _split_plpgsql(VECTOR_ONCE):
        db.execute(statement)


def keyword_terms(db: Connection) -> None:
    """0010: each memory's length in terms, and the posting list in place of FTS5's index."""
    db.execute("ALTER TABLE store_units ADD COLUMN term_count BIGINT NOT NULL DEFAULT 0")
    for statement in _split_plpgsql(TERMS):
        db.execute(statement)
    db.execute("CREATE INDEX store_units_bank_length ON store_units (bank_id, state, term_count)")


def on_delete(db: Connection, name: str, table: str, body: str) -> None:
    """SQLite's ``CREATE TRIGGER name AFTER DELETE ON table BEGIN body END`` as a trigger function."""
    db.execute(f"CREATE FUNCTION {name}() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN {body} RETURN NULL; END $$")
    db.execute(f"CREATE TRIGGER {name} AFTER DELETE ON {table} FOR EACH ROW EXECUTE FUNCTION {name}()")


def _split_plpgsql(script: str) -> list[str]:
    """Statements separated by a line that ends in ``;`` outside a ``$$`` body."""
    out, buffer, inside = [], "", False
    for line in script.splitlines(keepends=True):
        buffer += line
        inside ^= line.count("$$") % 2 == 1
        if not inside and line.rstrip().endswith(";"):
            out.append(buffer.strip().rstrip(";"))
            buffer = ""
    return out
