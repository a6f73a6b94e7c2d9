"""The installation's own key: 32 random bytes made at the first start, in ``installation.key``
beside the database (mode 0600), never sent anywhere. What it keys: the hashes of rejected content
(HMAC-SHA256, so a weak secret in a guessable sentence cannot be recovered offline from the ledger).
A copy of the data directory carries it; a new data directory has a new one."""

from __future__ import annotations

import contextlib
import os
import secrets
from pathlib import Path

KEY_FILE = "installation.key"


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
    text = path.read_text().strip()
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
        key = bytes.fromhex((data_dir / KEY_FILE).read_text().strip())
    except (OSError, ValueError):
        return None
    return key if len(key) == 32 else None
