"""Signed checkpoints of the audit chain's head, kept outside the database.

A checkpoint says "event ``seq`` had hash ``hash``", signed (HMAC-SHA256) with the audit key. It is
appended to ``audit-checkpoints.jsonl`` in ``audit.checkpoint_dir`` (by default the data folder's
``checkpoints/``: point it at other storage — another disk, a mount only memwarden appends to) and
written to the log (``audit_checkpoint``). The chain itself is keyed (``db/audit.py``), so an edit
with recomputed hashes needs the key; a checkpoint catches what the key cannot: someone who has the
key rewrites the chain, but not the checkpoints already shipped elsewhere, and a truncated tail
leaves a checkpoint pointing past the end. ``memwarden audit verify --checkpoint '<line>'`` checks
against a checkpoint copied from the log.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import json
import os
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from memwarden.db.audit import TRIGGERS, ChainProblem, all_event_rows, audit_key, last_seq, verify_chain
from memwarden.db.common import now, on_postgres

log = structlog.get_logger("memwarden.audit")

CHECKPOINT_FILE = "audit-checkpoints.jsonl"


class CheckpointError(Exception):
    """A checkpoint that cannot be read (not JSON, fields missing)."""


@dataclass(frozen=True)
class Checkpoint:
    seq: int
    hash: str
    keyed_from: int  # the first event of the keyed chain (events before it: an older, unkeyed chain)
    ts: str
    sig: str = ""

    def payload(self) -> bytes:
        fields = {"seq": self.seq, "hash": self.hash, "keyed_from": self.keyed_from, "ts": self.ts}
        return json.dumps(fields, sort_keys=True, separators=(",", ":")).encode()

    def as_json(self) -> dict[str, Any]:
        return {"seq": self.seq, "hash": self.hash, "keyed_from": self.keyed_from, "ts": self.ts, "sig": self.sig}

    def line(self) -> str:
        return json.dumps(self.as_json(), sort_keys=True, separators=(",", ":"))


def sign(key: bytes, *, seq: int, head: str, keyed_from: int) -> Checkpoint:
    unsigned = Checkpoint(seq, head, keyed_from, now())
    return Checkpoint(seq, head, keyed_from, unsigned.ts, _mac(key, unsigned))


def signed_by(checkpoint: Checkpoint, key: bytes) -> bool:
    return hmac.compare_digest(_mac(key, checkpoint), checkpoint.sig)


def _mac(key: bytes, checkpoint: Checkpoint) -> str:
    return hmac.new(key, b"memwarden-checkpoint\x00" + checkpoint.payload(), hashlib.sha256).hexdigest()


def parse(text: str) -> Checkpoint:
    """A checkpoint from its JSON line (or a log line's JSON object holding its fields)."""
    try:
        raw = json.loads(text)
        return Checkpoint(int(raw["seq"]), str(raw["hash"]), int(raw["keyed_from"]), str(raw["ts"]), str(raw["sig"]))
    except (ValueError, KeyError, TypeError) as exc:
        raise CheckpointError(f"not a checkpoint: {exc}") from None


def append(folder: Path, checkpoint: Checkpoint) -> None:
    """Append ``checkpoint`` to the folder's file (made 0700 / 0600), synced to disk."""
    folder.mkdir(mode=0o700, parents=True, exist_ok=True)
    path = folder / CHECKPOINT_FILE
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o600)
    try:
        os.write(fd, (checkpoint.line() + "\n").encode())
        os.fsync(fd)
    finally:
        os.close(fd)


def every(folder: Path) -> list[Checkpoint]:
    """Every checkpoint in the folder, oldest first (a line that does not parse — a write cut by a
    crash — skipped)."""
    path = folder / CHECKPOINT_FILE
    if not path.exists():
        return []
    found = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        with contextlib.suppress(CheckpointError):
            found.append(parse(line))
    return found


