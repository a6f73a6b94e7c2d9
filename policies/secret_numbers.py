"""Whether digits stand alone as a value: not the end of a word, a path or an assignment, not a
time, an amount, a year or part of a longer number — what the cue and prose readers ask of a
number before they take it for a code; and the value of a code named by its length ("a 6-digit
code").
"""

from __future__ import annotations

import re

# Digits after these in a reply are a time, an amount or a count ("around 2130", "about 1500").
WHEN_OR_HOW_MUCH = re.compile(
    r"(?i)\b(?:around|at|by|until|till|before|after|since|about|in|on|for|over|under)\s+$|[~$€£¥]$"
)


def glued(text: str, at: int) -> bool:
    """Whether a value starting at ``at`` is the end of something else: a word, a path, an
    assignment, a quote, a call."""
    return at > 0 and re.match(r"[A-Za-z0-9_.\-/=:$\"`(*]", text[at - 1]) is not None


def plain_number(text: str, start: int, span: tuple[int, int]) -> bool:
    """Whether digits at ``span`` stand alone as a value: not inside a word or after "=", nor a
    time, an amount or a year."""
    if glued(text, span[0]) or YEAR.fullmatch(text, *span):
        return False
    if re.match(r"[ \-]?\d", text[span[1] : span[1] + 2]) or re.search(
        r"\d[ \-]$", text[max(0, span[0] - 2) : span[0]]
    ):
        return False  # part of a longer number (a card's)
    before = text[max(start, span[0] - 16) : span[0]]
    return WHEN_OR_HOW_MUCH.search(before) is None and EXAMPLE.search(before) is None


EXAMPLE = re.compile(r"(?i)(?:e\.g\.|such\s+as|like|for\s+example|比如|例如|像)\s*$")

YEAR = re.compile(r"(?:19|20)\d\d")


# "a 6-digit code", "four-digit PIN": the length a code is named by.
N_DIGIT_CODE = re.compile(r"(?i)(four|six|eight|4|6|8)[\s\-]digits?\s+(code|pin|passcode|otp)")
_DIGITS_NAMED = {"four": 4, "six": 6, "eight": 8, "4": 4, "6": 6, "8": 8}
_SENT_BEFORE = re.compile(r"(?i)\b(?:sent|texted|emailed|messaged|received|came|arrived|sms(?:ed)?)\b|发了|发来|收到")
_OPENS_AFTER = re.compile(
    r"(?i)[ \t]+(?:to[ \t]+(?:unlock|open|get[ \t]+in|disarm|log[ \t]+in|sign[ \t]+in)"
    r"|for[ \t]+the[ \t]+(?:door|gate|lock|safe|alarm))\b"
)
_SAID_TO_BE = r"(?:is|was|it['’]?s|[:：=])"


def code_of_its_length(
    text: str, name: re.Match[str], at: int, sentence_start: int, limit: int
) -> tuple[int, int] | None:
    """The value of a code named by its length (``name``: :data:`N_DIGIT_CODE` matched at ``at``):
    that many digits, spaced or run together, said to be it right after its name (a PIN's, a
    passcode's or an OTP's also with nothing between: "my 4-digit PIN 4471"), or a clause on, before
    ``limit``, where its sentence (from ``sentence_start``) says it was sent or says what it opens —
    "sent a 6-digit code to the club mobile, it's 774120", "a 4-digit code to unlock it — it's 6 3 6
    3"; never "a 6-digit code to 07700 900123" nor "from 1000 to 9999"."""
    n = _DIGITS_NAMED[name.group(1).lower()]
    digits = rf"(\d(?:[ \-]?\d){{{n - 1}}})(?![\d\-])"
    bare = name.group(2).lower() != "code"
    end = at + name.end()
    right_after = re.compile(rf"(?i)[ \t]*(?:{_SAID_TO_BE}[ \t]*{'?' if bare else ''}){digits}")
    if (m := right_after.match(text, end)) is not None:
        return m.span(1)
    if _SENT_BEFORE.search(text, sentence_start, at) is None and _OPENS_AFTER.match(text, end) is None:
        return None
    later = re.compile(rf"(?i)(?<![A-Za-z]){_SAID_TO_BE}[ \t]*{digits}")
    return m.span(1) if (m := later.search(text, end, limit)) is not None else None
