"""Whether a text may hold a secret a pattern detector finds: one cheap look that rules most texts
out before the detectors of ``secrets.py`` run (the cue and layout detectors have their own words).
"""

from __future__ import annotations

import re

from memwarden.policies.secret_kinds import word_automaton

# Every pattern detector needs one of these (casefolded) or a long token: most texts have neither,
# and one search rules them out. A vendor's prefix needs no word here when the token after it is
# 24+ characters of the long token's alphabet (``_PREFILTER_TOKEN`` finds it); the short ones
# (LTAI…, a Chinese cloud's) are listed.
# The literal words in one Aho-Corasick automaton (one pass over the text, ~1 µs for a short field
# where the alternation took ~10); the few that are patterns in a small regular expression.
_PREFILTER_LITERALS = (
    "private key|sk-|sk_|rk_|pk_|ck_|cs_|mwk_|pin|pw|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|akia|asia|agpa|aida|aroa|aiza|"
    "xox|eyj|://|pass|pwd|密码|口令|key|secret|token|bearer|密钥|秘钥|私钥|令牌|authorization|jdbc:|ltai|seed|"
    "sid=|aspxauth|cookie:|sess|"
    # Command lines that take a password, door codes, app passwords (their detectors' words).
    "mysql|mariadb|sshpass|docker login|podman login|registry login| login -u|redis-cli| -a |curl -u|curl --user|"
    "--password|keypad|lockbox|garage|alarm|door|gate code|safe code|lock code|entry code|combo|combination|"
    "门禁|门锁|车库|保险柜|保险箱|密码锁|开门|授权码|专用密码|app password|app-specific|"
    "@tcp(|@unix(|getconnection|key=|setup key|puk|> auth|auth 是|auth是|auth:|otp|2fa|mfa|种子|authenticator|身份验证器|:aa|"
    "验证器|authy|security word|memorable word| p: "
).split("|")
_PREFILTER_PATTERNS = re.compile(r"sess[a-z_.\-]*=|[?&](?:sig|signature|auth)=")
# What the login-pair detector needs (casefolded): a login word, then a "/" or "pass" — searched only
# when the text has either.
_PREFILTER_PAIR = re.compile(r"(?:log(?:s|ged)? ?in|creds?\b|credential|account|user)[^\n]{0,80}?(?:\S\s*/\s*\S|pass)")


_AUTOMATON = word_automaton(_PREFILTER_LITERALS)


def _prefilter_words(folded: str) -> bool:
    """One of the trigger words is in ``folded`` ("sess" only as "sess…=": a session cookie)."""
    for _, word in _AUTOMATON.iter(folded):
        if word != "sess" or _PREFILTER_PATTERNS.search(folded):
            return True
    return ("?" in folded or "&" in folded) and _PREFILTER_PATTERNS.search(folded) is not None


_PREFILTER_TOKEN = re.compile(r"[a-z0-9+/_\-]{24}")
# A key split into groups: three groups of letters and digits mixed, among at most five.
_PREFILTER_GROUPS = re.compile(r"(?:(?=[a-z]{0,7}\d)(?=\d{0,7}[a-z])[a-z\d]{3,8}[ \-](?:[a-z\d]{3,8}[ \-])?){3}")
# Each of those groups has a letter beside a digit: one cheap search (it starts at a digit) rules
# most texts out before the groups' own, which tries every position.
_PREFILTER_LETTER_DIGIT = re.compile(r"\d(?:(?<=[a-z]\d)|[a-z])")
# A key spelled out a character at a time (what ``_SPELLED`` needs: 13 characters).
_PREFILTER_SPELLED = re.compile(r"(?<![a-z0-9])[a-z0-9][ \-][a-z0-9][ \-][a-z0-9][ \-](?:[a-z0-9][ \-]){9}")
# Codes that open something or stand in for a password ("door code", "recovery codes", "验证码",
# "恢复码"): looked for only when "code" or "码" is there ("VS Code", "代码" are not them).
_PREFILTER_CODES = re.compile(
    r"(?:door|gate|alarm|disarm|safe|keypad|lock|garage|entry|building|recovery|backup|scratch|emergency)\s+code"
)
_PREFILTER_MA = re.compile(r"[证验态复用援份]码")
# Percent-encoding and quoted pieces joined with "+": looked for only when "%" or "+" is there.
_PREFILTER_PERCENT = re.compile(r"%[0-9a-f]{2}")
_PREFILTER_STARRED = re.compile(r"[*＊]\d{4,8}#")
_PREFILTER_CONCAT = re.compile(r"""['"]\s*\+\s*['"]""")


def may_hold_secrets(folded: str) -> bool:
    """False when no detector can match: ``folded`` is the casefolded text."""
    return (
        _prefilter_words(folded)
        or (("/" in folded or "pass" in folded) and _PREFILTER_PAIR.search(folded) is not None)
        or _PREFILTER_TOKEN.search(folded) is not None
        or (_PREFILTER_LETTER_DIGIT.search(folded) is not None and _PREFILTER_GROUPS.search(folded) is not None)
        or _PREFILTER_SPELLED.search(folded) is not None
        or ("code" in folded and _PREFILTER_CODES.search(folded) is not None)
        or ("码" in folded and _PREFILTER_MA.search(folded) is not None)
        or ("%" in folded and _PREFILTER_PERCENT.search(folded) is not None)
        or ("+" in folded and _PREFILTER_CONCAT.search(folded) is not None)
        or ("#" in folded and _PREFILTER_STARRED.search(folded) is not None)
    )
