"""Identity of a memory's text: normalization and the content hash.

``normalize`` is what two texts must share to be the same memory: Unicode NFKC (which also folds
full-width Latin letters, digits and most punctuation to half-width), CJK punctuation that NFKC
leaves alone mapped to its ASCII counterpart, whitespace trimmed and collapsed, trailing sentence
punctuation dropped, and casefolding. ``content_hash`` is the SHA-256 of that form. The stored
text keeps its original form (trimmed); only identity uses this one.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

# CJK punctuation that NFKC does not fold.
_PUNCT = str.maketrans(
    {
        "。": ".",
        "、": ",",
        "「": '"',
        "」": '"',
        "『": '"',
        "』": '"',
        "“": '"',
        "”": '"',
        "‘": "'",
        "’": "'",
        "【": "[",
        "】": "]",
        "《": "<",
        "》": ">",
        "〈": "<",
        "〉": ">",
        "～": "~",
        "—": "-",
        "–": "-",
        "…": "...",
    }
)
_SPACE = re.compile(r"\s+")
_TRAILING = re.compile(r"[\s.!?;,:~]+$")
_TRAILING_CHARS = " .!?;,:~"


def normalize(text: str) -> str:
    """The identity form of ``text``; idempotent: ``normalize(normalize(t)) == normalize(t)``."""
    folded = unicodedata.normalize("NFKC", text).translate(_PUNCT)
    collapsed = _SPACE.sub(" ", folded).strip()
    return _TRAILING.sub("", collapsed).casefold()


def content_hash(text: str) -> str:
    """SHA-256 (hex) of the normalized text."""
    return hashlib.sha256(normalize(text).encode("utf-8")).hexdigest()


def content_hash_prepared(prepared: str) -> str:
    """``content_hash`` of a text from its :func:`policies.quality.prepare` form (NFKC, whitespace
    collapsed, casefolded), which already did most of the work: the same value, computed cheaper."""
    # prepare() left only " " as whitespace, so a plain rstrip is _TRAILING here (and cheaper).
    return hashlib.sha256(prepared.translate(_PUNCT).rstrip(_TRAILING_CHARS).encode("utf-8")).hexdigest()