def against(
    db: sqlite3.Connection, checkpoint: Checkpoint, *, key: bytes, keyed_from: int, tail: bool = True
) -> list[ChainProblem]:
    """What the database's chain says against ``checkpoint`` (empty: it agrees): a wrong signature, a
    moved start of the keyed chain, a tail cut off before the checkpoint, an event at the
    checkpoint that is not the one signed (an edit with the chain recomputed), or a break after it."""
    if not signed_by(checkpoint, key):
        return [ChainProblem(checkpoint.seq, "the checkpoint's signature is wrong (forged, or another installation's)")]
    problems = []
    if checkpoint.keyed_from != keyed_from:
        problems.append(
            ChainProblem(
                keyed_from, f"the keyed chain starts at {keyed_from}, the checkpoint says {checkpoint.keyed_from}"
            )
        )
    row = db.execute("SELECT hash FROM audit_events WHERE seq = ?", (checkpoint.seq,)).fetchone()
    if row is None:
        end = last_seq(db)
        problems.append(ChainProblem(end + 1, f"events {end + 1}-{checkpoint.seq} and on are gone (truncated)"))
        return problems
    if row[0] != checkpoint.hash:
        problems.append(
            ChainProblem(checkpoint.seq, "the event at the checkpoint is not the one signed (edited, chain recomputed)")
        )
    if tail:  # the chain from the checkpoint on (what comes before it is the full verify's)
        rows = db.execute("SELECT * FROM audit_events WHERE seq >= ? ORDER BY seq", (checkpoint.seq,)).fetchall()
        problems.extend(
            verify_chain(rows, key=key, keyed_from=keyed_from, start=(checkpoint.seq, rows[0]["prev_hash"]))
        )
    return problems


def against_all(db: sqlite3.Connection, found: list[Checkpoint], *, key: bytes, keyed_from: int) -> list[ChainProblem]:
    """:func:`against` every checkpoint (each an indexed look-up; the chain's tail from the last
    one only). A checkpoint written after a tampering does not bless it: the earlier ones still
    disagree."""
    problems: list[ChainProblem] = []
    for i, checkpoint in enumerate(found):
        problems.extend(against(db, checkpoint, key=key, keyed_from=keyed_from, tail=i == len(found) - 1))
    return list(dict.fromkeys(problems))


@dataclass(frozen=True)
class ChainMeta:
    """What the ledger itself says about its chain (``audit_meta``): where the keyed part starts and
    the last checkpoint written, sealed with the audit key — an edit (to pass a re-chain off as an
    older, unkeyed one; to hide deleted checkpoints) breaks the seal."""

    keyed_from: int
    checkpoint_seq: int
    sealed: bool  # the seal matches


def _seal(key: bytes, keyed_from: int, checkpoint_seq: int) -> str:
    return hmac.new(key, f"audit-meta\x00{keyed_from}\x00{checkpoint_seq}".encode(), hashlib.sha256).hexdigest()


def read_meta(db: sqlite3.Connection, key: bytes | None) -> ChainMeta | None:
    """The ledger's chain facts (None: a ledger from before the keyed chain)."""
    try:
        rows = dict(db.execute("SELECT name, value FROM audit_meta").fetchall())
    except sqlite3.OperationalError:
        return None
    if "keyed_from" not in rows:
        return None
    keyed_from, checkpoint_seq = int(rows["keyed_from"]), int(rows.get("checkpoint_seq", "0"))
    sealed = key is not None and hmac.compare_digest(rows.get("seal", ""), _seal(key, keyed_from, checkpoint_seq))
    return ChainMeta(keyed_from, checkpoint_seq, sealed)


def write_meta(db: sqlite3.Connection, key: bytes, keyed_from: int, checkpoint_seq: int) -> None:
    """Record (and seal) the chain facts. Call inside a write transaction."""
    for name, value in (
        ("keyed_from", str(keyed_from)),
        ("checkpoint_seq", str(checkpoint_seq)),
        ("seal", _seal(key, keyed_from, checkpoint_seq)),
    ):
        db.execute(
            "INSERT INTO audit_meta (name, value) VALUES (?, ?)"
            " ON CONFLICT (name) DO UPDATE SET value = excluded.value",
            (name, value),
        )


