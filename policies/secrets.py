"""Secret detection: always on, before anything else looks at the text.

Each detector is a named pattern (``secret_patterns.py``: shaped tokens and assignments;
``secret_cues.py``: a credential named, then its value) or one of the checks below (random
tokens, encoded or split keys, digits said aloud); :func:`find_secrets` returns the spans found, and
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
import urllib.parse
from collections import Counter

from memwarden.policies.secret_cues import cued_secrets, expired_after, last_match, sentence_before
from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_layouts import laid_out_secrets
from memwarden.policies.secret_patterns import SECRET_PATTERNS, SecretPattern
from memwarden.policies.secret_prefilter import may_hold_secrets
from memwarden.policies.secret_values import NEW, is_placeholder
from memwarden.policies.secret_words import CUE, EXPIRED, NOT_NEEDED, REVOKED, simplified

__all__ = ["PLACEHOLDER", "SecretFinding", "SecretPattern", "find_secrets", "mask", "may_hold_secrets"]


PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_]+\}?|%[A-Za-z_]+%|changeme|redacted|\[redacted.*"
    r"|(?:my|your)?(?:password|passwd|pass|pwd|secret)"
    r"|(?:your|insert|enter|replace)[_\-]\w*|\w*[_\-]here)$",
    re.I,
)
# A value that names where the secret is, in code: "os.environ[…]", "settings.OPENAI_API_KEY".
_REFERENCE = re.compile(
    r"^(?:os\.(?:environ|getenv)|process\.env|settings\.|config\.|env\.|ENV\[|System\.getenv|getenv\(|secrets\."
    r"|vault:|self\.|this\.|import\.meta\.env|var\.|data\.|local\.|module\.|jsondecode\(|lookup\(|arn:)"
)
_IN_ARN = re.compile(r"\barn:aws[\w\-]*:[^\s\"']*$")
# Masked or elided anywhere in the value: "ghp_XXXXXXXXXXXX", "sk-…", "AKIA****", "${{ secrets.X }}".
_MASKED = re.compile(
    r"\*{3,}|[xX]{6,}|•{3,}|…|\.{3}|[\[(<](?:redacted|filtered|masked|hidden|removed|sensitive)|\$\{|\$\(", re.I
)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_HEX_OR_UUID = re.compile(r"^(?:[0-9a-fA-F]+|[0-9a-fA-F\-]{36})$")
# Random by design and public: Stripe's object ids and publishable keys, integrity digests.
_PUBLIC_ID = re.compile(
    r"^(?:(?:cus|pi|ch|pm|py|tok|seti|sub|si|in|ii|price|prod|evt|txn|re|po|acct|src|card|ba|btok|cs_live|cs_test"
    r"|pk_live|pk_test"
    # Agent platforms' object ids (threads, runs, messages, tool calls, files …): public handles.
    r"|thread|run|msg|call|toolu|asst|file|batch|resp|step|vs|req)_|(?:chatcmpl|file|org)-|sha(?:1|256|384|512)-)"
)
# Where random text is public: PEM public keys and certificates, SSH public keys, digests, a
# URL's path (document, file and video ids; the webhooks whose path is secret have their detector).
_PUBLIC_SPANS = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE)(?: BLOCK)?-----(?:[\s\S]*?-----END[^\n]*?-----|(?:\s*[A-Za-z0-9+/=]{4,})+)"
    r"|\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-\S+|sk-ssh-\S+)\s+AAAA[A-Za-z0-9+/=]+"
    r"|\b(?i:sha)(?:1|256|384|512)[:\-][A-Za-z0-9+/=]+"
    r"|\bdata:[\w/+.\-]+;base64,[A-Za-z0-9+/=]+"
    # Ids and signatures in headers, a JWK's public numbers, AWS's unique ids, WireGuard's public
    # keys, OAuth client ids: random by design, and public.
    r"|(?im:^[ \t]*(?:x-amz-(?:id-2|request-id|cf-id)|x-hub-signature(?:-256)?|x-github-delivery|x-request-id"
    r"|x-correlation-id|etag)[ \t]*:[^\n]*)"
    r'|"(?:n|e|x|y|x5c|x5t|x5t#S256)"\s*:\s*\[?"[^"]*"'
    r"|\bA(?:ROA|IDA|GPA|NPA|NVA|SCA)[A-Z0-9]{16,}"
    r"|(?i:\b(?:public[ \t]*key|peer)[ \t]*[:=][ \t]*)[A-Za-z0-9+/]{42,44}="
    r"|\b\d+-[a-z0-9]+\.apps\.googleusercontent\.com\b|\bcom\.googleusercontent\.apps\.\d+-[a-z0-9]+"
    # Wallets' receiving addresses and extended public keys (a private key is 64 hex, or a seed), also
    # as people make them up (a 0 or an l in an xpub, or in a TRON address named as one).
    r"|\b0x[0-9a-fA-F]{40}(?![0-9a-fA-F])|\bT[1-9A-HJ-NP-Za-km-z]{33}\b|\b[xyzt]pub[0-9A-Za-z]{60,}"
    r"|(?i:地址|address|addr|tron|波场|trc-?20)[^\n]{0,20}?\bT[0-9A-Za-z]{33}\b"
    r"|\b(?:bc1[02-9ac-hj-np-z]{25,87}|[13][1-9A-HJ-NP-Za-km-z]{25,34})\b"
    # An AWS resource's name (ARN) and an RDS resource id: names, not credentials.
    r"|\barn:aws[\w\-]*:[^\s\"']+|\b(?:db|cluster)-[A-Z0-9]{20,}\b"
    r"|\$2[abxy]?\$\d\d\$[./A-Za-z0-9+]{50,60}"  # a bcrypt hash: what a password is checked against
    # A Go module's checksum, a reCAPTCHA site key, an HPKP pin, a certificate (or a public key)
    # base64-encoded in a kubeconfig: public by design.
    r"|\bh1:[A-Za-z0-9+/=]{40,}|(?i:\b(?:data-)?site[_\-]?key)[\"']?[ \t]*[=:][ \t]*[\"']?[\w\-]{20,}"
    r"|\bpin-sha(?:1|256)=\"?[A-Za-z0-9+/=]+|(?i:certificate-authority-data)[ \t]*:[ \t]*\S+"
    # An object's ETag and version id, a CSP nonce, a PKCE challenge, a DKIM record's public key.
    r"|(?i:\"?(?:etag|versionid|version_id)\"?[ \t]*[:=][ \t]*\"(?:[^\"\\]|\\.)*\")|'nonce-[A-Za-z0-9+/=]+'"
    r"|\bcode_challenge=[\w\-]+|(?i:v=DKIM1;[^\"\n]*)"
    r"|\bLS0tLS1CRUdJTiB(?:DRVJUSUZJQ0FURS|QVUJMSUMgS0VZ)[A-Za-z0-9+/=]*"
    r"|\bhttps?://(?:[^\s/?#@]*@)?([^\s/?#@]+/[^\s?#]*)"
)


def shannon_entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _public_spans(text: str) -> list[tuple[int, int]]:
    """Where random-looking text is public by design (see ``_PUBLIC_SPANS``)."""
    return [m.span(1) if m.group(1) else m.span() for m in _PUBLIC_SPANS.finditer(text)]


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def _high_entropy(text: str) -> list[SecretFinding]:
    """Long random-looking tokens with letters and digits mixed: keys with no known prefix."""
    found = []
    public: list[tuple[int, int]] | None = None
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if _HEX_OR_UUID.match(token) or _PUBLIC_ID.match(token) or _path_or_slug(token):
            continue  # hashes, commit ids, UUIDs, public object ids, paths and slugs: not credentials
        classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
        if classes == 3 and shannon_entropy(token) >= 4.2 and _decoded_text(token) is None:
            public = _public_spans(text) if public is None else public
            if not _inside(m.start(), m.end(), public):
                found.append(SecretFinding("high_entropy", m.start(), m.end()))
    return found


_WORD = re.compile(r"^(?:[A-Za-z][a-z]+|[A-Z]+|\d+)$")


def _path_or_slug(token: str) -> bool:
    """A path (``/Users/alice/src/BPETokenizer2024v3Final``, ``feature/JIRA-1234-fixLogin``) whose
    parts are none of them random alone, or a slug of words (``-Users-alice-Projects-MyApp2024``):
    names people and tools make, not keys. Base64 (a ``+``, or ``=`` padding) is not a path."""
    if "/" in token and "+" not in token and not token.endswith("="):
        return not any(_random(part) for part in token.split("/") if len(part) >= 24)
    parts = [p for p in token.split("-") if p]
    return len(parts) >= 3 and sum(bool(_WORD.match(p)) for p in parts) >= 0.6 * len(parts)


def _random(token: str) -> bool:
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes == 3 and shannon_entropy(token) >= 4.2 and not _path_or_slug(token)


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
        if classes == 3 and shannon_entropy(joined) >= 4.0 and not _inside(m.start(), m.end(), _public_spans(text)):
            found.append(SecretFinding("split_key", m.start(), m.end()))
    return found


_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")
# "user:password" (what HTTP Basic encodes): a name, a colon, a value with letters and digits.
_USER_PASS = re.compile(r"^(?=.{18})[\w.@+\-]{2,64}:(?=\S*\d)(?=\S*[A-Za-z])\S{6,}$")


def _encoded(text: str) -> list[SecretFinding]:
    """Base64 (standard or URL-safe) that decodes to text holding a secret, or to a
    "user:password" pair: an encoded key or login."""
    found = []
    for m in _BASE64.finditer(text):
        decoded = _decoded_text(m.group(0))
        if decoded is not None and (_USER_PASS.match(decoded) or find_secrets(decoded, decode=False)):
            found.append(SecretFinding("encoded_secret", m.start(), m.end()))
    return found


_PERCENT = re.compile(r"(?<!\S)\S*%[0-9A-Fa-f]{2}\S*")


def _url_encoded(text: str) -> list[SecretFinding]:
    """Percent-encoded text ("token%3D…%26user%3Dops") that holds a secret once decoded: the
    assignment's "=" and ":" are hidden from the other detectors until then."""
    found: list[SecretFinding] = []
    if "%" not in text:
        return found
    for m in _PERCENT.finditer(text):
        decoded = urllib.parse.unquote(m.group(0))
        if decoded != m.group(0) and find_secrets(decoded, decode=False):
            found.append(SecretFinding("encoded_secret", m.start(), m.end()))
    return found


