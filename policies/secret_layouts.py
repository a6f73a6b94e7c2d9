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

from memwarden.policies.secret_accounts import account_secrets
from memwarden.policies.secret_answers import security_answers
from memwarden.policies.secret_cues import CUE_WORDS, MAX_CUES, NAMED_NUMBER, any_word
from memwarden.policies.secret_directives import directives
from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_numbers import YEAR
from memwarden.policies.secret_prose import prose_codes, prose_passwords
from memwarden.policies.secret_seeds import seed_phrases
from memwarden.policies.secret_values import CJK, classes, token_value
from memwarden.policies.secret_words import CUE, PLACEHOLDER_VALUE, names_no_secret

# A login and its password side by side: "root / Kf#82mQzv1" (three kinds of characters in it).
_PAIR = re.compile(r"(?<![\w/.:@])[\w.@+\-]{2,40}[ \t]+/[ \t]+([^\s/,，。;；'\"]{6,40})(?![\w/])")
# A login in lower case (or an e-mail address), then its password after a comma, a dash or a bar.
_LISTED_PAIR = re.compile(
    r"(?<![\w/.:@\-])[a-z0-9][a-z0-9._@+\-]{2,40}[ \t]*(?:,|[ \t](?:[—–|]|//))[ \t]*([^\s/,，。;；'\"]{6,40})(?![\w/])"
)
# "user animeguyz / pass Naruto_was_better_2", "u: j.mendes  p: Coral!Reef2", "my login is
# nadia.b@gmail.com and pass is nadiabakes<3", "tours.sunset@gmail.com, pass SunsetBoat!9": a login
# (named, or an e-mail address), then "pass" and a value holding a digit or a symbol.
_USER_PASS = re.compile(
    r"(?i)(?:\b(?:user(?:name)?|login|u(?=[:：]))(?:[ \t]+is)?[ \t:=：]+[\w.@+\-]{2,60}|(?<![\w.+\-])[\w.+\-]+@[\w\-]+\.[a-z]{2,}(?:\.[a-z]{2,})*)"
    r"(?>[ \t]*(?:[/|,;，、]+|//)|[ \t]+(?:and\b|[—–][ \t])|[ \t]{2,})[ \t]*+(?:the[ \t]+)?(?:pass(?:word)?|pw|pwd|p(?=[:：]))"
    r"(?P<is>[ \t]+is)?+(?P<said>[ \t]*+[:=：][ \t]*+|[ \t]++)"
    r"(?P<value>(?=[^\s,;，。]*[\d_!@#$%^&*+=?~.<\-])[^\s,;，。]{4,40})"
)


def _logged(folded: str) -> bool:
    """Whether a casefolded text may hold a login and "pass" beside it (what _USER_PASS reads):
    substring tests, most texts ruled out in well under a microsecond."""
    password = "pass" in folded or "pw" in folded or "p:" in folded or "p：" in folded
    return password and ("user" in folded or "login" in folded or "@" in folded or "u:" in folded or "u：" in folded)


_DECIMAL = re.compile(r"[\d.,%]+")
_WORD_AFTER = re.compile(r"[ \t]+[a-z]")
_AN_ADDRESS = re.compile(r"@|://|^www\.")
# A quoted "user:password" (a Basic header's input, a URL's userinfo): a symbol in the password.
_QUOTED_PAIR = re.compile(r"[\"']([\w.@\-]{2,40}):([^\s:\"'/@]{6,40})[\"']")
# A driver's call given a password as a literal: new PDO(dsn, 'user', 'Gv7#pQ2zLw').
_CALL = re.compile(
    r"(?i)\b(?:pdo|connect|login|authenticate|credentials?)\w*\s*\((?:[^()\n,]{0,200},){0,4}[^()\n,]{0,200}?['\"]([^'\"\s]{6,40})['\"]\s*\)"
)
_LUHN_CARD = re.compile(r"(?<![\d\-])(?:\d[ \-]?){12,18}\d(?![\d\-])")
# four groups of four, then more digits: "4392 2670 1185 9036 11/26" — the card ends before its expiry
_FOUR_FOURS = re.compile(r"\d{4}[ \-]\d{4}[ \-]\d{4}[ \-]\d{4}")
_CARD_WORDS = re.compile(r"(?i)\b(?:card|visa|mastercard|amex|cvv|cvc|exp(?:iry|ires)?)\b|卡号|信用卡|银行卡|有效期")


