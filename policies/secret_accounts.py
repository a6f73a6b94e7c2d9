"""Credentials given with what they open, with no name of their own: a Wi-Fi network's password or
key ("the wifi at the cabin is nutmegcopper50", "Wifi: WH-Floor / key: forkl1ft!Blue", "new wifi 🔑
Chickadee!Porch9"), and an account's password right after its e-mail address ("sign in with
jenna.cole@me.com and StoryTime!88", a sticky note's "walt.henderson52@aol.com   bluebird195").
All but the first Wi-Fi rules from the tenth round's tune sets (home tech, the working floor), not the
held-out sets.
"""

from __future__ import annotations

import re

from memwarden.policies.secret_cues import MAX_CUES
from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_values import classes
from memwarden.policies.secret_words import PLACEHOLDER_VALUE

# "the wifi at the cabin is nutmegcopper50", "the wifi at granny's is literally 'Bingo4Life!!'": what a
# Wi-Fi "is" with no network named is its password — a quoted token of three kinds of characters, or
# lower-case words run together with digits (a network's name, a broadband plan's, is rarely so long).
_WIFI_IS = re.compile(
    r"(?i)\bwi-?fi(?![a-z])(?![ \t]*(?:network|name|ssid|password|pw|pass|code|key))[^\n.!?:]{0,40}?"
    r"(?:\bis[ \t]+|是[ \t]*)"
    r"(?:(?:now|literally|just|still)[ \t]+)?+"
    r"(?:[\"'“‘]([^\"'”’\s]{6,40})[\"'”’]|(?-i:((?=[a-z]*\d)(?=(?:\d*[a-z]){8})[a-z\d]{10,30}))"
    # or letters, a digit and a sign no network's name has: "Sunny@Balcony9", "LakeLife!!2022" (two
    # digits after a "!": "terrible!!2 bars" is a review)
    r"|((?=\S{0,40}?\d)(?=\S{0,40}?[A-Za-z])(?=\S{0,40}?[@#$%^&*~]|\S{0,40}?[!?]\S{0,40}?\d\S{0,40}?\d)"
    r"[A-Za-z\d!@#$%^&*?~_+\-]{8,40}))(?![\w@.\-])"
)
# "vet clinic wifi …: VetClinicGuest, pass pawsandclaws": a network, then its password.
_WIFI_PASS = re.compile(
    r"(?i)\b(?:wi-?fi|(ssid))\b[^\n]{0,60}?"
    r"(?:[,;，；][ \t]*|(?P<loose>[ \t]*/[ \t]*|[ \t]+and[ \t]+|\n[ \t]*))(?:the[ \t]+)?"
    # "pass …", and "key …" after an SSID ("SSID KMH-Staff, key treefrog-…"), or a key of three kinds of
    # characters ("network BRC-Audit, key 7Gf2-pQ9x-Lm3v"); after "wifi", "key is"/"key:" ("the wifi
    # kept dropping; key takeaway: …" is no key)
    r"(?:(?:pass|pw|pwd|password)(?:[ \t]+is)?[ \t:：=]+"
    r"|key(?:[ \t]+is[ \t]+|[ \t]*[:：=][ \t]*|(?(1)[ \t]+|(?P<bare>[ \t]+))))"
    # (after a loose separator only a value with a digit: its match may not hide a later one)
    r"(?P<value>(?(loose)(?=[^\s,;，；.:：]{0,39}\d))[^\s,;，；.:：]{6,40})(?![:：])"
)
# A key's emoji before a token of three kinds of characters, in a text about Wi-Fi: "new wifi 🔑 Chickadee!Porch9".
_KEY_EMOJI = re.compile(r"\U0001F511\uFE0F?[ \t]*([^\s\"'“”‘’]{6,40})")
_NETWORK_NAME = re.compile(r"(?i)guest|wifi|net|5g|router|home|free|public|_|network|called|named|ssid")


def _wifi(text: str) -> list[SecretFinding]:
    found = []
    for n, m in enumerate(_WIFI_IS.finditer(text)):
        if n == MAX_CUES:
            break
        group = 1 if m.group(1) is not None else 2 if m.group(2) is not None else 3
        value = m.group(group)
        after_wifi = text[m.start() + m.group(0).lower().index("fi") + 2 : m.end()]
        if (
            (group == 1 and classes(value) < 3)
            or (group != 2 and _NETWORK_NAME.search(value))
            or (group == 2 and _NETWORK_NAME.search(after_wifi))
        ):
            continue
        if not PLACEHOLDER_VALUE.match(value):
            found.append(SecretFinding("password", m.start(group), m.end(group)))
    for m in _KEY_EMOJI.finditer(text):
        if classes(m.group(1)) >= 3 and not PLACEHOLDER_VALUE.match(m.group(1)):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    for m in _WIFI_PASS.finditer(text):
        value = m.group("value")
        if (m.group("bare") is None or classes(value) >= 3) and not PLACEHOLDER_VALUE.match(value):
            found.append(SecretFinding("password", m.start("value"), m.end("value")))
    return found


