"""Secrets known by where they stand, not by a name just before them: a login and its password
side by side (``root / Kf#82mQzv1``, ``'svc:Tx8!qLm4Vz'``, a driver's call), a card number (Luhn,
or with its expiry or CVV), a configuration directive (``requirepass``, ``psk=``, SNMP, Cisco
``password 0``, ``IDENTIFIED BY``, ``.pgpass``, a Wi-Fi QR payload …), recovery codes copied one
per line, a table's password column (Markdown, a password manager's CSV), a BIP39 seed phrase, a
password on its own line under the line naming it, a text that is nothing but a password.

Every look is bounded (at most :data:`~memwarden.policies.secret_cues.MAX_CUES` lines, patterns
run only where their words are). Written for issue #33 (``secret_cues.py`` reads the cues).
"""

from __future__ import annotations

import re

from memwarden.policies.secret_answers import security_answers
from memwarden.policies.secret_cues import CUE_WORDS, MAX_CUES, NAMED_NUMBER, any_word
from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_values import CJK, classes, token_value
from memwarden.policies.secret_words import CUE, PLACEHOLDER_VALUE

# A login and its password side by side: "root / Kf#82mQzv1" (three kinds of characters in it).
_PAIR = re.compile(r"(?<![\w/.:@])[\w.@+\-]{2,40}[ \t]+/[ \t]+([^\s/,，。;；'\"]{6,40})(?![\w/])")
# A quoted "user:password" (a Basic header's input, a URL's userinfo): a symbol in the password.
_QUOTED_PAIR = re.compile(r"[\"']([\w.@\-]{2,40}):([^\s:\"'/@]{6,40})[\"']")
# A driver's call given a password as a literal: new PDO(dsn, 'user', 'Gv7#pQ2zLw').
_CALL = re.compile(
    r"(?i)\b(?:pdo|connect|login|authenticate|credentials?)\w*\s*\((?:[^()\n,]{0,200},){0,4}[^()\n,]{0,200}?['\"]([^'\"\s]{6,40})['\"]\s*\)"
)
_LUHN_CARD = re.compile(r"(?<![\d\-])(?:\d[ \-]?){12,18}\d(?![\d\-])")
_CARD_WORDS = re.compile(r"(?i)\b(?:card|visa|mastercard|amex|cvv|cvc|exp(?:iry|ires)?)\b|卡号|信用卡|银行卡|有效期")


# Configuration directives whose value is a password: redis, wpa_supplicant/hostapd, SNMP, a Cisco
# "password 0 …" (type 0: clear text), SQL's IDENTIFIED BY, WordPress's DB_PASSWORD, an XML element
# named for one, .npmrc's _auth.
_DIRECTIVES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (words, re.compile(pattern))
    for words, pattern in (
        (
            ("requirepass", "masterauth", "passphrase", "psk", "community", "auth_pass"),
            r"(?im)^[ \t]*+(?:requirepass|masterauth|wpa_passphrase|psk|snmp-server[ \t]+community|auth_pass)(?:[ \t]*+=[ \t]*+|[ \t]++)\"?([^\s\"]{6,})",
        ),
        ((" 0 ",), r"(?i)\b(?:password|secret)[ \t]+0[ \t]+(\S{6,})"),
        (("identified",), r"(?i)\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?BY\s+'([^'\n]{4,})'"),
        (("define(",), r"(?i)\bdefine\(\s*['\"]\w*(?:PASSWORD|PASS|SECRET|KEY)\w*['\"]\s*,\s*['\"]([^'\"\n]{4,})['\"]"),
        (("</",), r"(?i)<(?:pass|password|passwd|secret|token|api_?key)\b[^>]{0,200}>([^<\s]{4,})</"),
        (("_auth",), r"(?i)\b_auth(?:Token)?\s*=\s*(\S{8,})"),
        ((":",), r"(?m)^[^\s:#]{1,200}:\d{2,5}:[^\s:]{1,200}:[^\s:]{1,200}:(\S{6,})$"),  # ~/.pgpass
        (("wifi:",), r"(?i)\bWIFI:[^\n]{0,200}?\bP:([^;\s]{6,});"),  # a Wi-Fi QR code's payload
        (("0x",), r"(?i)(?:wallet\(|private[_\s-]?key|privkey)\W{0,6}(0x[0-9a-fA-F]{64})\b"),
        (
            ("提取码", "访问码", "extraction"),
            r"(?i)(?:提取码|访问码|extraction\s+code)\s*[:：是为]?\s*([A-Za-z0-9]{4})\b",
        ),
        (
            ("is your", "use ", "是您的", "为您的"),
            # A one-time code named after it: "329-876 is your … security code", "Use 133194 to sign in".
            r"(?i)\b(\d{3}[\s\-]?\d{3}|\d{4,8})\s+is\s+your\b[^.\n]{0,40}?\b(?:code|passcode|pin|password)\b"
            r"|\buse\s+(\d{4,8})\s+to\s+(?:sign|log)\s+in\b|\b(\d{4,8})\s*(?:是您的|为您的)[^。\n]{0,12}验证码",
        ),
    )
)


