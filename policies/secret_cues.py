"""A credential named, then its value: the secrets that have no shape of their own.

A vendor's key is known by its prefix; a password, a PIN, a door or safe code, a passphrase of
plain words, a one-time code is known only by what names it. Here a *cue* (``password``,
``PIN``, ``door code``, ``combination``, ``密码``, ``验证码``, ``保险柜``…) is followed, on its
line and within a few words, by a *connector* (``is``, ``:``, ``=``, ``changed to``, ``是``,
``改成了``…) or directly by the value, and the value is read by kind:

* digits, grouped or spaced (``22-06-41``, ``6 0 4 1``, ``#5931``), or Chinese numerals
  (``四七一九``) — after a cue that names a code;
* a dial's combination (``right to 32, left to 11``, ``左三十一，右七``) after a safe's name;
* letters and digits said one by one (``capital P, a, s, s, nine, nine``, ``大写Q，小写w``);
* a token mixing kinds of characters (``Sunshine1952``, ``清风明月2024!``, ``hammockparade19``);
* a quoted value, or three or more plain words (``juniper canoe rusty kettle``) after an explicit
  ``is``/``:``/``是`` and a password's name;
* a login and its password side by side (``root / Kf#82mQzv1``), a password on the line under the
  line that names it, a card number that passes the Luhn check beside the card's words.

Not a value: a placeholder or a masked value, a call (``input("密码：")``), a sentence that says the
code has expired or is the old one, a length or a count (``8 位``, ``12 characters``).

Written for issue #33 from the kinds of secret writers used (chat, call transcripts, tickets,
diaries, SMS), not from their texts: the held-out sets were scored, never read.
"""

from __future__ import annotations

import re
from typing import Any

from memwarden.policies.secret_kinds import SecretFinding, word_automaton

_NUM_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|niner)"
_CN_DIGIT = "零〇幺一二两三四五六七八九"
_CN_NUMBER = rf"[{_CN_DIGIT}十]{{1,4}}"

# Cues: what names a credential. A code's name alone ("code") is too common: it needs a word that
# says what the code opens or proves.
_CODE_CUE = (
    r"(?:door|gate|alarm|disarm|safe|keypad|lock|locker|lockbox|padlock|garage|entry|building|front\s+door"
    r"|host|access|verification|security|one[\s\-]time|login|check[\s\-]in|confirmation|authentication|auth"
    r"|otp|2fa|sms|unlock|bike\s+room|mailbox|voicemail|alarm\s+panel|kiosk)(?:\s+\w{1,6})?\s+(?:pass)?(?:code|pin|combo|combination)"
    r"|gate|door|keypad|intercom"
    r"|\b(?:use|enter|dial|punch\s+in)\s+code"
)
_CUE = re.compile(
    r"(?i)(?<![A-Za-z0-9_<{$/.:@\-])(?:"
    r"passwords?|passwd|pwd|pw|passphrase|pass\s?code|pass(?=\s+(?:for|is|:|to\b))|pins?(?:\s+(?:code|number))?"
    r"|" + _CODE_CUE + r"|combo|combination|cvv|cvc|csc"
    r"|(?:host|master|admin|wi-?fi|wpa2?|network|encryption|aes|signing|secret|api|access|private)[\s_\-]?key"
    r")(?![A-Za-z0-9_>}@\-])"
    r"|密码|口令|暗号|密钥|秘钥|私钥|验证码|取件码|提货码|校验码|动态码|安全码|开锁码|门禁码?|门锁|保险柜|保险箱|PIN码"
    r"|大门|单元门|车库门|密码锁|通行码|开门码"
    # A safe, a locker, a padlock: their value must look like a dial's numbers (36-14-52).
    r"|(?i:(?<![a-z])(?:safe|locker|lockbox|padlock)(?![a-z]))"
    r"|(?i:(?<![a-z])(?:keepass\s+)?master\s+(?:password|pass|pw|key)?(?![a-z]))"
)
# A password's name (what may be followed by any kind of value); every other cue names a code.
_PASSWORD_CUE = re.compile(r"(?i)pass|pw|密码(?!锁)|口令|暗号|.*key|密钥|秘钥|私钥")
_CONNECTOR = re.compile(
    r"(?i)(?:\b(?:is|was|are|now|changed\s+to|set\s+to|reset\s+to|updated\s+to|to|be|it'?s|that'?s"
    r"|enter|dial|type|key\s+in|punch\s+in)\b|输入|(?<!\d)[:=](?!//)|[：→]|->|是|为|為"
    r"|改成了?|换成了?|改为|设为|设成了?|设置为|更新为|重置为|变成了?)"
)
# A bridge between the cue and its connector may not end a sentence or a line.
_BRIDGE_END = re.compile(r"[\n。！？!?；;]|\.\s")
_MAX_BRIDGE = 64
# What a speaker says between "is" and the value: "is, uh,", "是……", "是，嗯，", "is the word".
_FILLER = re.compile(
    r"(?i)(?:[ \t\u3000,，…、:：]|\.{2,}|\b(?:uh|um|er|erm|like|so|okay|ok|well|just|the\s+word|actually"
    r"|(?:a\s+|the\s+)?(?:new\s+|temporary\s+|temp\s+)?value)\b"
    r"|嗯|呃|啊|那个|就是)*"
)

