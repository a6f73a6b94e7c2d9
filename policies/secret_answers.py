"""The answer to a security question: what a bank or a helpdesk asks to prove who someone is
("Mother's maiden name is Okonkwo", "first pet: Captain Wobbles", "问：您母亲的姓名？ 答：李秀珍").

Such an answer is a credential only where the text is about proving an identity (a security
question, a verification, a reset, an answer asked for); "my first car was a Fiat" in a chat
about cars is a fact about the user and stays, as does a maiden name in a family tree.
"""

from __future__ import annotations

import re

from memwarden.policies.secret_kinds import SecretFinding

_QUESTION = re.compile(
    r"(?i)\b(?:mother'?s\s+maiden\s+name|maiden\s+name"
    r"|(?:first|childhood)\s+(?:pet|dog|cat|car|school|teacher|street|job|best\s+friend|concert)(?:'s\s+name)?"
    r"|street\s+(?:you|i)\s+grew\s+up\s+on|city\s+(?:you\s+were|i\s+was)\s+born(?:\s+in)?"
    r"|favou?rite\s+(?:teacher|childhood\s+\w+))\b"
)
# Where an answer proves an identity, near the question (a maiden name too: genealogy has them).
_CONTEXT = re.compile(
    r"(?i)security\s+(?:question|answer)s?|secret\s+question|verification|\bto\s+verify\b"
    r"|verify(?:ing)?\s+(?:your|my|the|their|his|her)\s+(?:identity|account)|identity\s+check"
    r"|(?:account|password|bank(?:ing)?)\s+(?:reset|recovery)|\banswer\s+(?:to|for)\b|\bpassword\b|密保|安全问题"
)
# "is Okonkwo", "was called Biscuit", ": Captain Wobbles" — a name: up to three capitalised words.
_SAID = re.compile(
    r"[ \t]*(?:(?:is|was)\b|=|:|：|—|-)(?:[ \t]+(?:called|named)\b)?[ \t]*"
    r"([A-Z][A-Za-z'’\-]+(?:[ \t]+[A-Z][A-Za-z'’\-]+){0,2})(?![ \t]*[A-Za-z])"
)
# The next speaker's line after a question about it: "CALLER: Oh, um, St Bridget's."
_REPLY = re.compile(
    r"[^\n]*\?[^\n]{0,80}\n[ \t]*(?:[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*)"
    r"(?:(?:oh|um|uh|er|well|yeah|yes|ok|okay|it'?s)[,. \t]+)*([A-Za-z][A-Za-z'’\-]+(?:[ \t]+[A-Za-z][A-Za-z'’\-]+){0,2})"
)
_NOT_AN_ANSWER = frozenset("the a an my your his her their our its not no never which what who how why".split())
# Chinese: a question and its answer ("问：您母亲的姓名？ 答：李秀珍") under 密保 or a bank's security questions.
_ZH_ANSWER = re.compile(r"答(?:案)?[ \t]*[:：][ \t]*([^\s，。；;,]{1,20})")
_ZH_CONTEXT = re.compile(r"密保|预留[^\n]{0,8}安全问题|安全问题答案")
MAX_QUESTIONS = 64


def security_answers(text: str) -> list[SecretFinding]:
    """Answers to security questions in ``text``, where it is about proving an identity."""
    found = []
    for n, m in enumerate(_QUESTION.finditer(text)):
        if n == MAX_QUESTIONS:
            break
        if not _CONTEXT.search(text, max(0, m.start() - 120), m.end() + 120):
            continue
        said = _SAID.match(text, m.end())
        if said is None:
            said = _REPLY.match(text, m.end(), min(len(text), m.end() + 300))
        if said is not None and said.group(1).split()[0].lower() not in _NOT_AN_ANSWER:
            found.append(SecretFinding("security_answer", said.start(1), said.end(1)))
    if (context := _ZH_CONTEXT.search(text)) is not None:
        for n, a in enumerate(_ZH_ANSWER.finditer(text, context.start())):
            if n == MAX_QUESTIONS:
                break
            found.append(SecretFinding("security_answer", a.start(1), a.end(1)))
    return found
