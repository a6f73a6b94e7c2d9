"""The ``api_keys`` table: memwarden's API keys (the hash of each secret, never the secret), their
scopes, and when they were revoked. Creating and revoking a key is audited in the same transaction
(``key_created`` / ``key_revoked``; the event holds the id, name and scopes — no secret) — and, on
PostgreSQL, told to every instance (``db/notices.py``: each reads the keys again)."""

from __future__ import annotations

import json
import sqlite3
from dataclasses import dataclass
from typing import Any

from memwarden.db import notices
from memwarden.db.audit import AuditEvent, append_events, current_actor
from memwarden.db.common import now
from memwarden.policies.keys import Scopes

COLUMNS = "id, name, secret_hash, scopes, created_at, created_by, expires_at, revoked_at"


@dataclass(frozen=True)
class KeyRecord:
    id: str
    name: str
    secret_hash: str
    scopes: Scopes
    created_at: str
    created_by: str
    expires_at: str | None
    revoked_at: str | None

    def usable(self, at: str) -> bool:
        """Neither revoked nor expired at ``at`` (an ISO timestamp in UTC, as :func:`now` gives)."""
        return self.revoked_at is None and (self.expires_at is None or at < self.expires_at)

    def public(self) -> dict[str, Any]:
        """What the API and the CLI show: everything but the hash."""
        return {
            "id": self.id,
            "name": self.name,
            "scopes": self.scopes.as_json(),
            "created_at": self.created_at,
            "created_by": self.created_by,
            "expires_at": self.expires_at,
            "revoked_at": self.revoked_at,
        }


def _record(row: sqlite3.Row) -> KeyRecord:
    scopes = json.loads(row["scopes"])
    return KeyRecord(
        id=row["id"],
        name=row["name"],
        secret_hash=row["secret_hash"],
        scopes=Scopes(tuple(scopes["read"]), tuple(scopes["write"]), tuple(scopes["admin"])),
        created_at=row["created_at"],
        created_by=row["created_by"],
        expires_at=row["expires_at"],
        revoked_at=row["revoked_at"],
    )


def insert_key(
    db: sqlite3.Connection, *, key_id: str, name: str, secret_hash: str, scopes: Scopes, expires_at: str | None
) -> KeyRecord:
    """Store a new key and its ``key_created`` event."""
    record = KeyRecord(key_id, name, secret_hash, scopes, now(), current_actor(), expires_at, None)
    db.execute(
        f"INSERT INTO api_keys ({COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, NULL)",  # noqa: S608
        (
            record.id,
            record.name,
            record.secret_hash,
            json.dumps(scopes.as_json(), ensure_ascii=False),
            record.created_at,
            record.created_by,
            record.expires_at,
        ),
    )
    append_events(db, [AuditEvent("key_created", source="keys", after=_event_view(record))])
    notices.send(db, notices.KEYS, "")
    return record


def revoke_key(db: sqlite3.Connection, key_id: str, *, reason: str | None) -> KeyRecord | None:
    """Revoke a key (its ``key_revoked`` event); None: no such key. Revoking a revoked key changes
    nothing and says nothing more."""
    found = get_key(db, key_id)
    if found is None or found.revoked_at is not None:
        return found
    at = now()
    db.execute("UPDATE api_keys SET revoked_at = ? WHERE id = ?", (at, key_id))
    revoked = get_key(db, key_id)
    append_events(
        db,
        [AuditEvent("key_revoked", source="keys", reason=reason, before=_event_view(found), after={"revoked_at": at})],
    )
    notices.send(db, notices.KEYS, "")
    return revoked


def get_key(db: sqlite3.Connection, key_id: str) -> KeyRecord | None:
    row = db.execute(f"SELECT {COLUMNS} FROM api_keys WHERE id = ?", (key_id,)).fetchone()  # noqa: S608
    return _record(row) if row is not None else None


def all_keys(db: sqlite3.Connection) -> list[KeyRecord]:
    """Every key, revoked ones too, oldest first."""
    return [_record(r) for r in db.execute(f"SELECT {COLUMNS} FROM api_keys ORDER BY created_at, id")]  # noqa: S608


def _event_view(record: KeyRecord) -> dict[str, Any]:
    return {"id": record.id, "name": record.name, "scopes": record.scopes.as_json(), "expires_at": record.expires_at}