EXPIRED = re.compile(
    r"(?i)\b(?:expired|no longer (?:valid|works?)|stopped working|used to be"
    r"|(?<!not )(?<!not the )old(?:\s+[\w-]+)?\s+(?:one|code|pin|password|passcode|combo|key)"
    r"|previous|former|revoked"
    r"|invalidated|deactivated|used it|already used|was used|were used)\b"
    r"|作废|已过期|过期了|已失效|失效了|已使用|已被使用|用过了|已经换了|以前的|旧的|老的|原来的|被取出|已取出|已取件"
)
_PLACEHOLDER_VALUE = re.compile(
    r"(?i)^(?:<[^>]*>|\{[^}]*\}|\[[^\]]*\]|\$\{?[\w.]+\}?|%\w*%|x{3,}|\*+|•+|\.{3}|…|_{3,}|-{3,}|your[\w\-]*|example[\w\-]*"
    r"|changeme|placeholder|redacted|none|null|nil|empty|unset|n/a|tbd|todo|same|hidden|secret|password\d*)$"
)
# A phrase of plain words is a passphrase only after one of these names and an explicit "is"/":".
_PHRASE_CUE = re.compile(r"(?i)^(?:passwords?|passphrase|pass|pwd|pw|wi-?fi\s+password|密码)$")
_PHRASE_CONNECTOR = re.compile(r"(?i)^(?:is|was|now|it'?s|:|：|=|是|为)$")
# Words that tell where or how a password is, not what it is.
_NOT_A_PHRASE = frozenset(
    "the a an in on at of to for and or is it be not no never with from my your our their his her its this that these"
    " those stored saved kept written required needed changed reset rotated expired same still being set sent shared"
    " encrypted hashed hidden masked wrong incorrect correct invalid valid weak strong long short case sensitive"
    " managed handled generated available missing empty blank unknown different new old what where how who which"
    " too very also just only please here there any all some into onto via using use paste send sent type typed"
    " enter entered ask asked call called tell told give given get got will would should must can could may"
    " have has had been did does do don doesn won isn wasn"
    " user users account accounts login email mail manager vault file files note notes app".split()
)

