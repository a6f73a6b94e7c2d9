"""A wallet's recovery (seed) phrase: 12 to 24 words of the BIP39 list (English or Chinese, from the
``mnemonic`` package's word lists), written in a row or listed after a name for one.
"""

from __future__ import annotations

import re

from memwarden.policies.secret_cues import any_word
from memwarden.policies.secret_kinds import SecretFinding, word_automaton

_BIP39: frozenset[str] | None = None
_LOWER_WORDS = re.compile(r"(?<![\w-])[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23}(?![\w-])")


_CN_WORDS = re.compile(r"(?<![\u4e00-\u9fff])[\u4e00-\u9fff](?:[ \t]+[\u4e00-\u9fff]){11,23}(?![\u4e00-\u9fff])")
_SEED_CUE = re.compile(
    r"(?i)seed|mnemonic|recovery (?:words|phrase)|backup (?:words|phrase)|metamask|ledger|wallet|助记词"
)


# (_SEED_CUE's words: one pass rules most texts out)
_SEED_WORDS = word_automaton(
    "seed|mnemonic|recovery words|recovery phrase|backup words|backup phrase|metamask|ledger|wallet|助记词".split("|")
)


def seed_phrases(text: str, folded: str) -> list[SecretFinding]:
    """A wallet's recovery (seed) phrase: 12 to 24 words of the BIP39 list in a row (prose has
    words off the list — "the", "is", "of" — every few words), English or Chinese; after a name
    for one ("seed", "助记词", "metamask"), three in four words of the list are enough."""
    global _BIP39
    found = []
    if _BIP39 is None:
        from importlib import resources

        lists = resources.files("mnemonic").joinpath("wordlist")
        _BIP39 = frozenset(
            (lists / "english.txt").read_text().split()
            + (lists / "chinese_simplified.txt").read_text(encoding="utf-8").split()
        )
    if any_word(_SEED_WORDS, folded):  # (a listed one needs its name)
        for region in _LISTED_REGION.finditer(text):
            found += _listed_seed_words(text, *region.span())
    for pattern in (_LOWER_WORDS, _CN_WORDS):
        for m in pattern.finditer(text):
            words = m.group(0).split()
            named = _SEED_CUE.search(text, max(0, m.start() - 80), m.start()) is not None
            listed = sum(w in _BIP39 for w in words)
            whole = listed == len(words) and len(words) in (12, 15, 18, 21, 24)
            if whole or (named and listed >= 0.75 * len(words)):
                found.append(SecretFinding("seed_phrase", m.start(), m.end()))
    return found


# A seed phrase listed after a name for one: "metamask words: ribbon, cactus, hollow, …", "recovery
# words, in order: 1 fossil 2 mutual 3 plunge …", "1. fossil\n2. mutual …" — its words with punctuation,
# a line break or a number between every two (words with spaces only are the rule above's). Twelve
# common words listed are often not one (tags, spelling lists): without the name they stay.
_LISTED_REGION = re.compile(
    r"(?i)(?<![\w-])[a-z]{3,8}(?:(?:[ \t]*(?:[,.;…]+|\n)[ \t]*(?:\d{1,2}[.):]?[ \t]*)?|[ \t]+\d{1,2}[.):]?[ \t]+)[a-z]{3,8})"
    r"{11,80}(?![\w-])"
)
_PAUSE = re.compile(r"\.\.\.|…")  # "the words are like... ribbon, cactus": the phrase starts after it
_WORD = re.compile(r"[A-Za-z]+")


def _listed_seed_words(text: str, start: int, end: int) -> list[SecretFinding]:
    assert _BIP39 is not None
    found: list[SecretFinding] = []
    pauses = [m.end() for m in _PAUSE.finditer(text, start, end)]
    for part_start in [start, *pauses]:
        part_end = next((p for p in pauses if p > part_start), end)
        words = list(_WORD.finditer(text, part_start, part_end))
        while words and words[0].group(0).lower() not in _BIP39:
            words.pop(0)  # "words: ribbon, …", "seed: ribbon, …"
        listed = sum(m.group(0).lower() in _BIP39 for m in words)
        named = words and _SEED_CUE.search(text, max(0, words[0].start() - 120), words[0].start()) is not None
        if named and listed >= 12 and listed >= 0.9 * len(words):
            found.append(SecretFinding("seed_phrase", words[0].start(), words[-1].end()))
    return found
