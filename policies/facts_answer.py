"""A short reply and the question it answers: "27" after "how old r u", "philly" after "where u
from", "Raj" after "who's your buddy for onboarding?", "白色的拍立得" after "你生日想要啥".

Read alone such a reply says nothing, and the length rule takes it for noise; read after its
question it is a fact. The question is the turn before the reply in the same conversation (the
previous segment of a transcript, the previous item of a request, or the previous retain of the
conversation: ``governance/turns.py``). Only a question that asks for something — who, what, where,
when, how old, how many, which, do you have … — makes its answer a fact; "how are you?", "what's
up?", "how was it?", a proposal or a request to the listener does not. And only a reply that
carries something — a name, a number, a place, a thing — is an answer: "ok", "lol", "not sure",
"good", "you?" are not, whatever was asked.

Pure functions over text; ``answers`` takes the question as written and the reply in the
quality rules' prepared form (NFKC, casefolded, whitespace collapsed)."""

from __future__ import annotations

import re
import unicodedata

from memwarden.policies.facts_zh import CJK
from memwarden.policies.segments import speaker

# What is read of the turn before: its last sentence, from the end of at most this many characters.
QUESTION_TAIL = 300
_SPACES = re.compile(r"\s+")
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]+|\[[^\]\s]{1,6}\]")  # and [捂脸]-style stickers
# The last sentence: after the last full stop, exclamation or question mark that has text after it.
_LAST_SENTENCE = re.compile(r"(?:^|[.!?。！？\n]\s*)(?P<last>[^.!?。！？\n]+[.!?。！？…~～]*[\s\"'”’」』)]*)$")

