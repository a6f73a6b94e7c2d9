"""What a bank id may be, everywhere memwarden serves one (Hindsight's routes, the pass-through,
``/warden/v1``), checked before anything else happens — a refused id leaves no ledger row, no
audit event, no backend call.

A bank id is refused when it is empty or only whitespace; is a dot segment (``.``, ``..``: a path
that means something else to every server behind); holds a control character (``\\n``, NUL …) or
a bidirectional-text control (U+202A–U+202E, U+2066–U+2069, U+200E, U+200F, U+061C: they make a
log line or a listing read differently from what is stored) or another invisible character (U+200B,
U+00AD, U+2060, a Hangul filler …: ``Case\\u200bBank`` would list like ``CaseBank``; the zero-width
joiner and non-joiner and the variation selectors, which scripts and emoji need, are allowed between
characters that are not ASCII); is percent-encoded
bytes that are not UTF-8 (``%ff%fe``, which a server would otherwise decode lossily into U+FFFD);
holds ``*`` (the wildcard of API keys' scopes: a bank ``team*`` would read like a pattern in every
key listing and audit event); is longer than :data:`MAX_BYTES` bytes of UTF-8; or holds what looks
like a secret (an id is stored, logged and listed in clear).
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import unquote_to_bytes

from memwarden.policies.secrets import find_secrets
from memwarden.policies.tags import INVISIBLE

_PLAIN_ID = re.compile(r"^(?:[0-9a-fA-F-]{1,64}|[0-9A-HJKMNP-TV-Z]{26}|\d+)$")
MAX_BYTES = 192  # Hindsight's own limit for a new bank's id
BIDI_CONTROLS = frozenset("\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069\u200e\u200f\u061c")
# Invisible, but what words of Persian and Indic scripts and emoji sequences need: the zero-width
# (non-)joiner and the variation selectors — allowed between characters that are not ASCII (not in
# "Case\u200dBank", which lists like "CaseBank").
CONTEXTUAL = frozenset("\u200c\u200d\ufe0e\ufe0f")
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


def _invisible(bank: str) -> bool:
    """Whether ``bank`` holds a character that shows nothing where it could make two ids look alike."""
    for n, ch in enumerate(bank):
        if ch in CONTEXTUAL:
            before, after = bank[n - 1 : n], bank[n + 1 : n + 2]
            if before.isascii() or (ch in "\u200c\u200d" and after.isascii()):
                return True
        elif unicodedata.category(ch) == "Cf" or _INVISIBLE.match(ch):
            return True
    return False


def bank_id_problem(bank: str, raw: str | None = None) -> str | None:
    """Why ``bank`` cannot be a bank id (None: it can). ``raw`` is its segment as sent, still
    percent-encoded, to tell bytes that are not UTF-8 from a real U+FFFD."""
    if raw is not None:
        try:
            unquote_to_bytes(raw).decode("utf-8")
        except UnicodeDecodeError:
            return "Bank id must be UTF-8 once percent-decoded"
    if not bank.strip():
        return "Bank id must not be empty or only whitespace"
    if bank in (".", ".."):
        return "Bank id must not be '.' or '..'"
    if any(unicodedata.category(ch) == "Cc" for ch in bank):
        return "Bank id must not contain control characters"
    if any(ch in BIDI_CONTROLS for ch in bank):
        return "Bank id must not contain bidirectional-text control characters"
    if _invisible(bank):
        return (
            "Bank id must not contain invisible characters (zero-width spaces, soft hyphens, word joiners,"
            " Hangul fillers …): two ids that look the same must be the same"
        )
    if "*" in bank:
        return "Bank id must not contain '*': it is the wildcard of API keys' scopes"
    if len(bank.encode("utf-8", "surrogatepass")) > MAX_BYTES:
        return f"Bank id is too long: at most {MAX_BYTES} bytes of UTF-8 are allowed"
    return id_secret_problem("Bank id", bank)


def id_secret_problem(what: str, value: str) -> str | None:
    """Why ``value`` (an id: a bank's, a document's, a request's) cannot be used: it holds what looks
    like a secret — it would be stored, logged and listed in clear. None: it may be used."""
    if _PLAIN_ID.match(value):  # hex, a UUID, a ULID, digits: what ids usually are, and no secret's shape
        return None
    found = find_secrets(value, random_tokens=False)
    if found:
        return f"{what} holds what looks like a secret ({found[0].kind}); ids are stored and logged in clear"
    return None
