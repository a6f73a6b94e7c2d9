"""The installation's own key: 32 random bytes made at the first start, in ``installation.key``
beside the database (mode 0600), never sent anywhere. What it keys: the hashes of rejected content
(HMAC-SHA256, so a weak secret in a guessable sentence cannot be recovered offline from the ledger)
and the audit chain. A copy of the data directory carries it; a new data directory has a new one.

The file's second line records where the audit chain's keyed part starts (``keyed_from 1`` for a
ledger made by a memwarden that keys its chain): not in the database alone, where an attacker
who cannot read the key could delete that fact (``DELETE FROM audit_meta``) and pass a chain
re-hashed with plain SHA-256 off as an older, unkeyed one (issue #33). The two cannot be parted
without losing the key."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

KEY_FILE = "installation.key"
CHAIN_LINE = "keyed_from"


class KeyFileError(Exception):
    """The key file exists but is not a key (edited, truncated)."""


def installation_key(data_dir: Path) -> bytes:
    """The data directory's key, made (0600, atomically: two processes starting at once agree) if
    there is none."""
    path = data_dir / KEY_FILE
    if not path.exists():
        draft = data_dir / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
        fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        try:
            with os.fdopen(fd, "w") as fh:
                fh.write(secrets.token_hex(32) + "\n")
                fh.flush()
                os.fsync(fh.fileno())
            with contextlib.suppress(FileExistsError):  # another process made it first: theirs stands
                os.link(draft, path)
        finally:
            draft.unlink()
    text = path.read_text().strip().split("\n", 1)[0].strip()
    try:
        key = bytes.fromhex(text)
    except ValueError:
        key = b""
    if len(key) != 32:
        raise KeyFileError(f"{path} is not memwarden's installation key (64 hex digits); restore it from a backup")
    return key


def read_installation_key(data_dir: Path) -> bytes | None:
    """The data directory's key without making one (None: there is none, or it is not a key)."""
    try:
        key = bytes.fromhex((data_dir / KEY_FILE).read_text().strip().split("\n", 1)[0].strip())
    except (OSError, ValueError):
        return None
    return key if len(key) == 32 else None


def recorded_chain_start(data_dir: Path) -> int | None:
    """Where the key file says the audit chain's keyed part starts (None: it says nothing — a key
    file from before the record, or none)."""
    try:
        lines = (data_dir / KEY_FILE).read_text().split("\n")
    except OSError:
        return None
    for line in lines[1:]:
        name, _, value = line.strip().partition(" ")
        if name == CHAIN_LINE and value.isascii() and value.isdigit():
            return int(value)
    return None


def record_chain_start(data_dir: Path, keyed_from: int) -> None:
    """Write where the keyed chain starts into the key file, beside the key (once: an existing record
    stands). Atomic: the file is replaced whole, mode 0600."""
    if recorded_chain_start(data_dir) is not None:
        return
    path = data_dir / KEY_FILE
    key_line = path.read_text().split("\n", 1)[0].strip()
    draft = data_dir / f".{KEY_FILE}.{os.getpid()}.{secrets.token_hex(4)}"
    fd = os.open(draft, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
    try:
        with os.fdopen(fd, "w") as fh:
            fh.write(f"{key_line}\n{CHAIN_LINE} {keyed_from}\n")
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(draft, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            draft.unlink()
