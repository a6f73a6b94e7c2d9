"""Moving an installation's state from one database to another (``memwarden migrate-state``):
SQLite's file to PostgreSQL, back, or one PostgreSQL server to another — all or nothing, checked.

- **The source is held.** Its write lock is taken for the whole copy, so no memwarden writes to it
  meanwhile, and the move is refused while an instance runs on it (a live PostgreSQL instance, or
  the process an SQLite file's row names on this machine).
- **The target holds no state.** Its schema is migrated to this version; every table of
  :func:`moved_tables` is then filled inside one transaction under its write lock. The identity
  sequences follow the copied ids, and the outbox's claims are dropped (the next instance claims).
- **Checked before the commit.** Each table's row count is the source's, the audit chain's head
  (seq and hash) is the source's, and the chain verifies on the target exactly as on the source
  (the same installation key and checkpoints). Any difference rolls the copy back, so the target
  is left empty.
- **Recorded.** The target's chain then says where its state came from, and the source's chain
  says where it went (a ``state_migrated`` event on each). Otherwise the source is left as it was:
  a backup, removed by hand.

The self-hosted store's tables (``backend = "local"``) are a layer above this one: the caller passes
them as :class:`MoreTables` (``store/state_move.py``), and they are moved in the same transaction,
counted and checked like the rest.
"""

from __future__ import annotations

import contextlib
import sqlite3
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path
from typing import Any, Protocol

from memwarden.db import deliveries, instances, outbox, sqlite
from memwarden.db.audit import AuditEvent, append_events, audit_key
from memwarden.db.bank_stats import fold_counts
from memwarden.db.checkpoints import read_meta, verify_all
from memwarden.db.common import Connection, has_table, on_postgres
from memwarden.db.migrations import LEDGER_MIGRATIONS, ROWID_TABLES, migrate

BATCH = 2000  # rows read and written at a time
BATCH_BYTES = 32 * 1024 * 1024  # or this much text and bytes, whichever is first
GONE = "migrate-state"  # the owner of a delivery in flight when the source stopped: no instance's id
# The target's own: its migrations, its live instances; and what its triggers count as the
# memories are copied in (compared with the source's before the commit).
# A table of the self-hosted store (store/state_move.py moves them): its rows are never left behind.
STORE_TABLE = "store_units"
NOT_MOVED = ("schema_migrations", "instances", "memory_counts", "memory_days", "memory_deltas")
DERIVED = {"memory_counts_now": "bank, status, topic, stage", "memory_days_now": "bank, day"}


Row = tuple[Any, ...]


class MoreTables(Protocol):
    """Tables of a layer above moved with the state (the self-hosted store's), in this order."""

    tables: tuple[str, ...]

    def present(self, db: Connection) -> bool:
        """Whether ``db`` (the source) holds rows of them: they move only then."""

    def prepare(self, db: Connection) -> None:
        """Their schema on ``db`` (the target), migrated to this version (outside a transaction)."""

    def adapt(
        self, table: str, columns: list[str], src: Connection, dst: Connection
    ) -> tuple[list[str], Callable[[Row], Row]] | None:
        """Where the two engines keep ``table`` differently: the target's columns for the source's
        ``columns``, and a row's conversion (None: copied as it is)."""

    def check(self, src: Connection, dst: Connection) -> None:
        """What counts cannot show is the same on both sides; raises :class:`TransferError`."""


class TransferError(Exception):
    """Why a move was refused or failed; nothing was changed on either side."""


@dataclass(frozen=True)
class Location:
    """One end of a move: SQLite's file in ``data_dir`` (``url`` None), or PostgreSQL at ``url``."""

    data_dir: Path
    url: str | None = None

    @property
    def name(self) -> str:
        """What messages and the audit events call it (a PostgreSQL URL without its password)."""
        if self.url is None:
            return f"sqlite {(self.data_dir / 'memwarden.db').absolute()}"
        from memwarden.db.postgres import redacted

        return f"postgresql {redacted(self.url)}"


@dataclass
class Moved:
    """What a move copied: each table's rows, the audit chain's head, and the problems the chain
    already had on the source (carried over as they were, said again on the target)."""

    counts: dict[str, int]
    head: tuple[int, str] | None
    problems: list[str] = field(default_factory=list)
    source_recorded: bool = True  # the source's chain records the move (False: it could not be written)


@lru_cache(maxsize=1)
def moved_tables() -> tuple[str, ...]:
    """The tables of memwarden's state, in the order the migrations create them: those of a fresh
    schema, so a table a later migration adds is moved without being listed here."""
    db = sqlite3.connect(":memory:", isolation_level=None)
    try:
        migrate(db, LEDGER_MIGRATIONS)
        rows = db.execute("SELECT name FROM sqlite_master WHERE type = 'table' ORDER BY rowid").fetchall()
    finally:
        db.close()
    return tuple(r[0] for r in rows if not r[0].startswith("sqlite_") and r[0] not in NOT_MOVED)