# A question that asks for a fact. English: a wh-word, or an auxiliary and a person ("do you have …",
# "is she …", "r u …"); chat spellings without the mark ("where u from", "whats ur discord").
_EN_ASKS = re.compile(
    r"^(?:(?:so|and|but|oh|ok|okay|wait|btw|also|hey|hmm|lol|haha|omg|nice|cool|wow|aw+|yay)[,!.\s]+)*"
    r"(?:what|whats|what's|which|where|wheres|where's|who|whos|who's|whose|whom|when|whens|when's|"
    r"how (?:old|many|much|long|far|often|tall|big|soon)|what time|"
    r"(?:do|does|did|have|has|had|are|is|was|were|will|r|can)\s+"
    r"(?:you|u|ya|he|she|they|your|ur|his|her|their|the kids?))\b"
)
# Questions that ask for nothing a memory would hold: how someone is, a reaction, a proposal, a request.
_EN_SMALL_TALK = re.compile(
    r"\b(?:how (?:are|r) (?:you|u|ya)|how(?:'s| is| was|s) (?:it going|things|life|everything|your day|your weekend|"
    r"work|the trip|it)|how was|how have (?:you|u) been|what(?:'s| is|s) up|whats good|sup|wyd|"
    r"what are (?:you|u) (?:up to|doing)|"
    r"what do (?:you|u) (?:think|mean|reckon)|what happened|what(?:'s| is|s) wrong|what about (?:you|u)|"
    r"are (?:you|u) (?:ok|okay|alright|sure|serious|kidding|free|around|up|awake|there|home yet|coming)|"
    r"is (?:it|that) (?:ok|okay|true|fine|good|bad|weird)|you (?:ok|good|there)|"
    r"^(?:right|really|ready|seriously|srsly)|"
    r"(?:can|could|will|would) (?:you|u) (?:please|send|check|help|tell|remind|look|do|make|call|text|grab|pick|bring)|"
    r"(?:do|did) (?:you|u) (?:see|hear|get|like|love|want|wanna|mind|remember|know what)|"
    r"have (?:you|u) (?:seen|heard|tried|eaten)|when (?:are|r) (?:you|u) (?:free|back|coming|home|leaving|around)|"
    r"where (?:are|r) (?:you|u)(?! (?:from|based|living|staying|working|studying|these days|nowadays))|"
    r"what time is it|what(?:'s| is|s) the (?:time|weather)|who(?:'s| is|s) (?:calling|there|at the door)|"
    r"today|tonight|tomorrow|right now|rn|this morning|wanna|want to|shall we|should we|how about|what if|why)\b"
)
# A question for a credential: its answer is a secret, never a memory ("hunter2" after "what's the
# wifi password?": alone too short, and the secret scan cannot see what the question names).
_CREDENTIAL = re.compile(
    r"\b(?:password|passwd|passcode|passphrase|pin|pin code|otp|2fa|mfa|token|api key|secret|ssn|"
    r"social security|card number|cvv|cvc|account number|routing number|iban|login|"
    r"(?<!zip )(?<!postal )(?<!area )(?<!post )(?<!country )code)s?\b|密码|验证码|口令|卡号|身份证|账号|帐号|密钥"
)
# A reply that is itself a question without its mark: a wh-word and a verb or a person after it ("where
# u from", "whats yours", "how old r u"), or a verb before its subject ("do u have kids"). Not a
# clause that answers ("when I was 12", "what I always get, a flat white").
_EN_QUESTION = re.compile(
    r"^(?:(?:what|where|who|which|when|how|why)(?:'s|s|’s)?\s+(?:is|are|r|do|does|did|was|were|u|you|ur|your|yours|"
    r"about|old|many|much|long|far)\b|(?:what|where|who)(?:'s|’s)\s|"
    r"(?:do|does|did|are|is|r|can|will|have|has)\s+(?:you|u|ya|he|she|they|we)\b)"
)
_CHOICE = re.compile(r"(?P<a>\w+)\s+or\s+(?P<b>\w+)")
_ZH_ASKS = re.compile(
    r"什么|啥|哪|几|谁|多少|多大|多久|多长|多远|怎么称呼|有没有|是不是|\S还是\S|(?:吗|么|呢)[。.!！~～?？]*$|是[?？]+$"
)
_ZH_AND_YOU = re.compile(r"^(?:那|那么)?你呢[，,。\s]+(?=\S)")
# Without its mark a Chinese question stays short ("你生日想要啥"); a longer sentence with 几 or 啥 in
# it is a statement ("我这几天在补 paper").
_ZH_UNMARKED_MAX = 12
_ZH_SMALL_TALK = re.compile(
    r"在吗|在不在|你好吗|还好吗|好吗|吃了吗|吃饭了吗|睡了吗|怎么样|怎么了|咋了|干嘛|干啥|忙吗|忙啥|你呢|对吧|是吧|真的吗|"
    r"可以吗|行吗|好不好|行不行|要不要|能不能|可不可以|为什么|为啥|怎么办|怎么回事|什么意思|啥意思|去不去|来不来|"
    r"帮我|帮忙|发我|发给我|看到了吗|收到了吗|听说了吗|知道吗|记得吗|懂吗|明白吗|今天|今晚|明天|明早|明晚|刚才|"
    r"现在几点|几点了|几点啦|方便吗|有空吗|有时间吗|天哪|(?:发|来|拍|说|写|聊)几|(?:看到|收到|听说|听到)[^。！？?!]*吗|"
    r"你(?:现在)?在哪(?:儿|里)?(?:呢|啊|呀)?[?？]?$"
)

