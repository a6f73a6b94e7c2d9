"""Secret detection: always on, before anything else looks at the text.

Each detector is a named pattern; :func:`find_secrets` returns the spans it found, and
:func:`mask` replaces them with ``[REDACTED:<kind>]``. A secret is never stored, forwarded or
logged in clear: in ``reject`` mode the item is refused, in ``redact`` mode the masked text goes on;
either way the audit keeps only the masked text and the hash.

Assignments (``password = …``, ``api_key: …``) count only when the value looks like a value —
not a placeholder (``***``, ``<token>``, ``xxx``), not a word that describes instead of
disclosing (``密码认证``, "password auth"): "决定用密钥认证不用密码" is a decision, not a leak.
"""

from __future__ import annotations

import base64
import math
import re
from collections import Counter
from dataclasses import dataclass

from memwarden.policies.fastre import compile_fast


@dataclass(frozen=True)
class SecretFinding:
    kind: str
    start: int
    end: int


@dataclass(frozen=True)
class SecretPattern:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret


def _p(kind: str, regex: str, group: int = 0, flags: int = 0) -> SecretPattern:
    return SecretPattern(kind, re.compile(regex, flags), group)


_VALUE = r"([^\s'\"`,;，；。]{6,})"
# After "is"/"是" a value must look like one (letters and digits): "password is stored in 1Password"
# describes, it does not disclose.
_STRICT_VALUE = r"((?=[^\s'\"`,;，；。]*\d)(?=[^\s'\"`,;，；。]*[A-Za-z])[^\s'\"`,;，；。]{6,})"
# A password said in words: "the wifi password for the office is Tr0ub4dor", "login pass is
# hunter2", "the passphrase was 'sunshine'". A bare "pass" needs a word that makes it a login's
# ("the mountain pass is 2300m" is not one).
_SPOKEN = (
    r"(?i)(?:\b(?:password|passwd|passphrase|passcode|pwd)|\b(?:login|wifi|wi-fi|admin|root|account|user|ssh|vpn"
    r"|e?mail|server|router|sudo|db|database)\s+(?:pass|pw)\b)(?:\s+(?:for|of|to)\s+(?:the\s+|my\s+|our\s+)?"
    r"[\w.@-]+(?:\s+[\w.@-]+)?)?\s+(?:is|was|are|=)\s+(?:now\s+)?"
)
SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)",
    ),
    _p("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}"),
    _p("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}"),
    _p("github_token", r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})"),
    # Written whole or split into groups ("AKIA IOSF ODNN 7EXA MPLE"); a split one needs a digit.
    _p("aws_access_key", r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)(?:[ \-]?[0-9A-Z]){16}\b"),
    _p("memwarden_key", r"\bmwk_[0-9a-f]{12}_[A-Za-z0-9_\-]{20,}"),
    _p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}\b"),
    _p("slack_token", r"\bxox[abposr]-[A-Za-z0-9\-]{10,}"),
    _p("stripe_key", r"\b(?:sk|rk|pk)_(?:live|test)_[A-Za-z0-9]{16,}"),
    _p("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}"),
    _p("connection_string", r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@]+:([^\s@/]{3,})@[^\s/]+", group=1),
    _p(
        "password",
        r"(?i)(?:\bpassword|\bpasswd|\bpwd|\bpass|密码|口令)\s*(?:is|为|是)?\s*[:：=]\s*" + _VALUE,
        group=1,
    ),
    _p(
        "password",
        r"(?i)(?:\bpassword|\bpasswd|密码|口令)\s*(?:is|为|是)\s*" + _STRICT_VALUE,
        group=1,
    ),
    _p("password", _SPOKEN + _STRICT_VALUE, group=1),
    _p("password", _SPOKEN + r"[\"'“‘]([^\"'”’\s]{4,64})[\"'”’]", group=1),
    _p("pin", r"\b(?:PIN|[Pp]in code|PIN code|PIN number)\s*(?:is|was|:|=|是|为)\s*(\d{4,8})\b", group=1),
    _p("password", r"(?:密码|口令)\s*(?:是|为)\s*(\d{6,})", group=1),
    _p(
        "credential",
        r"(?i)(?:\b(?:api[_\-\s]?key|access[_\-\s]?key|secret(?:[_\-\s]?key)?|auth[_\-\s]?token|token|bearer)"
        r"|密钥|令牌)\s*(?:is|为|是)?\s*[:：=]\s*" + _VALUE,
        group=1,
    ),
    _p(
        "credential",
        r"(?i)(?:\b(?:api[_\-\s]?key|secret|token)|密钥|令牌)\s*(?:is|为|是)\s*" + _STRICT_VALUE,
        group=1,
    ),
    _p("bearer_header", r"(?i)\bAuthorization:\s*Bearer\s+([A-Za-z0-9_\-\.=]{16,})", group=1),
)

_PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_]+\}?|%[A-Za-z_]+%|changeme|redacted|\[redacted.*)$", re.I
)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_HEX_OR_UUID = re.compile(r"^(?:[0-9a-fA-F]+|[0-9a-fA-F\-]{36})$")


