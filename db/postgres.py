"""memwarden's state on PostgreSQL: a connection that speaks to the repositories as SQLite's does.

The repositories write their SQL once, in SQLite's dialect with ``?`` parameters, and run inside
transaction functions given a connection (``db/common.Connection``). On PostgreSQL that
connection is a :class:`PgConnection` over psycopg 3, which:

- rewrites ``?`` to ``%s`` (outside quoted literals), doubles a literal ``%`` and writes an empty
  ``IN ()`` as ``IN (NULL)``; Python booleans go as 0/1, as SQLite stores them;
- takes ``BEGIN IMMEDIATE`` as SQLite means it — the one write lock — with a transaction-scoped
  advisory lock (:data:`WRITE_LOCK`): write transactions run one at a time across every instance
  on the database, so what holds on one SQLite file (a content hash checked, then inserted; the
  audit chain's head read, then extended) holds on N instances too. The lock is released at
  COMMIT or ROLLBACK, also when a connection dies;
- translates the migrations' DDL: ``INTEGER`` is ``BIGINT``, ``REAL`` ``DOUBLE PRECISION``,
  ``BLOB`` ``BYTEA``, ``INTEGER PRIMARY KEY AUTOINCREMENT`` an identity column, and the audit
  table's append-only triggers a trigger function (:func:`ddl`);
- gives rows that answer to both an index and a column name (:class:`Row`), and ``numeric``
  (what ``SUM`` of a ``BIGINT`` is) as an ``int`` when whole, else a ``float``.

Three SQLite functions the repositories use on JSON text and strings — ``json_extract``,
``json_each`` (of an array) and ``instr`` — are created in the schema (:data:`COMPAT_FUNCTIONS`),
so one SQL text serves both engines; the tables that SQLite orders by its ``rowid`` get an
identity column of that name (``db/migrations.py``, 0018).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from functools import lru_cache
from typing import Any, ClassVar
from urllib.parse import parse_qsl, urlsplit

import psycopg
from psycopg import Error as Error
from psycopg.adapt import Loader

from memwarden.db.common import DatabaseError

WRITE_LOCK = 0x6D656D77  # "memw": the advisory lock of the one writer (pg_advisory_xact_lock)
CONNECT_TIMEOUT = 10
# TCP keepalives: a host gone silent releases its locks (its instance's liveness, the write lock)
# within about half a minute, not after the operating system's two hours.
KEEPALIVES: dict[str, Any] = {"keepalives": 1, "keepalives_idle": 10, "keepalives_interval": 5, "keepalives_count": 3}

COMPAT_FUNCTIONS = (
    # SQLite's json_extract(doc, '$.a.b') on JSON kept as text: the value as text (NULL when absent).
    "CREATE OR REPLACE FUNCTION json_extract(doc text, path text) RETURNS text"
    " LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE"
    " AS $$ SELECT (doc::jsonb) #>> string_to_array(substr(path, 3), '.') $$",
    # SQLite's json_each(array) as the repositories use it: a column ``value`` of the elements' text.
    "CREATE OR REPLACE FUNCTION json_each(doc text) RETURNS TABLE (value text)"
    " LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE"
    " AS $$ SELECT jsonb_array_elements_text(doc::jsonb) $$",
    "CREATE OR REPLACE FUNCTION instr(haystack text, needle text) RETURNS integer"
    " LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$ SELECT strpos(haystack, needle) $$",
    "CREATE OR REPLACE FUNCTION memwarden_append_only() RETURNS trigger LANGUAGE plpgsql"
    " AS $$ BEGIN RAISE EXCEPTION 'audit events are append-only'; END $$",
)


def is_postgres_url(url: str | None) -> bool:
    return bool(url) and urlsplit(str(url)).scheme in ("postgresql", "postgres")


SECRET_PARAMETERS = ("password", "sslpassword")  # libpq's: the password, the client key's passphrase


def passwords(url: str) -> list[str]:
    """The secrets ``url`` carries: a password in its user part, ``password`` and ``sslpassword``
    parameters."""
    parts = urlsplit(url)
    found = [parts.password] if parts.password else []
    found += [v for k, v in parse_qsl(parts.query, keep_blank_values=True) if k.lower() in SECRET_PARAMETERS and v]
    return found


def redacted(url: str) -> str:
    """``url`` without its password, for messages and logs."""
    parts = urlsplit(url)
    netloc = parts.netloc
    if parts.password is not None:
        netloc = netloc.replace(f":{parts.password}@", ":***@", 1)
    query = "&".join(
        f"{k}=***" if k.lower() in SECRET_PARAMETERS else f"{k}={v}"
        for k, v in parse_qsl(parts.query, keep_blank_values=True)
    )
    return parts._replace(netloc=netloc, query=query).geturl()


def scrub(text: str, url: str) -> str:
    """``text`` (a driver's message) with the password of ``url`` masked wherever it appears."""
    for secret in passwords(url):
        text = text.replace(secret, "***")
    return text


class Row(tuple[Any, ...]):
    """A result row: a tuple (``row[0]``, equal to the tuple of its values) that also answers
    ``row["name"]``, ``row.keys()`` and ``dict(row)``, as sqlite3.Row does. One subclass per result
    shape (:func:`_row_class`) carries the column index."""

    __slots__ = ()
    _index: ClassVar[dict[str, int]] = {}

    def __getitem__(self, key: Any) -> Any:
        if isinstance(key, str):
            return tuple.__getitem__(self, self._index[key])
        return tuple.__getitem__(self, key)

    def keys(self) -> list[str]:
        return list(self._index)

    def __repr__(self) -> str:
        return f"Row({dict(zip(self._index, self, strict=True))!r})"


@lru_cache(maxsize=1024)
def _row_class(names: tuple[str, ...]) -> type[Row]:
    return type("Row", (Row,), {"__slots__": (), "_index": {name: i for i, name in enumerate(names)}})


def _row_factory(cursor: psycopg.Cursor[Any]) -> Any:
    return _row_class(tuple(column.name for column in cursor.description or []))


class _NumericLoader(Loader):
    """``numeric`` as SQLite gives it: an int when whole, else a float (never a Decimal)."""

    def load(self, data: Any) -> int | float:
        text = bytes(data).decode()
        if "." not in text and "e" not in text.lower() and text not in ("NaN", "Infinity", "-Infinity"):
            return int(text)
        value = float(text)
        return int(value) if value.is_integer() and abs(value) < 2**53 else value


@lru_cache(maxsize=4096)
def translate(sql: str) -> str:
    """``sql`` (SQLite's dialect, ``?`` parameters) for psycopg: ``%s`` parameters, ``%`` doubled."""
    out: list[str] = []
    quoted = False
    for ch in sql:
        if ch == "'":
            quoted = not quoted
            out.append(ch)
        elif ch == "%":
            out.append("%%")
        elif ch == "?" and not quoted:
            out.append("%s")
        else:
            out.append(ch)
    return ddl(_EMPTY_IN.sub("IN (NULL)", "".join(out)))


# An empty list (``IN ()``: SQLite takes it, false) as PostgreSQL can say it: ``IN (NULL)`` is never
# true either. (No repository negates one: ``NOT IN ()``, true in SQLite, would not be.)
_EMPTY_IN = re.compile(r"\bIN \(\)")
_AUTOINCREMENT = re.compile(r"\bINTEGER PRIMARY KEY AUTOINCREMENT\b", re.IGNORECASE)
_TYPES = ((re.compile(r"\bINTEGER\b"), "BIGINT"), (re.compile(r"\bREAL\b"), "DOUBLE PRECISION"))
_BLOB = re.compile(r"\bBLOB\b")
_TRIGGER = re.compile(
    r"^\s*CREATE TRIGGER (\w+) BEFORE (UPDATE|DELETE) ON (\w+)\s+BEGIN SELECT RAISE\(ABORT, '[^']*'\); END;?\s*$",
    re.IGNORECASE,
)
_DDL = re.compile(r"^\s*(CREATE TABLE|ALTER TABLE \w+ ADD COLUMN)\b", re.IGNORECASE)


def ddl(sql: str) -> str:
    """SQLite's DDL as PostgreSQL takes it (other statements unchanged)."""
    trigger = _TRIGGER.match(sql)
    if trigger:
        name, when, table = trigger.groups()
        return (
            f"CREATE TRIGGER {name} BEFORE {when.upper()} ON {table}"
            " FOR EACH ROW EXECUTE FUNCTION memwarden_append_only()"
        )
    if not _DDL.match(sql):
        return sql
    sql = _AUTOINCREMENT.sub("BIGINT GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY", sql)
    for pattern, replacement in _TYPES:
        sql = pattern.sub(replacement, sql)
    return _BLOB.sub("BYTEA", sql)


def _params(params: Sequence[Any] | Mapping[str, Any]) -> Sequence[Any] | Mapping[str, Any]:
    if isinstance(params, Mapping):
        return params
    if any(isinstance(p, bool) for p in params):
        return tuple(int(p) if isinstance(p, bool) else p for p in params)
    return params


class PgCursor:
    """What the repositories read of a cursor: fetchone, fetchall, iteration, rowcount."""

    __slots__ = ("_cursor",)

    def __init__(self, cursor: psycopg.Cursor[Any] | None) -> None:
        self._cursor = cursor

    def fetchone(self) -> Any:
        return self._cursor.fetchone() if self._cursor is not None and self._cursor.description else None

    def fetchall(self) -> list[Any]:
        return self._cursor.fetchall() if self._cursor is not None and self._cursor.description else []

    def fetchmany(self, size: int) -> list[Any]:
        return self._cursor.fetchmany(size) if self._cursor is not None and self._cursor.description else []

    def __iter__(self) -> Iterator[Any]:
        return iter(self.fetchall())

    @property
    def rowcount(self) -> int:
        return self._cursor.rowcount if self._cursor is not None else -1

    @property
    def lastrowid(self) -> None:
        return None


class PgConnection:
    """One PostgreSQL connection (autocommit: transactions are the caller's BEGIN … COMMIT), as the
    repositories use a sqlite3 connection. A broken connection is opened again at the next BEGIN."""

    dialect = "postgresql"
    audit_key: bytes | None = None
    keyed_from: int = 1

    def __init__(self, url: str, *, read_only: bool = False) -> None:
        self.url, self.read_only = url, read_only
        self._conn = self._connect()

    def _connect(self) -> psycopg.Connection[Any]:
        conn = psycopg.connect(
            self.url,
            autocommit=True,
            connect_timeout=CONNECT_TIMEOUT,
            row_factory=_row_factory,
            prepare_threshold=None,
            **KEEPALIVES,
        )
        conn.adapters.register_loader("numeric", _NumericLoader)
        # A write transaction is milliseconds long: one left open (its process frozen with the
        # instances' write lock) is ended by the server after a minute, not kept for ever.
        conn.execute("SET idle_in_transaction_session_timeout = '60s'")
        if self.read_only:
            conn.execute("SET default_transaction_read_only = on")
        return conn

    def usable(self) -> bool:
        """The connection is open and not lost."""
        return not (self._conn.closed or self._conn.broken)

    def _begin_on(self) -> psycopg.Connection[Any]:
        """The connection a transaction begins on: a lost one replaced, one left in a failed
        transaction rolled back (nothing is under way at a BEGIN)."""
        if not self.usable():
            self._conn = self._connect()
        elif self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE:
            self._conn.execute("ROLLBACK")
        return self._conn

    def execute(self, sql: str, params: Sequence[Any] | Mapping[str, Any] = ()) -> PgCursor:
        statement = sql.strip().upper()
        if statement in ("BEGIN IMMEDIATE", "BEGIN"):
            conn = self._begin_on()
            conn.execute("BEGIN")
            try:
                if statement == "BEGIN IMMEDIATE":
                    conn.execute("SELECT pg_advisory_xact_lock(%s)", (WRITE_LOCK,))
            except BaseException:
                if self.usable():
                    conn.execute("ROLLBACK")
                raise
            return PgCursor(conn.cursor())
        if statement in ("COMMIT", "ROLLBACK") and not self.usable():
            if statement == "COMMIT":
                raise psycopg.OperationalError("the connection to PostgreSQL was lost before the commit")
            return PgCursor(None)
        # Never a new connection here: within a transaction it would carry on without it (and its lock).
        # Parameters always given (an empty tuple too): psycopg then reads ``%%`` as ``%``.
        return PgCursor(self._conn.execute(translate(sql), _params(params)))

    @property
    def in_transaction(self) -> bool:
        return self._conn.info.transaction_status != psycopg.pq.TransactionStatus.IDLE

    def executemany(self, sql: str, rows: Iterable[Sequence[Any]]) -> PgCursor:
        cursor = self._conn.cursor()
        cursor.executemany(translate(sql), [_params(r) for r in rows])
        return PgCursor(cursor)

    def copy_in(self, table: str, columns: Sequence[str], rows: Iterable[Sequence[Any]]) -> None:
        """``rows`` into ``table``'s ``columns`` by COPY (inside a transaction): a bulk load at ~45,000
        rows/s, where one INSERT per row is ~14,000."""
        listed = ", ".join(columns)
        with self._conn.cursor() as cursor, cursor.copy(f"COPY {table} ({listed}) FROM STDIN") as copy:
            for row in rows:
                copy.write_row(row)

    def stream(self, sql: str, params: Sequence[Any] = (), size: int = 2000) -> Iterator[Any]:
        """The rows of a query, read ``size`` at a time through a server-side cursor (inside a
        transaction): a table of a million rows is never held whole."""
        with self._conn.cursor(name="memwarden_stream") as cursor:
            cursor.itersize = size
            cursor.execute(translate(sql), _params(params))
            yield from cursor

    def create_functions(self) -> None:
        """The SQLite functions the repositories' SQL calls (:data:`COMPAT_FUNCTIONS`). Call inside
        a write transaction."""
        for statement in COMPAT_FUNCTIONS:
            self._conn.execute(statement.encode())

    def __enter__(self) -> PgConnection:  # sqlite3's ``with db:`` (a transaction); each statement commits here
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def commit(self) -> None:
        """Nothing to do: outside BEGIN … COMMIT each statement commits (sqlite3's method, for callers
        that end a statement with it)."""

    def close(self) -> None:
        self._conn.close()

    def __del__(self) -> None:  # a connection dropped unclosed (a test's look at the ledger) closes quietly
        conn = getattr(self, "_conn", None)
        if conn is not None:
            conn.close()


def prepare(db: PgConnection) -> None:
    """The SQLite functions the repositories call created, then the ledger's migrations applied:
    each under the instances' one write lock, so instances starting together do it once."""
    from memwarden.db.migrations import LEDGER_MIGRATIONS, migrate

    db.execute("BEGIN IMMEDIATE")
    try:
        db.create_functions()
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise
    migrate(db, LEDGER_MIGRATIONS)  # type: ignore[arg-type]


def connect(url: str, *, read_only: bool = False) -> PgConnection:
    return PgConnection(url, read_only=read_only)


def connect_readonly_url(url: str) -> PgConnection:
    """A read-only connection to memwarden's database at ``url`` (the command line's offline modes);
    :class:`memwarden.db.database.DatabaseError` when it cannot be reached or is not memwarden's."""
    try:
        db = connect(url, read_only=True)
        db.execute("SELECT 1 FROM audit_events LIMIT 1")
    except psycopg.Error as exc:
        said = scrub(str(exc), url)
        raise DatabaseError(f"PostgreSQL at {redacted(url)} cannot be read as memwarden's database: {said}") from None
    return db
