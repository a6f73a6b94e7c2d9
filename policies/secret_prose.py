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
"""

from __future__ import annotations

import re

from memwarden.policies.secret_cues import NAMED_NUMBER, any_word
from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_values import SAID, WHEN_OR_HOW_MUCH
from memwarden.policies.secret_words import BRIDGE_END

# What a code opens (a door's or a gate's code named loosely too; "code" alone is the cues' — a
# program's code, an error's, a zip's are not a lock's).
_LOCK = re.compile(
    r"(?i)(?<![a-z])(?:key\s?safe|key\s?box|lock\s?box|padlock|lock|keypad|key\s?pad|alarm|panel|dials"
    r"|combination|combo|door\s+code|gate\s+code)s?(?![a-z])|门禁|键盘|面板|挂锁|密码锁|(?<![连封])锁(?!骨)|报警器|保险柜"
)
# Which of them turn a dial: three digits run together are their value ("the padlock is 246").
_DIAL = re.compile(r"(?i)padlock|lock|dial|combination|combo|挂锁|锁|保险柜")
_LOCK_WORDS = word_automaton(
    "safe|box|lock|keypad|key pad|alarm|panel|dial|combination|combo|door code|gate code"
    "|门禁|键盘|面板|锁|报警器|保险柜".split("|")
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
    r"(?i)[ \t]*(?:$|[\n.,;:!?。，；：！？)）\"'”’—–\-]|(?:and\s+)?then\b|and\b|press|hit|enter|push|followed|#|hash|star|pound"
    r"|to\s+(?:open|unlock|disarm|get\s+in)|for\s+the\b|on\s+the\s+keypad|再|然后|按|就|井号|，|、)"
)
# Named as something else just before it: a model, a reference, a meter's reading, a key's number.
_NAMED_BEFORE = re.compile(
    r"(?i)model|no\.|\bref|invoice|order|\btel|phone|\bflat|\broom|meter|reading|\belec|\bgas\b|account|numbered"
    r"|serial|\bcall|\bring|\bdial|\bprice|\bcost|\bpaid|\bcharged|\bspent|\bran\s+us|\bflight|\bplatform"
    r"|栋|单元|楼|室|房|号|价|加|费|售|[¥￥$£€]|一年|每月|花了|一共|总共|电话|热线|\d[ \t]*[x×][ \t]*\Z"
)
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
    if _NAMED_BEFORE.search(before) or not _THEN.match(text, span[1]):  # (a unit after it is a word: no _THEN)
        return False
    if _TO.search(before) and value == text[span[0] : span[1]]:
        return False  # a dial or a setting turned to a number: "dials to 200", "set to 180"
    if re.fullmatch(r"(?i)alarms?|报警器", lock.group(0)) and _A_TIME.fullmatch(value) and not _A_PANEL.search(window):
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