# A key cut into quoted pieces joined with "+" ("'ghp_UnUy…' + 'xOFO…'"), or spelled out one
# character at a time ("A K I A M K U Q …"): the pieces are joined and scanned again.
_CONCAT = re.compile(r"""['"][^'"\s]{1,100}['"](?:\s*\+\s*['"][^'"\s]{1,100}['"])+""")
_PIECE = re.compile(r"""['"]([^'"\s]*)['"]""")
# Digits said aloud (a call's transcript, a voicemail): "four nine one six", "五 五 幺 八",
# "two-two-six-eight-one". A run of 4+ digit words after a word that names a code is one.
_DIGIT_WORDS = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|[0-9]|零|〇|幺|一|二|两|三|四|五|六|七|八|九)"
# (a separator of a few characters: a run of spaces is not read from every one of its characters)
_SAID_DIGITS = re.compile(
    rf"(?i)(?<![a-z]){_DIGIT_WORDS}(?:(?:[ \t,、，\-]|\s{{0,3}},\s{{0,3}}){{1,8}}{_DIGIT_WORDS}){{3,11}}(?![a-z])"
)
_SAID_NAMES = re.compile(
    r"(?i)(?:\bpin\b|\bpuk\b|passcode|password|passwd|pass code|\bcode\b|combination|密码|口令|PIN码|PUK码|门禁|保险柜)"
)