# Four or more lines of codes alone (xxxxx-xxxxx, 1234-5678): recovery codes copied out.
_ONE_CODE = r"(?:\d{1,2}[.)][ \t]*)?(?=[a-z0-9 -]*\d)[a-z0-9]{4,6}[- ][a-z0-9]{4,6}"
_CODE_LINES = re.compile(
    rf"(?m)(?:^[ \t]*{_ONE_CODE}(?:[ \t]+{_ONE_CODE})?[ \t]*\n){{2,}}^[ \t]*{_ONE_CODE}(?:[ \t]+{_ONE_CODE})?[ \t]*$"
)


_COLUMN = re.compile(r"(?i)^(?:password|passwd|pwd|pw|pass|secret|token|api[ _-]?key|pin|密码|口令|密钥)$")


_HEADER = re.compile(
    r"(?im)(?:^|[|,])[ \t]*(?:password|passwd|pwd|pw|pass|secret|token|api[ _-]?key|pin|密码|口令|密钥)[ \t]*(?:[|,]|$)"
)


def _columns(text: str) -> list[SecretFinding]:
    """The cells under a column named for a password, in a Markdown table or a CSV export (a
    password manager's)."""
    found: list[SecretFinding] = []
    if _HEADER.search(text) is None:
        return found
    lines = text.splitlines(keepends=True)
    offset = 0
    column: int | None = None
    sep = ""
    for line in lines:
        stripped = line.strip()
        if column is None:
            for sep in ("|", ","):
                cells = [c.strip() for c in stripped.strip("|").split(sep)] if sep in stripped else []
                hits = [i for i, c in enumerate(cells) if _COLUMN.match(c)]
                if hits and len(cells) >= 2:
                    column = hits[0]
                    break
        elif sep in stripped and not re.fullmatch(r"[|\-: ]+", stripped):
            cells = stripped.strip("|").split(sep) if sep == "|" else stripped.split(sep)
            if column < len(cells):
                value = cells[column].strip()
                if len(value) >= 4 and classes(value) >= 2 and not PLACEHOLDER_VALUE.match(value):
                    start = offset + line.index(value, line.index(cells[column])) if value else offset
                    found.append(SecretFinding("password", start, start + len(value)))
        offset += len(line)
    return found


# Which directives a word calls for: one pass of an automaton over the text finds every directive
# worth running (a substring look for each word of each directive was a hot spot of the pipeline).
_DIRECTIVES_OF: dict[str, list[int]] = {}
for _i, (_words, _) in enumerate(_DIRECTIVES):
    for _word in _words:
        _DIRECTIVES_OF.setdefault(_word, []).append(_i)
_DIRECTIVE_WORDS = word_automaton(_DIRECTIVES_OF)