_COLUMN = re.compile(r"(?i)^(?:password|passwd|pwd|pw|pass|secret|token|api[ _-]?key|pin|密码|口令|密钥)$")


_HEADER = re.compile(
    r"(?im)(?:^|[|,])[ \t]*(?:password|passwd|pwd|pw|pass|secret|token|api[ _-]?key|pin|密码|口令|密钥"
    r"|(?:[a-z]+[ \t]+)?(?:codes?|combo|combination)|门禁码|密码锁)[ \t]*(?:[|,]|$)"
)
# A column of codes beside a column of what they open: "| Door | Code |", "Locker,Combination".
_CODE_COLUMN = re.compile(
    r"(?i)^(?:(?:door|gate|alarm|lock|keypad|entry|access|safe|locker|padlock)[ \t]+)?(?:codes?|combo|combination)$|^门禁码$"
)
_LOCK_CELL = re.compile(
    r"(?i)\b(?:doors?|gates?|locks?|lockers?|safes?|entrances?|cages?|keypads?|padlocks?|sheds?|garages?)\b"
    r"|门|锁|柜"
)
# Headers that make the table about something else: flights' gates, lock models, events.
_NOT_LOCKS = re.compile(
    r"(?i)\b(?:flights?|airport|terminal|boarding|model|sku|part|product|item|error|event|status|type|category)\b"
)
_CODE_VALUE = re.compile(r"[*#]?\d{3,8}[#*]?")


def _columns(text: str) -> list[SecretFinding]:
    """The cells under a column named for a password, in a Markdown table or a CSV export (a
    password manager's)."""
    found: list[SecretFinding] = []
    if _HEADER.search(text) is None:
        return found
    lines = text.splitlines(keepends=True)
    offset = 0
    column: int | None = None
    codes = False  # a column of codes: digits alone are its values
    sep = ""
    for line in lines:
        stripped = line.strip()
        if column is None:
            for sep in ("|", ","):
                cells = [c.strip() for c in stripped.strip("|").split(sep)] if sep in stripped else []
                hits = [i for i, c in enumerate(cells) if _COLUMN.match(c)]
                if (
                    not hits
                    and any(_LOCK_CELL.search(c) for c in cells)
                    and not any(_NOT_LOCKS.search(c) for c in cells)
                ):
                    hits = [i for i, c in enumerate(cells) if _CODE_COLUMN.match(c)]
                    codes = bool(hits)
                if hits and len(cells) >= 2:
                    column = hits[0]
                    break
        elif sep in stripped and not re.fullmatch(r"[|\-: ]+", stripped):
            cells = stripped.strip("|").split(sep) if sep == "|" else stripped.split(sep)
            if column < len(cells):
                value = cells[column].strip()
                shaped = _CODE_VALUE.fullmatch(value) is not None if codes else len(value) >= 4 and classes(value) >= 2
                if shaped and not PLACEHOLDER_VALUE.match(value):
                    start = offset + line.index(value, line.index(cells[column])) if value else offset
                    found.append(SecretFinding("password", start, start + len(value)))
        offset += len(line)
    return found


def _luhn(digits: str) -> bool:
    total = 0
    for i, ch in enumerate(reversed(digits)):
        d = int(ch) * (2 if i % 2 else 1)
        total += d - 9 if d > 9 else d
    return total % 10 == 0


_LISTED = re.compile(r"[,—–|]|//")
# What a listed login pair's line must hold (casefolded): one pass, most texts ruled out.
_LOGIN_WORDS = word_automaton("cred|login|log in|sign in|signin|account|admin|apple id|账号|登录".split("|"))


