"""Full-text terms for Chinese and English.

SQLite FTS5's ``unicode61`` tokenizer treats a run of CJK characters as one token, so ``端口`` would
never match inside ``内网端口统一设为``; its ``trigram`` tokenizer needs three characters, so two-
character Chinese words (most of them) cannot be searched either. memwarden indexes a derived
column instead: Latin words stemmed (Snowball's English stemmer: ``groups`` and ``group`` are one
term), every CJK run as its overlapping bigrams (and a single CJK character as itself), all
casefolded and NFKC-normalized. Queries go through the same function, so ``服务端口`` finds
``服务 svc-1 的内网端口`` (through ``服务`` and ``端口``).

In the index every term carries its bank's prefix (:func:`bank_prefix`): the full-text index then
holds each bank's terms apart, and a term's document frequency read from it is the bank's own — the
keyword retriever's statistics are per bank (``store/keyword.py``).
"""

from __future__ import annotations

import base64
import hashlib
import re
import unicodedata
from functools import lru_cache

import Stemmer

_CJK = r"\u3400-\u4dbf\u4e00-\u9fff\uf900-\ufaff\u3040-\u30ff\uac00-\ud7af"
_TOKEN = re.compile(rf"[{_CJK}]+|[^\W_{_CJK}]+(?:[._'-][^\W_{_CJK}]+)*", re.UNICODE)
_CJK_RUN = re.compile(rf"[{_CJK}]+")
MAX_QUERY_TERMS = 64
PREFIX_CHARS = 6  # a bank's prefix: 30 bits of its id's SHA-256 (two banks that share one share statistics)
_STEMMER = Stemmer.Stemmer("english")
_stem = lru_cache(maxsize=65536)(_STEMMER.stemWord)


def terms(text: str) -> list[str]:
    """The index terms of ``text``, in order (repeats kept: BM25 counts them)."""
    out: list[str] = []
    for token in _TOKEN.findall(unicodedata.normalize("NFKC", text).casefold()):
        if _CJK_RUN.match(token):
            if len(token) == 1:
                out.append(token)
            else:
                out.extend(token[i : i + 2] for i in range(len(token) - 1))
        else:
            out.extend(_stem(t) if t.isascii() else t for t in re.split(r"[._'-]", token) if t)
    return out


@lru_cache(maxsize=4096)
def bank_prefix(bank: str) -> str:
    """The prefix of ``bank``'s terms in the full-text index: lowercase base32, PREFIX_CHARS long."""
    digest = hashlib.sha256(bank.encode("utf-8", "surrogatepass")).digest()
    return base64.b32encode(digest).decode()[:PREFIX_CHARS].lower()


def index_text(text: str, bank: str) -> tuple[str, int]:
    """What the FTS column holds for ``text`` in ``bank`` (every term with the bank's prefix), and
    how many terms that is (the memory's length for BM25)."""
    prefix = bank_prefix(bank)
    found = terms(text)
    return " ".join(prefix + t for t in found), len(found)


def query_terms(query: str) -> list[str]:
    """The distinct terms of a query, in order (at most MAX_QUERY_TERMS)."""
    seen: dict[str, None] = {}
    for term in terms(query):
        seen.setdefault(term, None)
        if len(seen) >= MAX_QUERY_TERMS:
            break
    return list(seen)


def match_query(query: str | list[str]) -> str | None:
    """An FTS5 MATCH expression: any of the query's distinct terms (BM25 ranks documents with more
    and rarer ones first), each quoted so no term is read as FTS5 syntax. None: nothing to match."""
    chosen = query_terms(query) if isinstance(query, str) else query
    if not chosen:
        return None
    return " OR ".join('"' + t.replace('"', '""') + '"' for t in chosen)


def token_estimate(text: str) -> int:
    """Rough tokens for the ``max_tokens`` budget: a CJK character ~1 token, Latin ~4 characters."""
    cjk = 0 if text.isascii() else sum(map(len, _CJK_RUN.findall(text)))
    return cjk + max(1, (len(text) - cjk) // 4) if text else 0
