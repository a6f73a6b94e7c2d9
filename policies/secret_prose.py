"""A code told in prose: digits near what they open, where no connector joins them to its name.

People writing to a neighbour, a carer or a flatmate put the value a clause or a sentence away from
the lock: "I moved the spare key. It's in the box by the bins, the one with the dials. Your mum's
birthday month and year, 0361.", "the panel by the coat hooks wants 1-9-4-7 and then 'off'", "the
tin's got a little lock … the numbers are 5 5 2". Here a lock's word (a key safe, a keypad, an alarm,
a padlock, a dial, 门禁, 挂锁 …) is followed, in its sentence or the next, by digits standing alone —
three to eight of them, spaced, dashed or run together — or said as words.

Not a value: a time, an amount, a count, a date, a phone number, a number named as something else
("room 12", "flat 4", "model 4471", "invoice #0412"), a year unless the sentence says the year is it
("It's 1966, like the world cup"), three digits run together unless the lock is one with a dial.
Found by the tune sets' writers who hid the value in prose (issue #33's seventh round), not by the
held-out sets.

A password told the same way (the eighth round's letters, wills and voice memos): worked out, then
given after "so" ("the laptop password is the name of our first street with the house number after
it, so Larkspur1146"), or what a login "is now" a clause or a sentence on ("reset the base station
admin, it's Birdfeeder_0613 now") — not a product's, a version's or a host's name ("the login flow
is now OAuth2", "the admin panel … it's now admin2.example.com").
"""

from __future__ import annotations

import re

from memwarden.policies.secret_cues import NAMED_NUMBER, any_word
from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_numbers import WHEN_OR_HOW_MUCH
from memwarden.policies.secret_values import SAID, classes
from memwarden.policies.secret_words import BRIDGE_END

# What a code opens (a door's or a gate's code named loosely too; "code" alone is the cues' — a
# program's code, an error's, a zip's are not a lock's).
_LOCK = re.compile(
    r"(?i)(?<![a-z])(?:key\s?safe|key\s?box|lock\s?box|padlock|lock|keypad|key\s?pad|alarm|panel|dials"
    r"|combination|combo|door\s+code|gate\s+code|pins?+(?!\s*\d{1,2}(?![\d.,:/\-–]|\s*\d)|(?<=s)\s*\d\s*[\-–]\s*\d{1,2}(?![\d\-–]))|passcode|unlocks?\s+with|alrm"
    r"|(?:hotel|wall|floor|gun|home)\s+safe)s?(?![a-z])"
    r"|门禁|键盘|面板|挂锁|密码锁|(?<![连封])锁(?!骨)|报警器|保险柜|(?<![验证])密码"
)
# Which of them turn a dial: three digits run together are their value ("the padlock is 246").
_DIAL = re.compile(r"(?i)padlock|lock|dial|combination|combo|挂锁|锁|保险柜")
_LOCK_WORDS = word_automaton(
    "safe|box|lock|keypad|key pad|alarm|alrm|panel|dial|combination|combo|door code|gate code|pin|passcode"
    "|门禁|键盘|面板|锁|报警器|保险柜|密码".split("|")
)
# Digits standing alone: not a decimal, a time, a date, a price, a part of a word or a longer number.
_ALONE = re.compile(
    r"(?<![A-Za-z0-9_.,:/#£$€¥+\-])(?<!\d[ \-,])(\d(?:[ \-–]?\d){2,7}|\d(?:,[ \t]?\d){3,7})"
    r"(?![A-Za-z0-9_%°])(?![.,:/\-–]?\d)(?![ \-–,]\d)"
)
# What may follow a code: its clause's end, or what is pressed or done next ("1-9-4-7 and then 'off'",
# "3916再按井号"); a word of anything else makes it a count, a size or a name ("100 fingerprints",
# "2560 x 1440", "1420 Maple Avenue", "500 克", "1200 万").
_THEN = re.compile(
    r"(?i)[ \t]*+(?:$|[\n.,;:!?。，；：！？)）\"'”’—–\-]|(?:and\s+)?then\b|and\b|press|hit|enter|push|followed|#|hash|star|pound"
    r"|to\s+(?:open|unlock|disarm|get\s+in)|for\s+the\b|on\s+the\s+keypad|because\b|since\b|cos\b|if\b"
    r"|再|然后|按|就|井号|，|、)"
)
_BRACKET = re.compile(r"[ \t]*[(（]")
_BRACKETED_LOCK = re.compile(
    r"(?i)(?:pad)?locks?|keypads?|key\s?safe|key\s?box|lock\s?box|combination|combo|挂锁|密码锁|锁|门禁"
)
_IS_IT = re.compile(r"(?i)(?:\bis|\bit['’]?s|是|就是)[ \t]*$")
# Named as something else just before it: a model, a reference, a meter's reading, a key's number.
_NAMED_BEFORE = re.compile(
    r"(?i)model|no\.|\bref|invoice|order|\btel|phone|\bflat|\broom|meter|reading|\belec|\bgas\b|account|numbered"
    r"|serial|\bcall|\bring|\bdial(?:l?ing)?\b|\bprice|\bcost|\bpaid|\bcharged|\bspent|\bran\s+us|\bflight|\bplatform"
    r"|\bport|\bhost|\bip\b|\bsection|\broute|\bchapter|\bclause|\boption|\bbudget|\bbus\b|\bpage|\bversion"
    r"|\bbetween\b|\d[ \t]*(?:and|to|or|–|-)[ \t]*\Z|\berror\b|\bstatus\b|错误码|状态码|错误代码|端口|致电|拨打|\bending\b|\bends\s+(?:in|with)|\blast\s+(?:four|4|digits)|尾号|后四位"
    r"|栋|单元|楼|室|房|号|价|加|费|售|[¥￥$£€]|一年|每月|花了|一共|总共|电话|热线|\d[ \t]*[x×][ \t]*\Z"
)
_A_RULE = re.compile(
    r"(?i)\bmust\b|\bcan['’]?t\s+be\b|\bcannot\s+be\b|\bshould(?:n['’]t)?\s+be\b|\bnot\s+allowed\b|必须|不能是|不可以是"
)
_NOT_IT = re.compile(r"(?i)(?:\bnot|n['’]t|不是|唔系|唔係)[ \t]*(?:be[ \t]+)?\Z")
# Said not to be one: "wasn't a PIN at all", "不是密码".
_NOT_ONE = re.compile(r"(?i)(?:\bnot|n['’]t|\bno)\s+(?:a|an|the|my|your)?\s*\Z|不是\Z")
# A time of day, and what says an alarm is a panel with a code, not a clock.
_A_TIME = re.compile(r"(?:[01]\d|2[0-3])[0-5]\d")
_A_PANEL = re.compile(r"(?i)\b(?:code|pin|disarm|unset|keypad|panel|punch|enter|press)|码|撤防|面板|键盘")
_TO = re.compile(r"(?i)\bto\s*\Z|定在\s*\Z|设在\s*\Z|调到\s*\Z")
_YEARS = re.compile(r"(?:1[5-9]|20)\d\d")  # "patented 1851" is a year too
# A year named as the value: "opens with the year the choir was founded — … 1974".
_A_YEAR = re.compile(r"(?i)\byear\b|\bborn\b|\bbirth|\bfounded\b|\banniversary\b|生日|年份")
# Said so: the year is the value ("It's 1966", "so 1942", ": 1974").
_SAID_IS = re.compile(r"(?i)(?:\bit['’]?s|\bis|\bso|[:：=—–]|是|就是)[ \t]*$")
_A_NUMBER = re.compile(r"\d|(?i:\b(?:one|two|four|nine)\b)")  # digits, or digits said
_REACH = 160  # characters read after a lock's word: its sentence and the next
MAX_LOCKS = 64