def _paired(text: str, folded: str) -> list[SecretFinding]:
    found = []
    if "/" in text:
        for m in _PAIR.finditer(text):
            value = m.group(1)
            strong = classes(value) >= 3 or (
                len(value) >= 12 and any(c.isdigit() for c in value) and classes(value) >= 2
            )
            if strong and not PLACEHOLDER_VALUE.match(value):
                found.append(SecretFinding("password", m.start(1), m.end(1)))
    login = any_word(_LOGIN_WORDS, folded)
    for m in _LISTED_PAIR.finditer(text) if login and _LISTED.search(text) else ():
        user = text[m.start() : m.start(1)]
        if not (
            re.search(r"[@._\d\-]", user.split()[0] if user.split() else "")
            or re.search(r"[:：][ \t]*$", text[max(0, m.start() - 3) : m.start()])
        ):
            continue  # "the login workshop with sarah — Room-B12": a name, not a login
        # "FreeAgent login for Tom: millbrookfarm, Harvest-Moon-77", "coach.dan@ironhouse.gym — Squat$Rack21"
        line_start = text.rfind("\n", 0, m.start()) + 1
        value = m.group(1)
        if (
            classes(value) >= 3
            and any(c.isdigit() for c in value)
            and _LOGIN_LINE.search(text, line_start, m.start(1))
            and token_value(value)
            and not _AN_ADDRESS.search(value)
            and "=" not in value
            and ":" not in value
        ):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    for m in _USER_PASS.finditer(text) if _logged(folded) else ():
        value = m.group("value")
        if _DECIMAL.fullmatch(value) or PLACEHOLDER_VALUE.match(value) or not (len(value) >= 6 or classes(value) >= 2):
            continue  # "Mann–Whitney U: 1200  p: 0.0034": a statistic, not a password
        # Said bare ("pass SunsetBoat!9"): a value of three kinds that ends its clause — not the verb
        # of "… and pass Q3-2024 figures to finance".
        bare = m.group("is") is None and not m.group("said").strip()
        if bare and (classes(value) < 3 or _WORD_AFTER.match(text, m.end("value"))):
            continue
        found.append(SecretFinding("password", m.start("value"), m.end("value")))
    for m in _QUOTED_PAIR.finditer(text):
        if classes(m.group(2)) >= 3 and any(not c.isalnum() for c in m.group(2)):
            found.append(SecretFinding("password", m.start(2), m.end(2)))
    for m in _CALL.finditer(text):
        if classes(m.group(1)) >= 3:
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


# A card number read aloud, digit by digit, near a card's words: "the card's four nine one two, three
# three oh eight, …, expiry oh nine twenty-eight".
_SAID_CARD = re.compile(
    r"(?i)(?<![a-z])(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)"
    r"(?:[\s,\-.…]+(?:zero|oh|one|two|three|four|five|six|seven|eight|nine)){12,18}(?![a-z])"
)


def _said_card(text: str) -> list[SecretFinding]:
    return [
        SecretFinding("card_number", m.start(), m.end())
        for m in _SAID_CARD.finditer(text)
        if _CARD_WORDS.search(text, max(0, m.start() - 80), m.end() + 80)
    ]


_NAMED_NOT_CARD = re.compile(
    r"(?i)(?:流水号|单号|订单号?|交易号|运单号?|\b(?:transaction|order|ref(?:erence)?|tracking|invoice)\s*(?:no\.?|number|id|#))"
    r"[ \t:：#]*\Z"
)
_EXPIRY_AFTER = re.compile(r"[ \t]*[,;，]?[ \t]*(?:0[1-9]|1[0-2])[ \t]*/[ \t]*(?:20)?\d\d(?![\d/])")


