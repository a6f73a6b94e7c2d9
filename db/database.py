"""memwarden's database: one SQLite file in the data directory, shared by the ledger (memories,
the review queue, config snapshots, plans, the audit log) and the self-hosted store's tables — or,
given a ``postgresql://`` URL, a PostgreSQL database shared by every instance (``db/postgres.py``:
the same SQL, the same migrations, one writer at a time across instances by an advisory lock).

WAL, **one writer**: every write runs on a single dedicated thread, inside one transaction
(``BEGIN IMMEDIATE`` … ``COMMIT``), so a request records all its verdicts or none. Reads run on
their own connections in a small thread pool, off the event loop. After each commit the audit
events the transaction appended are appended to ``audit.jsonl`` (a mirror that ``tail -f`` can
follow; re-synced from the database on start) and published to live subscribers (the
server-sent-events stream).
"""

from __future__ import annotations

import asyncio
import contextlib
import contextvars
import json
import os
import sqlite3
import threading
import uuid
from collections.abc import AsyncIterator, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, TypeVar

import structlog

from memwarden.db import instances, sqlite
from memwarden.db.audit import (
    AuditEvent,
    LedgerConnection,
    acknowledgement,
    append_events,
    audit_key,
    collecting,
    event_from_row,
    last_acknowledged,
    last_seq,
    unacknowledged_alarms,
)
from memwarden.db.checkpoints import (
    Checkpointer,
    against_all,
    keyed_start,
    meta_problems,
    missing_triggers,
    read_meta,
)
from memwarden.db.checkpoints import every as every_checkpoint
from memwarden.db.common import DatabaseError as DatabaseError
from memwarden.db.installation import (
    KEY_FILE,
    KeyFileError,
    installation_key,
    record_chain_start,
    recorded_chain_start,
)
from memwarden.db.migrations import Migration, migrate
from memwarden.db.sqlite import private

START_CHECKPOINTS = 64  # checkpoints checked at start (the newest); `audit verify` checks every one

T = TypeVar("T")
log = structlog.get_logger("memwarden.audit")