# A reply that carries nothing, whatever was asked: an acknowledgement, a laugh, a mood, a hedge, a
# question back. Checked on the reply's words with its punctuation and emoji gone.
_EMPTY_WORDS = frozenset(
    """yes yeah yea yep yup ya ye yess yas no nope nah naw ok okay k kk sure fine good great nice cool
    awesome amazing perfect same too me you u hbu wbu and or but not bad pretty idk dunno maybe
    probably lol lmao lmfao rofl haha hahaha hah heh hehe thanks thank ty thx tysm np sorry hmm
    hm wow omg ugh sad tired meh busy alright will do done on it sounds works for bet word true
    fair right exactly of course definitely absolutely why what huh cute oh ah aw awww yay
    nothing much all well ish so kinda sorta lots tons a an the is its it's that thats that's i
    i'm im am was were be been just really very super totally honestly um uh er both either
    neither none some any more less happy excited stressed depends guess think hope wish soon
    later tomorrow today tonight now yet already again still sometimes never always ever tbh ngl
    fr imo mostly kind lowkey highkey literally actually basically quite rather bit little lot
    many thing things stuff going doing better worse terrible awful horrible excellent fantastic
    wonderful lovely brilliant sweet dope lit sick rough hard tough crazy insane wild weird
    funny hilarious boring gotcha got noted understood agreed indeed whatever nvm nevermind hi
    hello hey bye night morning gn gm xoxo xo love miss hug hugs congrats congratulations yikes
    oops damn dang shoot jeez geez bruh bro dude man girl sis mate buddy pal he she they him her
    them we us our my mine your yours his hers their in at to with about from by as if then than
    this these those there here can could would should might must may have has had get know see
    say tell let truly ikr omw okie okey oki yh yeh mhm mmm uh-huh yessir nop""".split()
)
_EMPTY_ZH = re.compile(
    r"^(?:好的?|嗯+|恩+|哦+|噢+|对的?|是的?|没有|不是|不知道|不清楚|不确定|还行|还好|可以|行|没事|哈+|呵+|谢谢|多谢|好吧|随便|都行|"
    r"不错|挺好|累|忙|对啊|当然|收到|没问题|一般|还可以|算了|等下|稍等|马上|晚点|明天|今天|现在|你呢|你猜|保密|秘密|"
    r"有|有的|没|没呢|不|不要|要|想|不想|会|不会|能|不能|喜欢|不喜欢|难说|看情况|再说|差不多|挺多|很多|好多|一些|"
    r"开心|难过|烦|困|饿|还没|快了|已经|也是|一样|同上|哈哈哈+|再等|等我|稍后|回头|h+|我我我)[啊呀吧呢啦哦噢嘛了～~！!。.，,\s]*$"
)
# A reply that answers without telling: a hedge, an evasion, a question back, a "still waiting".
_EN_EVASION = re.compile(
    r"\b(?:no idea|not sure|no clue|who knows|don'?t know|dont know|don'?t care|idc|idk|dunno|whatever|whatevs|"
    r"(?:i'?ll|let me|lemme|gotta|need to|i need to) (?:check|ask|see|think|find out|look)|good question|up to you|"
    r"you (?:pick|choose|decide|tell me)|doesn'?t matter|not telling|none of your business|nunya|"
    r"still (?:waiting|deciding|thinking|figuring)|not yet|tbd|tba|we'?ll see)\b"
)
_ZH_EVASION = re.compile(
    r"你猜|你管我|不告诉你|干嘛|为啥|啥关系|什么意思|咋了|吗|看着办|你挑|你定|你决定|你说了算|说来话长|再想想|想想|考虑一下|"
    r"还在等|在等|等通知|还没定|没定|还不知道|不好说|再说吧|到时候再说|回头再说|问问|都行|随便|无所谓|再等|等我|一会儿|晚点|^还没|"
    r"^没(?:啥|什么)"
)
_WORD = re.compile(r"[a-z0-9][a-z0-9'’\-#@.]*")
# Where someone is or when they arrive, right now ("5 mins away", "omw", "马上到").
_TRANSIENT = re.compile(r"\b(?:mins?|minutes?|secs?|omw|eta|brb|gtg|asap|away)\b|分钟|马上到|在路上")
_PARTS = re.compile(r"[\s,，。.!！~～、]+")
_MAX_WORDS = 8
_MAX_CJK = 16


def _plain(text: str, *, fold: bool = True) -> str:
    plain = _SPACES.sub(" ", _EMOJI.sub(" ", unicodedata.normalize("NFKC", text))).strip()
    return plain.casefold() if fold else plain


