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
* the answer to a question about it, on the next speaker's line ("the PIN?" — "one nine eight oh").

The secrets known by where they stand (a login beside its password, a table's column, a
configuration directive, a seed phrase) are ``secret_layouts.py``'s.

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
from memwarden.policies.secret_words import (
    BRIDGE_END,
    CN_DIGIT,
    CN_NUMBER,
    CONNECTOR,
    CUE,
    EXPIRED,
    FILLER,
    MAX_BRIDGE,
    NOT_A_PHRASE,
    NUM_WORD,
    PASSWORD_CUE,
    PHRASE_CONNECTOR,
    PHRASE_CUE,
    PLACEHOLDER_VALUE,
    names_no_secret,
)

_DIGITS = re.compile(
    r"(?:[*#]|(?i:star|hash|pound)[ \t]+)?\d(?:[ \-]?\d){3,11}#?(?![\d.,:/]?\d)(?![A-Za-z])"
    r"(?!\s*(?:位|个|次|年|月|日|号|天|分钟|小时|秒|元|块|%|％|st\b|nd\b|rd\b|th\b"
    r"|am\b|pm\b|digits?|characters?|chars?|letters?|times|days?|hours?|min|mins|minutes|seconds|years?|km|mb|gb|px"
    r"|ms\b|m\b|ft\b|feet|meters?|metres?|miles?|kg|lbs?|cm|mm|people|users))"
)
_CN_DIGITS = re.compile(rf"[{CN_DIGIT}]{{4,12}}")
# Numbers said in groups: "三六，然后零八，最后是二十五", "36-14-52" (a dial's).
_CN_GROUPS = re.compile(rf"{CN_NUMBER}(?:[，、,\s]+(?:然后是?|再是?|最后是?)?{CN_NUMBER}){{2,}}")
# Digits said in two or three breaths: "四七零，二九一".
_CN_SPLIT = re.compile(rf"[{CN_DIGIT}]{{2,6}}(?:[，、,\s]+[{CN_DIGIT}]{{2,6}}){{1,3}}")
_DIAL = re.compile(r"\d{1,2}(?:[\-\s]\d{1,2}){2,3}(?![\d\-])")
_SAID_ONE = rf"(?:(?:double|triple)\s+)?{NUM_WORD}"
_SAID = re.compile(
    rf"(?i){_SAID_ONE}(?:[\s,，、\-]+{_SAID_ONE}){{3,11}}\b|{_SAID_ONE}(?:[\s,，、\-]+{_SAID_ONE}){{2,}}\b(?=.{{0,3}}$|[.!?])"
)
_COMBINATION = re.compile(
    rf"(?i)(?>(?:right|left|r|l|左|右)\s*+(?:转\s*+)?(?:(?:three\s+times\s+)?to\s*+|三圈到|到)?"
    rf"(?:\d{{1,2}}|{NUM_WORD}|[a-z]+ty(?:-[a-z]+)?|eleven|twelve|[a-z]+teen|{CN_NUMBER})"
    r"[\s,，、;；.]*+(?:then\s+|and\s+|再|然后|最后)?){2,}"
)
_SPELL_ITEM = (
    rf"(?:(?:capital|uppercase|upper|lowercase|lower|small|大写的?|小写的?)\s*)?(?:[A-Za-z0-9]|{NUM_WORD}|[{CN_DIGIT}]"
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
CJK = re.compile(r"[\u4e00-\u9fff]")


NEW = re.compile(r"(?i)\bnew\b|\bnow\b|新|改成|换成|改为")


def sentence_before(text: str, at: int) -> int:
    """Where the sentence holding ``at`` starts (a line's start or after "。"), at most 200
    characters back: every look around a cue or a finding stays bounded."""
    near = max(0, at - 200)
    return max(text.rfind("\n", near, at), text.rfind("。", near, at), near - 1) + 1


def expired_after(text: str, sentence_start: int, span: tuple[int, int]) -> bool:
    """Whether what follows a value (80 characters) says it expired or is the old one — unless the
    sentence called it the new one ("the new password is …; the old one stops working")."""
    if NEW.search(text, sentence_start, span[0]):
        return False
    return EXPIRED.search(text, span[1], span[1] + 80) is not None


def is_placeholder(value: str) -> bool:
    """``<token>``, ``{secret.Value}``, ``your-access-key``, ``***``, ``changeme`` …"""
    return PLACEHOLDER_VALUE.match(value) is not None


def classes(value: str) -> int:
    """Kinds of characters in ``value``: lower, upper, digit, symbol (not ``_ - .``), Chinese."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() and c not in "_-." for c in value)
        + bool(CJK.search(value))
    )


def token_value(value: str) -> bool:
    """A password-like token: two kinds of characters at least, 6+ long (4+ with three kinds), not
    a place, a call or a placeholder."""
    value = value.rstrip(".:!?")  # a sentence's end, not the password's (a "!" inside stays)
    if "://" in value or value.count("/") > 1 or "(" in value or PLACEHOLDER_VALUE.match(value):
        return False
    if any(value.lower().startswith(w) for w in ("http", "www.", "ssh", "sudo")):
        return False
    kinds = classes(value)
    return (kinds >= 2 and len(value) >= 6) or (kinds >= 3 and len(value) >= 4)


def _value_at(text: str, at: int, cue: str, connector: str) -> tuple[int, int] | None:
    """The span of the value starting at ``at`` (after spaces and an opening quote), or None."""
    explicit = bool(connector)
    at = FILLER.match(text, at).end()  # type: ignore[union-attr]  # it matches the empty string
    code = not PASSWORD_CUE.match(cue)
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
        phrase_or_mixed = " " in inner or classes(inner) >= 2
        if (explicit or phrase_or_mixed) and not PLACEHOLDER_VALUE.match(inner) and not inner.endswith((":", "：")):
            # "is 'pancake'", not name="password" nor {'password': 'not-the-right-one'}
            spoken = len(inner) >= 6 and connector.strip() not in ("", "=", ":")
            if classes(inner) >= 2 or " " in inner or spoken or re.fullmatch(r"\d{4,}", inner):
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
    if (m := _CN_SPLIT.match(text, at)) and sum(c in CN_DIGIT for c in m.group(0)) >= 4:
        return m.start(), m.end()
    if code and not safe:
        return None  # a code is digits
    if m := _TOKEN.match(text, at):
        token = m.group(0)
        called = text[m.end() : m.end() + 1] == "(" or re.fullmatch(r"[A-Za-z_]\w*(?:\.\w+)+", token)
        keyish = re.search(r"(?i)key|密钥|秘钥|私钥", cue) is not None
        # Not a field's assignment, a date or a time, nor the sentence going on ("密码已于…修改成功").
        prose = len(CJK.findall(token)) > 6 or re.search(r"\d+\s*(?:位|个|次|天|characters?|chars?|digits?)", token)
        sentence = (
            bool(prose)
            or re.search(r"[=：]|\d{1,4}[年月日]|\d:\d\d", token) is not None
            or (not connector and (":" in token or (bool(CJK.match(token)) and text[m.start() - 1] not in " \t")))
        )
        strong = bool(connector) or classes(token) >= 3
        key_like = not keyish or (len(token) >= 12 and classes(token) >= 3)
        if not called and not sentence and strong and key_like and token_value(token):
            return m.start(), m.end()
    hyphenated = PHRASE_CUE.match(cue.strip()) and (m := _HYPHENATED.match(text, at))
    if hyphenated and m is not None and not any(w in NOT_A_PHRASE for w in m.group(0).lower().split("-")):
        return m.start(), m.end()
    phrase = PHRASE_CUE.match(cue.strip()) and PHRASE_CONNECTOR.match(connector.strip())
    if phrase and (m := _WORDS.match(text, at)):
        words = m.group(0).lower().replace("-", " ").split()
        if not any(w in NOT_A_PHRASE for w in words):
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
    connector = CONNECTOR.search(window)
    if connector is not None and PASSWORD_CUE.match(cue):
        after = start + connector.end()
        field = re.compile(r"[=:：]").search(text, after, end)  # the next field's: not this value's words
        for m in _MIXED.finditer(text, after, field.start() if field else end):
            token = m.group(0)
            letters, digits = sum(c.isalpha() for c in token), sum(c.isdigit() for c in token)
            if letters >= 2 and digits >= 2 and token_value(token) and not re.search(r"[=:/?&]", token):
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
        yield from CUE.finditer(text)
        return
    last_end = 0
    for n, (end, word) in enumerate(CUE_WORDS.iter(lower)):
        if n == MAX_HITS:
            return
        start = end - len(word) + 1
        if start < last_end:
            continue
        # A Chinese cue ends in its word ("验证码", "单元门"): it may start up to three characters before.
        chinese = [start - k for k in (3, 2, 1) if start - k >= 0 and CJK.match(text, start - k)]
        for candidate in sorted({*_word_starts_before(text, start), *chinese, start}):
            if candidate < last_end:
                continue
            m = CUE.match(text, candidate)
            if m is not None and m.end() > start:
                last_end = m.end()
                yield m
                break


def _cued(text: str) -> list[SecretFinding]:
    found = []
    for n, cue in enumerate(_cue_matches(text)):
        if n == MAX_CUES:  # a text that names a credential this often is read this far (bounded work)
            break
        if _PROPERTY.match(text, cue.end()) or names_no_secret(text, cue):
            continue
        # The cue's sentence, at most 200 characters either side: every look around it stays bounded.
        sentence_start = sentence_before(text, cue.start())
        sentence_end = BRIDGE_END.search(text, cue.end(), cue.end() + 200)
        sentence = text[sentence_start : sentence_end.start() if sentence_end else min(len(text), cue.end() + 200)]
        limit = min(cue.end() + MAX_BRIDGE, sentence_end.start() if sentence_end else len(text))
        if (expired := EXPIRED.search(sentence)) and not NEW.search(text, sentence_start, cue.start() + 1):
            # The old one named, then corrected: "2580 no wait that's the old one, it's 2851 now".
            if (span := _corrected(text, sentence_start + expired.end(), limit, cue.group(0))) is not None:
                found.append(SecretFinding("password", *span))
            continue
        span = _value_at(text, cue.end(), cue.group(0), "")
        if span is None:
            for conn in CONNECTOR.finditer(text, cue.end(), limit):
                span = _value_at(text, conn.end(), cue.group(0), conn.group(0))
                if span is not None or conn.group(0) in ("=", ":", "：", "→", "->"):
                    break  # past an assignment, the next one is another field's
        if span is None:
            span = _shaped_in(text, cue.end(), limit, cue.group(0))
        if span is None and (reply := _REPLY.match(text, cue.end())) is not None:
            # A question about it, answered in the next turn: "the PIN?\nCustomer: it's one nine eight oh".
            span = _answer_in(text, reply.end(), min(len(text), reply.end() + 120), cue.group(0))
        if span is None and sentence_end is not None and "\n" not in sentence_end.group(0):
            span = _in_next_sentence(text, sentence_end.end(), cue.group(0))
        if span is None and sentence_end is not None:
            span = _in_later_turns(text, cue.end(), cue.group(0))
        if span is not None and not expired_after(text, sentence_start, span):
            found.append(SecretFinding("password", *span))
    return found


def _corrected(text: str, at: int, limit: int, cue: str) -> tuple[int, int] | None:
    """The value said after a sentence's "that's the old one" (from ``at``), past a connector."""
    for conn in CONNECTOR.finditer(text, at, max(limit, at + 40)):
        if (span := _value_at(text, conn.end(), cue, conn.group(0))) is not None:
            return None if EXPIRED.search(text, span[1], span[1] + 12) else span
    return None


# A sentence that starts by saying what it is: "It is 2 2 1 9.", "It's 0-3-6-8 now".
_IT_IS = re.compile(
    r"(?i)[ \t]*(?:it\s+is|it['’]s|its|that['’]s|the\s+code\s+is|code\s+is"
    r"|(?:the\s+)?(?:correct|right|new|actual|real)\s+one(?:\s+is|\s*[:：])|正确的是|新的是)(?!\w)"
)


def _in_next_sentence(text: str, at: int, cue: str) -> tuple[int, int] | None:
    """A value in the sentence after the cue's, on the same line: by its shape ("The safe is a dial.
    Turn left to thirty-two, right to fourteen …"), or any kind after "It is"."""
    end = BRIDGE_END.search(text, at, at + 160)
    stop = end.start() if end else min(len(text), at + 160)
    if (it := _IT_IS.match(text, at, stop)) is not None and (span := _value_at(text, it.end(), cue, "is")):
        return span
    return _shaped_in(text, at, stop, cue)


_TURN_START = re.compile(r"[ \t]*(?:\[[^\]\n]{1,20}\][ \t]*)?(?:[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*)?")
# The cue's line asks for the value, or announces it: a question, "I'll need", "send", "请提供", "念一下".
_ASKED = re.compile(
    r"(?i)[?？]|\bwhat'?s\b|\bwhats\b|\bwhat\s+is\b|\bagain\b|\bneed\b|\bsend\b|\b(?:give|tell)\s+me\b"
    r"|\bread\s+(?:it|you)\b|多少|提供|告诉|发一下|发我|念|报一下|说一下|是什么|是啥|说一遍|是好多|忘了"
)
# Digits after these in a reply are a time, an amount or a count ("around 2130", "about 1500").
_WHEN_OR_HOW_MUCH = re.compile(
    r"(?i)\b(?:around|at|by|until|till|before|after|since|about|in|on|for|over|under)\s+$|[~$€£¥]$"
)


def _answer_in(text: str, start: int, end: int, cue: str) -> tuple[int, int] | None:
    """A value by its shape in a reply (digits too), not inside a word or after "=", nor a time or
    an amount."""
    span = _shaped_in(text, start, end, cue, said=True)
    if span is None or re.match(r"[\w.\-/=:$\"`]", text[span[0] - 1]):
        return None
    return None if _WHEN_OR_HOW_MUCH.search(text, max(start, span[0] - 12), span[0]) else span


_YEAR = re.compile(r"(?:19|20)\d\d")
_LATER_TURNS = 4  # lines read after the cue's (blank ones not counted)
_LATER_REACH = 240  # characters read after the cue's line


def _in_later_turns(text: str, at: int, cue: str) -> tuple[int, int] | None:
    """A value said in one of the next few turns of a conversation ("whats the ipad passcode
    again" — "why" — "homework" — "779106 and it goes back on the charger"): read by its shape only
    (digits, digits said as words, letters spelled), each line after its speaker's name."""
    line_end = text.find("\n", at, at + 200)
    if line_end < 0:
        return None
    # Asked for, or named on a line of its own ("Dad: the code for the storage unit", "保险柜密码").
    line_start = text.rfind("\n", max(0, at - 200), at) + 1
    asked = _ASKED.search(text, line_start, line_end) is not None
    named = text[_TURN_START.match(text, line_start, line_end).end() : line_end]  # type: ignore[union-attr]
    after = text[at:line_end]
    alone = not re.search(r"\d", after) and len(after.split()) <= 4
    if not asked and not (alone and (len(named) <= 15 if CJK.search(named) else len(named.split()) <= 6)):
        return None
    reach = min(len(text), line_end + _LATER_REACH)
    start, lines = line_end + 1, 0
    while start < reach and lines < _LATER_TURNS:
        end = text.find("\n", start, reach)
        end = reach if end < 0 else end
        if text[start:end].strip():
            lines += 1
            turn = _TURN_START.match(text, start, end).end()  # type: ignore[union-attr]  # matches ""
            span = _answer_in(text, turn, end, cue)
            # Only named: the value opens a later turn, and is not a year.
            if span is not None and (asked or (span[0] - turn <= 12 and not _YEAR.fullmatch(text, *span))):
                return span
        start = end + 1
    return None


def words_automaton(words: str) -> Any:
    return word_automaton(words.split("|"))


# Every cue holds one of these (casefolded); every directive one of the second: one pass over the
# text rules most texts out (a chat message: 92 µs with every detector run, 31 with this, measured).
CUE_WORDS = words_automaton(
    "pass|pw|pin|code|combo|combination|cvv|cvc|csc|key|gate|door|keypad|intercom|safe|lock|otp|master|alarm"
    "|密码|口令|暗号|密钥|秘钥|私钥|码|门|锁|保险"
)


def any_word(automaton: Any, folded: str) -> bool:
    return next(automaton.iter(folded), None) is not None


def cued_secrets(text: str, folded: str | None = None) -> list[SecretFinding]:
    """The secrets a cue names in ``text`` (overlaps left to the caller); ``folded`` is ``text``
    casefolded, if the caller has it."""
    folded = text.casefold() if folded is None else folded
    return _cued(text) if any_word(CUE_WORDS, folded) else []
