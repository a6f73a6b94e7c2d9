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
    r"|street\s+(?:you|i)\s+grew\s+up\s+on|street\s+did\s+(?:you|i)\s+grow\s+up\s+on"
    r"|city\s+(?:where\s+)?(?:you\s+were|i\s+was)\s+born(?:\s+in)?"
    r"|favou?rite\s+(?:teacher|childhood\s+\w+)|memorable\s+(?:word|question)|security\s+word"
    r"|security\s+question\s+answer"
    r"|answer\s+to\s+(?:my|your|the)\s+security\s+question|(?:your|my)\s+(?:primary|elementary|junior)\s+school|answer\s+(?:you|we|i)\s+set)\b"
)
# Where an answer proves an identity, near the question (a maiden name too: genealogy has them).
_CONTEXT = re.compile(
    r"(?i)security\s+(?:question|answer)s?|secret\s+question|verification|\bto\s+verify\b"
    r"|(?:verify(?:ing)?|confirm(?:ing)?)\s+(?:your|my|the|their|his|her)\s+(?:identity|account)|identity\s+check"
    r"|(?:account|password|bank(?:ing)?)\s+(?:reset|recovery)|\banswer\s+(?:to|for)\b|\bpassword\b|密保|安全问题"
    r"|\bfor\s+security\b|security\s+(?:check|purposes)|\bthe\s+reset\b|核实身份|验证身份"
    # a caller checked: "caller verified", "they asked her first school", "in case they ask"
    r"|\b(?:pet|name|school|car|street|teacher|word)['’\"”]?\s+answers?\b|\b(?:the|my|your)\s+bank\s+(?:ever\s+)?asks?\b|recovery\s+question|\bon\s+file\b|\bthey(?:['’]ll|\s+will)\s+ask\b|\bhelpline\b|\bverified\b|\b(?:they|she|he)\s+asked\b|\bin\s+case\s+they\s+ask|account\s+holder|memorable\s+word"
)
# "is Okonkwo", "was called Biscuit", ": Captain Wobbles" — a name: up to three capitalised words.
_SAID = re.compile(
    r"[ \t]*+(?:\?(?=['’\"”][ \t]*+[—–:\-]))?+['’\"”)]?+[ \t]*+(?:(?:is|was)\b|=|:|：|—|-|→|(?:given|provided)[ \t]*+[:：]|(?=['‘\"“]?[A-Z])"
    r"|,?+[ \t]*+(?i:(?:so[ \t]++)?(?:i|we|she|he|they)[ \t]++(?:put|typed|entered|said|wrote|answered|gave|used))\b)"
    r"(?:[ \t]++(?:called|named)\b)?+[ \t]*+['‘\"“]?+"
    r"([A-Z][A-Za-z\-]+(?:['’][A-Za-z]+)?(?:[ \t]+[A-Z][A-Za-z'’\-]+){0,2})(?![ \t]*[A-Za-z])"
)
# "… and the answer we set is Ferreira"
_ANSWER_IS = re.compile(
    r"(?i:\banswers?\b(?:[ \t]+\w+){0,3}?[ \t]+(?:is|was)|\banswers?[ \t]*[:：])[ \t]*['‘\"“]?"
    r"([A-Z][A-Za-z\-]+(?:['’][A-Za-z]+)?(?:[ \t]+[A-Z][A-Za-z'’\-]+){0,2})(?![ \t]*[A-Za-z])"
)
# Later in its sentence, what someone put as the answer: "Security question 'name of your first pet'
# on the bank app — I put Doudou", "'memorable word' — I used hopscotch —", "security question 'first
# school' 我填的是 Hope Primary".
_PUT = re.compile(
    r"(?:\b(?i:i|we|she|he|they)[ \t]+(?i:put|typed|entered|used|chose|gave|said|answered)(?:[ \t]+(?i:it[ \t]+)?as)?"
    # "I set it to Pemberton", "we made it Lucky Penny"; after the question, "…, it's Biscuit"
    r"|\b(?i:i|we|she|he|they)[ \t]+(?i:set[ \t]+it[ \t]+(?:to|as)|made[ \t]+it)"
    r"|(?<=[,;—–-])[ \t]*(?i:it['’]s|it[ \t]+(?:is|was))"
    r"|(?:我|他|她)?(?:填|写|设|答)的是)[ \t]*+"
    r"(?:['‘\"“]([^'’\"”\n]{2,40})['’\"”]"
    r"|([A-Z][A-Za-z\-]+(?:['’][A-Za-z]+)?(?:[ \t]+[A-Z][A-Za-z'’\-]+){0,2})(?![ \t]*(?!as\b|and\b|but\b|when\b|so\b|because\b|since\b|if\b)[A-Za-z])"
    r"|([a-z]{4,20})(?=[ \t]*[—–)]))"
)
_PUT_REACH = 60  # characters after the question, in its sentence
# The next speaker's line after a question about it: "CALLER: Oh, um, St Bridget's."
_REPLY = re.compile(
    r"[^\n]*\?[^\n]{0,80}\n[ \t]*(?:[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：][ \t]*)"
    r"(?:(?:oh|um|uh|er|well|yeah|yes|ok|okay|it'?s)[,. \t]+)*([A-Za-z][A-Za-z'’\-]+(?:[ \t]+[A-Za-z][A-Za-z'’\-]+){0,2})"
)
_SENTENCE_END = re.compile(r"[.!?](?:\s|$)|[。！？\n]")
_NOT_AN_ANSWER = frozenset(
    "the a an my your his her their our its not no never which what who how why"
    # what is said of a question, not its answer: "…, it's Optional", "I set it to Private"
    " ok okay fine optional mandatory required compulsory necessary private public personal secret"
    " case-sensitive sensitive deprecated enabled disabled true false yes none blank empty same different"
    " important easy hard simple secure insecure unknown wrong correct right good bad".split()
)
# Chinese: a question and its answer ("问：您母亲的姓名？ 答：李秀珍") under 密保 or a bank's security questions.
_ZH_ANSWER = re.compile(
    r"答(?:案)?[^：:\n，。]{0,4}?[ \t]*[:：][ \t]*([^\s，。；;,/]{1,20})|答案(?:是|为)[ \t]*([^\s，。；;,/]{1,20})"
    r"|答案[ \t]*([\u4e00-\u9fff]{2,4})(?=$|[\s，。；;,])"  # "答案王秀兰"
    r"|(?:填|写|设)的是[ \t]*([\u4e00-\u9fff]{2,4})(?=$|[\s，。；;,、])"  # "“你母亲的姓名”我填的是赵桂兰，"
)
# (not a bare 安全问题: "本周安全问题复盘" reviews a safety issue)
_ZH_CONTEXT = re.compile(
    r"密保|预留[^\n]{0,8}安全问题|安全问题答案|(?i:security\s+question)|(?:银行|客服|坐席|柜台)[^\n]{0,10}安全问题"
)
# Also, within a few lines of it, the answer given in quotes ("我填的是“钱”") or in the next speaker's
# line after the question, where the question itself is about it ("…安全问题“您母亲的姓名”答案是？").
_ZH_QUOTED = re.compile(
    r"(?:(?:填|答|设|写)的?是|姓名|名字|答案(?:填|写|设)?(?:成|为)?|(?:填|写|设)(?:成|为))[ \t]*+[“\"「『][ \t]*+([^”\"」』\s][^”\"」』\n]{0,19}?)[ \t]*+[”\"」』]"
)
_ZH_REPLY = re.compile(
    r"(?:安全问题|密保|预留|核实|验证|答案)[^\n？?。！!]{0,40}[？?][^\n]{0,20}\n[ \t]*+[A-Za-z\u4e00-\u9fff][\w .()'\-]{0,29}[:：]"
    r"[ \t]*+(?:嗯|哦|呃|是)?+[，, \t]*+([^\s，。；;,？?！!：:]{1,12})"
)
_ZH_REACH = 240  # characters after the context an answer is read in
# What no one sets as an answer: "好的", "忘了", "不知道", "随便", "默认" …
_ZH_NOT_AN_ANSWER = re.compile(
    r"好的?|忘了|忘记了|不知道|不记得了?|随便|默认|待定|稍等|没有|无|什么|啥|嗯|哦|对|是的?|不是"
    # a description of the answer or a reply about something else: "你第一所小学的名字", "会全额退款"
    r"|[你您].*|.*(?:名字|什么|哪里|哪个|退款|处理).*"
    # how an answer is made or where it is, not the answer: "身份证后六位", "字母+数字", "拼音全拼", "见纸条"
    r"|.*(?:后[四六]位|位数|全拼|拼音|组合|格式|数字|字母|手机号|身份证|泄露|纸条|姓名|生日|同上|一样).*|见.*"
)
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
            said = _ANSWER_IS.search(text, m.end(), min(len(text), m.end() + 80))
        if said is None:
            said = _REPLY.match(text, m.end(), min(len(text), m.end() + 300))
        if said is None:
            stop = _SENTENCE_END.search(text, m.end(), min(len(text), m.end() + _PUT_REACH))
            said = _PUT.search(text, m.end(), stop.start() if stop else min(len(text), m.end() + _PUT_REACH))
        g = next((i for i in range(1, (said.re.groups or 0) + 1) if said.group(i) is not None), 0) if said else 0
        words = said.group(g).split() if said is not None else []
        if said is not None and words and words[0].lower() not in _NOT_AN_ANSWER:
            found.append(SecretFinding("security_answer", said.start(g), said.end(g)))
    if (context := _ZH_CONTEXT.search(text)) is not None:
        reach = min(len(text), context.end() + _ZH_REACH)
        for pattern in (_ZH_ANSWER, _ZH_QUOTED, _ZH_REPLY):
            for n, a in enumerate(pattern.finditer(text, context.start(), reach)):
                if n == MAX_QUESTIONS:
                    break
                g = next(i for i in range(1, (a.re.groups or 0) + 1) if a.group(i) is not None)
                if not _ZH_NOT_AN_ANSWER.fullmatch(a.group(g)):
                    found.append(SecretFinding("security_answer", a.start(g), a.end(g)))
    return found