def migrate_state(
    source: Location,
    target: Location,
    *,
    installation_key: bytes | None,
    recorded: int | None,
    checkpoint_dir: Path,
    more: MoreTables | None = None,
) -> Moved:
    """Copy memwarden's state from ``source`` to ``target`` (see the module's docstring) — with
    ``more``'s tables too. The chain is checked with ``installation_key`` against the checkpoints in
    ``checkpoint_dir``, keyed from ``recorded`` (what installation.key records). Raises
    :class:`TransferError`."""
    if source == target or (source.url is None and target.url is None and _same_file(source, target)):
        raise TransferError(f"the source and the target are the same database ({source.name})")
    src = _open(source, source=True)
    try:
        if more is not None and not more.present(src):
            more = None  # nothing of theirs on the source: the target gets none of their schema
        if more is None and has_table(src, STORE_TABLE) and _count(src, STORE_TABLE):
            raise TransferError(
                f"{source.name} holds a self-hosted store's memories, which this memwarden cannot move without"
                " its store: pip install 'memwarden[local]'"
            )
        dst = _open(target, source=False, more=more)
    except BaseException:
        src.close()
        raise
    try:
        return _move(src, dst, source, target, installation_key, recorded, checkpoint_dir, more)
    except _driver_errors() as exc:
        said = str(exc)
        for location in (source, target):
            if location.url is not None:
                from memwarden.db.postgres import scrub

                said = scrub(said, location.url)
        raise TransferError(f"the copy failed, nothing was changed: {said}") from None
    finally:
        dst.close()
        src.close()


def _move(
    src: Connection,
    dst: Connection,
    source: Location,
    target: Location,
    installation_key: bytes | None,
    recorded: int | None,
    checkpoint_dir: Path,
    more: MoreTables | None,
) -> Moved:
    key = audit_key(installation_key) if installation_key else None
    tables = (*moved_tables(), *(more.tables if more is not None else ()))
    src.execute("BEGIN IMMEDIATE")
    try:
        _refuse_running(src, source)
        if key is None and read_meta(src, None) is not None:
            raise TransferError(
                f"no installation.key in {source.data_dir}: the audit chain cannot be checked on the target"
                " (copy it, mode 0600, from the data folder of the instance that wrote it)"
            )
        if on_postgres(dst):  # the same database under another URL: no deadlock
            dst.execute("SET lock_timeout = '30s'")
        _refuse_unsettled(src, source)
        dst.execute("BEGIN IMMEDIATE")
        try:
            _refuse_running(dst, target)
            _refuse_state(dst, target, tables)
            counts = {table: _copy(src, dst, table, more.adapt if more is not None else None) for table in tables}
            if not any(counts.values()):
                raise TransferError(f"{source.name} holds no memwarden state: nothing to move")
            # Claims are the target's instances' to make. A delivery a stopped process was making is
            # owned by no live one there: the first instance's beat (or start, on SQLite) queues it again.
            dst.execute("UPDATE outbox SET owner = CASE WHEN state = 'sending' THEN ? ELSE NULL END", (GONE,))
            fold_counts(dst)
            _follow_identities(dst)
            problems = _check(src, dst, counts, installation_key, recorded, checkpoint_dir)
            if more is not None:
                more.check(src, dst)
            head = _head(dst)
            _keyed(dst, key)
            append_events(dst, [_event("from", source, counts)])
            dst.execute("COMMIT")
        except BaseException:
            dst.execute("ROLLBACK")
            raise
    except BaseException:
        src.execute("ROLLBACK")
        raise
    moved = Moved(counts, head, problems)
    if on_postgres(dst):  # the planner's statistics of the loaded tables now,
        with contextlib.suppress(Exception):  # not at autovacuum's next look
            dst.execute("ANALYZE")
    try:
        _keyed(src, key)
        append_events(src, [_event("to", target, counts)])
        src.execute("COMMIT")
    except Exception:  # the move is done; only the source's note of it is missing
        moved.source_recorded = False
        _rollback_quietly(src)
    return moved


def _open(location: Location, *, source: bool, more: MoreTables | None = None) -> Connection:
    """``location``'s database, its schema (and ``more``'s) migrated to this version (as a start of
    memwarden would) once no instance is found running on it. A source must exist."""
    db = _open_migrated(location, source=source)
    if more is not None:
        try:
            more.prepare(db)
        except _driver_errors() as exc:
            db.close()
            said = str(exc)
            if location.url is not None:
                from memwarden.db.postgres import scrub

                said = scrub(said, location.url)
            raise TransferError(f"{location.name} cannot be used: {said}") from None
    return db


