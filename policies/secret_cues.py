"""A credential named, then its value: the secrets that have no shape of their own.

A vendor's key is known by its prefix; a password, a PIN, a door or safe code, a passphrase of
plain words, a one-time code is known only by what names it. Here a *cue* (``password``,
``PIN``, ``door code``, ``combination``, ``密码``, ``验证码``, ``保险柜``…) is followed, on its
line and within a few words, by a *connector* (``is``, ``:``, ``=``, ``changed to``, ``是``,
``改成了``…) or directly by the value, and the value is read by kind (``secret_values.py``; the
cues and connectors are ``secret_words.py``'s):

* digits, grouped or spaced (``22-06-41``, ``6 0 4 1``, ``#5931``), or Chinese numerals
  (``四七一九``) — after a cue that names a code;
* a dial's combination (``right to 32, left to 11``, ``左三十一，右七``) after a safe's name;
* letters and digits said one by one (``capital P, a, s, s, nine, nine``, ``大写Q，小写w``);
* a token mixing kinds of characters (``Sunshine1952``, ``清风明月2024!``, ``hammockparade19``);
* a quoted value, or three or more plain words (``juniper canoe rusty kettle``) after an explicit
  ``is``/``:``/``是`` and a password's name;
* the answer to a question about it, in one of the next turns ("the PIN?" — "one nine eight oh"),
  or after a line that only names it ("Dad: the code for the storage unit" — "7 3 1 1");
* the next sentence's value ("The safe is a dial. Turn left to…", "It is 2 2 1 9"), and a
  correction's ("that's the old one, it's 2851 now").

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
from memwarden.policies.secret_numbers import N_DIGIT_CODE, WHEN_OR_HOW_MUCH, YEAR, code_of_its_length, glued
from memwarden.policies.secret_values import (
    CJK,
    NEW,
    OTHER_NUMBER,
    shaped_in,
    value_at,
)
from memwarden.policies.secret_words import (
    BRIDGE_END,
    CONNECTOR,
    CUE,
    EXPIRED,
    MAX_BRIDGE,
    NOT_NEEDED,
    REVOKED,
    names_no_secret,
)


def sentence_before(text: str, at: int) -> int:
    """Where the sentence holding ``at`` starts (a line's start or after "。"), at most 200
    characters back: every look around a cue or a finding stays bounded."""
    near = max(0, at - 200)
    return max(text.rfind("\n", near, at), text.rfind("。", near, at), near - 1) + 1


def last_match(pattern: re.Pattern[str], text: str, start: int, end: int) -> re.Match[str] | None:
    """The last match of ``pattern`` in ``text[start:end]`` (a bounded span: a sentence's)."""
    found = None
    for found in pattern.finditer(text, start, end):  # noqa: B007 (the last one is kept)
        pass
    return found


def expired_after(text: str, sentence_start: int, span: tuple[int, int]) -> bool:
    """Whether what follows a value (80 characters) says it expired or is the old one — unless the
    sentence called it the new one ("the new password is …; the old one stops working"), and not
    the old one after that ("机房门禁已经换成人脸识别了，原来的密码 1357# 今天起作废")."""
    new = last_match(NEW, text, sentence_start, span[0])
    if new is not None and not EXPIRED.search(text, new.end(), span[0]):
        return False
    end = text.find("\n", span[1], span[1] + 80)
    line_end = span[1] + 80 if end < 0 else end
    if REVOKED.search(text, span[1], line_end) is not None:
        return True
    # On its line, any word of it — but not a later sentence about the old one ("6028 (family
    # changed it). Old one no longer works."); on the next line (a reply), only that it expired or
    # was used: "the old channel is archived" under a webhook speaks of something else.
    if (expired := EXPIRED.search(text, span[1], line_end)) is not None:
        another = _SENTENCE_BREAK.search(text, span[1], expired.start()) and _OLD_ONE.match(text, expired.start())
        old = _OLD_ONE.match(text, expired.start()) is not None
        # "1066 now — I changed it because someone figured out the old one", "猜出之前那个了所以换了": the
        # new one, told so (not "2580 won't work now, that's the old one")
        replaced = old and (
            _NOW_AFTER.match(text, span[1]) is not None
            or _I_CHANGED.search(text, span[1], expired.end() + 16) is not None
        )
        # "…, the old one was literally admin": the old one is another value, given; "AppSecret reset
        # 之后是 …, old one 已经失效了": after a reset, the old one is another value
        told = text[expired.start() : expired.end() + 16]
        contrast = _OLD_ONE_WAS.match(told) is not None or (
            _OLD_ONE_DEAD.match(told) is not None and _RESET_BEFORE.search(text, sentence_start, span[0]) is not None
        )
        return not another and not replaced and not contrast
    if end < 0:
        return False
    clause = BRIDGE_END.search(text, end + 1, end + 60)  # the next line's first sentence
    return _EXPIRED_REPLY.search(text, end, clause.start() if clause else end + 60) is not None


_NOT_ONE = re.compile(r"(?i)(?:\bnot|n['’]t)[ \t]+(?:a|an)[ \t]+\Z|不是\Z")
_SENTENCE_BREAK = re.compile(r"[.!?。！？;；]")
_NOW_AFTER = re.compile(r"(?i)[ \t]+now\b")
_I_CHANGED = re.compile(
    r"(?i)\b(?:i|we|he|she|they|mum|dad)\s+(?:just\s+|already\s+)?(?:changed|reset|replaced)\s+it\b|所以换了|所以改了|就换了"
)
_OLD_ONE_WAS = re.compile(
    r"(?i)old\s+(?:one|code|pin|password|key)\s+(?:was|is)\s+"
    r"(?!dead|expired|gone|invalid|revoked|disabled|deleted|useless|no\b|not\b|wrong|broken|blocked|now\b|still\b)"
)
_OLD_ONE_DEAD = re.compile(r"(?i)old\s+(?:one|code|pin|password|key)\s*(?:(?:is|was)\s+\w+|已经?|不能)")
_RESET_BEFORE = re.compile(r"(?i)\breset\b|重置|之后是")
_OLD_ONE = re.compile(r"(?i)old\b|旧的|以前的|原来的|老的|之前")
_EXPIRED_REPLY = re.compile(
    r"(?i)\b(?:expired|no longer (?:valid|works?)|stopped working|already used|timed out)\b"
    r"|已经?失效|失效了|已过期|过期了|用过了|用掉了"
)


_REPLY = re.compile(
    r"[^\n?]{0,60}\?[^\n]{0,40}\n(?:\[[^\]\n]{1,20}\][ \t]*)?[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*"
)


# "password hint", "password policy", "PIN length": the cue names a property of it, not it.
_PROPERTY = re.compile(
    r"(?i)[ \t]*(?:hint|policy|policies|requirements?|rules?|reset|manager|strength|length|field|prompt|hash|expiry|fingerprint"
    r"|expires|change|changes|history|complexity|protected|less|protection|mode)\b|提示|策略|开放|时间|时段|营业|开到|要求|规则|长度|强度|重置|管理器|格式"
)


_ASKED_ONLY = re.compile(r"(?i)(?:four|six|eight|4|6|8)[\s\-]digits")
_HINT_BEFORE = re.compile(
    r"(?i)\b(?:hint|clue)\s+(?:for|to|of)\s+(?:[\w'’]+\s+){0,3}\Z|\b(?:banned|blacklisted|forbidden)\s+\Z"
)
# "密码 reset 好了：…", "password reset done: …", "password protected: …", "protected with …": the
# (new) value follows.
_DONE = re.compile(r"(?i)[ \t]*(?:好了|完成|成功|done)[ \t]*(?:[:：]|[.。!](?=[ \t]))|[ \t]+to\b")
_PROTECTED_WITH = re.compile(r"(?i)[ \t]*(?:[:：]|with\b(?![ \t]+(?:a|an|the|your|my|our)\b))")

MAX_CUES = 256  # cues read in one text: ~0.4 ms each at worst, so ~100 ms for a hostile text
MAX_HITS = 4 * MAX_CUES  # cue words looked at


def _word_starts_before(text: str, at: int) -> list[int]:
    """Where the (at most three) words in the 40 characters before ``at`` begin, nearest last."""
    starts: list[int] = []
    i = at - 1
    while i > max(0, at - 40) and len(starts) < 3:
        # (a Latin word after a Chinese character starts there: "钉钉verification code")
        if text[i].isalnum() and not (text[i - 1].isalnum() and text[i - 1].isascii() == text[i].isascii()):
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
        else:
            # "code" alone, after what it opens earlier in its sentence: "key safe left of the garage,
            # code 0 9 3 6", "the bank sent me a code 448 120" (not "the code" of a program).
            if (
                word == "code"
                and (m := _BARE_CODE.match(text, start))
                and not (start > 0 and text[start - 1].isascii() and text[start - 1].isalnum())
            ):
                line_end = text.find("\n", start, start + 200)
                line_end = min(len(text), start + 200) if line_end < 0 else line_end
                asked = _CODE_ASKED.search(text, sentence_before(text, start), line_end) is not None
                one_time = _ONE_TIME_SHAPE.match(text, m.end()) is not None  # "code's 774 019"
                one_time = one_time or _CAME.match(text, m.end()) is not None  # "the code that just came through is …"
                if asked or one_time or _OPENS_BEFORE.search(text, sentence_before(text, start), start):
                    last_end = m.end()
                    yield m


# Its value right after it, or after "is", ":", "it's": "code 0 9 3 6", "code: 1905" (not "the code
# compiles to 1024 bytes", "code review moved to 1400": a bare code's cue takes no later connector).
_BARE_CODE = re.compile(
    r"(?i)codes?(?:[ \t]*+(?:(?:给我|给你|发给?我)?[ \t]*+[:：=]|is\b|it['’]?s\b|['’]s\b))?(?![A-Za-z])"
)
_IS = re.compile(r"(?i)[ \t]*(?:是|is\b)")
# Six digits in two groups, as one-time codes are sent: "774 019", "391-044" — right after a bare
# "code", or after a colon later in its clause.
_SIX = r"\d{3}[ \-]\d{3}(?![\d\-])"
_ONE_TIME_SHAPE = re.compile(rf"[ \t]*{_SIX}")
_ONE_TIME_IN = re.compile(rf"[:：][ \t]*({_SIX})")
_CAME = re.compile(
    r"(?i)[ \t]+(?:that|which|they|you|i|we)?[ \t]*(?:just[ \t]+)?(?:came(?:[ \t]+through)?|arrived|popped[ \t]+up|got[ \t]+sent"
    r"|was[ \t]+sent|sent[ \t]+(?:me|you|us)|texted[ \t]+(?:me|you|us))[ \t]+(?:to[ \t]+\w+[ \t]+"
    r"|(?:on|in|by|from|with)[ \t]+(?:the[ \t]+|a[ \t]+|your[ \t]+|my[ \t]+)?(?:text|sms|message|email|phone)[ \t]+)?is\b"
)
# A line that asks for the code itself: "read me the code", "the code we just texted you?".
_CODE_ASKED = re.compile(
    r"(?i)\bread\s+(?:me|out|back)\b|\bcodes?\s+(?:we|i|they|you)\s+(?:just\s+)?(?:texted|sent|messaged|emailed)\b"
    r"|\bwhat(?:['’]?s|\s+is)\s+the\s+code(?:\s*\?|\s+again\b|\s+(?:on|in)\s+(?:your|the)\s+\w+\s*\?)|报一下|念一下|报给我"
)
# What a code opens or who sends one, named earlier in the sentence of a bare "code".
_OPENS_BEFORE = re.compile(
    r"(?i)(?<![a-z])(?:door|gate|alarm|safe|keypad|lock|locker|lockbox|padlock|garage|shed|entrance"
    r"|storage\s+unit|ipad|iphone|tablet|mailbox|letterbox|key\s?box|key\s?safe"
    r"|wi-?fi|till|stockroom|bin\s+store|check-?in|texted|whatsapp|sms|(?:sent|messaged)\s+(?:me|you|us))s?(?![a-z])"
    r"|门|锁|柜|箱|盒|发了个?|发来"
)


def _cued(text: str) -> list[SecretFinding]:
    found = []
    for n, cue in enumerate(_cue_matches(text)):
        if n == MAX_CUES:  # a text that names a credential this often is read this far (bounded work)
            break
        if _ASKED_ONLY.fullmatch(cue.group(0)):
            # "the six digits": a value only when asked for and given in a later turn (a postcode
            # "has six digits: 560034")
            if (span := _in_later_turns(text, cue.end(), cue.group(0))) is not None:
                found.append(SecretFinding("password", *span))
            continue
        if _HINT_BEFORE.search(text, max(0, cue.start() - 40), cue.start()):
            continue  # "Hint for Mum's laptop password: 'first dog + …'": a hint, not the value
        if _NOT_ONE.search(text, max(0, cue.start() - 12), cue.start()):
            continue  # "wasn't a PIN at all, it was the dentist's reference, 31-442"
        prop = _PROPERTY.match(text, cue.end())
        protected = prop is not None and prop.group(0).strip().lower() == "protected"
        given = prop is not None and (
            _DONE.match(text, prop.end()) is not None
            or (protected and _PROTECTED_WITH.match(text, prop.end()) is not None)
        )
        if (prop and not given) or names_no_secret(cue.group(0)):
            continue
        # The cue's sentence, at most 200 characters either side: every look around it stays bounded.
        sentence_start = sentence_before(text, cue.start())
        sentence_end = BRIDGE_END.search(text, cue.end(), cue.end() + 200)
        sentence = text[sentence_start : sentence_end.start() if sentence_end else min(len(text), cue.end() + 200)]
        limit = min(cue.end() + MAX_BRIDGE, sentence_end.start() if sentence_end else len(text))
        if (n_digit := N_DIGIT_CODE.fullmatch(cue.group(0))) is not None:
            # "a 6-digit code": its value only said to be it, of its length — right after it, or, where
            # the sentence says one was sent, a clause on ("sent a 6-digit code to the club mobile,
            # it's 774120"); never "to 07700 900123", "from 1000 to 9999", "a 6-digit code: 541511 is …"
            told = code_of_its_length(text, n_digit, cue.start(), sentence_start, limit)
            if told is None and (reply := _REPLY.match(text, cue.end())) is not None:
                told = _answer_in(text, reply.end(), min(len(text), reply.end() + 120), cue.group(0))
            if told is None and sentence_end is not None:  # asked for, then given: "the four-digit PIN?\n…"
                told = _in_later_turns(text, cue.end(), cue.group(0))
            if told is not None and not expired_after(text, sentence_start, told):
                found.append(SecretFinding("password", *told))
            continue
        # Not when the sentence says a new one before the old ("changed to 5518, 旧的 4411 作废了").
        if (expired := _expired_in(sentence, cue.start() - sentence_start)) and not NEW.search(
            text, sentence_start, max(cue.start() + 1, sentence_start + expired.start())
        ):
            # The old one named, then corrected: "2580 no wait that's the old one, it's 2851 now".
            if (span := _corrected(text, sentence_start + expired.end(), limit, cue.group(0))) is not None:
                found.append(SecretFinding("password", *span))
            continue
        span = value_at(text, cue.end(), cue.group(0), "")
        if _BARE_CODE.fullmatch(cue.group(0)):  # its value right after it, or asked for and given later
            if span is None and _IS.match(text, cue.end()):  # "钥匙盒 code 是房东生日 1207"
                span = shaped_in(text, cue.end(), limit, cue.group(0))
            if span is None and (shaped := _ONE_TIME_IN.search(text, cue.end(), limit)) is not None:
                span = shaped.span(1)  # "texted the code for today's BACS run: 492 017"
            if span is None and (came := _CAME.match(text, cue.end())) is not None:
                span = value_at(text, came.end(), cue.group(0), "is")  # "the code that just came through is 614082"
            line_end = text.find("\n", cue.end(), cue.end() + 200)  # bounded, as every look here
            if span is None and _CODE_ASKED.search(
                text, sentence_start, min(len(text), cue.end() + 200) if line_end < 0 else line_end
            ):
                span = _in_later_turns(text, cue.end(), cue.group(0))
            if span is not None and not expired_after(text, sentence_start, span):
                found.append(SecretFinding("password", *span))
            continue
        if span is None:
            for conn in CONNECTOR.finditer(text, cue.end(), limit):
                if OTHER_NUMBER.search(text, cue.end(), conn.start()):
                    break  # another number's "is": "密码改了，学号是 20210344"
                if conn.start() > cue.end() and conn.group(0) in ("'s", "’s"):
                    continue  # another word's "'s" ("security word on Dad's account is …"), not the cue's
                span = value_at(text, conn.end(), cue.group(0), conn.group(0))
                if span is not None or conn.group(0) in ("=", ":", "：", "→", "->"):
                    break  # past an assignment, the next one is another field's
        if span is None:
            span = shaped_in(text, cue.end(), limit, cue.group(0))
        if span is None and (reply := _REPLY.match(text, cue.end())) is not None:
            # A question about it, answered in the next turn: "the PIN?\nCustomer: it's one nine eight oh".
            span = _answer_in(text, reply.end(), min(len(text), reply.end() + 120), cue.group(0))
        if span is None and sentence_end is not None and "\n" not in sentence_end.group(0):
            span = _in_next_sentence(text, sentence_end.end(), cue.group(0))
        if span is None and sentence_end is not None:
            span = _in_later_turns(text, cue.end(), cue.group(0))
        if span is not None and cue.group(0).lower() == "p/w" and text[span[0] : span[1]].isdigit():
            continue  # "£450 p/w = 1950": per week, not a password
        if protected and span is not None and not _LOOKS_SET.search(text, *span):
            continue  # "Password protected: Enabled", ": Required", ": Internal." — a status, not a value
        if (
            span is not None
            and not expired_after(text, sentence_start, span)
            and not _RULED_OUT.search(text, max(0, span[0] - 40), span[0])
        ):
            found.append(SecretFinding("password", *span))
    return found


# What a password protecting something is set to, where it says so after "password protected:": a
# capital inside a word, a digit or a symbol ("LanternFestival", "Tulip-2024"), not a status word.
_LOOKS_SET = re.compile(r"[a-z][A-Z]|\d|[^\w\s.,;:!?'\"“”‘’()]")


# A value a rule forbids, not one in use: "it won't let you use 1234", "不能用 123456"; an order's number.
_RULED_OUT = re.compile(
    r"(?i)(?:\bwon['’]?t\s+(?:let\s+(?:you|me|us)\s+)?(?:use|accept|take)|\bcan['’]?t\s+use|\bcannot\s+use"
    r"|\bnot\s+allowed\s+to\s+use|\bno\s+(?:simple|easy|obvious)\s+ones?\s+like|不能用|不能设成?|不允许"
    r"|\b(?:po|p\.o\.|purchase\s+order)\s*#?)\s*\Z"  # and a purchase order's number
)


def _expired_in(sentence: str, cue_at: int) -> re.Match[str] | None:
    """The first word of an expired or unneeded value in ``sentence`` — not one that names another
    credential before the cue at ``cue_at`` ("访客WiFi不用密码，员工网的密码是 …": the guests' network
    needs none, the staff's has one)."""
    for expired in EXPIRED.finditer(sentence):
        if expired.end() > cue_at or NOT_NEEDED.fullmatch(expired.group(0)) is None:
            return expired
    return None


def _corrected(text: str, at: int, limit: int, cue: str) -> tuple[int, int] | None:
    """The value said after a sentence's "that's the old one" (from ``at``), past a connector."""
    for conn in CONNECTOR.finditer(text, at, max(limit, at + 40)):
        if (span := value_at(text, conn.end(), cue, conn.group(0))) is not None:
            return None if EXPIRED.search(text, span[1], span[1] + 12) else span
    return None


# A sentence that starts by saying what it is: "It is 2 2 1 9.", "It's 0-3-6-8 now".
_IT_IS = re.compile(
    r"(?i)[ \t]*(?:it\s+is|it['’]s|its|that['’]s|the\s+code\s+is|code\s+is|so|i\.e\.,?|→|today['’]s(?:\s+code)?\s+is"
    r"|(?:(?:the|your|my|our)\s+)?(?:correct|right|new|actual|real)\s+one(?:\s+is|\s*[:：])|new(?:\s+(?:code|pin))?\s*[:：]|正确的是|新的是"
    # where it came: "The one in your texts is 804 117"
    r"|the\s+one\s+(?:in|on|from)\s+(?:your|my|the)\s+(?:texts?|messages?|sms|phone|e-?mails?|inbox)\s+(?:is|says))(?!\w)"
)


# A sentence that is nothing but digits said one at a time.
_ONLY_DIGITS = re.compile(r"[ \t]*(\d(?:[ \-]\d){3,7})[ \t]*(?:[.!]|\Z)")
_SPECIFIC = re.compile(r"(?i)pass|pw|pin|code|combo|combination|key|lock|safe|otp|2fa|mfa|密码|口令|码|锁|保险")


def _in_next_sentence(text: str, at: int, cue: str) -> tuple[int, int] | None:
    """A value in the sentence after the cue's, on the same line: by its shape ("The safe is a dial.
    Turn left to thirty-two, right to fourteen …"), or any kind after "It is"."""
    end = BRIDGE_END.search(text, at, at + 160)
    stop = end.start() if end else min(len(text), at + 160)
    specific = _SPECIFIC.search(cue) is not None  # not a bare "door", "gate", "safe"
    if specific and (alone := _ONLY_DIGITS.match(text, at, stop)) is not None:  # "…in the Supra lockbox. 5 2 9 8."
        return alone.span(1)
    it = _IT_IS.match(text, at, stop) if specific else None
    if it is not None and (span := value_at(text, it.end(), cue, "is")) and not YEAR.fullmatch(text, *span):
        return span
    return shaped_in(text, at, stop, cue, own=False)


_TURN_START = re.compile(r"[ \t]*(?:\[[^\]\n]{1,20}\][ \t]*)?(?:[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*)?")
# The cue's line asks for the value, or announces it: a question, "I'll need", "send", "请提供", "念一下".
_ASKED = re.compile(
    r"(?i)[?？]|\bwhat'?s\b|\bwhats\b|\bwhat\s+is\b|\bagain\b|\bneed\b|\bsend\b|\b(?:give|tell)\s+me\b"
    r"|\bread\s+(?:it|you|me)\b|\bplease\b|多少|提供|告诉|发一下|发我|发给我|报给我|念|报一下|说一下|是什么|是啥|说一遍|是好多|忘了"
)


def _answer_in(text: str, start: int, end: int, cue: str) -> tuple[int, int] | None:
    """A value by its shape in a reply (digits too): not the end of something else, nor a time,
    an amount, a card's last digits or a number named as a room, a ticket, a build …"""
    span = shaped_in(text, start, end, cue, said=True)
    if span is None or glued(text, span[0]):
        return None
    before = text[max(start, span[0] - 16) : span[0]]
    if WHEN_OR_HOW_MUCH.search(before) or _LAST_DIGITS.search(before) or NAMED_NUMBER.search(before):
        return None
    if _PHONE_NUMBER.fullmatch(text, *span) or _CALL_US.search(before):
        return None  # "please ring 0161 496 0731": a number to call
    return None if _NAMED_AFTER.match(text, span[1]) else span


# A telephone number (ten digits or more, or said after "ring"/"call"), not a code.
_PHONE_NUMBER = re.compile(r"[+(]?\d(?:[ \-()]?\d){9,}")
_CALL_US = re.compile(r"(?i)\b(?:ring|call|phone|dial|tel\.?)\s+(?:us\s+|me\s+)?(?:on\s+)?\Z|电话\s*\Z")
# A number named as something else: "room 4012", "table 1204", "PR 48213", "20931 is the ticket number".
NAMED_NUMBER = re.compile(
    r"(?i)\b(?:room|table|line|ticket|build|version|pr|issue|order|flight|bus|no\.?|number|#|step|page|unit|apt|suite"
    r"|ref|reference|invoice|account|case|shipment|batch|flat|po|p\.o\.|purchase\s+order)"
    r"\s*#?\s*$|(?:工号|房间|桌|单号|订单号?|房号|例如)\s*$"
)
_NAMED_AFTER = re.compile(
    r"(?i)\s+(?:is\s+(?:the|my|your|our)\s+)?(?:ticket|order|room|table|build|case|reference|tracking|employee|flight)\b"
)
# A card's last digits, which prove nothing: "last four 是 五 五 零 二", "尾号 4421".
_LAST_DIGITS = re.compile(r"(?i)last\s+(?:four|4)|后四位|尾号|ending\s+(?:in|with)")


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
    said_from = _TURN_START.match(text, line_start, line_end).end()  # type: ignore[union-attr]  # matches ""
    named = text[said_from:line_end]
    after = text[at:line_end]
    # Named alone: nothing after the cue but a few words (no value, no "(hidden)"), the cue said in
    # the turn or a heading of its own ("德施曼门锁临时密码：") — not a field's name before its value.
    turn_or_heading = said_from <= at - len(cue) or not named.strip()
    alone = not re.search(r"[\d(*<\[]", after) and len(after.split()) <= 4 and turn_or_heading
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
            if span is not None and (asked or (span[0] - turn <= 12 and not YEAR.fullmatch(text, *span))):
                return span
        start = end + 1
    return None


def words_automaton(words: str) -> Any:
    return word_automaton(words.split("|"))


# Every cue holds one of these (casefolded); every directive one of the second: one pass over the
# text rules most texts out (a chat message: 92 µs with every detector run, 31 with this, measured).
CUE_WORDS = words_automaton(
    "pass|pw|p/w|pasw|pssw|pin|code|combo|combination|cvv|cvc|csc|key|gate|door|keypad|intercom|safe|lock|otp|master|alarm"
    "|disarm|psk|override|2fa|mfa|secret|digits|security number|security word|memorable word|security answer|柜"
    "|密码|口令|暗号|密钥|秘钥|私钥|码|门|锁|保险"
)


def any_word(automaton: Any, folded: str) -> bool:
    return next(automaton.iter(folded), None) is not None


def cued_secrets(text: str, folded: str | None = None) -> list[SecretFinding]:
    """The secrets a cue names in ``text`` (overlaps left to the caller); ``folded`` is ``text``
    casefolded, if the caller has it."""
    folded = text.casefold() if folded is None else folded
    return _cued(text) if any_word(CUE_WORDS, folded) else []
