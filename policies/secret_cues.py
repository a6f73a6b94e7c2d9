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
from collections.abc import Iterator
from typing import Any

from memwarden.policies.secret_kinds import SecretFinding, word_automaton

_NUM_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|niner)"
_CN_DIGIT = "零〇洞幺一二两三四五六七八九"
_CN_NUMBER = rf"[{_CN_DIGIT}十]{{1,4}}"

# Cues: what names a credential. A code's name alone ("code") is too common: it needs a word that
# says what the code opens or proves.
_CODE_CUE = (
    r"(?:door|gate|alarm|disarm|safe|keypad|lock|locker|lockbox|padlock|garage|entry|building|front\s+door"
    r"|host|access|verification|security|one[\s\-]time|login|check[\s\-]in|confirmation|authentication|auth"
    r"|otp|2fa|sms|unlock|bike\s+room|mailbox|voicemail|alarm\s+panel|kiosk|storage|room|elevator|parking|pool"
    r"|gym|ipad|iphone|phone|screen|house|apartment|unit|complex|bike)(?:\s+\w{1,6})?\s+(?:pass)?(?:code|pin|combo|combination)"
    r"|gate|door|keypad|intercom|otp"
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
    r"|enter|dial|type|key\s+in|punch\s+in)\b|['’]s\b|输入|(?<!\d)[:=](?!//)|[：→]|->|是|为|為"
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
    r"|已经?\s*(?:used|expired)|(?i:\b(?:no|doesn'?t\s+need\s+a|without\s+a|don'?t\s+need\s+a)\s+password\b)"
    r"|不需要密码|无需密码|没有密码"
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
_SAID_ONE = rf"(?:(?:double|triple)\s+)?{_NUM_WORD}"
_SAID = re.compile(
    rf"(?i){_SAID_ONE}(?:[\s,，、\-]+{_SAID_ONE}){{3,11}}\b|{_SAID_ONE}(?:[\s,，、\-]+{_SAID_ONE}){{2,}}\b(?=.{{0,3}}$|[.!?])"
)
_COMBINATION = re.compile(
    rf"(?i)(?>(?:right|left|r|l|左|右)\s*+(?:转\s*+)?(?:(?:three\s+times\s+)?to\s*+|三圈到|到)?"
    rf"(?:\d{{1,2}}|{_NUM_WORD}|[a-z]+ty(?:-[a-z]+)?|eleven|twelve|[a-z]+teen|{_CN_NUMBER})"
    r"[\s,，、;；.]*+(?:then\s+|and\s+|再|然后|最后)?){2,}"
)
_SPELL_ITEM = (
    rf"(?:(?:capital|uppercase|upper|lowercase|lower|small|大写的?|小写的?)\s*)?(?:[A-Za-z0-9]|{_NUM_WORD}|[{_CN_DIGIT}]"
    r"|alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo|lima|mike|november|oscar|papa|quebec"
    r"|romeo|sierra|tango|uniform|victor|whiskey|x-?ray|yankee|zulu|[A-Za-z]\s+as\s+in\s+[A-Za-z]+"
    r"|at\s+sign|at符号|下划线|underscore|dash|hyphen|exclamation\s+marks?|感叹号)(?![A-Za-z])"
)
_SPELLED = re.compile(
    # The separator is atomic: a run of spaces is never split again (it was exponential on "a b c    !").
    rf"(?i)(?<![A-Za-z]){_SPELL_ITEM}(?:(?>(?:[\s,，、]+|\s*(?:then|and|然后|再|，然后)\s*)+){_SPELL_ITEM}){{3,}}"
)
_TOKEN = re.compile(r"[^\s，。；;,'\"“”‘’()（）<>\[\]{}]{4,64}")
_QUOTED = re.compile(r"[\"'“‘「『]([^\"'”’」』\n]{3,64})[\"'”’」』]")
_HYPHENATED = re.compile(r"[A-Za-z]{3,}(?:-[A-Za-z0-9]{2,}){2,5}\b")
_WORDS = re.compile(r"[A-Za-z]{3,}(?:[ \-][A-Za-z]{3,}){2,5}\b")
_CJK = re.compile(r"[\u4e00-\u9fff]")


NEW = re.compile(r"(?i)\bnew\b|\bnow\b|新|改成|换成|改为")


def expired_after(text: str, sentence_start: int, span: tuple[int, int]) -> bool:
    """Whether what follows a value (80 characters) says it expired or is the old one — unless the
    sentence called it the new one ("the new password is …; the old one stops working")."""
    if NEW.search(text, sentence_start, span[0]):
        return False
    return EXPIRED.search(text, span[1], span[1] + 80) is not None


def is_placeholder(value: str) -> bool:
    """``<token>``, ``{secret.Value}``, ``your-access-key``, ``***``, ``changeme`` …"""
    return _PLACEHOLDER_VALUE.match(value) is not None


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
    hyphenated = _PHRASE_CUE.match(cue.strip()) and (m := _HYPHENATED.match(text, at))
    if hyphenated and m is not None and not any(w in _NOT_A_PHRASE for w in m.group(0).lower().split("-")):
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


_REPLY = re.compile(
    r"[^\n?]{0,60}\?[^\n]{0,40}\n(?:\[[^\]\n]{1,20}\][ \t]*)?[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*"
)


def _shaped_in(text: str, start: int, end: int, cue: str, *, said: bool = False) -> tuple[int, int] | None:
    """A value that says what it is by its shape, anywhere in the words after a cue: spelled out
    letter by letter, digits said as words, a dial's turns — or, once a connector has been said,
    a token of letters and digits (what follows a description: "the pinyin of …, mingtian888")."""
    safe = re.search(r"(?i)safe|combination|combo|lock|保险|锁", cue) is not None
    window = text[start:end]
    replies = (_DIGITS, _CN_SPLIT) if said else ()
    for pattern in (_SPELLED, _SAID, _CN_DIGITS, *replies, *((_COMBINATION, _CN_GROUPS) if safe else ())):
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


# "password hint", "password policy", "PIN length": the cue names a property of it, not it.
_PROPERTY = re.compile(
    r"(?i)[ \t]*(?:hint|policy|policies|requirements?|rules?|reset|manager|strength|length|field|prompt|hash|expiry"
    r"|expires|change|changes|history|complexity|protected|less|protection)\b|提示|策略|要求|规则|长度|强度|重置|管理器"
)


MAX_CUES = 256  # cues read in one text: ~0.4 ms each at worst, so ~100 ms for a hostile text
MAX_HITS = 4 * MAX_CUES  # cue words looked at


def _word_starts_before(text: str, at: int) -> list[int]:
    """Where the (at most three) words in the 40 characters before ``at`` begin, nearest last."""
    starts: list[int] = []
    i = at - 1
    while i > max(0, at - 40) and len(starts) < 3:
        if text[i].isalnum() and not text[i - 1].isalnum():
            starts.append(i)
        i -= 1
    if i == 0 and text[0].isalnum() and len(starts) < 3:
        starts.append(0)
    return sorted(starts)


def _cue_matches(text: str) -> Iterator[re.Match[str]]:
    """The cues of ``text``, left to right: found where one of their words is (one pass of the
    word automaton), each tried from that word and the few words before it ("storage unit code"),
    never by trying the whole pattern at every position (1.6 µs a character)."""
    lower = text.lower()
    if len(lower) != len(text):  # a character whose lower case is longer: positions would not line up
        yield from _CUE.finditer(text)
        return
    last_end = 0
    for n, (end, word) in enumerate(_CUE_WORDS.iter(lower)):
        if n == MAX_HITS:
            return
        start = end - len(word) + 1
        if start < last_end:
            continue
        # A Chinese cue ends in its word ("验证码", "单元门"): it may start up to three characters before.
        chinese = [start - k for k in (3, 2, 1) if start - k >= 0 and _CJK.match(text, start - k)]
        for candidate in sorted({*_word_starts_before(text, start), *chinese, start}):
            if candidate < last_end:
                continue
            m = _CUE.match(text, candidate)
            if m is not None and m.end() > start:
                last_end = m.end()
                yield m
                break


def _cued(text: str) -> list[SecretFinding]:
    found = []
    for n, cue in enumerate(_cue_matches(text)):
        if n == MAX_CUES:  # a text that names a credential this often is read this far (bounded work)
            break
        if _PROPERTY.match(text, cue.end()):
            continue
        # The cue's sentence, at most 200 characters either side: every look around it stays bounded.
        near = max(0, cue.start() - 200)
        sentence_start = max(text.rfind("\n", near, cue.start()), text.rfind("。", near, cue.start()), near - 1) + 1
        sentence_end = _BRIDGE_END.search(text, cue.end(), cue.end() + 200)
        sentence = text[sentence_start : sentence_end.start() if sentence_end else min(len(text), cue.end() + 200)]
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
        if span is None and (reply := _REPLY.match(text, cue.end())) is not None:
            # A question about it, answered in the next turn: "the PIN?\nCustomer: it's one nine eight oh".
            span = _shaped_in(text, reply.end(), min(len(text), reply.end() + 120), cue.group(0), said=True)
        if span is not None and not expired_after(text, sentence_start, span):
            found.append(SecretFinding("password", *span))
    return found


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
                if len(value) >= 4 and _classes(value) >= 2 and not _PLACEHOLDER_VALUE.match(value):
                    start = offset + line.index(value, line.index(cells[column])) if value else offset
                    found.append(SecretFinding("password", start, start + len(value)))
        offset += len(line)
    return found


def _directives(text: str, folded: str) -> list[SecretFinding]:
    """Each directive's pattern, run only where one of its words is (a long text costs one look
    for each word, not every pattern at every position)."""
    found = []
    for words, pattern in _DIRECTIVES:
        if not any(w in folded for w in words):
            continue
        for m in pattern.finditer(text):
            group = next(i for i in range(1, (pattern.groups or 0) + 1) if m.group(i) is not None)
            if not _PLACEHOLDER_VALUE.match(m.group(group)):
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
            strong = _classes(value) >= 3 or (
                len(value) >= 12 and any(c.isdigit() for c in value) and _classes(value) >= 2
            )
            if strong and not _PLACEHOLDER_VALUE.match(value):
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
    r"(?i)\b(?:creds?|credentials?|log\s?in(?:to)?|sign\s?in|account|admin|root|user(?:name)?|pat|token|key)\b|pass"
    r"|账号|登录|^[ \t]*(?:[^\s@:]{1,30}:[ \t]*)?[\w.+\-]+@[\w\-]+\.[\w.\-]+[ \t]*$"
)
# A line holding one token, maybe after a chat's speaker ("Dad: …", "Agent (Marisol): …").
_SPEAKER = r"(?:\[[\d:apm ]{3,12}\][ \t]*)?[A-Za-z\u4e00-\u9fff][A-Za-z\u4e00-\u9fff .()'\-]{0,29}[:：][ \t]*"
_BARE_LINE = re.compile(rf"(?m)^[ \t]*(?:{_SPEAKER})?([^\s\"'“”‘’#][^\s\"'“”‘’]{{7,39}})[ \t]*$")


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
        random_long = len(value) >= 20 and _classes(value) >= 2 and any(c.isdigit() for c in value)
        if (
            (_classes(value) < 3 and not random_long)
            or hexadecimal
            or not _token_value(value)
            or re.search(r"[=:，。；、：！？（）]|^[\d.]+$", value)
        ):
            continue
        top = m.start()
        for _ in range(3):  # the three lines above, found without splitting all that comes before
            top = text.rfind("\n", 0, max(0, top - 1)) + 1 if top > 0 else 0
        above = text[max(top, m.start() - 600) : m.start()].splitlines()
        if any(_CUE.search(line) or _LOGIN_LINE.search(line) for line in above):
            found.append(SecretFinding("password", m.start(1), m.end(1)))
    return found


def _words(words: str) -> Any:
    return word_automaton(words.split("|"))


# Every cue holds one of these (casefolded); every directive one of the second: one pass over the
# text rules most texts out (a chat message: 92 µs with every detector run, 31 with this, measured).
_CUE_WORDS = _words(
    "pass|pw|pin|code|combo|combination|cvv|cvc|csc|key|gate|door|keypad|intercom|safe|lock|otp|master"
    "|密码|口令|暗号|密钥|秘钥|私钥|码|门|锁|保险"
)


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
        *_directives(text, folded),
        *(_columns(text) if "\n" in text and _any(_CUE_WORDS, folded) else []),
        *(_seed_phrases(text) if len(text) >= 23 else []),
        *(_alone(text) if len(text) <= 70 else []),
        *(_under_its_name(text) if "\n" in text else []),
    ]