def _window_end(text: str, at: int) -> int:
    """The end of the sentence after the one holding ``at`` (at most ``_REACH`` characters on)."""
    limit = min(len(text), at + _REACH)
    first = BRIDGE_END.search(text, at, limit)
    if first is None:
        return limit
    second = BRIDGE_END.search(text, first.end(), limit)
    return second.start() if second is not None else limit


def _standing_alone(text: str, lock: re.Match[str], span: tuple[int, int], window: str) -> bool:
    value = re.sub(r"\D", "", text[span[0] : span[1]])
    before = text[max(lock.end(), span[0] - 16) : span[0]]
    if span[0] > 0 and re.match(r"[A-Za-z0-9_.\-/=:$`*]", text[span[0] - 1]):
        return False  # the end of something else (a bracket may open it: "the key safe number (4 5 0 0)")
    if NAMED_NUMBER.search(before) or WHEN_OR_HOW_MUCH.search(before):
        return False
    if _NOT_IT.search(before):
        return False  # "個密碼唔係1234", "the code isn't 1234"
    if _A_RULE.search(text, lock.end(), span[0]):
        return False  # what a value must be, not the value: "PIN must be 6 digits … (123456)"
    # (a unit after it is a word: no _THEN; a bracket only after a lock's four or more digits, spaced
    # or dashed as a code's are written, said to be it: "the shed lock is 0-1-0-6 (first of June …)" —
    # not "4500 (watts peak)", a pinout's "1-2-3-4 (VCC GND TX RX)", "Lock-in rates 3-6-12 (months)")
    then = _THEN.match(text, span[1]) is not None or (
        value != text[span[0] : span[1]]
        and len(value) >= 4
        and _BRACKET.match(text, span[1]) is not None
        and _BRACKETED_LOCK.fullmatch(lock.group(0)) is not None
        and _IS_IT.search(before) is not None
    )
    if _NAMED_BEFORE.search(before) or not then:
        return False
    if _TO.search(before) and value == text[span[0] : span[1]]:
        return False  # a dial or a setting turned to a number: "dials to 200", "set to 180"
    if (
        re.fullmatch(r"(?i)alarms?|alrms?|报警器", lock.group(0))
        and _A_TIME.fullmatch(value)
        and not _A_PANEL.search(window)
    ):
        return False  # an alarm clock's: "went off at 0545, 0600 and 0615" (not a panel's code)
    if len(value) == 3 and value == text[span[0] : span[1]] and not _DIAL.search(lock.group(0)):
        return False  # three digits run together: a dial's only
    # a year run together is a year, unless the text says so or says whose year it is
    year = _YEARS.fullmatch(text, *span) is not None
    return not year or _SAID_IS.search(before) is not None or _A_YEAR.search(text, lock.start(), span[0]) is not None