def _said_digits(text: str) -> list[SecretFinding]:
    """Four or more digits said as words after a code's name on the same line, within 80 characters:
    "the PIN is four nine one six", "交易密码是 幺 九 八 七 零 六"."""
    found = []
    for m in _SAID_DIGITS.finditer(text):
        if not any(c.isalpha() for c in m.group(0)):  # digit words, English or Chinese
            continue  # plain digits: the other detectors' (a number written, not said)
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[max(line_start, m.start() - 80) : m.start()]
        if _SAID_NAMES.search(before) and not re.search(
            r"(?:后四位|last four|ending in|尾号|卡号|card number)", before, re.I
        ):
            found.append(SecretFinding("spoken_pin", m.start(), m.end()))
    return found


_SPELLED = re.compile(r"(?<![\w-])[A-Za-z0-9][ \-][A-Za-z0-9][ \-](?:[A-Za-z0-9][ \-]){10,}[A-Za-z0-9](?![\w-])")


def _joined(text: str) -> list[SecretFinding]:
    found = []
    for m in _CONCAT.finditer(text) if "+" in text else ():
        if find_secrets("".join(_PIECE.findall(m.group(0))), decode=False):
            found.append(SecretFinding("split_key", m.start(), m.end()))
    for m in _SPELLED.finditer(text):
        if find_secrets(re.sub(r"[ \-]", "", m.group(0)), decode=False):
            found.append(SecretFinding("split_key", m.start(), m.end()))
    return found