class Database:
    """The data directory's database. Create with :meth:`open`; close with :meth:`close`."""

    def __init__(self, path: Path, *, jsonl: Path | None, url: str | None = None) -> None:
        self.path = path
        self.url = url  # PostgreSQL's; None: the SQLite file at ``path``
        self.engine = "postgresql" if url else "sqlite"
        self.shared = url is not None  # other instances may use the same database
        self.instance_id = uuid.uuid4().hex[:16]  # this process, among them (db/instances.py)
        self.jsonl = jsonl
        self._writer = ThreadPoolExecutor(max_workers=1, thread_name_prefix="ledger-writer")
        self._readers = ThreadPoolExecutor(max_workers=2, thread_name_prefix="ledger-reader")
        self._local = threading.local()
        self._reader_dbs: list[sqlite3.Connection] = []
        self._mirror_file: Any = None
        self._write_db: LedgerConnection | None = None
        self._alive_db: Any = None  # PostgreSQL: the connection holding this instance's lock
        self._subscribers: set[asyncio.Queue[dict[str, Any]]] = set()
        self.installation_key = b""  # set by open(): keys the hashes of rejected content and the audit chain
        self.checkpoint_dir = path.parent / "checkpoints"
        self.checkpoints: Checkpointer | None = None  # set by the writer's opening
        self.alarms: list[str] = []  # the audit chain's unacknowledged alarms (health: critical)
        self._key_made_now = False  # open() made installation.key
        self._checkpoint_every, self._checkpoint_interval = 1000, 60.0

    @classmethod
    def open(
        cls,
        data_dir: Path,
        *,
        mirror: bool = True,
        checkpoint_dir: Path | None = None,
        checkpoint_every: int = 1000,
        checkpoint_interval: float = 60.0,
        url: str | None = None,
    ) -> Database:
        """Open (creating if needed) ``<data_dir>/memwarden.db`` — or the PostgreSQL database at
        ``url``, its tables migrated by whichever instance takes the write lock first; raise
        :class:`DatabaseError` clearly. The installation's key stays in ``data_dir`` (every instance
        on one PostgreSQL needs the same). The audit chain's checkpoints go to ``checkpoint_dir``
        (default ``<data_dir>/checkpoints``) every ``checkpoint_every`` events or
        ``checkpoint_interval`` seconds with new events. On PostgreSQL there is no ``audit.jsonl``
        mirror: the chain is the database's, which no one instance's file can follow."""
        try:
            data_dir.mkdir(mode=0o700, parents=True, exist_ok=True)
            private(data_dir, 0o700)  # memwarden's own: no other user reads or lists it
        except OSError as exc:
            raise DatabaseError(f"cannot create the data directory {data_dir}: {exc}") from None
        path = data_dir / "memwarden.db"
        ledger = cls(path, jsonl=data_dir / "audit.jsonl" if mirror and not url else None, url=url)
        if checkpoint_dir is not None:
            ledger.checkpoint_dir = checkpoint_dir
        ledger._checkpoint_every, ledger._checkpoint_interval = checkpoint_every, checkpoint_interval
        ledger._key_made_now = not (data_dir / KEY_FILE).exists()
        try:
            ledger.installation_key = installation_key(data_dir)
        except (OSError, KeyFileError) as exc:
            ledger.close()
            raise DatabaseError(str(exc)) from None
        try:
            ledger._writer.submit(ledger._open_writer).result()
        except DatabaseError:
            ledger.close()
            raise
        except sqlite3.DatabaseError as exc:
            ledger.close()
            if "locked" in str(exc):
                raise DatabaseError(
                    f"{path} is locked by another process (another memwarden on the same data directory?)"
                ) from None
            raise DatabaseError(f"{path} cannot be used as memwarden's database: {exc}") from None
        return ledger

    def _open_writer(self) -> None:
        if self.url is not None:
            self._open_postgres_writer(self.url)
            return
        db = sqlite.open_writer(self.path)
        self._write_db = db
        self._resync_mirror(db)
        self._guard_chain(db)
        self._register()

    def _register(self) -> None:
        """This instance among those on the database (SQLite: the only one). On PostgreSQL it holds
        its own lock, on a connection of its own, for its life: alive while it does."""
        if self.url is not None:
            self._hold()
        self._transaction(lambda tx: instances.register(tx, self.instance_id, exclusive=not self.shared))

    def _hold(self) -> None:
        from memwarden.db import postgres

        assert self.url is not None
        if self._alive_db is not None:
            with contextlib.suppress(Exception):
                self._alive_db.close()
        self._alive_db = postgres.connect(self.url)
        instances.hold(self._alive_db, self.instance_id)

    def leads(self) -> bool:
        """Whether this instance does what one instance of those sharing the database does (the
        checkpoints, the scheduled retention job): always, alone on SQLite."""
        return not self.shared or (self.checkpoints is not None and self.checkpoints.leading)

    async def heartbeat(self) -> None:
        """On a shared database (every ``instances.HEARTBEAT`` seconds): this instance still holds
        its lock — its connection opened again and the lock taken again if the connection was lost
        (meanwhile the others may have found it dead and taken its work: its worker checks a
        claim is still its own before each delivery) — and its registration is there."""
        if self.url is None:
            return
        if await asyncio.get_running_loop().run_in_executor(self._writer, self._hold_if_lost):
            await self.write(lambda tx: instances.register(tx, self.instance_id, exclusive=False))

    def _hold_if_lost(self) -> bool:
        """Whether the lock had to be taken again (its connection asked, not just looked at: a
        connection the server ended shows only when used)."""
        alive = self._alive_db
        if alive is not None and alive.usable():
            with contextlib.suppress(Exception):
                alive.execute("SELECT 1")
                return False
        self._hold()
        return True

    def _open_postgres_writer(self, url: str) -> None:
        from memwarden.db import postgres

        db = None
        try:
            db = postgres.connect(url)
            postgres.prepare(db)  # under the instances' one write lock: one of them migrates
            self._write_db = db  # type: ignore[assignment]
            self._guard_chain(db)  # type: ignore[arg-type]
            self._register()
        except (postgres.Error, DatabaseError) as exc:
            if db is not None:
                db.close()
            self._write_db = None
            if isinstance(exc, DatabaseError):
                raise
            said = postgres.scrub(str(exc), url)
            raise DatabaseError(f"PostgreSQL at {postgres.redacted(url)} cannot be used: {said}") from None

    def _guard_chain(self, db: LedgerConnection) -> None:
        """Key the chain, and look at it before anything is written: append-only triggers dropped
        (recreated), or a chain that disagrees with its last checkpoint, are alarms — audited (an
        ``audit_tamper`` event), logged, and health says ``critical``. Then a checkpoint of the head."""
        key = audit_key(self.installation_key)
        data_dir = self.path.parent
        if self.shared:  # one chain for every instance: one key, or nothing is written
            meta = read_meta(db, key)
            if (self._key_made_now and last_seq(db) > 0) or (meta is not None and not meta.sealed):
                raise DatabaseError(
                    f"{data_dir / KEY_FILE} is not the key of this database's audit chain: every instance on one"
                    " PostgreSQL needs the same installation.key (copy it, mode 0600, from a running instance's"
                    " data folder)"
                )
        recorded = recorded_chain_start(data_dir)
        db.execute("BEGIN IMMEDIATE")
        try:
            meta, moved = keyed_start(db, key, recorded)
            missing = missing_triggers(db)
            db.execute("COMMIT")
        except BaseException:
            db.execute("ROLLBACK")
            raise
        try:
            if recorded is None:  # the key file keeps it too (once)
                record_chain_start(data_dir, meta.keyed_from)
        except OSError as exc:  # a full or read-only disk: the next start writes it
            log.warning("audit_chain_start_not_recorded", error=str(exc))
        keyed_from = meta.keyed_from
        db.audit_key, db.keyed_from = key, keyed_from
        earlier = [f"event {seq} (unacknowledged): {reason}" for seq, reason in unacknowledged_alarms(db)]
        alarms = [f"the append-only trigger {name} was missing (recreated)" for name in missing]
        if self._key_made_now and last_seq(db) > 0:
            alarms.append(
                f"installation.key was made at this start for a ledger that holds {last_seq(db)} audit events:"
                " restore it from a backup (acknowledge only if this ledger comes from a memwarden older than the"
                " installation key)"
            )
        # An acknowledgement accepted the chain as it then was: a start checks the checkpoints written
        # since (``memwarden audit verify`` checks every one).
        every = every_checkpoint(self.checkpoint_dir)
        acknowledged = last_acknowledged(db)
        found = [c for c in every if c.seq > acknowledged]
        problems = moved + meta_problems(meta, every, last_seq(db))
        # The newest checkpoints at start (each an indexed look-up; ``audit verify`` checks them all).
        problems += against_all(db, found[-START_CHECKPOINTS:], key=key, keyed_from=keyed_from)
        alarms += [f"event {p.seq}: {p.problem}" for p in problems]
        self.checkpoints = Checkpointer(
            self.checkpoint_dir,
            key,
            keyed_from=keyed_from,
            every=self._checkpoint_every,
            interval=self._checkpoint_interval,
            db=db,
        )
        if found and not alarms:
            self.checkpoints.seq = found[-1].seq
        if alarms:
            log.error("audit_tampered", alarms=alarms)
            self._transaction(
                lambda tx: append_events(
                    tx, [AuditEvent("audit_tamper", actor="memwarden", source="audit", reason="; ".join(alarms)[:4000])]
                )
            )
        if earlier:
            log.error("audit_alarms_unacknowledged", alarms=earlier)
        self.alarms = earlier + alarms
        self._checkpoint_head(db)

    def recorded_chain_start(self) -> int | None:
        """Where installation.key says the audit chain's keyed part starts (``db/installation.py``)."""
        return recorded_chain_start(self.path.parent)

    def acknowledge(self, reason: str) -> int:
        """An operator has looked at the audit chain's alarms: an ``audit_acknowledged`` event (its
        actor the caller's key) ends them; health is no longer critical for them. The number of
        alarms acknowledged."""
        count = len(self.alarms)
        self.write_sync(lambda tx: append_events(tx, [acknowledgement(reason)]))
        return self._acknowledged(count)

    async def acknowledge_async(self, reason: str) -> int:
        """:meth:`acknowledge`, from the event loop."""
        count = len(self.alarms)
        await self.write(lambda tx: append_events(tx, [acknowledgement(reason)]))
        return self._acknowledged(count)

    def _acknowledged(self, count: int) -> int:
        self.alarms = []
        log.warning("audit_alarms_acknowledged", count=count)
        return count

    def _checkpoint_head(self, db: sqlite3.Connection) -> None:
        head = db.execute("SELECT seq, hash FROM audit_events ORDER BY seq DESC LIMIT 1").fetchone()
        if head is not None and self.checkpoints is not None:
            self.checkpoints.write(int(head[0]), str(head[1]))

    async def checkpoint_due(self) -> None:
        """A checkpoint of the head if events came since the last one (the timer's: a burst followed
        by quiet is signed within ``checkpoint_interval``, not at the next write)."""

        def run() -> None:
            if self._write_db is not None:
                self._checkpoint_head(self._write_db)

        await asyncio.get_running_loop().run_in_executor(self._writer, run)

    def add_alarms(self, alarms: list[str]) -> None:
        """Alarms found after the start (the full verify in the background): kept, audited, logged."""
        self.alarms = [*self.alarms, *alarms]
        log.error("audit_tampered", alarms=alarms)
        self.write_sync(
            lambda tx: append_events(
                tx, [AuditEvent("audit_tamper", actor="memwarden", source="audit", reason="; ".join(alarms)[:4000])]
            )
        )

    def _resync_mirror(self, db: sqlite3.Connection) -> None:
        """Append to audit.jsonl whatever the database has beyond it (a crash between the two)."""
        if self.jsonl is None:
            return
        last = 0
        if self.jsonl.exists():
            with self.jsonl.open("rb") as fh:
                with contextlib.suppress(OSError):
                    fh.seek(-65536, 2)
                tail = fh.read().splitlines()
            for line in reversed(tail):
                with contextlib.suppress(ValueError, KeyError):
                    last = int(json.loads(line)["seq"])
                    break
        rows = db.execute("SELECT * FROM audit_events WHERE seq > ? ORDER BY seq", (last,)).fetchall()
        self._mirror([event_from_row(r) for r in rows])

    def _mirror(self, events: list[dict[str, Any]]) -> None:
        if self.jsonl is None or not events:
            return
        if self._mirror_file is None:
            fd = os.open(self.jsonl, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
            private(self.jsonl, 0o600)
            self._mirror_file = os.fdopen(fd, "a", encoding="utf-8")
        self._mirror_file.write("".join(json.dumps(e, ensure_ascii=False, sort_keys=True) + "\n" for e in events))
        self._mirror_file.flush()

    def _read_db(self) -> sqlite3.Connection:
        db = getattr(self._local, "db", None)
        if db is None and self.url is not None:
            from memwarden.db import postgres

            db = postgres.connect(self.url, read_only=True)
            self._local.db = db
            self._reader_dbs.append(db)  # type: ignore[arg-type]
        if db is None:
            db = sqlite.open_reader(self.path)
            self._local.db = db
            self._reader_dbs.append(db)
        return db

    # -- public API -----------------------------------------------------------------------

    async def write(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """Run ``fn(db)`` in one transaction on the writer thread. Events it appended are mirrored
        and published after the commit. ``fn`` runs in a copy of the caller's context: the events it
        makes name the caller's actor (:data:`memwarden.db.audit.ACTOR`)."""
        loop = asyncio.get_running_loop()
        context = contextvars.copy_context()
        result, events = await loop.run_in_executor(self._writer, context.run, self._transaction, fn)
        self._publish(events)
        return result

    async def truncate_wal(self) -> bool:
        """Checkpoint the write-ahead log into the database and truncate it (``secure_delete`` has
        already overwritten what was deleted there; the log may still hold old page images). False
        when a reader kept it from completing (it is then retried at the next one)."""

        def run() -> bool:
            if self._write_db is None:
                raise DatabaseError("the database is closed")
            if self.url is not None:
                return True  # PostgreSQL's write-ahead log is the server's
            busy = self._write_db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()[0]
            return not busy

        return await asyncio.get_running_loop().run_in_executor(self._writer, run)

    async def audit(self, *events: AuditEvent) -> None:
        """Append ``events`` to the audit log in a transaction of their own."""
        await self.write(lambda db: append_events(db, events))

    def migrate_sync(self, steps: Sequence[Migration]) -> list[str]:
        """Apply ``steps`` not yet applied (on the writer thread, each in its own transaction):
        how a component that owns tables of its own (the self-hosted store) brings them."""

        def run() -> list[str]:
            if self._write_db is None:
                raise DatabaseError("the database is closed")
            try:
                return migrate(self._write_db, steps)
            except sqlite3.DatabaseError as exc:
                raise DatabaseError(f"{self.path} cannot be used as memwarden's database: {exc}") from None
            except Exception as exc:
                if self.url is None or type(exc).__module__.split(".")[0] != "psycopg":
                    raise
                raise DatabaseError(f"the PostgreSQL database cannot be used: {exc}") from None

        return self._writer.submit(run).result()

    def write_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        """The same, for callers without an event loop (the CLI)."""
        context = contextvars.copy_context()
        result, events = self._writer.submit(context.run, self._transaction, fn).result()
        self._publish(events)
        return result

    def _transaction(self, fn: Callable[[sqlite3.Connection], T]) -> tuple[T, list[dict[str, Any]]]:
        db = self._write_db
        if db is None:
            raise DatabaseError("the ledger is closed")
        with collecting() as events:
            db.execute("BEGIN IMMEDIATE")
            try:
                result = fn(db)
                db.execute("COMMIT")
            except BaseException:
                # (SQLite rolls a transaction back itself on some errors — a full disk in the middle
                # of an executemany: a ROLLBACK then would fail and hide the error.)
                if db.in_transaction:
                    db.execute("ROLLBACK")
                raise
        self._mirror(events)
        if events and self.checkpoints is not None:
            self.checkpoints.after_commit(int(events[-1]["seq"]), str(events[-1]["hash"]))
        return result, events

    def _publish(self, events: list[dict[str, Any]]) -> None:
        for queue in list(self._subscribers):
            for event in events:
                with contextlib.suppress(asyncio.QueueFull):
                    queue.put_nowait(event)

    async def read(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self._readers, lambda: fn(self._read_db()))

    def read_sync(self, fn: Callable[[sqlite3.Connection], T]) -> T:
        return self._readers.submit(lambda: fn(self._read_db())).result()

    @contextlib.asynccontextmanager
    async def subscribe(self) -> AsyncIterator[asyncio.Queue[dict[str, Any]]]:
        """New audit events as they are committed (for the live stream)."""
        queue: asyncio.Queue[dict[str, Any]] = asyncio.Queue(maxsize=10_000)
        self._subscribers.add(queue)
        try:
            yield queue
        finally:
            self._subscribers.discard(queue)

    def close(self) -> None:
        def close_writer() -> None:
            if self._write_db is not None:
                with contextlib.suppress(Exception):  # its work is no longer its own
                    self._transaction(lambda tx: instances.leave(tx, self.instance_id))
                with contextlib.suppress(Exception):  # sqlite3's, psycopg's, the disk's: closing anyway
                    self._checkpoint_head(self._write_db)  # the head at a stop: a truncation after it shows
                self._write_db.close()
                self._write_db = None
            if self._alive_db is not None:  # (also after an open that failed past taking it)
                with contextlib.suppress(Exception):
                    self._alive_db.close()
                self._alive_db = None
            if self._mirror_file is not None:
                self._mirror_file.close()
                self._mirror_file = None

        with contextlib.suppress(RuntimeError):
            self._writer.submit(close_writer).result()
        self._writer.shutdown(wait=True)
        self._readers.shutdown(wait=True)
        for db in self._reader_dbs:
            db.close()
        self._reader_dbs.clear()