def prose_codes(text: str, folded: str) -> list[SecretFinding]:
    """Digits (or digits said as words) near a lock's word, in its sentence or the next."""
    if not any_word(_LOCK_WORDS, folded) or not _A_NUMBER.search(text):
        return []
    found: list[SecretFinding] = []
    for n, lock in enumerate(_LOCK.finditer(text)):
        if n == MAX_LOCKS:
            break
        if _NOT_ONE.search(text, max(0, lock.start() - 12), lock.start()):
            continue
        end = _window_end(text, lock.end())
        window = text[lock.start() : end]
        # every value in the window (a newer code after an old one: "1 2 3 4 won't work, it's now 5 6 7 8")
        values = [
            m.span(1) for m in _ALONE.finditer(text, lock.end(), end) if _standing_alone(text, lock, m.span(1), window)
        ]
        found += [SecretFinding("password", *span) for span in values]
        said = SAID.search(text, lock.end(), end) if not values else None
        before = text[max(lock.end(), said.start() - 16) : said.start()] if said is not None else ""
        if (
            said is not None
            and len(re.findall(r"(?i)[a-z]+", said.group(0))) >= 4
            and not WHEN_OR_HOW_MUCH.search(before)
            and not _NAMED_BEFORE.search(before)
        ):
            found.append(SecretFinding("password", said.start(), said.end()))
    return found


# A password told a clause or a sentence after its name: "reset the Arlo base station admin, it's
# Birdfeeder_0613 now", "I changed the computer password the way you showed me. It is now Marigold7".
_LOGIN = re.compile(
    r"(?i)(?<![a-z\-])(?:password|passcode|passphrase|pw|pwd|admin|login)(?![a-z\-])"
    # (a login's word naming something else: "the admin panel", "the password manager", "login streak")
    r"(?![ \t]+(?:panel|team|page|screen|guide|rights|interface|theme|manager|policy|policies|flow|streak|channel|feature"
    r"|url|console|tool|app|portal|docs?|section|chapter|settings|area|ui|view|link|button|form|field|rules|requirements"
    r"|strength|history|group|role|access|user|users|account|accounts|email|menu|mode|server)s?\b)"
    r"|密码(?!管理|策略|规则|强度)"
)
_LOGIN_WORDS = word_automaton("password|passcode|passphrase|pw|pwd|admin|login|密码".split("|"))
_NOW_IS = re.compile(
    r"(?i)(?<![a-z])(?:it['’]?s|it\s+is|(?:is|was)\s+now|now\s+it['’]?s)[ \t]+(?:now[ \t]+)?"
    r"[\"'“‘]?((?=[\w!@#$%^&*+\-.?~]*\d)(?=[\w!@#$%^&*+\-.?~]*[A-Za-z])[A-Za-z\d_!@#$%^&*+\-.?~]{6,30}?)"
    r"[\"'”’]?(?=[ \t]*(?:$|[\n,;:!?。，；：！？)—–]|\.(?!\w)|-[ \t]|now\b|instead\b|(?:with|all)\b))"
)
# Not a password: a version, a model, a date, a time, an amount.
_NOT_A_PASSWORD = re.compile(
    r"(?i)v?\d+(?:\.\d+)+|\d+(?:am|pm|gb|mb|kb|mph|km|kg|ms|px|st|nd|rd|th|s|x|days?|hours?|mins?|weeks?)|[a-z]{1,3}\d{1,3}"
    r"|[\w\-]+\.[a-z]{2,}(?:\.[a-z]{2,})*|v\d[\w\-]*"  # a host's name, a version
)
# What "it's now" also says of a login: a count, a product's name ("1Password8", "30days").
_NOW_NOT = re.compile(r"\d[\w\-]*")