def _expired(text: str, f: SecretFinding) -> bool:
    """Whether the sentence around a code says it is expired, used, or the old one (not when it
    calls it the new one)."""
    start = sentence_before(text, f.start)
    if _REVOKED_BEFORE.search(text, max(start, f.start - 16), f.start):
        return True  # "已经 revoke 掉了：ghp_…"
    old = last_match(EXPIRED, text, start, f.start)
    # "that's the old one, it's 1109 now", "那是以前的 新的是7703": corrected, not expired.
    corrected = old is not None and _CORRECTION.search(text, old.end(), f.start) is not None
    # (or the new one named first, then the old one's value right after its word: "新的找 IT 要，旧的
    # Office-5G 那个已经失效" — not "new door code, the old one is gone: 4471")
    named_old = old is not None and _OLD_NAMES.fullmatch(text, old.end(), f.start) is not None
    called_new = NEW.search(text, old.start() if named_old and old else start, f.start)
    # (nor another credential's: "访客WiFi不用密码，员工网的密码是 …" — the staff's named after it)
    another = (
        old is not None
        and NOT_NEEDED.fullmatch(old.group(0)) is not None
        and CUE.search(text, old.end(), f.start) is not None
    )
    before = old is not None and not corrected and not called_new and not another
    return before or expired_after(text, start, (f.start, f.end))


_OLD_NAMES = re.compile(
    r"(?i)[ \t:：=是为]*(?:(?:the[ \t]+)?(?:password|passcode|pin|code|key|wifi|密码|口令)[ \t:：=是为]*)?(?:(?:is|was)[ \t]+)?"
)
_REVOKED_BEFORE = re.compile(f"(?:{REVOKED.pattern})[ \t:：]*$")
_CORRECTION = re.compile(r"(?i)\b(?:it\s+is|it['’]s|its|is\s+now|correct\s+one)\b|新的|现在是|应该是")


# What protects a password rather than discloses it: a hash (bcrypt, argon2, crypt(3), hex named as
# an MD5/SHA/hash), an encrypted value (an Ansible vault, sops, a Bitnami SealedSecret's "Ag…").
_PROTECTED = re.compile(
    r"\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$[^\s'\"]+|\$[156y]\$[^\s'\"]{8,}|\$apr1\$[^\s:'\"]+"
    r"|\bpbkdf2_sha\d+\$\d+\$[^\s'\"]+|\bsha\d+\$[^\s'\"]{16,}"
    r"|\$ANSIBLE_VAULT;[^\n]*(?:\n[ \t]*[0-9a-f]+)*|!vault\b|\bENC\[[^\]]+\]|\bENC\([^)]+\)|SCRAM-SHA-256\$\S+"
    r"|-----BEGIN PGP MESSAGE-----[\s\S]*?(?:-----END PGP MESSAGE-----|$)|\"encrypted_data\"\s*:\s*\"[^\"]*\""
    r"|(?i:md5|sha-?(?:1|256|512)|hash|哈希|摘要|加盐)[^\n]{0,20}?\b[0-9a-f]{32,128}\b"
    r"|\b[0-9a-f]{32,128}\b(?=[^\n]{0,8}(?i:md5|sha|hash|哈希|加盐))"
)
_SEALED = re.compile(r"\bAg[A-Za-z0-9+/=]{40,}")
# A constant's name in code (FAKE_PWD, DB_PASSWORD): where the value comes from, not the value.
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[)}\],;]*$")