def keyed_start(db: sqlite3.Connection, key: bytes, recorded: int | None) -> tuple[ChainMeta, list[ChainProblem]]:
    """The chain facts, set the first time a ledger is opened by a memwarden that keys its chain
    (keyed from the next event), and what is wrong with them. ``recorded`` is where the
    installation's key file says the keyed part starts (``db/installation.py``): it wins over the
    database, which an attacker without the key can still edit — facts deleted, or a start that
    disagrees, are problems, and the chain is checked from the recorded start. Call inside a write
    transaction."""
    meta = read_meta(db, key)
    if meta is None and recorded is None:  # a ledger from before the keyed chain: keyed from now on
        start = last_seq(db) + 1
        write_meta(db, key, start, 0)
        return ChainMeta(start, 0, True), []
    if meta is None:
        assert recorded is not None
        write_meta(db, key, recorded, 0)
        said = f"installation.key records a chain keyed from event {recorded}"
        return ChainMeta(recorded, 0, True), [
            ChainProblem(recorded, f"the chain's facts (audit_meta) were deleted ({said})")
        ]
    if recorded is not None and meta.keyed_from != recorded:
        said = f"audit_meta says {meta.keyed_from}, installation.key records {recorded}"
        problem = ChainProblem(min(recorded, meta.keyed_from), f"the keyed chain's start was moved ({said})")
        return ChainMeta(recorded, meta.checkpoint_seq, meta.sealed), [problem]
    return meta, []


def meta_problems(meta: ChainMeta | None, found: list[Checkpoint], end: int) -> list[ChainProblem]:
    """What the ledger's sealed facts say against the checkpoint folder: an edited seal, or
    checkpoints the ledger wrote that the folder no longer holds (deleted with the events after)."""
    if meta is None:
        return []
    if not meta.sealed:
        return [ChainProblem(meta.keyed_from, "the chain's facts (audit_meta) were edited: their seal does not match")]
    newest = found[-1].seq if found else 0
    if meta.checkpoint_seq > newest:
        said = (
            f"the ledger wrote a checkpoint at event {meta.checkpoint_seq}; the checkpoint folder's last is at {newest}"
        )
        return [ChainProblem(min(newest + 1, end + 1), f"checkpoints are missing ({said})")]
    return []


def missing_triggers(db: sqlite3.Connection) -> list[str]:
    """The append-only triggers that are not there (someone dropped them), recreated. Call inside a
    write transaction."""
    if on_postgres(db):
        catalog = "SELECT tgname FROM pg_trigger WHERE tgrelid = 'audit_events'::regclass AND NOT tgisinternal"
    else:
        catalog = "SELECT name FROM sqlite_master WHERE type = 'trigger'"
    present = {r[0] for r in db.execute(catalog)}
    missing = [name for name in TRIGGERS if name not in present]
    for name in missing:
        db.execute(TRIGGERS[name])
    return missing


LEADER_LOCK = 0x6D77636B  # "mwck": held (session-scoped) by the instance that writes the checkpoints