_DIGITS = re.compile(
    r"[*#]?\d(?:[ \-]?\d){3,11}#?(?![\d.,:/]?\d)(?![A-Za-z])"
    r"(?!\s*(?:位|个|次|年|月|日|号|天|分钟|小时|秒|元|块|%|％|st\b|nd\b|rd\b|th\b"
    r"|am\b|pm\b|digits?|characters?|chars?|letters?|times|days?|hours?|min|mins|minutes|seconds|years?|km|mb|gb|px"
    r"|ms\b|m\b|ft\b|feet|meters?|metres?|miles?|kg|lbs?|cm|mm|people|users))"
)
_CN_DIGITS = re.compile(rf"[{_CN_DIGIT}]{{4,12}}")
# Numbers said in groups: "三六，然后零八，最后是二十五", "36-14-52" (a dial's).
_CN_GROUPS = re.compile(rf"{_CN_NUMBER}(?:[，、,\s]+(?:然后是?|再是?|最后是?)?{_CN_NUMBER}){{2,}}")
# Digits said in two or three breaths: "四七零，二九一".
_CN_SPLIT = re.compile(rf"[{_CN_DIGIT}]{{2,6}}(?:[，、,\s]+[{_CN_DIGIT}]{{2,6}}){{1,3}}")
_DIAL = re.compile(r"\d{1,2}(?:[\-\s]\d{1,2}){2,3}(?![\d\-])")
_SAID = re.compile(rf"(?i){_NUM_WORD}(?:[\s,，、\-]+{_NUM_WORD}){{3,11}}\b")
_COMBINATION = re.compile(
    rf"(?i)(?:(?:right|left|r|l|左|右)\s*(?:转\s*)?(?:(?:three\s+times\s+)?to\s*|三圈到|到)?\s*(?:\d{{1,2}}|{_NUM_WORD}|[a-z]+ty(?:-[a-z]+)?|eleven|twelve|[a-z]+teen|{_CN_NUMBER})"
    r"[\s,，、;；.]*(?:then\s+|and\s+|再|然后|最后)?){2,}"
)
_SPELL_ITEM = (
    rf"(?:(?:capital|uppercase|upper|lowercase|lower|small|大写的?|小写的?)\s*)?(?:[A-Za-z0-9]|{_NUM_WORD}|[{_CN_DIGIT}]"
    r"|alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo|lima|mike|november|oscar|papa|quebec"
    r"|romeo|sierra|tango|uniform|victor|whiskey|x-?ray|yankee|zulu"
    r"|at\s+sign|at符号|下划线|underscore|dash|hyphen|exclamation\s+marks?|感叹号)(?![A-Za-z])"
)
_SPELLED = re.compile(
    rf"(?i)(?<![A-Za-z]){_SPELL_ITEM}(?:(?:[\s,，、]+|\s*(?:then|and|然后|再|，然后)\s*)+{_SPELL_ITEM}){{3,}}"
)
_TOKEN = re.compile(r"[^\s，。；;,'\"“”‘’()（）<>\[\]{}]{4,64}")
_QUOTED = re.compile(r"[\"'“‘「『]([^\"'”’」』\n]{3,64})[\"'”’」』]")
_WORDS = re.compile(r"[A-Za-z]{3,}(?:[ \-][A-Za-z]{3,}){2,5}\b")
_CJK = re.compile(r"[\u4e00-\u9fff]")


NEW = re.compile(r"(?i)\bnew\b|新")


def expired_after(text: str, sentence_start: int, span: tuple[int, int]) -> bool:
    """Whether what follows a value (80 characters) says it expired or is the old one — unless the
    sentence called it the new one ("the new password is …; the old one stops working")."""
    if NEW.search(text, sentence_start, span[0]):
        return False
    return EXPIRED.search(text, span[1], span[1] + 80) is not None