def _open_migrated(location: Location, *, source: bool) -> Connection:
    if location.url is not None:
        from memwarden.db import postgres

        try:
            db = postgres.connect(location.url)
            # A long check (the whole chain re-hashed on the other side) leaves this side's transaction
            # idle meanwhile: not ended by the server after a minute, as a writer's would be.
            db.execute("SET idle_in_transaction_session_timeout = 0")
            _refuse_running(db, location)  # type: ignore[arg-type]
            postgres.prepare(db)
        except postgres.Error as exc:
            said = postgres.scrub(str(exc), location.url)
            raise TransferError(f"{location.name} cannot be used: {said}") from None
        return db  # type: ignore[return-value]
    path = location.data_dir / "memwarden.db"
    if source and not path.is_file():
        raise TransferError(f"no memwarden database in {location.data_dir.absolute()} (--data-dir, or the settings')")
    try:
        if path.is_file():
            found = sqlite.connect(path)
            try:
                _refuse_running(found, location)
            finally:
                found.close()
        location.data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
        return sqlite.open_writer(path)
    except (OSError, sqlite3.DatabaseError) as exc:
        raise TransferError(f"{location.name} cannot be used: {exc}") from None


def _driver_errors() -> tuple[type[Exception], ...]:
    try:
        from memwarden.db.postgres import Error
    except ImportError:  # psycopg not installed: SQLite only
        return (sqlite3.Error,)
    return (sqlite3.Error, Error)


def _same_file(a: Location, b: Location) -> bool:
    try:
        return (a.data_dir / "memwarden.db").resolve() == (b.data_dir / "memwarden.db").resolve()
    except OSError:
        return False


def _refuse_running(db: Connection, location: Location) -> None:
    if not has_table(db, "instances"):  # a schema from before the registry of instances: none registered
        return
    running = instances.running(db)
    if running:
        named = ", ".join(f"pid {i.pid} on {i.host}" for i in running)
        raise TransferError(f"memwarden is running on {location.name} ({named}): stop every instance first")


def _refuse_unsettled(db: Connection, location: Location) -> None:
    """Pending memories that no outbox entry speaks for (a process stopped between the two, in a
    memwarden older than one transaction for both) are queued by a start on SQLite, never on a
    shared database: settled on the source first."""
    claimed = outbox.claimed_memory_ids(db)
    orphans = [m for _, m, _ in deliveries.pending_rows(db) if m not in claimed]
    if orphans:
        raise TransferError(
            f"{location.name} has {len(orphans)} pending memories no delivery speaks for: start memwarden on it"
            " once (it queues them) and stop it, then move"
        )


def _refuse_state(db: Connection, location: Location, tables: tuple[str, ...]) -> None:
    """The target must hold no state. A schema that a memwarden opened and wrote nothing to is
    empty: only the audit chain's bookkeeping (``audit_meta``) is there, replaced by the source's."""
    held = {t: n for t in tables if t != "audit_meta" and (n := _count(db, t))}
    if held:
        listed = ", ".join(f"{n} {t}" for t, n in held.items())
        where = "use an empty database"
        if location.url is None:
            where = "move memwarden.db (and its -wal, -shm) out of the way"
        raise TransferError(f"{location.name} already holds memwarden state ({listed}): {where}")
    db.execute("DELETE FROM audit_meta")


def _count(db: Connection, table: str) -> int:
    return int(db.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0])  # noqa: S608 (a table of moved_tables)


def _columns(db: Connection, table: str) -> list[str]:
    if on_postgres(db):
        rows = db.execute(
            "SELECT column_name FROM information_schema.columns WHERE table_schema = current_schema()"
            " AND table_name = ? ORDER BY ordinal_position",
            (table,),
        )
        return [r[0] for r in rows]
    return [r[1] for r in db.execute(f"PRAGMA table_info({table})")]


Adapt = Callable[[str, list[str], Connection, Connection], tuple[list[str], Callable[[Row], Row]] | None]