def _cards(text: str) -> list[SecretFinding]:
    found = []
    for m in _LUHN_CARD.finditer(text):
        digits = re.sub(r"\D", "", m.group(0))
        near = text[max(0, m.start() - 60) : m.end() + 60]
        # its expiry or security code named, or an expiry date right after it ("…7720, 04/28, 832")
        dated = (
            re.search(r"(?i)\b(?:cvv|cvc|exp(?:iry|ires)?)\b|有效期", near) is not None
            or _EXPIRY_AFTER.match(text, m.end()) is not None
        )
        if re.search(r"(?i)\btest(?:ing)?\b|\bsandbox\b|测试", text[max(0, m.start() - 200) : m.end() + 60]):
            continue  # a payment processor's documented test numbers
        if _NAMED_NOT_CARD.search(text, max(0, m.start() - 16), m.start()):
            continue  # a transaction's or an order's number: "交易流水号 3120240311884523"
        if 13 <= len(digits) <= 19 and digits[0] in "3456" and (_luhn(digits) or dated) and _CARD_WORDS.search(near):
            found.append(SecretFinding("card_number", m.start(), m.end()))
        elif (
            (four := _FOUR_FOURS.match(text, m.start()))
            and four.end() < m.end()
            and _EXPIRY_AFTER.match(text, four.end())
            and digits[0] in "3456"
            and _CARD_WORDS.search(near)
        ):
            found.append(SecretFinding("card_number", m.start(), four.end()))
    return found


_LOGIN_LINE = re.compile(
    r"(?i)\b(?:creds?|credentials?|log\s?ins?|log\s?into|sign\s?in|account|admin|root|user(?:name)?|pat|token|key|apple\s?id)\b|pass"
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
            or _ADDRESS_LIKE.fullmatch(value)
        ):
            continue
        top = m.start()
        for _ in range(3):  # the three lines above, found without splitting all that comes before
            top = text.rfind("\n", 0, max(0, top - 1)) + 1 if top > 0 else 0
        above = text[max(top, m.start() - 600) : m.start()].splitlines()
        if any(line.startswith("-----") for line in above):
            continue  # an armoured block's body (a private key has its own detector)
        if any(_names_credential(line) or _LOGIN_LINE.search(line) for line in above):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


# A host, an API group or a path, not a password: "client.authentication.k8s.io/v1beta1".
_ADDRESS_LIKE = re.compile(r"[a-z0-9\-]+(?:\.[a-z0-9\-]+)+(?:/[\w.\-]*)*")


def _names_credential(line: str) -> bool:
    """Whether ``line`` names a credential (not a code that opens nothing: "Status Code: 429")."""
    return any(not names_no_secret(m.group(0)) for m in CUE.finditer(line))


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


# Codes listed by whose they are or what they open, on the line after their plural name: "my pins 💳
# Nationwide 2947 | Monzo 0184", "staff till logins - Jess 1123, Amira 4409", "Key safes — 4 Ash Ct
# 1190 | 12 Elm Gv 6634".
_LIST_CUE = re.compile(
    r"(?i)\b(?:pins|pin\s+numbers|passcodes|key\s?safes|lockboxes|till\s+logins"
    r"|(?:door|gate|alarm|keypad|locker|till|key\s?safe|lockbox|access|entry)\s+codes)\b"
)
_LIST_ITEM = re.compile(r"[ \t]*(?=[^\n]*[A-Za-z\u4e00-\u9fff])[^\n]*?[ \t:]((?<!\d)\d{4,6})[ \t]*")


def _listed(text: str) -> list[SecretFinding]:
    found = []
    for n, cue in enumerate(_LIST_CUE.finditer(text)):
        if n == MAX_CUES:
            break
        # the rest of its line, at most 200 characters (every look stays bounded)
        line_end = text.find("\n", cue.end(), cue.end() + _LIST_REACH)
        line_end = min(len(text), cue.end() + _LIST_REACH) if line_end < 0 else line_end
        items, start = [], cue.end()
        for part in re.split(r"([|,;])", text[cue.end() : line_end]):
            if part not in ("|", ",", ";"):
                m = _LIST_ITEM.fullmatch(text, start, start + len(part))
                if m is not None and not YEAR.fullmatch(m.group(1)):
                    items.append(SecretFinding("password", m.start(1), m.end(1)))
            start += len(part)
        if len(items) >= 2:
            found += items
    return found


_LIST_REACH = 200
_LIST_WORDS = word_automaton(["pins", "pin numbers", "passcodes", "till logins", "safes", "lockboxes", "codes"])