def shannon_entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _high_entropy(text: str) -> list[SecretFinding]:
    """Long random-looking tokens with letters and digits mixed: keys with no known prefix."""
    found = []
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if _HEX_OR_UUID.match(token):
            continue  # hashes, commit ids and UUIDs are identifiers, not credentials
        classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
        if classes == 3 and shannon_entropy(token) >= 4.2 and _decoded_text(token) is None:
            found.append(SecretFinding("high_entropy", m.start(), m.end()))
    return found


def _decoded_text(token: str) -> str | None:
    """``token`` read as base64 (standard or URL-safe) when it decodes to printable text: encoded
    words are not random (whether they hide a secret is :func:`_encoded`'s question)."""
    try:
        raw = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if not decoded or sum(ch.isprintable() or ch in "\n\t" for ch in decoded) < 0.9 * len(decoded):
        return None
    return decoded


def _aws_whole_or_digits(value: str) -> bool:
    """A key id written whole, or split into groups with a digit among them: "AKIA IS A BANK CODE
    FOR ..." in capitals is not one."""
    return not any(c in " -" for c in value) or any(c.isdigit() for c in value)


_GROUPS = re.compile(r"(?<![\w-])(?:[A-Za-z0-9]{3,8}[ \-]){3,}[A-Za-z0-9]{3,8}(?![\w-])")
_WORDLIKE = re.compile(r"^(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)$")


def _split_tokens(text: str) -> list[SecretFinding]:
    """A random key written in groups ("aZ3k Q9pL 2mX8 vB7n C4wE 6rT1"): at least four groups, most
    of them not word-shaped (a digit, or case changing inside), 20+ characters joined, letters of
    both cases and digits, and random enough. "Use GPT4o with Claude3 and Llama3" is not one."""
    found = []
    for m in _GROUPS.finditer(text):
        groups = re.split(r"[ \-]", m.group(0))
        joined = "".join(groups)
        odd = sum(not _WORDLIKE.match(g) for g in groups)
        if len(joined) < 20 or odd < 0.7 * len(groups):
            continue
        classes = sum(bool(re.search(p, joined)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
        if classes == 3 and shannon_entropy(joined) >= 4.0:
            found.append(SecretFinding("split_key", m.start(), m.end()))
    return found


_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")


def _encoded(text: str) -> list[SecretFinding]:
    """Base64 (standard or URL-safe) that decodes to text holding a secret: an encoded key."""
    found = []
    for m in _BASE64.finditer(text):
        decoded = _decoded_text(m.group(0))
        if decoded is not None and find_secrets(decoded, decode=False):
            found.append(SecretFinding("encoded_secret", m.start(), m.end()))
    return found


# Every detector above needs one of these (casefolded) or a long token: most texts have neither,
# and one search rules them out.
_PREFILTER_WORDS = compile_fast(
    r"private key|sk-|sk_|rk_|pk_|mwk_|pin|pw|gh[pousr]_|github_pat_|akia|asia|agpa|aida|aroa|aiza|xox|eyj|://|pass|pwd|密码|口令|"
    r"key|secret|token|bearer|密钥|令牌|authorization"
)
_PREFILTER_TOKEN = re.compile(r"[a-z0-9+/_\-]{24}")
# A key split into groups: three groups of letters and digits mixed, among at most five.
_PREFILTER_GROUPS = re.compile(r"(?:(?=[a-z]{0,7}\d)(?=\d{0,7}[a-z])[a-z\d]{3,8}[ \-](?:[a-z\d]{3,8}[ \-])?){3}")


def may_hold_secrets(folded: str) -> bool:
    """False when no detector can match: ``folded`` is the casefolded text."""
    return (
        _PREFILTER_WORDS.search(folded) is not None
        or _PREFILTER_TOKEN.search(folded) is not None
        or _PREFILTER_GROUPS.search(folded) is not None
    )


def find_secrets(
    text: str,
    *,
    extra: tuple[SecretPattern, ...] = (),
    folded: str | None = None,
    random_tokens: bool = True,
    decode: bool = True,
) -> list[SecretFinding]:
    """Every secret span in ``text``, left to right, overlaps merged (first detector wins).
    ``folded`` is ``text`` casefolded (whitespace collapsed is fine), if the caller has it.
    ``random_tokens``: also long random-looking tokens, whole or split into groups — off for ids
    (a document id may be random by design); ``decode``: also base64 that decodes to a secret."""
    if not extra and not may_hold_secrets(text.casefold() if folded is None else folded):
        return []
    spans: list[SecretFinding] = []
    for detector in (*SECRET_PATTERNS, *extra):
        for m in detector.pattern.finditer(text):
            value = m.group(detector.group)
            if detector.group and _PLACEHOLDER.match(value):
                continue
            if detector.kind == "aws_access_key" and not _aws_whole_or_digits(value):
                continue
            spans.append(SecretFinding(detector.kind, m.start(detector.group), m.end(detector.group)))
    if random_tokens:
        spans.extend(_high_entropy(text))
        spans.extend(_split_tokens(text))
    if decode:
        spans.extend(_encoded(text))
    spans.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[SecretFinding] = []
    for span in spans:
        if merged and span.start < merged[-1].end:
            continue
        merged.append(span)
    return merged


def mask(text: str, findings: list[SecretFinding]) -> str:
    """``text`` with every finding replaced by ``[REDACTED:<kind>]``."""
    out, last = [], 0
    for f in findings:
        out.append(text[last : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        last = f.end
    out.append(text[last:])
    return "".join(out)