def _directives(text: str, folded: str) -> list[SecretFinding]:
    """Each directive's pattern, run only where one of its words is (a long text costs one pass
    for all the words, not every pattern at every position)."""
    found = []
    called = {i for _, word in _DIRECTIVE_WORDS.iter(folded) for i in _DIRECTIVES_OF[word]}
    for i in sorted(called):
        pattern = _DIRECTIVES[i][1]
        for m in pattern.finditer(text):
            group = next(i for i in range(1, (pattern.groups or 0) + 1) if m.group(i) is not None)
            if not PLACEHOLDER_VALUE.match(m.group(group)):
                found.append(SecretFinding("password", m.start(group), m.end(group)))
    if "\n" in text:
        found += [SecretFinding("recovery_codes", m.start(), m.end()) for m in _CODE_LINES.finditer(text)]
    return found


_BIP39: frozenset[str] | None = None
_LOWER_WORDS = re.compile(r"(?<![\w-])[a-z]{3,8}(?:[ \t]+[a-z]{3,8}){11,23}(?![\w-])")


_CN_WORDS = re.compile(r"(?<![\u4e00-\u9fff])[\u4e00-\u9fff](?:[ \t]+[\u4e00-\u9fff]){11,23}(?![\u4e00-\u9fff])")
_SEED_CUE = re.compile(
    r"(?i)seed|mnemonic|recovery (?:words|phrase)|backup (?:words|phrase)|metamask|ledger|wallet|助记词"
)


def _seed_phrases(text: str) -> list[SecretFinding]:
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
    for pattern in (_LOWER_WORDS, _CN_WORDS):
        for m in pattern.finditer(text):
            words = m.group(0).split()
            named = _SEED_CUE.search(text, max(0, m.start() - 80), m.start()) is not None
            listed = sum(w in _BIP39 for w in words)
            whole = listed == len(words) and len(words) in (12, 15, 18, 21, 24)
            if whole or (named and listed >= 0.75 * len(words)):
                found.append(SecretFinding("seed_phrase", m.start(), m.end()))
    return found


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


def _paired(text: str) -> list[SecretFinding]:
    found = []
    if "/" in text:
        for m in _PAIR.finditer(text):
            value = m.group(1)
            strong = classes(value) >= 3 or (
                len(value) >= 12 and any(c.isdigit() for c in value) and classes(value) >= 2
            )
            if strong and not PLACEHOLDER_VALUE.match(value):
                found.append(SecretFinding("password", m.start(1), m.end(1)))
    for m in _QUOTED_PAIR.finditer(text):
        if classes(m.group(2)) >= 3 and any(not c.isalnum() for c in m.group(2)):
            found.append(SecretFinding("password", m.start(2), m.end(2)))
    for m in _CALL.finditer(text):
        if classes(m.group(1)) >= 3:
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


def _cards(text: str) -> list[SecretFinding]:
    found = []
    for m in _LUHN_CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        near = text[max(0, m.start() - 60) : m.end() + 60]
        dated = re.search(r"(?i)\b(?:cvv|cvc|exp(?:iry|ires)?)\b|有效期", near) is not None
        if re.search(r"(?i)\btest(?:ing)?\b|\bsandbox\b|测试", text[max(0, m.start() - 200) : m.end() + 60]):
            continue  # a payment processor's documented test numbers
        if 13 <= len(digits) <= 19 and digits[0] in "3456" and (_luhn(digits) or dated) and _CARD_WORDS.search(near):
            found.append(SecretFinding("card_number", m.start(), m.end()))
    return found


_LOGIN_LINE = re.compile(
    r"(?i)\b(?:creds?|credentials?|log\s?in(?:to)?|sign\s?in|account|admin|root|user(?:name)?|pat|token|key)\b|pass"
    r"|账号|登录|^[ \t]*(?:[^\s@:]{1,30}:[ \t]*)?[\w.+\-]+@[\w\-]+\.[\w.\-]+[ \t]*$"
)
# A line holding one token, maybe after a chat's speaker ("Dad: …", "Agent (Marisol): …").
_SPEAKER = r"(?:\[[\d:apm ]{3,12}\][ \t]*)?[A-Za-z\u4e00-\u9fff][A-Za-z\u4e00-\u9fff .()'\-]{0,29}[:：][ \t]*"
_BARE_LINE = re.compile(rf"(?m)^[ \t]*(?:{_SPEAKER})?([^\s\"'“”‘’#][^\s\"'“”‘’]{{7,99}})[ \t]*$")


