"""A short reply that names when — a day, a clock time, a date — as a statement of fact of its own
kind (``when``): the appointments and routines agreed in chat ("Wednesdays", "4pm it is", "周三下午").
Asked by ``policies/facts.py`` when no other statement is found."""

from __future__ import annotations

import re

from memwarden.policies.facts_zh import CJK

# A short reply that names a day, a clock time or a date is an appointment or a routine agreed in
# chat ("Wednesdays", "4pm it is", "the 17th works", "周三下午", "下午四点吧"): kept however short.
# Not a greeting that names the day ("happy friday"), not a time of arrival ("5 mins", "omw").
_MONTH = (
    r"(?:jan(?:uary)?|feb(?:ruary)?|mar(?:ch)?|apr(?:il)?|may|june?|july?|aug(?:ust)?|sep(?:t(?:ember)?)?|"
    r"oct(?:ober)?|nov(?:ember)?|dec(?:ember)?)\.?"
)
_WHEN_WORD = re.compile(
    r"\b(?:(?:mon|tues|wednes|thurs|fri|satur|sun)days?|noon|midnight)\b"
    r"|(?<![\d:.])\d{1,2}(?::\d{2})?\s?(?:(?:am|pm)\b|a\.m\.|p\.m\.)"
    r"|(?:^|\b(?:at|by|from|until|till|around|before|after)\s+)\d{1,2}:\d{2}\b(?![:.]\d)"
    r"|\bsee (?:you|u|ya|y'all) (?:at|around|by) \d{1,2}\b(?![:.,]?\d)"
    r"|\b(?:the\s+)?\d{1,2}(?:st|nd|rd|th)\b(?!\s+(?:place|floor|grade|quarter|time|times|attempt|try|avenue|"
    r"ave|street|st|round|year|birthday|anniversary|century|edition|period|inning|lap|row|seat|gen|generation))"
    rf"|\b{_MONTH}\s+\d{{1,2}}(?:st|nd|rd|th)?\b|\b\d{{1,2}}(?:st|nd|rd|th)?\s+{_MONTH}(?![a-z])"
    r"|(?:周|星期|礼拜)[一二三四五六日天]"
    r"|(?:早上|上午|中午|下午|晚上|傍晚|凌晨|明早|今晚|明晚)[一二三四五六七八九十两\d]{1,3}点"
    r"|[一二三四五六七八九十两\d]{1,3}点(?:半|钟|[一二三四五]十分?|\d{1,2}分?|(?:到|至)[一二三四五六七八九十两\d]{1,3}点)"
    r"|[一二三四五六七八九十\d]{1,2}月[一二三四五六七八九十\d]{1,3}[号日]"
    r"|(?<![\d一二三四五六七八九十])[一二三四五六七八九十\d]{1,3}号(?![线楼电池门位机床房柜窗口])"
)
# Not an appointment: a greeting or a mood that names the day, an arrival, work under way or a
# log line's time, a question (a Chinese particle or an opener without its mark), a proposal.
_NOT_WHEN = re.compile(
    r"\b(?:happy|good (?:morning|night|evening|afternoon|weekend|luck)|have a (?:good|great|nice|lovely)|tgif|"
    r"thank|thanks|bye|cya|vibes|mood|blues|at last|min|mins|minutes?|secs?|hours?|hrs?|late|"
    r"omw|eta|ago|yesterday|today|now|soon|sorry|again|lol|ugh|hate|love|already|write|welcome|info|debug|"
    r"error|warn|back at|be there|on my way|failing|failed|fails|started|starting|stopped|running|worker|"
    r"deploy\w*|build|migration|cron|job|backup|release|server|ticket|review|attempt)\b"
    r"|^(?:how about|what about|does|do|did|is|are|can|could|will|would|shall|should|you free|r u|are you|any)\b"
    r"|^(?:it'?s|its|it is)\s+(?:finally\s+)?(?:mon|tues|wednes|thurs|fri|satur|sun)day\b(?!\s+(?:then|it is))"
    r"|[?？\[]|快乐|辛苦|晚安|早安|好[！!]|分钟|马上|迟到|几点|收到|大家|加油|好烦|啦|上线|部署|发版"
)
_WHEN_MAX_WORDS = 6
_WHEN_MAX_CJK = 12


def names_when(text: str) -> bool:
    """Whether ``text`` (prepared) names a day, a clock time or a date."""
    return _WHEN_WORD.search(text) is not None


def when_reply(body: str, *, asks: bool) -> bool:
    """Whether ``body`` (prepared, emoji removed) is a short reply that names when; ``asks``: the
    caller found a question in it (a Chinese particle, an A-not-A question)."""
    if asks or not names_when(body) or _NOT_WHEN.search(body) is not None:
        return False
    cjk = len(CJK.findall(body))
    return len(body.split()) <= _WHEN_MAX_WORDS and cjk <= _WHEN_MAX_CJK