# An e-mail address, then a password beside it: after a gap of spaces, a bullet, a bar, a slash or
# "pass"/"pw"/"密码" — or after "and"/"," where the text says it signs in. Its value has a password's
# shape (``_strong``; a sign as well after "and"/","); not another address, a link, a domain or a date.
_MAILED = re.compile(
    r"(?<![\w.+\-])[\w.+\-]{1,64}@[\w\-]{1,63}(?:\.[\w\-]{1,63}){1,4}"
    r"(?:(?P<gap>[ \t]{2,}+(?:[•|·/][ \t]*+)?|[ \t]*+[•|·/][ \t]*+"
    r"|[ \t]*+[,，]?[ \t]*+(?:pass(?:word)?|pw|pwd|密码)[ \t:：]*+)"
    r"|(?P<said>[ \t]*+(?:,|，|\band\b)[ \t]*+))"
    r"([^\s,;，；。'\"“”‘’()（）<>]{6,40})(?![\w@])"
)
_SIGNS_IN = word_automaton(
    "sign in|signin|sign-in|log in|login|log-in|logins|account|acct|password|登录|登陆|账号|帐号".split("|")
)
_NOT_A_PASSWORD = re.compile(r"(?i)[\w.+\-]*@|https?:|www\.|[\w\-]+\.(?:com|net|org|io|co|uk|cn)\b|[\d\-/.:]+$")


_SIGN = re.compile(r"[!@#$%^&*?~+=]")


def _strong(value: str) -> bool:
    """A password's shape, not a ticket's, a room's or a region's ("INV-20931", "Room4B", "US-East1"):
    letters, digits and a sign ("StoryTime!88", "Thermo$tat-Hall-33"), or lower-case letters run
    together with digits, eight or more ("bluebird195")."""
    if _SIGN.search(value):
        return re.search(r"\d", value) is not None and re.search(r"[A-Za-z]", value) is not None
    return re.fullmatch(r"(?=[a-z\d]*[a-z]{4})(?=[a-z\d]*\d)[a-z][a-z\d]{7,39}", value) is not None


def _mailed(text: str, folded: str) -> list[SecretFinding]:
    found = []
    signs_in: bool | None = None
    for n, m in enumerate(_MAILED.finditer(text)):
        if n == MAX_CUES:
            break
        value = m.group(3)
        if not _strong(value) or _NOT_A_PASSWORD.match(value) or PLACEHOLDER_VALUE.match(value):
            continue
        if m.group("said") is not None:
            if signs_in is None:
                signs_in = next(_SIGNS_IN.iter(folded), None) is not None
            if not signs_in or _SIGN.search(value) is None:
                continue
        found.append(SecretFinding("password", m.start(3), m.end(3)))
    return found


# A list of logins under its heading: "Mom's logins\nGmail – Rosebud!1950\nChase – Rosebud!Chase".
_LOGINS_HEADING = re.compile(r"(?im)^[^\n]{0,40}\b(?:logins|log-ins|passwords|passcodes)\b[^\n]{0,60}$")
_LOGIN_ITEM = re.compile(r"(?m)^[ \t]*[-*•]?[ \t]*[\w .'’&()]{2,30}?[ \t]*[–—:=\-][ \t]*(\S{6,40})[ \t]*$")
_LIST_REACH = 400


def _login_list(text: str) -> list[SecretFinding]:
    found: list[SecretFinding] = []
    heading = _LOGINS_HEADING.search(text)
    if heading is None:
        return found
    for m in _LOGIN_ITEM.finditer(text, heading.end(), min(len(text), heading.end() + _LIST_REACH)):
        value = m.group(1)
        # a password's shape (letters first, a digit or a sign beside them), not "ticket#4412",
        # "active=34" or "42attempts"
        named = re.fullmatch(r"[A-Za-z][^\s#=%]{5,39}", value) is not None and classes(value) >= 2
        if named and not PLACEHOLDER_VALUE.match(value) and not _NOT_A_PASSWORD.match(value):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found if len(found) >= 2 else []  # a list: one line alone is any note's


# A one-time code read off a message: "The bank sent a little message … It says 318 604.", "Apple 发来一个
# code，写着 703 518". Six digits in two groups after "says"/"shows"/"写着"/"显示", a sender or a
# message named before it.
_READ_OFF = re.compile(
    r"(?i)(?:\bit\s+says|\bsays|\bshows|写着|显示)[ \t:：,，.…]*+(\d{3}[ \-]\d{3})(?![\d\-])"
    r"(?![ \t]*+[A-Za-z%$€£¥\u4e00-\u9fff])"  # not an amount or a count: "says 120 000 dollars"
)
_SENT = re.compile(r"(?i)\b(?:texted|message|text|sms|code|otp|verification|passcode|one-time)\b|短信|验证")
# What a message shows that is no code: a balance, a price, a parcel's progress, a count.
_NOT_SENT = re.compile(
    r"(?i)\b(?:balance|listing|price|tracking|parcel|delivery|total|score|views|followers|likes|steps|miles)\b"
    r"|余额|价格|运单|快递|步数"
)


def _read_off(text: str) -> list[SecretFinding]:
    found = []
    for n, m in enumerate(_READ_OFF.finditer(text)):
        if n == MAX_CUES:
            break
        window = (max(0, m.start() - 160), m.start())
        if _SENT.search(text, *window) and not _NOT_SENT.search(text, *window):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


def account_secrets(text: str, folded: str) -> list[SecretFinding]:
    """The secrets of this module in ``text`` (``folded``: it casefolded)."""
    return [
        *(_wifi(text) if "wifi" in folded or "wi-fi" in folded or "ssid" in folded else []),
        *(_mailed(text, folded) if "@" in text else []),
        *(_login_list(text) if "\n" in text else []),
        *(_read_off(text) if "says" in folded or "shows" in folded or "写着" in text or "显示" in text else []),
    ]