def _under_its_name(text: str) -> list[SecretFinding]:
    """A password alone on its line, under a line (of the two before) that names a credential: the
    "password in my next message" split."""
    found = []
    for n, m in enumerate(_BARE_LINE.finditer(text)):
        if n == MAX_CUES:
            break
        value = m.group(1)
        # A status code or a short digest; a 16+ hex key under its name is a key.
        hexadecimal = re.fullmatch(r"(?i)0x[0-9a-f]+|[0-9a-f]{1,15}", value) is not None
        random_long = len(value) >= 20 and classes(value) >= 2 and any(c.isdigit() for c in value)
        if (
            (classes(value) < 3 and not random_long)
            or (len(value) > 40 and not random_long)
            or hexadecimal
            or not token_value(value)
            or re.search(r"[=:，。；、：！？（）]|^[\d.]+$|^<.*>$", value)
        ):
            continue
        top = m.start()
        for _ in range(3):  # the three lines above, found without splitting all that comes before
            top = text.rfind("\n", 0, max(0, top - 1)) + 1 if top > 0 else 0
        above = text[max(top, m.start() - 600) : m.start()].splitlines()
        if any(line.startswith("-----") for line in above):
            continue  # an armoured block's body (a private key has its own detector)
        if any(CUE.search(line) or _LOGIN_LINE.search(line) for line in above):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


_LONE = re.compile(r"\s*(?=\S*[!@#$%^&*?~])(?=\S*\d)(?=\S*[A-Za-z])([^\s/.]{8,64})\s*")


def _alone(text: str) -> list[SecretFinding]:
    """A text that is nothing but a password: one token of letters, digits and a symbol (a chat
    message pasted on its own)."""
    m = _LONE.fullmatch(text)
    if m is None or classes(m.group(1)) < 3 or CJK.search(m.group(1)) or PLACEHOLDER_VALUE.match(m.group(1)):
        return []
    return [SecretFinding("password", m.start(1), m.end(1))]


_DIGIT = re.compile(r"\d")


def _digits(text: str) -> int:
    """How many digits ``text`` holds (as ``\\d`` counts them: any script's)."""
    return _DIGIT.subn("", text)[1]


def laid_out_secrets(text: str, folded: str) -> list[SecretFinding]:
    """The secrets of this module in ``text`` (``folded``: it casefolded); overlaps left to the caller."""
    return [
        *(_paired(text) if "/" in text or "'" in text or '"' in text else []),
        *(_cards(text) if _digits(text) >= 13 else []),
        *_directives(text, folded),
        *(_columns(text) if "\n" in text and any_word(CUE_WORDS, folded) else []),
        *(_seed_phrases(text) if len(text) >= 23 else []),
        *(_alone(text) if len(text) <= 70 else []),
        *(_under_its_name(text) if "\n" in text else []),
        *(security_answers(text) if any_word(_ANSWER_WORDS, folded) else []),
        *(_keyed(text) if any_word(_KEY_WORDS, folded) and _A_DIGIT.search(text) else []),
    ]