class Checkpointer:
    """Writes a checkpoint after ``every`` new events, when asked by the timer (``interval`` seconds,
    :meth:`memwarden.db.database.Database.checkpoint_due`), and at start and at close; records each
    in the ledger's sealed facts. A checkpoint that cannot be written (the folder's storage gone)
    does not fail the write that set it off: it is logged, ``failing`` says why (health:
    degraded), and the next one tries again.

    Instances on one PostgreSQL share one chain and one checkpoint folder (storage each mounts):
    one of them writes the checkpoints — the one holding the advisory lock :data:`LEADER_LOCK` on
    its writer's connection; another takes it over when that one's connection ends."""

    def __init__(
        self, folder: Path, key: bytes, *, keyed_from: int, every: int, interval: float, db: sqlite3.Connection
    ) -> None:
        self.folder, self.key, self.keyed_from = folder, key, keyed_from
        self.every, self.interval = every, interval
        self.db = db
        self.seq = 0
        self.at = time.monotonic()
        self.failing: str | None = None
        self.shared = on_postgres(db)
        self.leading = not self.shared

    def lead(self) -> bool:
        """Whether this instance writes the checkpoints (on PostgreSQL: whether its writer's
        connection holds the leader's lock — a connection opened again has lost it — or now takes it)."""
        if not self.shared:
            return True
        held = self.db.execute(
            "SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND objid = ? AND objsubid = 1"
            " AND pid = pg_backend_pid() AND granted",
            (LEADER_LOCK,),
        ).fetchone()
        if held is None:
            held = self.db.execute("SELECT pg_try_advisory_lock(?)", (LEADER_LOCK,)).fetchone()[0] or None
        self.leading = held is not None
        return self.leading

    def after_commit(self, seq: int, head: str) -> Checkpoint | None:
        if seq <= self.seq or (seq - self.seq < self.every and time.monotonic() - self.at < self.interval):
            return None
        if self.shared and not self.leading:  # another instance writes them; the timer asks again
            self.at = time.monotonic()
            return None
        return self.write(seq, head)

    def write(self, seq: int, head: str) -> Checkpoint | None:
        if seq <= self.seq or seq == 0 or not self.lead():
            return None
        checkpoint = sign(self.key, seq=seq, head=head, keyed_from=self.keyed_from)
        try:
            append(self.folder, checkpoint)
        except OSError as exc:
            self.failing = f"cannot write an audit checkpoint in {self.folder}: {exc}"
            log.error("audit_checkpoint_failed", folder=str(self.folder), error=str(exc))
            self.at = time.monotonic()
            return None
        self.failing = None
        log.info("audit_checkpoint", **checkpoint.as_json())
        self.seq, self.at = seq, time.monotonic()
        in_transaction = self.db.in_transaction
        if not in_transaction:
            self.db.execute("BEGIN IMMEDIATE")
        try:
            write_meta(self.db, self.key, self.keyed_from, seq)
            if not in_transaction:
                self.db.execute("COMMIT")
        except BaseException:
            if not in_transaction:
                self.db.execute("ROLLBACK")
            raise
        return checkpoint


def verify_all(
    db: sqlite3.Connection,
    *,
    installation_key: bytes | None,
    folder: Path,
    given: Checkpoint | None = None,
    recorded: int | None = None,
    checkpoints_after: int = 0,
) -> list[ChainProblem]:
    """The whole chain checked (keyed where it is: from ``recorded``, the key file's record, when
    there is one), then against the folder's last checkpoint and ``given`` (one copied from the
    log), the folder's checkpoints after ``checkpoints_after`` only (an acknowledgement's seq: the
    server's own check after a start). Empty: intact."""
    key = audit_key(installation_key) if installation_key else None
    meta = read_meta(db, key)
    keyed_from = meta.keyed_from if meta is not None else None
    problems: list[ChainProblem] = []
    if recorded is not None and keyed_from != recorded:  # the key file's record wins (keyed_start)
        said = f"audit_meta says {keyed_from}" if keyed_from is not None else "audit_meta was deleted"
        problems.append(
            ChainProblem(recorded, f"the keyed chain's start was moved ({said}, installation.key records {recorded})")
        )
        keyed_from = recorded
        if meta is not None:
            meta = ChainMeta(recorded, meta.checkpoint_seq, meta.sealed)
    problems += verify_chain(all_event_rows(db), key=key, keyed_from=keyed_from)
    if key is None and keyed_from is not None and keyed_from <= last_seq(db):
        problems.append(ChainProblem(keyed_from, "the installation key is missing: the keyed chain cannot be checked"))
    if key is not None and keyed_from is not None:
        found = every(folder)
        problems.extend(meta_problems(meta, found, last_seq(db)))
        found = [c for c in found if c.seq > checkpoints_after] + ([given] if given is not None else [])
        problems.extend(against_all(db, found, key=key, keyed_from=keyed_from))
    return list(dict.fromkeys(problems))  # the same problem found twice (two checkpoints) said once