def _copy(src: Connection, dst: Connection, table: str, adapt: Adapt | None = None) -> int:
    """Every row of ``table`` copied (a rowid-ordered table with its rowids, so its order holds;
    converted where ``adapt`` says the engines keep it differently); the number copied."""
    columns = [c for c in _columns(src, table) if c != "rowid"]
    if table in ROWID_TABLES:
        columns = ["rowid", *columns]
    adapted = adapt(table, columns, src, dst) if adapt is not None else None
    written, convert = adapted if adapted is not None else (columns, None)
    missing = set(written) - {"rowid"} - set(_columns(dst, table))
    if missing:  # the migrations make both sides alike: a difference is a schema edited by hand
        raise TransferError(f"the target's table {table} has no column {', '.join(sorted(missing))}")
    listed = ", ".join(columns)
    order = " ORDER BY rowid" if table in ROWID_TABLES else ""
    insert = f"INSERT INTO {table} ({', '.join(written)}) VALUES ({', '.join('?' * len(written))})"  # noqa: S608
    copied = 0
    copy_in = getattr(dst, "copy_in", None)  # PostgreSQL's COPY
    for batch in _batches(_rows(src, f"SELECT {listed} FROM {table}{order}")):  # noqa: S608
        if convert is not None:
            batch = [convert(row) for row in batch]
        if copy_in is not None:
            copy_in(table, written, batch)
        else:
            dst.executemany(insert, batch)
        copied += len(batch)
    return copied


def _rows(db: Connection, sql: str) -> Iterator[Any]:
    stream = getattr(db, "stream", None)
    return iter(stream(sql, size=BATCH) if stream is not None else db.execute(sql))


def _batches(rows: Iterable[Any]) -> Iterator[list[tuple[Any, ...]]]:
    """``rows`` in batches of :data:`BATCH` rows or :data:`BATCH_BYTES` of text and bytes, whichever
    comes first (a store's exports and attachments are whole files)."""
    batch: list[tuple[Any, ...]] = []
    size = 0
    for row in rows:
        values = tuple(row)
        batch.append(values)
        size += sum(len(v) for v in values if isinstance(v, str | bytes | bytearray | memoryview))
        if len(batch) == BATCH or size >= BATCH_BYTES:
            yield batch
            batch, size = [], 0
    if batch:
        yield batch


def _follow_identities(db: Connection) -> None:
    """PostgreSQL's identity columns continue after the ids copied into them (SQLite's
    AUTOINCREMENT follows by itself)."""
    if not on_postgres(db):
        return
    rows = db.execute(
        "SELECT table_name, column_name FROM information_schema.columns"
        " WHERE table_schema = current_schema() AND is_identity = 'YES'"
    ).fetchall()
    for table, column in rows:
        db.execute(
            f"SELECT setval(pg_get_serial_sequence(?, ?), (SELECT COALESCE(MAX({column}), 0) + 1 FROM {table}), false)",  # noqa: S608
            (table, column),
        )


def _check(
    src: Connection,
    dst: Connection,
    counts: dict[str, int],
    installation_key: bytes | None,
    recorded: int | None,
    checkpoint_dir: Path,
) -> list[str]:
    """The target is the source: counts, head, and the chain's verification. The problems the
    source's chain has (the same on both)."""
    for table, copied in counts.items():
        there, here = _count(src, table), _count(dst, table)
        if not there == here == copied:
            raise TransferError(f"{table}: {there} rows on the source, {copied} copied, {here} on the target")
    for table, columns in DERIVED.items():
        listed = f"SELECT {columns}, n FROM {table} WHERE n > 0"  # noqa: S608 (compared as sets: collations differ)
        if {tuple(r) for r in src.execute(listed)} != {tuple(r) for r in dst.execute(listed)}:
            raise TransferError(f"{table}: the target's counts differ from the source's")
    if _head(src) != _head(dst):
        raise TransferError(f"the audit chain's head differs: {_head(src)} on the source, {_head(dst)} on the target")
    checked = [
        [
            f"event {p.seq}: {p.problem}"
            for p in verify_all(db, installation_key=installation_key, folder=checkpoint_dir, recorded=recorded)
        ]
        for db in (src, dst)
    ]
    if checked[0] != checked[1]:
        raise TransferError(f"the audit chain verifies differently on the target: {'; '.join(checked[1])}")
    return checked[0]


def _head(db: Connection) -> tuple[int, str] | None:
    row = db.execute("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").fetchone()
    return (int(row[0]), str(row[1])) if row else None


def _keyed(db: Connection, key: bytes | None) -> None:
    """The connection appends as the chain's writer would: keyed from where its records say."""
    meta = read_meta(db, key) if key is not None else None
    db.audit_key = key if meta is not None else None  # type: ignore[attr-defined]
    db.keyed_from = meta.keyed_from if meta is not None else 1  # type: ignore[attr-defined]


def _event(direction: str, other: Location, counts: dict[str, int]) -> AuditEvent:
    return AuditEvent(
        "state_migrated",
        actor="cli",
        source="cli",
        reason=f"memwarden's state copied {direction} {other.name}",
        after={"direction": direction, "other": other.name, "rows": counts},
    )


def _rollback_quietly(db: Connection) -> None:
    with contextlib.suppress(Exception):
        db.execute("ROLLBACK")