# Digits keyed into a keypad, with the key that ends them or what they open: "enter 1 2 1 2 to
# unlock", "press 4471 then #", "按6 9 1 2再按撤防键", "按5201再按井号"; an alarm's "5 1 7 2 then unset";
# "it's 1955# for the bin store". Not "press 0 for reception", an amount ("输入2000按确认", "enter 200
# then press the tick"), a flat's buzzer ("按 302 然后按 # 号键呼叫", "press 305 then # to buzz up"), a
# year ("enter 2024 to open the calendar") or a phone's service code ("按 *1234# 查询余额"). Every run
# of spaces is possessive: nothing here backtracks over them.
_OPENED = (
    r"(?:bin\s++store|bike\s++(?:shed|store|room)|gate|door|garage|shed|lockbox|key\s?+(?:safe|box)|padlock|keypad"
    r"|safe|locker|storage\s++unit|mailbox|letterbox)"
)
_KEYED = re.compile(
    r"(?i)(?<![A-Za-z])(?:enter|press|punch\s++in|key\s++in|type\s++in|tap\s++in)\s++(?:the\s++code\s++)?"
    r"(?!(?:19|20)\d\d\b)(\d(?:[ \-]?+\d){3,9})[ \t]*+,?+[ \t]*+(?:(?:and\s++)?then\s++|and\s++|followed\s++by\s++)?+"
    r"(?:press\s++|hit\s++|tap\s++)?+"
    r"(?:(?:#|\*|hash\b|pound\b|star\b|the\s++(?:lock|key|tick|check)\s*+(?:symbol|button|key|mark)?+\b)(?![ \t]*+(?:to\s++)?(?:buzz|call|ring|dial))"
    r"|to\s++(?:unlock|disarm|unset|get\s++in|release|open\s++the\s++" + _OPENED + r")\b)"
    r"|(?:按|输入?+|摁)[ \t]*+(\d(?:[ \-]?+\d){3,9})[ \t，,]*+(?:再|然后|后|加)?+[ \t]*+(?:按|摁)?+[ \t]*+"
    r"(?:(?:#|＃|\*|井号|井字|星号)(?![ \t]*+号?键?[ \t]*+呼叫)|撤防|开锁|解锁|就(?:能|可以)?+(?:开了|开门|进门|进来|进去|打开))"
    # an alarm's: "It's 5 1 7 2 then unset"
    r"|(?<![\d.,:/])(\d(?:[ \-]?+\d){3,9}#?+)[ \t]*+,?+[ \t]*+then[ \t]++(?:press[ \t]++)?+(?:unset|disarm)\b"
    # what it opens, said after it: "it's 1955# for the bin store", "3391 — that's the bike shed"
    r"|\b(?:it['’]?s|its|it\s++is)[ \t]++(\d{4,8}#?+|\d(?:[ \-]\d){3,7}#?+)[ \t]++(?:is[ \t]++)?+(?:for|to|opens)[ \t]++"
    r"(?:the[ \t]++|my[ \t]++|our[ \t]++|your[ \t]++)?+(?:front[ \t]++|back[ \t]++|side[ \t]++|main[ \t]++)?+"
    + _OPENED
    + r"\b"
    r"|(?<![\d.,:/$€£¥#])(\d{4,8}#?+)[ \t]*+[-–—][ \t]*+that['’]?s[ \t]++the[ \t]++" + _OPENED + r"\b"
)
# A flat's buzzer ("按 302 然后按 # 号键呼叫"); a number named as something else is NAMED_NUMBER's.
_BUZZER = re.compile(r"(?i)房号|房间号|呼叫|\bbuzz|\bflat\s+number|\bintercom\s+number")
_A_DIGIT = re.compile(r"\d")
# What every alternative of _KEYED holds: its verb or the alarm's word, or what it opens.
_KEY_WORDS = word_automaton(
    (
        "enter|press|punch|key in|type in|tap in|按|输|摁|unset|disarm|gate|door|garage|shed|lockbox|key safe|keysafe"
        "|key box|keybox|padlock|keypad|safe|locker|storage unit|mailbox|letterbox|bin store"
    ).split("|")
)


def _keyed(text: str) -> list[SecretFinding]:
    found = []
    for n, m in enumerate(_KEYED.finditer(text)):
        if n == MAX_KEYED:
            break
        group = next(g for g in range(1, 6) if m.group(g) is not None)
        named = NAMED_NUMBER.search(text, max(0, m.start(group) - 16), m.start(group))
        if named is None and not _BUZZER.search(text, max(0, m.start() - 60), min(len(text), m.end() + 30)):
            found.append(SecretFinding("password", m.start(group), m.end(group)))
    return found


MAX_KEYED = 64


# Every security question holds one of these (casefolded).
_ANSWER_WORDS = word_automaton(
    [
        "maiden",
        "first",
        "grew up",
        "born",
        "favorite",
        "favourite",
        "childhood",
        "security question",
        "密保",
        "安全问题",
    ]
)