# Worked out, then given: "the laptop password is the name of our first street with the house number
# after it, so Larkspur1146", "ledger pin is my old locker combo backwards so 629148", "so 'tesco42!'".
_SO = re.compile(
    r"(?i)(?:(?<![a-z])so[ \t,:]+(?:(?:this|that|it|the[ \t]+\w+)[ \t]+(?:one[ \t]+)?(?:is|['’]s)[ \t]+|it['’]s[ \t]+)?"
    r"|(?:所以|即|也就是说?)[ \t,:，：]*(?:就是|是)?[ \t]*)"  # "…加上日期，即 B0720240311", "所以就是3190"
    r"[\"'“‘「]?((?=[\w!@#$%^&*+\-.?~]*\d)[A-Za-z\d_!@#$%^&*+\-.?~]{4,30})[\"'”’」]?"
    r"(?=[ \t]*(?:$|[\n,;:!?)—–。，；！？）]|\.(?!\w)|(?:and|but|with|capital|all|figured|because|yes|which|for|too)\b))"
)
# How a value is worked out, in Chinese, before "即"/"所以" gives it: "批次号加上日期，即 …", "生日倒过来写".
_WORKED_OUT_ZH = re.compile(r"加上|加|拼起来|拼上|连起来|倒过来|反过来|倒着|后面跟|前面加|组合|生日|年份|日期|首字母")
_SO_DIGIT = re.compile(r"(?i)(?:(?<![a-z])so[ \t,:]+|所以|即|也就是)[^\n]{0,45}?\d")  # one "so" a digit follows
_SO_NAMES = re.compile(
    r"(?i)(?<![a-z])(?:password|passcode|passphrase|pin|pw|login|combo|combination|unlock"
    r"|(?:door|gate|alarm|lock|garage|entry|wi-?fi)\s+code|wi-?fi\s+key"
    # one value worked out from another, by its characters: "the same as the Mailchimp one but with
    # a 9 at the end … so this one is Orchard!Lane9", "same as the wifi, just add the flat number"
    r"|same\s+(?:as|number\s+as)\b(?=[^.\n]{0,60}?\b(?:but|just|plus|minus|reversed|backwards)\b))(?![a-z])|密码"
)
_CREDENTIAL = re.compile(r"(?i)pass|\bpw\b|\bpin\b|code|wi-?fi|lock|login|\bkey\b|combo|combination|密码|码|锁")
_SO_WORDS = word_automaton(
    "password|passcode|passphrase|pin|pw|login|combo|combination|unlock|code|key|same as|same number as|密码".split("|")
)


def prose_passwords(text: str, folded: str) -> list[SecretFinding]:
    """A password (letters and digits) a clause or a sentence after a login's word, said as what
    "it's now", or worked out and given after "so"."""
    if not _A_NUMBER.search(text):
        return []
    found: list[SecretFinding] = []
    now = "now" in folded or "it's" in folded or "it’s" in folded or "it is" in folded
    if now and any_word(_LOGIN_WORDS, folded):
        for n, login in enumerate(_LOGIN.finditer(text)):
            if n == MAX_LOCKS:
                break
            for m in _NOW_IS.finditer(text, login.end(), _window_end(text, login.end())):
                if not _NOT_A_PASSWORD.fullmatch(m.group(1)) and not _NOW_NOT.fullmatch(m.group(1)):
                    found.append(SecretFinding("password", *m.span(1)))
    so = " so" in folded or "所以" in folded or "即" in folded or "也就是" in folded
    if so and any_word(_SO_WORDS, folded) and _SO_DIGIT.search(text):
        credential: bool | None = None  # whether the text names a credential: looked for once, if asked
        for n, name in enumerate(_SO_NAMES.finditer(text)):
            if n == MAX_LOCKS:
                break
            for m in _SO.finditer(text, name.end(), _window_end(text, name.end())):
                value = m.group(1).rstrip(".?")  # (its sentence's end: "…, so Larkspur1146.")
                year = _YEARS.fullmatch(value) is not None and _A_YEAR.search(text, name.start(), m.start()) is None
                digits = value.isdigit() and len(value) >= 4  # ("64, so 128.": three digits, after its full stop)
                # Worked out from another value ("same as … but …"): an amount too ("same as last month
                # but plus VAT, so 1240") — unless it mixes three kinds or the text names a credential.
                worked = name.group(0)[:4].lower() == "same"
                if m.group(0)[0] in "所即也" and not _WORKED_OUT_ZH.search(text, name.end(), m.start()):
                    continue  # "…，即 AX3000" names a model; "工单号即 WO…": worked out only from something
                if worked and classes(value) < 3:
                    if credential is None:
                        credential = _CREDENTIAL.search(text) is not None
                    if not credential:
                        continue
                if not year and not _NOT_A_PASSWORD.fullmatch(value) and (len(value) >= 6 or digits):
                    found.append(SecretFinding("password", m.start(1), m.start(1) + len(value)))
    return found