def _classes(value: str) -> int:
    """Kinds of characters in ``value``: lower, upper, digit, symbol (not ``_ - .``), Chinese."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() and c not in "_-." for c in value)
        + bool(_CJK.search(value))
    )


def _token_value(value: str) -> bool:
    """A password-like token: two kinds of characters at least, 6+ long (4+ with three kinds), not
    a place, a call or a placeholder."""
    value = value.rstrip(".:!?")  # a sentence's end, not the password's (a "!" inside stays)
    if "://" in value or value.count("/") > 1 or "(" in value or _PLACEHOLDER_VALUE.match(value):
        return False
    if any(value.lower().startswith(w) for w in ("http", "www.", "ssh", "sudo")):
        return False
    kinds = _classes(value)
    return (kinds >= 2 and len(value) >= 6) or (kinds >= 3 and len(value) >= 4)


def _value_at(text: str, at: int, cue: str, connector: str) -> tuple[int, int] | None:
    """The span of the value starting at ``at`` (after spaces and an opening quote), or None."""
    explicit = bool(connector)
    at = _FILLER.match(text, at).end()  # type: ignore[union-attr]  # it matches the empty string
    code = not _PASSWORD_CUE.match(cue)
    safe = re.search(r"(?i)safe|combination|combo|lock|保险|锁", cue) is not None
    if safe and (m := _COMBINATION.match(text, at)) and m.end() - m.start() >= 6:
        return m.start(), m.end()
    if safe and ((m := _DIAL.match(text, at)) or (m := _CN_GROUPS.match(text, at))):
        return m.start(), m.end()
    if re.fullmatch(r"(?i)safe|locker|lockbox|padlock", cue):
        # The word alone: a dial's numbers, or digits after "is"/"set to".
        m = _DIGITS.match(text, at) if explicit else None
        return (m.start(), m.end()) if m else None
    if (m := _QUOTED.match(text, at)) and not (at > 0 and text[at - 1].isalnum()):  # not a closing quote
        inner = m.group(1)
        if inner != inner.strip() or "(" in inner or "=" in inner:
            return None  # a closing quote and the next opening one, not a value
        phrase_or_mixed = " " in inner or _classes(inner) >= 2
        if (explicit or phrase_or_mixed) and not _PLACEHOLDER_VALUE.match(inner) and not inner.endswith((":", "：")):
            # "is 'pancake'", not name="password" nor {'password': 'not-the-right-one'}
            spoken = len(inner) >= 6 and connector.strip() not in ("", "=", ":")
            if _classes(inner) >= 2 or " " in inner or spoken or re.fullmatch(r"\d{4,}", inner):
                return m.start(1), m.end(1)
        return None
    if m := _SPELLED.match(text, at):
        items = re.findall(_SPELL_ITEM, m.group(0), flags=re.I)
        if len(items) >= 4 and (not code or any(not i.isdigit() for i in items)):
            return m.start(), m.end()
    if m := _DIGITS.match(text, at):
        return m.start(), m.end()
    if (m := _CN_DIGITS.match(text, at)) or (m := _SAID.match(text, at)):
        return m.start(), m.end()
    if (m := _CN_SPLIT.match(text, at)) and sum(c in _CN_DIGIT for c in m.group(0)) >= 4:
        return m.start(), m.end()
    if code and not safe:
        return None  # a code is digits
    if m := _TOKEN.match(text, at):
        token = m.group(0)
        called = text[m.end() : m.end() + 1] == "(" or re.fullmatch(r"[A-Za-z_]\w*(?:\.\w+)+", token)
        keyish = re.search(r"(?i)key|密钥|秘钥|私钥", cue) is not None
        # Not a field's assignment, a date or a time, nor the sentence going on ("密码已于…修改成功").
        prose = len(_CJK.findall(token)) > 6 or re.search(r"\d+\s*(?:位|个|次|天|characters?|chars?|digits?)", token)
        sentence = (
            bool(prose)
            or re.search(r"[=：]|\d{1,4}[年月日]|\d:\d\d", token) is not None
            or (not connector and (":" in token or (bool(_CJK.match(token)) and text[m.start() - 1] not in " \t")))
        )
        strong = bool(connector) or _classes(token) >= 3
        key_like = not keyish or (len(token) >= 12 and _classes(token) >= 3)
        if not called and not sentence and strong and key_like and _token_value(token):
            return m.start(), m.end()
    phrase = _PHRASE_CUE.match(cue.strip()) and _PHRASE_CONNECTOR.match(connector.strip())
    if phrase and (m := _WORDS.match(text, at)):
        words = m.group(0).lower().replace("-", " ").split()
        if not any(w in _NOT_A_PHRASE for w in words):
            return m.start(), m.end()
    return None


_MIXED = re.compile(
    r"(?<![\w@./:\-])(?=[^\s，。；;,'\"“”‘’()（）]*\d)(?=[^\s，。；;,'\"“”‘’()（）]*[A-Za-z])[^\s，。；;,'\"“”‘’()（）]{8,40}"
)


def _shaped_in(text: str, start: int, end: int, cue: str) -> tuple[int, int] | None:
    """A value that says what it is by its shape, anywhere in the words after a cue: spelled out
    letter by letter, digits said as words, a dial's turns — or, once a connector has been said,
    a token of letters and digits (what follows a description: "the pinyin of …, mingtian888")."""
    safe = re.search(r"(?i)safe|combination|combo|lock|保险|锁", cue) is not None
    window = text[start:end]
    for pattern in (_SPELLED, _SAID, _CN_DIGITS, *((_COMBINATION, _CN_GROUPS) if safe else ())):
        for m in pattern.finditer(text, start, end):
            if pattern is _SPELLED and not re.search(r"[A-Za-z]", m.group(0)):
                continue
            if pattern is _COMBINATION and m.end() - m.start() < 6:
                continue
            return m.start(), m.end()
    connector = _CONNECTOR.search(window)
    if connector is not None and _PASSWORD_CUE.match(cue):
        after = start + connector.end()
        field = re.compile(r"[=:：]").search(text, after, end)  # the next field's: not this value's words
        for m in _MIXED.finditer(text, after, field.start() if field else end):
            token = m.group(0)
            letters, digits = sum(c.isalpha() for c in token), sum(c.isdigit() for c in token)
            if letters >= 2 and digits >= 2 and _token_value(token) and not re.search(r"[=:/?&]", token):
                return m.start(), m.end()
    return None


def _cued(text: str) -> list[SecretFinding]:
    found = []
    for cue in _CUE.finditer(text):
        sentence_start = max(text.rfind("\n", 0, cue.start()), text.rfind("。", 0, cue.start())) + 1
        sentence_end = _BRIDGE_END.search(text, cue.end())
        sentence = text[sentence_start : sentence_end.start() if sentence_end else len(text)]
        if EXPIRED.search(sentence) and not NEW.search(text, sentence_start, cue.start() + 1):
            continue
        limit = min(cue.end() + _MAX_BRIDGE, sentence_end.start() if sentence_end else len(text))
        span = _value_at(text, cue.end(), cue.group(0), "")
        if span is None:
            for conn in _CONNECTOR.finditer(text, cue.end(), limit):
                span = _value_at(text, conn.end(), cue.group(0), conn.group(0))
                if span is not None or conn.group(0) in ("=", ":", "：", "→", "->"):
                    break  # past an assignment, the next one is another field's
        if span is None:
            span = _shaped_in(text, cue.end(), limit, cue.group(0))
        if span is not None and not expired_after(text, sentence_start, span):
            found.append(SecretFinding("password", *span))
    return found


# A login and its password side by side: "root / Kf#82mQzv1" (three kinds of characters in it).
_PAIR = re.compile(r"(?<![\w/.:@])[\w.@+\-]{2,40}[ \t]+/[ \t]+([^\s/,，。;；'\"]{6,40})(?![\w/])")
# A quoted "user:password" (a Basic header's input, a URL's userinfo): a symbol in the password.
_QUOTED_PAIR = re.compile(r"[\"']([\w.@\-]{2,40}):([^\s:\"'/@]{6,40})[\"']")
# A driver's call given a password as a literal: new PDO(dsn, 'user', 'Gv7#pQ2zLw').
_CALL = re.compile(
    r"(?i)\b(?:pdo|connect|login|authenticate|credentials?)\w*\s*\((?:[^()\n]*?,)?[^()\n]*?['\"]([^'\"\s]{6,40})['\"]\s*\)"
)
_LUHN_CARD = re.compile(r"(?<![\d\-])(?:\d[ \-]?){12,18}\d(?![\d\-])")
_CARD_WORDS = re.compile(r"(?i)\b(?:card|visa|mastercard|amex|cvv|cvc|exp(?:iry|ires)?)\b|卡号|信用卡|银行卡|有效期")


# Configuration directives whose value is a password: redis, wpa_supplicant/hostapd, SNMP, a Cisco
# "password 0 …" (type 0: clear text), SQL's IDENTIFIED BY, WordPress's DB_PASSWORD, an XML element
# named for one, .npmrc's _auth.
_DIRECTIVES = re.compile(
    r"(?im)^\s*(?:requirepass|masterauth|wpa_passphrase|psk|snmp-server\s+community|auth_pass)\s*[=\s]\s*\"?([^\s\"]{6,})"
    r"|\b(?:password|secret)\s+0\s+(\S{6,})"
    r"|\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?BY\s+'([^'\n]{4,})'"
    r"|\bdefine\(\s*['\"]\w*(?:PASSWORD|PASS|SECRET|KEY)\w*['\"]\s*,\s*['\"]([^'\"\n]{4,})['\"]"
    r"|<(?:pass|password|passwd|secret|token|api_?key)\b[^>]*>([^<\s]{4,})</"
    r"|\b_auth(?:Token)?\s*=\s*(\S{8,})"
    r"|^[^\s:#]+:\d{2,5}:[^\s:]+:[^\s:]+:(\S{6,})$"  # ~/.pgpass: host:port:db:user:password
    r"|\bWIFI:[^\n]*?\bP:([^;\s]{6,});"  # a Wi-Fi QR code's payload
    r"|(?:wallet\(|private[_\s-]?key|privkey)\W{0,6}(0x[0-9a-fA-F]{64})\b"
    r"|(?:提取码|访问码|extraction\s+code)\s*[:：是为]?\s*([A-Za-z0-9]{4})\b"
)
# A one-time code in the sentence that names it after it: "329-876 is your … security code",
# "Use 133194 to sign in".
_CODE_FIRST = re.compile(
    r"(?i)\b(\d{3}[\s\-]?\d{3}|\d{4,8})\s+is\s+your\b[^.\n]{0,40}?\b(?:code|passcode|pin|password)\b"
    r"|\buse\s+(\d{4,8})\s+to\s+(?:sign|log)\s+in\b|\b(\d{4,8})\s*(?:是您的|为您的)[^。\n]{0,12}验证码"
)


# Four or more lines of codes alone (xxxxx-xxxxx, 1234-5678): recovery codes copied out.
_CODE_LINES = re.compile(
    r"(?m)(?:^[ \t]*(?=[a-z0-9-]*\d)[a-z0-9]{4,6}-[a-z0-9]{4,6}[ \t]*\n){3,}^[ \t]*[a-z0-9]{4,6}-[a-z0-9]{4,6}[ \t]*$"
)


def _directives(text: str) -> list[SecretFinding]:
    found = []
    for m in _DIRECTIVES.finditer(text):
        group = next(i for i in range(1, 11) if m.group(i) is not None)
        if not _PLACEHOLDER_VALUE.match(m.group(group)):
            found.append(SecretFinding("password", m.start(group), m.end(group)))
    for m in _CODE_LINES.finditer(text):
        found.append(SecretFinding("recovery_codes", m.start(), m.end()))
    for m in _CODE_FIRST.finditer(text):
        group = next(i for i in range(1, 4) if m.group(i) is not None)
        found.append(SecretFinding("password", m.start(group), m.end(group)))
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
            if _classes(m.group(1)) >= 3 and not _PLACEHOLDER_VALUE.match(m.group(1)):
                found.append(SecretFinding("password", m.start(1), m.end(1)))
    for m in _QUOTED_PAIR.finditer(text):
        if _classes(m.group(2)) >= 3 and any(not c.isalnum() for c in m.group(2)):
            found.append(SecretFinding("password", m.start(2), m.end(2)))
    for m in _CALL.finditer(text):
        if _classes(m.group(1)) >= 3:
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
    r"(?i)\b(?:creds?|credentials?|log\s?in|sign\s?in|account|admin|root|user(?:name)?)\b|pass|账号|登录"
)
# A line holding one token, maybe after a chat's speaker ("Dad: …", "Agent (Marisol): …").
_SPEAKER = r"(?:\[[\d:apm ]{3,12}\][ \t]*)?[A-Za-z\u4e00-\u9fff][A-Za-z\u4e00-\u9fff .()'\-]{0,29}[:：][ \t]*"
_BARE_LINE = re.compile(rf"(?m)^[ \t]*(?:{_SPEAKER})?([^\s\"'“”‘’#][^\s\"'“”‘’]{{7,39}})[ \t]*$")


def _under_its_name(text: str) -> list[SecretFinding]:
    """A password alone on its line, under a line (of the two before) that names a credential: the
    "password in my next message" split."""
    found = []
    for m in _BARE_LINE.finditer(text):
        value = m.group(1)
        hexadecimal = re.fullmatch(r"(?i)(?:0x)?[0-9a-f]+", value) is not None  # a status code, a digest
        if (
            _classes(value) < 3
            or hexadecimal
            or not _token_value(value)
            or re.search(r"[=:，。；、：！？（）]|^[\d.]+$", value)
        ):
            continue
        above = text[: m.start()].splitlines()[-3:]
        if any(_CUE.search(line) or _LOGIN_LINE.search(line) for line in above):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


def _words(words: str) -> Any:
    return word_automaton(words.split("|"))


# Every cue holds one of these (casefolded); every directive one of the second: one pass over the
# text rules most texts out (a chat message: 92 µs with every detector run, 31 with this, measured).
_CUE_WORDS = _words(
    "pass|pw|pin|code|combo|combination|cvv|cvc|csc|key|gate|door|keypad|intercom|safe|locker|padlock"
    "|密码|口令|暗号|密钥|秘钥|私钥|码|门|锁|保险"
)
_DIRECTIVE_WORDS = _words(
    "requirepass|masterauth|psk|passphrase|community|auth_pass| 0 |identified|define(|</|_auth|wifi:|0x|提取码|访问码"
    "|extraction|:5432:|-\n|:3306:"
)
_CODE_WORDS = _words("code|pin|password|sign in|log in|验证码")


def _any(automaton: Any, folded: str) -> bool:
    return next(automaton.iter(folded), None) is not None


_LONE = re.compile(r"\s*(?=\S*[!@#$%^&*?~])(?=\S*\d)(?=\S*[A-Za-z])([^\s/.]{8,64})\s*")


def _alone(text: str) -> list[SecretFinding]:
    """A text that is nothing but a password: one token of letters, digits and a symbol (a chat
    message pasted on its own)."""
    m = _LONE.fullmatch(text)
    if m is None or _classes(m.group(1)) < 3 or _CJK.search(m.group(1)) or _PLACEHOLDER_VALUE.match(m.group(1)):
        return []
    return [SecretFinding("password", m.start(1), m.end(1))]


def cued_secrets(text: str) -> list[SecretFinding]:
    """The secrets of this module in ``text`` (overlaps left to the caller)."""
    folded = text.casefold()
    return [
        *(_cued(text) if _any(_CUE_WORDS, folded) else []),
        *(_paired(text) if "/" in text or "'" in text or '"' in text else []),
        *(_cards(text) if sum(c.isdigit() for c in text) >= 13 else []),
        *(_directives(text) if _any(_DIRECTIVE_WORDS, folded) or _any(_CODE_WORDS, folded) else []),
        *(_seed_phrases(text) if len(text) >= 23 else []),
        *(_alone(text) if len(text) <= 70 else []),
        *(_under_its_name(text) if "\n" in text else []),
    ]