def _protected(text: str) -> list[tuple[int, int]]:
    spans = (
        [m.span() for m in _PROTECTED.finditer(text)]
        if (
            "$" in text
            or "!vault" in text
            or "ENC[" in text
            or "ENC(" in text
            or "PGP MESSAGE" in text
            or "encrypted_data" in text
            or re.search(r"[0-9a-f]{32}", text)
        )
        else []
    )
    if "SealedSecret" in text:
        spans += [m.span() for m in _SEALED.finditer(text)]
    return spans


def _not_disclosed(text: str, findings: list[SecretFinding]) -> list[SecretFinding]:
    """The findings that disclose: not inside a hash or an encrypted value, not a constant's name
    nor an attribute in code (``random_password.db.result``), not inside a template's expression
    (``{{ lookup('hashi_vault', 'secret=…') }}``)."""
    protected = _protected(text)
    kept = []
    for f in findings:
        value = text[f.start : f.end]
        if any(start < f.end and f.start < end for start, end in protected):
            continue
        if _CONSTANT.match(value) or _ATTRIBUTE.match(value):
            continue
        line_start = max(text.rfind("\n", max(0, f.start - 400), f.start) + 1, f.start - 400)  # bounded
        if text.rfind("{{", line_start, f.start) > text.rfind("}}", line_start, f.start):
            continue
        before = max(line_start, f.start - 24)
        if _AN_EXAMPLE_BEFORE.search(text, before, f.start + 2) or _AN_EXAMPLE_AFTER.match(text, f.end):
            continue  # "比如abc123这种", "e.g. till PIN 1234 — EXAMPLE ONLY", "Xxxx@2024xx（这只是格式示意）"
        if _DIGITS.fullmatch(value) and (
            _PHONE_BEFORE.search(text, before, f.start) or _MASKED_TAIL.match(text, f.end)
        ):
            continue  # a telephone number's part: "code sent to +86 139****2284", "+1 (555) 013-8842"
        if _DIGITS.fullmatch(value) and _ERROR_CODE_BEFORE.search(text, before, f.start):
            continue  # "Invalid verification code"（错误码 40103）: an error's number
        kept.append(f)
    return kept


_DIGITS = re.compile(r"[\d \-()]+")
_PHONE_BEFORE = re.compile(r"\+\d{0,3}[ \t\-]?(?:\(\d{1,4}\)[ \t\-]?)?\Z")
_ERROR_CODE_BEFORE = re.compile(
    r"(?i)(?:错误码|错误代码|状态码|\berror(?:\s+code)?|\bstatus(?:\s+code)?|\berrno)[ \t]*[:：#=]?[ \t]*\Z"
)
_MASKED_TAIL = re.compile(r"\*{2,}\d")  # "139****2284": a number with its middle hidden
# Digits said as words, paused between ("six... two... six"): the dots are speech, not a mask.
_SPOKEN = re.compile(r"(?i)[a-z]+(?:(?>(?:[\s,\-]|\.{2,3}|…)+)[a-z]+)+")
_PAUSE = re.compile(r"\.{2,3}|…")


# A value given as an example of a format, not as the value.
# (its end two characters into the value: a value read from a word on, "比如abc123这种")
_AN_EXAMPLE_BEFORE = re.compile(
    r"(?i)(?:\be\.g\.|\bfor\s+example\b|\bsomething\s+like\b|\bsuch\s+as\b|比如|例如|举个例子|不要用|别用)(?![^\n。.!?]{0,18}(?:real|actual|真实))[^\n。.!?]{0,18}\Z"
)
_AN_EXAMPLE_AFTER = re.compile(
    r"(?i)[^\n。]{0,8}?(?:\bexample\s+only\b|\bjust\s+an\s+example\b|\bnot\s+a\s+real\b|只是[^\n。，]{0,4}示[意例]|仅为示例|不是真实)"
)


