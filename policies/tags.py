"""Tag canonicalization: ``key=value``, ``key:value`` and ``Key : Value`` become one form.

A tag is ``key<sep>value`` when it contains ``:`` or ``=``; the key is trimmed and lowercased,
the value trimmed (and lowercased for the label keys, ``topic`` and ``stage``, whose values are a
vocabulary). Other tags are kept as they are, trimmed. Duplicates are dropped, first one wins.
The function is a projection: canonicalizing twice changes nothing more.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable
from functools import lru_cache

_SPLIT = re.compile(r"^\s*([^:=\s][^:=]*?)\s*[:=]\s*(.*?)\s*$", re.S)
_INNER_SPACE = re.compile(r"\s+")
LABEL_KEYS = frozenset({"topic", "stage"})


def canonical_tag(tag: str, *, separator: str = ":") -> str:
    """One tag in canonical form (``separator`` is ``:`` by default, ``=`` for old deployments)."""
    return _canonical(tag, separator)


@lru_cache(maxsize=8192)  # agents send the same few tags with every item
def _canonical(tag: str, separator: str) -> str:
    match = _SPLIT.match(tag)
    if not match or not match.group(2):
        return _INNER_SPACE.sub(" ", tag.strip())
    key = _INNER_SPACE.sub("_", match.group(1).strip().lower())
    value = _INNER_SPACE.sub(" ", match.group(2))
    if key in LABEL_KEYS:
        value = value.lower().replace(" ", "_")
    return f"{key}{separator}{value}"


def canonicalize_tags(tags: Iterable[str], *, separator: str = ":") -> list[str]:
    """Canonical forms of ``tags``, empty ones dropped, duplicates removed, order kept."""
    out: dict[str, None] = {}
    for tag in tags:
        canonical = _canonical(tag, separator)
        if canonical:
            out.setdefault(canonical, None)
    return list(out)


def tag_value(tags: Iterable[str], key: str) -> str | None:
    """The value of the first ``key:value`` (or ``key=value``) tag, if any."""
    for tag in tags:
        split = split_tag(tag)
        if split is not None and split[0] == key:
            return split[1]
    return None


@lru_cache(maxsize=8192)
def split_tag(tag: str) -> tuple[str, str] | None:
    """``(key, value)`` of a ``key:value`` / ``key=value`` tag (key trimmed and lowercased), or None."""
    match = _SPLIT.match(tag)
    return (match.group(1).strip().lower(), match.group(2)) if match else None


def protected_tags(tags: Iterable[str], protected: Iterable[str], *, separator: str = ":") -> list[str]:
    """The tags among ``tags`` that ``protected`` reserves: an entry without a separator reserves
    its key (``source`` reserves ``source:web``, ``source=x``), one with a separator that exact tag
    (``verified:true``) — compared in canonical form, by how they look: full-width forms, invisible
    characters, case and Latin look-alikes from other scripts do not make another tag
    (``ｓｏｕｒｃｅ:web``, ``ѕource:web``, ``source\\u200b:web``, ``Verified: TRUE``)."""
    keys, exact = set(), set()
    for entry in protected:
        entry = look(entry)
        if split_tag(entry) is None:
            keys.add(_INNER_SPACE.sub("_", entry.strip()))
        else:
            exact.add(_canonical(entry, separator))
    out = []
    for tag in tags:
        canonical = _canonical(look(tag), separator)  # "Trust Level : high" is trust_level:high
        split = split_tag(canonical)
        if (split is not None and split[0] in keys) or canonical in exact:
            out.append(tag)
    return out


# Letters of other scripts and of Latin's own extensions that look like plain Latin ones (Cyrillic,
# Greek, Armenian, Cherokee, small capitals, dotless i; casefolded), and colons that look like ":".
_LOOK_ALIKES = str.maketrans(
    {
        **dict.fromkeys("аɑαᴀ", "a"),
        **dict.fromkeys("вβʙ", "b"),
        **dict.fromkeys("сᴄ", "c"),
        **dict.fromkeys("ԁᴅ", "d"),
        **dict.fromkeys("еεᴇ", "e"),
        **dict.fromkeys("ɡɢ", "g"),
        **dict.fromkeys("һнʜ", "h"),
        **dict.fromkeys("іιıɩɪ", "i"),
        **dict.fromkeys("јᴊ", "j"),
        **dict.fromkeys("кκᴋ", "k"),
        **dict.fromkeys("ӏʟ", "l"),
        **dict.fromkeys("мᴍ", "m"),
        **dict.fromkeys("оοօᴏ", "o"),
        **dict.fromkeys("рρᴘ", "p"),
        "ԛ": "q",
        **dict.fromkeys("ѕꜱ\u13da", "s"),  # Cherokee's S casefolds to its capital
        **dict.fromkeys("тτᴛ", "t"),
        **dict.fromkeys("υսᴜ", "u"),
        **dict.fromkeys("νᴠ", "v"),
        **dict.fromkeys("ԝᴡ", "w"),
        **dict.fromkeys("хχ", "x"),
        **dict.fromkeys("уʏ", "y"),
        "ᴢ": "z",
        **dict.fromkeys("∶꞉ː˸⁚։׃", ":"),
        "ʀ": "r",
        "ꜰ": "f",
        "ɴ": "n",
    }
)
# What shows nothing: format characters (zero-width spaces, soft hyphens, joiners …), the combining
# grapheme joiner, variation selectors, Hangul fillers.
# (ranges of characters, for a regular expression's class: bank ids use the same, policies/ids.py)
INVISIBLE = "\u034f\u115f\u1160\u17b4\u17b5\u180b-\u180f\u2800\u3164\ufe00-\ufe0f\uffa0\U000e0100-\U000e01ef"
_INVISIBLE = re.compile(f"[{INVISIBLE}]")


@lru_cache(maxsize=8192)
def look(text: str) -> str:
    """``text`` as it looks: NFKC, what shows nothing dropped, casefolded, Latin look-alikes of other
    scripts made Latin."""
    folded = unicodedata.normalize("NFKC", text)
    folded = _INVISIBLE.sub("", "".join(ch for ch in folded if unicodedata.category(ch) != "Cf"))
    return folded.casefold().translate(_LOOK_ALIKES)
