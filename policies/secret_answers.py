"""The answer to a security question: what a bank or a helpdesk asks to prove who someone is
("Mother's maiden name is Okonkwo", "first pet: Captain Wobbles", "问：您母亲的姓名？ 答：李秀珍").

Such an answer is a credential only where the text is about proving an identity (a security
question, a verification, a reset, an answer asked for); "my first car was a Fiat" in a chat
about cars is a fact about the user and stays. A maiden name is asked for nothing else.
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
# Where an answer proves an identity.
_CONTEXT = re.compile(
    r"(?i)security\s+(?:question|answer)s?|secret\s+question|verif|answer|reset|identity|密保|安全问题|验证"
)
_MAIDEN = re.compile(r"(?i)maiden")
# "is Okonkwo", "was called Biscuit", ": Captain Wobbles" — up to three words, capitalised or not.
_SAID = re.compile(
    r"(?i)[ \t]*(?:is|was|=|:|：|—|-)(?:[ \t]+(?:called|named))?[ \t]*"
    r"([A-Za-z][A-Za-z'’\-]+(?:[ \t]+(?!and\b|but\b|so\b)[A-Za-z][A-Za-z'’\-]+){0,2})"
)
_NOT_AN_ANSWER = frozenset(
    "the a an my your his her their our its not no never on in at of for and to be being required needed"
    " missing unknown wrong correct same set used asked".split()
)
# The next speaker's line after a question about it: "CALLER: Oh, um, St Bridget's."
_REPLY = re.compile(
    r"[^\n]*\?[^\n]{0,80}\n[ \t]*(?:[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*)"
    r"(?:(?:oh|um|uh|er|well|yeah|yes|ok|okay|it'?s)[,. \t]+)*([A-Za-z][A-Za-z'’\-]+(?:[ \t]+[A-Za-z][A-Za-z'’\-]+){0,2})"
)
# Chinese: a question and its answer ("问：您母亲的姓名？ 答：李秀珍") where the text says 安全问题/密保.
_ZH_ANSWER = re.compile(r"答[ \t]*[:：][ \t]*([^\s，。；;,]{1,20})")
_ZH_CONTEXT = re.compile(r"安全问题|密保")
MAX_QUESTIONS = 64


def security_answers(text: str) -> list[SecretFinding]:
    """Answers to security questions in ``text``, where it is about proving an identity."""
    found = []
    for n, m in enumerate(_QUESTION.finditer(text)):
        if n == MAX_QUESTIONS:
            break
        if not _MAIDEN.search(m.group(0)) and not _CONTEXT.search(text, max(0, m.start() - 200), m.end() + 200):
            continue
        said = _SAID.match(text, m.end())
        if said is None:
            said = _REPLY.match(text, m.end(), min(len(text), m.end() + 300))
        if said is not None and said.group(1).split()[0].lower() not in _NOT_AN_ANSWER:
            found.append(SecretFinding("security_answer", said.start(1), said.end(1)))
    if _ZH_CONTEXT.search(text):
        found.extend(SecretFinding("security_answer", a.start(1), a.end(1)) for a in _ZH_ANSWER.finditer(text))
    return found
