"""API keys as a service: making and revoking them (audited), and finding the key a request
presents — from memory, without a database read per request.

The keys live in the database (:mod:`memwarden.db.keys`); :class:`KeyRing` holds them in memory and
reads them again when its copy is older than :data:`REFRESH` seconds, or at once (at most every
:data:`MISS_REFRESH` seconds) when a request presents a key id it does not know. A key made or
revoked through this server takes effect at once; one made or revoked by ``memwarden keys … --data-dir``
(another process writing the same database) within a second — on PostgreSQL, at once on every
instance: the change is a notice to all (``db/notices.py``), and :meth:`KeyRing.stale` has the next
request read them again.

**When keys are required**: as soon as a key has been made, every request needs one (except the
health probes) — revoked and expired keys count, so revoking the last one does not open the server
again (make a new one with ``memwarden keys create --data-dir``). With none ever made, memwarden
serves without keys — only where the server is bound to a loopback address, or where the operator
said so (``server.allow_unauthenticated``); otherwise every request is refused until a key exists
(``memwarden serve`` refuses to start instead, and says why).
"""

from __future__ import annotations

import asyncio
import ipaddress
import time
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta

from memwarden.db import keys as rows
from memwarden.db.common import Connection, now
from memwarden.db.database import Database
from memwarden.governance.errors import Refused
from memwarden.policies.keys import (
    NewToken,
    Scopes,
    name_problem,
    new_token,
    scopes_problem,
    secret_matches,
    split_token,
    tuple_of,
)

REFRESH = 1.0
MISS_REFRESH = 0.25
LOOPBACK_NAMES = frozenset({"localhost"})
MAX_DAYS = 36500


def is_loopback(host: str) -> bool:
    """Whether ``host`` (the address memwarden binds) is reachable from this machine only."""
    if host.lower() in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@dataclass(frozen=True)
class Created:
    key: rows.KeyRecord
    token: str  # shown once


@dataclass(frozen=True)
class Prepared:
    """A key checked and ready to store: :meth:`insert` is its transaction."""

    name: str
    scopes: Scopes
    expires_at: str | None
    token: NewToken

    def insert(self, db: Connection) -> rows.KeyRecord:
        return rows.insert_key(
            db,
            key_id=self.token.key_id,
            name=self.name,
            secret_hash=self.token.secret_hash,
            scopes=self.scopes,
            expires_at=self.expires_at,
        )


def prepare(
    *, name: str, read: list[str], write: list[str], admin: list[str], expires_in_days: float | None = None
) -> Prepared:
    """A new key from what its maker asked for; raises :class:`Refused` (422) for a bad name, scope
    or expiry. Shared by the API and ``memwarden keys create --data-dir``."""
    problem = name_problem(name) or scopes_problem(read, write, admin)
    if problem is None and expires_in_days is not None and not 0 < expires_in_days <= MAX_DAYS:
        problem = f"expires_in_days must be more than 0 and at most {MAX_DAYS}"
    if problem is not None:
        raise Refused(422, problem)
    expires_at = None
    if expires_in_days is not None:
        expires_at = (datetime.now(UTC) + timedelta(days=expires_in_days)).isoformat(timespec="microseconds")
    scopes = Scopes(tuple_of(read), tuple_of(write), tuple_of(admin))
    return Prepared(name.strip(), scopes, expires_at, new_token())


class KeyRing:
    """The keys, in memory. ``exposed``: served beyond loopback without the operator's word that
    no key is needed — keys are then required even while none exists."""

    def __init__(self, ledger: Database, *, exposed: bool) -> None:
        self.ledger = ledger
        self.exposed = exposed
        self._keys: dict[str, rows.KeyRecord] = {}
        self._loaded_at = float("-inf")
        self._lock = asyncio.Lock()
        self._changes = 0  # keys changed elsewhere (stale()): a read begun before stays stale

    async def load(self) -> None:
        """Read the keys again. One read at a time, each installed whole: a read that began before
        a revocation committed cannot install its copy after the revocation's own."""
        async with self._lock:
            await self._load()

    async def _load(self) -> None:
        changes = self._changes
        found = await self.ledger.read(rows.all_keys)
        self._keys = {k.id: k for k in found}
        if changes == self._changes:  # else a change was told meanwhile: read again at the next request
            self._loaded_at = time.monotonic()

    async def _refresh(self, older_than: float) -> None:
        if time.monotonic() - self._loaded_at < older_than:
            return
        async with self._lock:  # one read for the requests that all found the copy stale
            if time.monotonic() - self._loaded_at >= older_than:
                await self._load()

    def stale(self) -> None:
        """The keys changed elsewhere (another instance's notice): the next request reads them again."""
        self._changes += 1
        self._loaded_at = float("-inf")

    async def required(self) -> bool:
        """Whether a request must present a key: once any key was made (revoked and expired ones
        count — revoking the last key does not open the server again), or when exposed."""
        await self._refresh(REFRESH)
        return self.exposed or bool(self._keys)

    async def find(self, token: str) -> rows.KeyRecord | None:
        """The usable key ``token`` is (None: not a key of this memwarden, revoked, expired, or a
        wrong secret)."""
        parts = split_token(token)
        if parts is None:
            return None
        key_id, secret = parts
        await self._refresh(REFRESH)
        if key_id not in self._keys:
            await self._refresh(MISS_REFRESH)
        key = self._keys.get(key_id)
        if key is None or not key.usable(now()) or not secret_matches(secret, key.secret_hash):
            return None
        return key

    async def create(
        self,
        *,
        name: str,
        read: list[str],
        write: list[str],
        admin: list[str],
        expires_in_days: float | None = None,
    ) -> Created:
        """Make a key; raises :class:`Refused` (422) for a bad name, scope or expiry."""
        key = prepare(name=name, read=read, write=write, admin=admin, expires_in_days=expires_in_days)
        record = await self.ledger.write(key.insert)
        await self.load()
        return Created(record, key.token.token)

    async def revoke(self, key_id: str, *, reason: str | None = None) -> rows.KeyRecord:
        """Revoke a key at once; raises :class:`Refused` (404) when there is no such key."""
        record = await self.ledger.write(lambda db: rows.revoke_key(db, key_id, reason=reason))
        if record is None:
            raise Refused(404, f"no key {key_id[:100]!r}")
        await self.load()
        return record

    async def listing(self) -> list[rows.KeyRecord]:
        await self.load()
        return list(self._keys.values())