def laid_out_secrets(text: str, folded: str) -> list[SecretFinding]:
    """The secrets of this module in ``text`` (``folded``: it casefolded); overlaps left to the caller."""
    return [
        *(
            _paired(text, folded)
            if "/" in text or "'" in text or '"' in text or _LISTED.search(text) or _logged(folded)
            else []
        ),
        *(_cards(text) if _digits(text) >= 13 else []),
        *(_said_card(text) if "card" in folded or "卡" in folded else []),
        *directives(text, folded),
        *(_columns(text) if "\n" in text and any_word(CUE_WORDS, folded) else []),
        *(seed_phrases(text, folded) if len(text) >= 23 else []),
        *(_alone(text) if len(text) <= 70 else []),
        *(_under_its_name(text) if "\n" in text else []),
        *(_listed(text) if any_word(_LIST_WORDS, folded) and _A_DIGIT.search(text) else []),
        *account_secrets(text, folded),
        *prose_codes(text, folded),
        *prose_passwords(text, folded),
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
    r"(?:(?:#|\*|hash\b|pound\b|star\b|off\b|the\s++(?:lock|key|tick|check)\s*+(?:symbol|button|key|mark)?+\b)(?![ \t]*+(?:to\s++)?(?:buzz|call|ring|dial))"
    r"|to\s++(?:unlock|disarm|unset|get\s++in|release|open\s++the\s++" + _OPENED + r")\b"
    # where they are keyed: "punch in 7 3 3 1 on the keypad by the ramp", "enter 4471 at the gate"
    r"|(?:on|into|at)\s++(?:the\s++)?(?:[a-z]++\s++)?"
    + _OPENED
    + r"\b(?![ \t]++(?:log|sheet|sign|ledger|office|book|desk|form|list|register|deposit)))"
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
    # an alarm disarmed: "Disarmed with 4-8-5-1."
    r"|\bdisarmed\s++(?:it\s++|the\s++(?:alarm|panel|system)\s++)?with\s++(?:code\s++)?(?!(?:19|20)\d\d\b)"
    r"(\d(?:[ \-]?+\d){3,9}#?+)(?=[ \t]*+(?:[.,;\n]|\Z|and\b|then\b))"
    # a US keypad's: "star 6 0 9 1 pound"
    r"|\bstar[ \t]++(\d(?:[ \-]?+\d){3,9})[ \t]++(?:pound|hash)\b"
    # on a door's keypad, then confirmed: "在键盘上输 2468 然后按确认" (not an amount at a till)
    r"|(?:键盘|密码面板|门禁)[^\n，。]{0,6}?(?:输入?+|按)[ \t]*+(\d(?:[ \-]?+\d){3,9})[ \t，,]*+(?:再|然后|后)?+[ \t]*+按?+[ \t]*+确认"
)
# A flat's buzzer ("按 302 然后按 # 号键呼叫"); a number named as something else is NAMED_NUMBER's.
_BUZZER = re.compile(r"(?i)房号|房间号|呼叫|\bbuzz|\bflat\s+number|\bintercom\s+number")
_A_DIGIT = re.compile(r"\d")
# What every alternative of _KEYED holds: its verb or the alarm's word, or what it opens.
_KEY_WORDS = word_automaton(
    (
        "enter|press|punch|key in|type in|tap in|按|输|摁|unset|disarm|gate|door|garage|shed|lockbox|key safe|keysafe|star "
        "|key box|keybox|padlock|keypad|safe|locker|storage unit|mailbox|letterbox|bin store"
    ).split("|")
)


def _keyed(text: str) -> list[SecretFinding]:
    found = []
    for n, m in enumerate(_KEYED.finditer(text)):
        if n == MAX_KEYED:
            break
        group = next(g for g in range(1, 9) if m.group(g) is not None)
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
        "grow up",
        "security word",
        "born",
        "favorite",
        "favourite",
        "childhood",
        "security question",
        "memorable",
        "school",
        "answer",
        "密保",
        "安全问题",
    ]
)
