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
from memwarden.db.common import now

log = structlog.get_logger("memwarden.audit")

CHECKPOINT_FILE = "audit-checkpoints.jsonl"
TAIL_BYTES = 65536


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


def last(folder: Path) -> Checkpoint | None:
    """The newest checkpoint in the folder (None: none yet). A last line that does not parse (a
    write cut by a crash) is skipped for the one before it."""
    path = folder / CHECKPOINT_FILE
    if not path.exists():
        return None
    with path.open("rb") as fh:
        with contextlib.suppress(OSError):
            fh.seek(-TAIL_BYTES, os.SEEK_END)
        lines = fh.read().decode("utf-8", "replace").splitlines()
    for line in reversed(lines):
        with contextlib.suppress(CheckpointError):
            return parse(line)
    return None


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


def keyed_start(db: sqlite3.Connection) -> int:
    """Where the keyed chain starts (``audit_meta``), set to the next event the first time a ledger
    is opened by a memwarden that keys its chain. Call inside a write transaction."""
    row = db.execute("SELECT value FROM audit_meta WHERE name = 'keyed_from'").fetchone()
    if row is not None:
        return int(row[0])
    start = last_seq(db) + 1
    db.execute("INSERT INTO audit_meta (name, value) VALUES ('keyed_from', ?)", (str(start),))
    return start


def missing_triggers(db: sqlite3.Connection) -> list[str]:
    """The append-only triggers that are not there (someone dropped them), recreated. Call inside a
    write transaction."""
    present = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    missing = [name for name in TRIGGERS if name not in present]
    for name in missing:
        db.execute(TRIGGERS[name])
    return missing


class Checkpointer:
    """Writes a checkpoint after ``every`` new events or ``interval`` seconds with new events,
    whichever comes first, and when asked (at start and at close)."""

    def __init__(self, folder: Path, key: bytes, *, keyed_from: int, every: int, interval: float) -> None:
        self.folder, self.key, self.keyed_from = folder, key, keyed_from
        self.every, self.interval = every, interval
        self.seq = 0
        self.at = time.monotonic()

    def after_commit(self, seq: int, head: str) -> Checkpoint | None:
        if seq <= self.seq or (seq - self.seq < self.every and time.monotonic() - self.at < self.interval):
            return None
        return self.write(seq, head)

    def write(self, seq: int, head: str) -> Checkpoint | None:
        if seq <= self.seq or seq == 0:
            return None
        checkpoint = sign(self.key, seq=seq, head=head, keyed_from=self.keyed_from)
        append(self.folder, checkpoint)
        log.info("audit_checkpoint", **checkpoint.as_json())
        self.seq, self.at = seq, time.monotonic()
        return checkpoint


def verify_all(
    db: sqlite3.Connection, *, installation_key: bytes | None, folder: Path, given: Checkpoint | None = None
) -> list[ChainProblem]:
    """The whole chain checked (keyed where it is), then against the folder's last checkpoint and
    ``given`` (one copied from the log). Empty: intact."""
    key = audit_key(installation_key) if installation_key else None
    try:
        row = db.execute("SELECT value FROM audit_meta WHERE name = 'keyed_from'").fetchone()
    except sqlite3.OperationalError:  # a ledger from before the keyed chain
        row = None
    keyed_from = int(row[0]) if row is not None else None
    problems = verify_chain(all_event_rows(db), key=key, keyed_from=keyed_from)
    if key is None and keyed_from is not None and keyed_from <= last_seq(db):
        problems.append(ChainProblem(keyed_from, "the installation key is missing: the keyed chain cannot be checked"))
    if key is not None and keyed_from is not None:
        found = every(folder) + ([given] if given is not None else [])
        problems.extend(against_all(db, found, key=key, keyed_from=keyed_from))
    return list(dict.fromkeys(problems))  # the same problem found twice (two checkpoints) said once