_ATTRIBUTE = re.compile(r"^(?=[^.]*_|.*\.[a-z0-9]*_)[a-z][a-z0-9_]*(?:\.[a-z][a-z0-9_]*){2,}$")


_WRAPPED = re.compile(r"[<{\[$%]")


def _unless_placeholder(text: str, findings: list[SecretFinding]) -> list[SecretFinding]:
    """The cued findings whose value is not a placeholder, a reference or masked, nor inside
    ``<…>``, ``{{…}}``, ``${…}``, ``[…]``."""
    kept = []
    for f in findings:
        value = text[f.start : f.end]
        wrapped = f.start > 0 and _WRAPPED.match(text, f.start - 1) is not None
        # (a speaker's pause is not a mask: "four four one... nine zero six")
        masked = _MASKED.search(_PAUSE.sub(" ", value) if _SPOKEN.fullmatch(value) else value)
        if wrapped or PLACEHOLDER.match(value) or _REFERENCE.match(value) or masked or "{{" in value:
            continue
        if is_placeholder(value):
            continue
        kept.append(f)
    return kept


# Which shaped detectors a word calls for: one automaton pass over the text (a substring look for
# each word of each detector was a hot spot of the pipeline).
_DETECTORS_OF: dict[str, list[int]] = {}
for _n, _detector in enumerate(SECRET_PATTERNS):
    for _word in _detector.needs:
        _DETECTORS_OF.setdefault(_word, []).append(_n)
_NEEDED_WORDS = word_automaton(_DETECTORS_OF)


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
    if (plain := simplified(text)) is not text:  # traditional Chinese, read as the simplified the cues are
        text, folded = plain, plain.casefold()
    folded = text.casefold() if folded is None else folded
    if not extra and not may_hold_secrets(folded):
        found = _unless_placeholder(text, [*cued_secrets(text, folded), *laid_out_secrets(text, folded)])
        return _merged([f for f in _not_disclosed(text, found) if not _expired(text, f)]) if found else []
    spans: list[SecretFinding] = []
    called = {i for _, word in _NEEDED_WORDS.iter(folded) for i in _DETECTORS_OF[word]}
    for n, detector in enumerate((*SECRET_PATTERNS, *extra)):
        if n < len(SECRET_PATTERNS):
            if detector.needs and n not in called:
                continue
        elif detector.needs and not any(word in folded for word in detector.needs):
            continue
        for m in detector.pattern.finditer(text):
            value = m.group(detector.group)
            if detector.group and (PLACEHOLDER.match(value) or _REFERENCE.match(value)):
                continue
            if detector.group and _IN_ARN.search(text, max(0, m.start(detector.group) - 120), m.start(detector.group)):
                continue  # an AWS resource's name ("…:secret:prod/orders/db-Xk29Qa"): where a secret is
            if detector.kind != "private_key" and _MASKED.search(value):
                continue
            if detector.kind == "aws_access_key" and not _aws_whole_or_digits(value):
                continue
            if detector.group and value.endswith("("):
                continue  # a call that asks for it: password = input(…)
            if "EXAMPLE" in value or value == "JBSWY3DPEHPK3PXP" or (detector.group and is_placeholder(value)):
                continue  # AWS's documented example keys (AKIAIOSFODNN7EXAMPLE, …EXAMPLEKEY)
            spans.append(SecretFinding(detector.kind, m.start(detector.group), m.end(detector.group)))
    if random_tokens:
        spans.extend(_high_entropy(text))
        spans.extend(_split_tokens(text))
    if decode:
        spans.extend(_encoded(text))
        spans.extend(_url_encoded(text))
        spans.extend(_joined(text))
    if _SAID_NAMES.search(text):
        spans.extend(_said_digits(text))
    spans.extend(_unless_placeholder(text, [*cued_secrets(text, folded), *laid_out_secrets(text, folded)]))
    return _merged([f for f in _not_disclosed(text, spans) if not _expired(text, f)])


def _merged(spans: list[SecretFinding]) -> list[SecretFinding]:
    """Left to right, an overlapping span dropped (the longer of two starting together kept)."""
    spans = sorted(spans, key=lambda f: (f.start, -(f.end - f.start)))
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