def fact_question(text: str) -> str | None:
    """The question at the end of ``text`` (a turn as written), its sentence as written (NFKC, emoji
    and extra spaces gone), when it asks for a fact; None when the turn does not end in one."""
    _, body = speaker(text[-QUESTION_TAIL:])
    plain = _plain(body, fold=False)
    if not plain:
        return None
    found = _LAST_SENTENCE.search(plain)
    last = (found.group("last") if found else plain).strip(" \"'”’」』)")
    asked = _asks(last)
    if asked is None and not last.endswith(("?", "？")) and found is not None and found.start("last") > 0:
        # A question and an aside after it ("where are you these days? haven't seen you in forever").
        earlier = _LAST_SENTENCE.search(plain[: found.start("last")].rstrip())
        if earlier is not None and earlier.group("last").rstrip().endswith(("?", "？")):
            asked = _asks(earlier.group("last").strip(" \"'”’」』)"))
    return asked


def _asks(last: str) -> str | None:
    """``last`` (one sentence, as written) when it is a question that asks for a fact."""
    folded = last.casefold()
    if _CREDENTIAL.search(folded):
        return None
    marked = folded.endswith(("?", "？"))
    if CJK.search(folded):
        # "你呢，几年级": the question back only leads into the question that is asked.
        asked = _ZH_AND_YOU.sub("", folded) or folded
        if _ZH_SMALL_TALK.search(asked) or _ZH_ASKS.search(asked) is None:
            return None
        return last if marked or len(CJK.findall(asked)) <= _ZH_UNMARKED_MAX else None
    if _EN_SMALL_TALK.search(folded):
        return None
    if marked and _CHOICE.search(folded):  # "tea or coffee?", "hot or cold side?"
        return last
    if _EN_ASKS.search(folded) is None:
        return None
    # Without its mark a chat question stays short ("where u from"); a long sentence is a statement.
    return last if marked or len(folded.split()) <= 8 else None


def carries_content(reply: str) -> bool:
    """Whether ``reply`` (prepared) is short and says something: a name, a number, a place, a thing —
    not an acknowledgement, a laugh, a mood, a hedge, a question back."""
    plain = _plain(reply)
    if not plain or "?" in plain or "？" in plain or _TRANSIENT.search(plain):
        return False
    if CJK.search(plain):
        if len(CJK.findall(plain)) > _MAX_CJK or _ZH_EVASION.search(plain) or _EN_EVASION.search(plain):
            return False
        # Said in parts ("还没 晚点排", "可以可以"): an answer when one part is more than an acknowledgement.
        # A part that is itself a question ("你多大了", "你家几岁了") tells nothing.
        parts = [p for p in _PARTS.split(plain) if p]
        return any(
            _EMPTY_ZH.match(p) is None and _EMPTY_ZH.match(p[: len(p) // 2]) is None and _asks(p) is None for p in parts
        )
    if _EN_EVASION.search(plain):
        return False
    words = _WORD.findall(plain)
    if not words or len(plain.split()) > _MAX_WORDS:
        return False
    return any(w.strip(".'’-") not in _EMPTY_WORDS for w in words)


def answers(before: str, reply: str) -> bool:
    """Whether ``reply`` (prepared) answers a question that asks for a fact at the end of ``before``
    (the turn before it, as written) — not when both carry the same speaker's label (a double text)."""
    asked = fact_question(before)
    if asked is None:
        return False
    who_asked, _ = speaker(before[-QUESTION_TAIL:])
    who_replied, body = speaker(reply)
    if who_asked is not None and who_replied is not None and who_asked.casefold() == who_replied.casefold():
        return False
    if _EN_QUESTION.match(_plain(body)):  # a question back, or the same question again ("where u from")
        return False
    return carries_content(body) or _picks(asked, body)


def _picks(asked: str, reply: str) -> bool:
    """Whether a short ``reply`` names one side of the choice ``asked`` ("girl!!" after "boy or girl??")."""
    choice = _CHOICE.search(asked.casefold())
    plain = _plain(reply)
    if choice is None or "?" in plain or len(plain.split()) > _MAX_WORDS or _EN_EVASION.search(plain):
        return False
    words = set(_WORD.findall(plain))
    return bool(words & {choice.group("a"), choice.group("b")})
