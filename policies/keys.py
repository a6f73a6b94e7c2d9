"""API keys and their scopes: pure rules, no storage.

A **token** is ``mwk_<12 hex>_<secret>``: its first 16 characters are the key's **id** (what the
audit names as the actor, what ``keys list`` shows), the rest a 256-bit random secret. Only the
secret's SHA-256 is stored; the token is shown once, when the key is made. A secret of 256 random
bits needs no salt or slow hash: there is nothing to guess offline.

A key's **scopes** are three lists of bank patterns — ``read``, ``write``, ``admin`` — each
pattern a bank id where ``*`` stands for any run of characters (``team-*``, ``*``). Each level
includes the ones below it on the banks it names: a bank a key may administer it may also write,
and a bank it may write it may also read. What each level allows:

* ``read``: recall, lists, documents, any ``GET`` on the bank, reflect;
* ``write``: retain, and the bank's other non-``GET`` routes the backend serves (documents,
  mental models …), governed or passed through;
* an MCP tool call needs the level of its HTTP twin (``fronts/mcp``);
* ``admin``: config changes, bank profile and missions, the destructive routes (without
  ``X-Warden-Confirm``), and memwarden's own API for the bank (``/warden/v1/banks/{bank}/…``).

A request about no one bank (the bank list, memwarden's audit and outbox, metrics, the keys
themselves) needs its level on every bank: the pattern ``*``.
"""

from __future__ import annotations

import functools
import hashlib
import hmac
import re
import secrets
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Literal

from memwarden.policies.ids import bank_id_problem

Level = Literal["read", "write", "admin"]
LEVELS: tuple[Level, ...] = ("read", "write", "admin")
PREFIX = "mwk_"
ID_LENGTH = len(PREFIX) + 12
TOKEN_PATTERN = re.compile(r"mwk_[0-9a-f]{12}_[A-Za-z0-9_-]{43}")
MAX_PATTERNS = 100
MAX_NAME = 100


@dataclass(frozen=True)
class Scopes:
    """What a key may do: bank patterns per level."""

    read: tuple[str, ...] = ()
    write: tuple[str, ...] = ()
    admin: tuple[str, ...] = ()

    def allows(self, level: Level, bank: str | None) -> bool:
        """Whether a key with these scopes may act at ``level`` on ``bank`` (None: on every bank,
        which only the pattern ``*`` grants)."""
        granting = self.admin
        if level != "admin":
            granting = (*granting, *self.write)
            if level == "read":
                granting = (*granting, *self.read)
        if bank is None:
            return "*" in granting
        return any(matches(pattern, bank) for pattern in granting)

    def as_json(self) -> dict[str, list[str]]:
        return {"read": list(self.read), "write": list(self.write), "admin": list(self.admin)}


def scopes_problem(read: Iterable[str], write: Iterable[str], admin: Iterable[str]) -> str | None:
    """Why these lists cannot be a key's scopes (None: they can)."""
    lists = {"read": list(read), "write": list(write), "admin": list(admin)}
    if not any(lists.values()):
        return "a key needs at least one scope: read, write or admin patterns"
    for level, patterns in lists.items():
        if len(patterns) > MAX_PATTERNS:
            return f"{level}: at most {MAX_PATTERNS} patterns"
        for pattern in patterns:
            if not isinstance(pattern, str):
                return f"{level}: a pattern must be a string"
            problem = bank_id_problem(pattern.replace("*", "x"))
            if problem is not None:
                return f"{level} pattern {pattern[:80]!r}: {problem.replace('Bank id', 'a pattern')}"
    return None


def name_problem(name: object) -> str | None:
    if not isinstance(name, str) or not name.strip():
        return "a key needs a name (what it is for: an agent, a team, a job)"
    if len(name) > MAX_NAME:
        return f"a key's name has at most {MAX_NAME} characters"
    problem = bank_id_problem(name)
    if problem is not None:
        return "a key's name " + problem.removeprefix("Bank id ")
    return None


@functools.lru_cache(maxsize=4096)
def _matcher(pattern: str) -> re.Pattern[str] | _Exact:
    if "*" not in pattern:
        return _Exact(pattern)
    return re.compile("(?s:" + ".*".join(re.escape(part) for part in pattern.split("*")) + r")\Z")


class _Exact:
    __slots__ = ("value",)

    def __init__(self, value: str) -> None:
        self.value = value

    def __call__(self, bank: str) -> bool:
        return bank == self.value


def _match(compiled: re.Pattern[str] | _Exact, bank: str) -> bool:
    return compiled(bank) if isinstance(compiled, _Exact) else compiled.match(bank) is not None


def matches(pattern: str, bank: str) -> bool:
    """Whether ``pattern`` names ``bank``."""
    return _match(_matcher(pattern), bank)


@dataclass(frozen=True)
class NewToken:
    key_id: str
    token: str
    secret_hash: str


def new_token() -> NewToken:
    """A fresh key id and token (shown once) and the hash to store."""
    key_id = PREFIX + secrets.token_hex(6)
    secret = secrets.token_urlsafe(32)
    return NewToken(key_id, f"{key_id}_{secret}", secret_hash(secret))


def secret_hash(secret: str) -> str:
    return hashlib.sha256(secret.encode("utf-8", "surrogatepass")).hexdigest()


def split_token(token: str) -> tuple[str, str] | None:
    """``(key id, secret)`` of a token shaped like memwarden's; None otherwise."""
    if len(token) <= ID_LENGTH + 1 or not token.startswith(PREFIX) or token[ID_LENGTH] != "_":
        return None
    return token[:ID_LENGTH], token[ID_LENGTH + 1 :]


def secret_matches(secret: str, stored_hash: str) -> bool:
    """Constant-time comparison of a presented secret with the stored hash."""
    return hmac.compare_digest(secret_hash(secret), stored_hash)


def tuple_of(patterns: Sequence[str] | None) -> tuple[str, ...]:
    """Patterns, deduplicated, in their first order."""
    return tuple(dict.fromkeys(patterns or ()))
