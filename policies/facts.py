"""Statements of fact: a sentence that says something about a person, a project or the world.

The quality rules say what is noise; this module says what is a fact, so that a short or chatty
fact is never taken for noise ("I'm diabetic.", "Call me Liz.", "lol I'm a lefty", "我对青霉素过敏",
"The user is a night-shift nurse."). A sentence is a statement of fact when one of its clauses has
a subject — the speaker (``I``, ``we``, ``my …``, ``我``), another person (``he``, ``the user``, a
name, ``用户``, ``我妈``) or a thing (``the office wifi``) — and a predicate that carries content:
being something, having, living, liking, doing regularly, planning, deciding, a life event. Or when
it is a standing instruction about how to answer ("Please always reply in Spanish.", "以后都用中文回答我").

What is *not* a fact, however it is phrased: reactions and feelings about the conversation ("I'm so
happy for you!", "I love that!", "我太开心了"), acknowledgements ("I see", "I know", "我知道了"),
what the speaker is doing right now ("I'm checking", "I'll let you know", "我看看"), questions, and
the work-in-progress chatter the quality rules catch (a fact found here does not overrule them).

Pure functions over the *prepared* text (NFKC, casefolded, whitespace collapsed) plus the original
text where case matters (a name as subject). Each answer names the kind of statement — ``self``,
``person``, ``named``, ``thing``, ``elided``, ``instruction``, ``when`` — for the verdict's reason.
"""

from __future__ import annotations

import re
import unicodedata
from typing import Literal

from memwarden.policies.facts_when import names_when, when_reply
from memwarden.policies.facts_zh import CJK, ZH_INSTRUCTION, zh_clause

Kind = Literal["self", "person", "named", "thing", "elided", "instruction", "when", "plan"]
# The kinds sure enough to overrule a reject rule (a request, a hedge, a word of progress beside the
# fact): a subject the sentence names by pronoun or role. A capitalised first word may be a name
# ("Alice loves …") or not ("Tests are passing now"), "the build is …" may be progress, and a
# sentence without its subject ("Finally started the pottery class!") may be work chatter ("started
# the deploy"): those keep a text no rule rejected, and overrule nothing.
OVERRULING: frozenset[Kind] = frozenset({"self", "person", "instruction"})
# A text too short to be a memory is still kept when it is a statement of those kinds, or a short
# reply that names when ("周三", "4pm"): that kind overrules the length rule alone, not a question,
# a request or a word of progress.
SHORT_OVERRULING: frozenset[Kind] = OVERRULING | {"when"}

# Openers that carry nothing: interjections, discourse markers, "just so you know".
_LEAD = re.compile(
    r"^(?:(?:oh+|ah+|aw+|haha+|hah|lol|lmao|omg|wow|yay+|yeah|yes|yep|nope|no|ok(?:ay)?|so|well|and|but|also|"
    r"anyway[s]?|actually|honestly|maybe|perhaps|probably|btw|fyi|ps|p\.s\.|hey|hi|hello|heya|hiya|dude|man|guess what|"
    r"oh my god|oh man|by the way|just so you know|for the record|for future reference|heads up|"
    r"remember(?: that)?|please remember(?: that)?|note(?: that)?|keep in mind(?: that)?|don't forget(?: that)?|"
    r"quick update|update|random fact|fun fact|true story|same here|me too|thanks|thank you|ty|cool|nice|great|"
    r"did i (?:tell|mention to|mention|say to) you(?: that)?|have i (?:told|mentioned to) you(?: that)?|"
    r"did you know(?: that)?)"
    r"(?:\s*[,:;.!~\-—–]+\s*|\s+))+"
)
_EMOJI = re.compile(r"[\U0001F000-\U0001FAFF\u2600-\u27BF\uFE0F]+")

# --- English ------------------------------------------------------------------------------------

_BE = r"(?:am|'m|’m|m|are|'re|’re|is|'s|’s|was|were|have been|'ve been|has been|will be|'ll be)"
_ADVERBS = (
    r"(?:(?:so|very|really|super|just|totally|pretty|too|also|still|now|finally|actually|kinda|kind of|"
    r"a bit|a little|not|never|always|usually|often|sometimes|currently|officially|basically|literally|"
    r"definitely|probably|recently|already|even|only|mostly|kind|sort of|gonna be|going to be|quite)\s+)*"
)
# After "I'm" / "we're": what makes it a feeling, a reaction or the here and now, not a fact. A word
# of these counts when it ends the clause or a filler follows ("I'm fine, thanks"), not when more is
# said ("I'm fine with spicy food", "I'm in Berlin", "I'm good at chess").
_STATE_WORDS = (
    r"happy|glad|sorry|excited|thrilled|stoked|pumped|fine|good|great|ok|okay|alright|all right|well|"
    r"tired|exhausted|sleepy|bored|sad|upset|jealous|lucky|blessed|grateful|thankful|relieved|"
    r"impressed|amazed|shocked|surprised|confused|lost|kidding|joking|dying|dead|serious|curious|"
    r"here|there|back|home|done|ready|in|out|off|busy|late|away|listening|all good|all set|good to go|"
    r"all ears|so in|down|game|sure|not sure|unsure|right|wrong|speechless|crying|screaming|obsessed|"
    r"flattered|touched|sold|convinced|finished|free now|around|available|hungry|starving|freezing|cold|hot|"
    r"the best|the worst|it|that|this|you|yours"
)
_FILLER_AFTER = (
    r"too|now|today|tonight|lol|haha|though|thanks|thx|again|already|for (?:you|now|sure|real)|"
    r"to (?:hear|see|help|go|know)|with (?:that|it|you)"
)
_NOT_A_STATE = re.compile(
    rf"^(?:(?:{_STATE_WORDS})(?=\s*$|\s+(?:{_FILLER_AFTER})\b)|"
    r"proud of you|in love with (?:it|this|that)|a fan of (?:it|this|that)|(?:so )?happy for|glad you|"
    r"sorry to hear|sorry for|excited for you|rooting for|still here|on it|on my way|almost there|almost done|"
    r"about to|heading|going to (?:bed|sleep|check|try|look|ask|go)|gonna (?:check|try|look|ask|go)|"
    r"with you|afraid so|afraid not|sick of|over it|feeling|a bit|just saying|saying|asking|wondering|"
    r"thinking|looking|checking|trying|working on it|"
    r"doing (?:good|great|well|ok|okay|fine|alright))\b"
)
# A progressive predicate is what someone is doing right now ("I'm deploying", "I'm running late"),
# except the ones that tell a life ("I'm training for a marathon", "I'm moving to Osaka").
_PROGRESSIVE = re.compile(r"^\w+ing\b")
_LIFE_PROGRESSIVE = re.compile(
    r"^(?:living|studying|learning|training|moving|expecting|dating|teaching|volunteering|retiring|"
    r"graduating|reading|visiting|flying|travell?ing|planning|saving|starting (?:a|my|at|school|college|uni)|"
    r"working (?:as|at|for|in|from|nights|days|part|full|remotely)|taking (?:a|classes|lessons|a class)|"
    r"going to (?!(?:bed|sleep|check|try|look|ask|go|restart|deploy|run|fix|push|merge|update)\b)|getting married|"
    r"having a (?:baby|girl|boy)|renovating|building (?:a|our|my) (?:house|home|deck|shed))\b"
)
_WORK_OBJECT = re.compile(
    r"\b(?:deploy\w*|merg\w*|pull request|pr|commit\w*|build|builds|tests?|testing|ticket|bug|fix|migration|"
    r"release|script|code|server|servers|logs?|pipeline|branch|staging|prod|ci|job|task|report|review|"
    r"refactor\w*|patch|rollback|container|cluster|query|endpoint|database|file|files|service|api|repo)\b"
)


# When a progressive tells a plan or a habit rather than the here and now: a day or a date ahead, a
# recurrence, a span ("we're getting dinner next friday", "I've been doing yoga every morning since
# march", "she's visiting on the 14th").
_WHEN = re.compile(
    r"\b(?:every (?:other )?(?:day|night|morning|evening|week|weekend|month|year|summer|winter|\w+day)|"
    r"(?:on|most|some) (?:mon|tues|wednes|thurs|fri|satur|sun)days|each (?:day|week|month|morning|year)|"
    r"(?:next|this coming|the coming|this) (?:week|month|year|weekend|summer|spring|fall|autumn|winter|"
    r"(?:mon|tues|wednes|thurs|fri|satur|sun)day|january|february|march|april|june|july|august|"
    r"september|october|november|december)|"
    r"(?:on|next|this) (?:mon|tues|wednes|thurs|fri|satur|sun)day|tomorrow|"
    r"in (?:a|two|three|\d+) (?:weeks?|months?|years?)|"
    r"(?:in|since|until|till|by) (?:january|february|march|april|may|june|july|august|september|october|"
    r"november|december|the (?:spring|summer|fall|autumn|winter)|\d{4})|"
    r"for (?:a|two|three|four|five|six|\d+|a few|a couple of|several) (?:years?|months?|weeks?)|"
    r"(?:twice|once|three times) a (?:week|month|day|year)|on the \d+(?:st|nd|rd|th))\b"
)


# Progressives that are the conversation itself, whenever they happen: "I'm getting back to you on
# Monday", "she's calling you tomorrow", "I'm handling it next week".
_TO_THE_LISTENER = re.compile(
    r"^(?:getting back|following up|circling back|touching base|replying|"
    r"(?:calling|texting|emailing|messaging|pinging|writing|sending|ringing) (?:you|u|y'all)|"
    r"(?:handling|checking|looking into) (?:it|this|that|them))\b"
)


def _doing_now(rest: str) -> bool:
    """Whether a predicate after "am/is/are" tells what someone is doing right now."""
    if not _PROGRESSIVE.match(rest):
        return False
    if _WORK_OBJECT.search(rest) is not None or _TO_THE_LISTENER.match(rest):
        return True
    return _LIFE_PROGRESSIVE.match(rest) is None and _WHEN.search(rest[:200]) is None


# Verbs after "I" / "we" that are conversation, not a fact about the speaker.
_NOT_A_FACT_VERB = re.compile(
    r"^(?:know|see|think|guess|mean|hope|bet|agree|understand|wonder|suppose|believe|doubt|feel|felt|"
    r"appreciate|apologi[sz]e|promise|swear|miss you|love you|love (?:it|that|this|those|these|them|how|"
    r"your|the way|hearing|seeing)|like (?:it|that|this|the way|how|your)|hate (?:it|that|this) when|"
    r"had (?:a |an |such a |so much )?(?:great|good|nice|lovely|wonderful|fun|amazing|blast|ball|fantastic|"
    r"awesome|best)\b|"
    r"have (?:a |an )?(?:good|great|nice|lovely|wonderful|fun)\b|have no idea|had no idea|have a question|"
    r"can't wait|cannot wait|can't believe|cannot believe|couldn't|can't|cannot|could|would|wouldn't|"
    r"should|shouldn't|might|may|must|'ll|’ll|will|won't|shall|'d (?:love|like|be|say)|’d (?:love|like|be)|"
    r"would love|wish|wanted to (?:say|ask|check|let)|want to (?:know|ask|say|check|see|hear)|"
    r"need to (?:go|run|check|ask|think)|have to (?:go|run|check|ask)|gotta|got (?:it|you|this|ya)|"
    r"get it|see what you mean|just (?:wanted|checked|saw|realized|noticed|thought|meant)|"
    r"(?:(?:have|has|had) )?(?:just )?(?:pushed|deployed|merged|fixed|checked|ran|restarted|tried|updated|"
    r"uploaded|committed|"
    r"rebased|installed|reran|re-ran|rolled back|reverted|looked|read through|skimmed)|"
    r"remember (?:that|when|you)|forgot|told you|said|asked|meant|was (?:just|only) (?:kidding|joking|saying)|"
    r"do(?:n't|n’t| not)? (?:know|think|get it|mind|care|remember|see)|"
    r"did(?:n't|n’t)? (?:know|see|get|mean)|am (?:not )?sure|'?m (?:not )?sure|laughed|cried|screamed)\b"
)
# What someone can never do is a fact about them ("I can't eat dairy", "we can't have pets here"),
# unlike "I can't wait" or "I can't make it tonight".
_CANNOT = re.compile(
    r"^(?:can't|can’t|cannot|can not|couldn't ever|can never)\s+(?:eat|drink|tolerate|digest|drive|swim|ride|lift|"
    r"kneel|climb|fly|speak|read (?:music|braille)|have (?:any )?(?:dairy|gluten|nuts|peanuts|caffeine|alcohol|sugar|"
    r"salt|pork|beef|meat|fish|shellfish|eggs?|wheat|soy|lactose|kids|children|pets|dogs?|cats?))\b"
)
_FOR_NOW = re.compile(
    r"\b(?:today|tonight|now|rn|atm|anymore|any more|another|yet|until|till|over|this (?:week|weekend|time|"
    r"morning|afternoon|evening|month)|right now|at the moment)\b"
)
_SELF_BE = re.compile(rf"^(?:i|we)\s+{_BE}\s+{_ADVERBS}(?P<rest>.+)$")
_SELF_VERB = re.compile(
    r"^(?:i|we|me and \w+|\w+ and i|my (?:wife|husband|partner|boyfriend|girlfriend|family|kids) and i)\s+"
    + _ADVERBS
    + r"(?P<rest>.+)$"
)
# "my X …", "our X …": a possession, a relation or an attribute, then what is said of it.
_POSSESSIVE = re.compile(
    r"^(?:my|our|his|her|their|mine|ours)\s+(?P<thing>[^\s,.!?]+(?:\s+[^\s,.!?]+){0,3}?)\s+"
    r"(?P<rest>(?:is|are|was|were|has|have|had|'s|’s|just|will|lives|works|loves|likes|hates|got|started|"
    r"moved|turns|turned|goes|went|starts|plays|runs|needs|wants|uses|can't|cannot|doesn't|don't|never|"
    r"always|still|finally|\w+s|\w+ed)\b.*)$"
)
_NOT_A_POSSESSIVE = re.compile(r"^(?:bad|pleasure|god|gosh|goodness|lord|word|heart|bad\b.*|mind|head|brain)$")
# Third person: pronouns and role nouns (a name is found on the original text).
_PERSON = re.compile(
    r"^(?:he|she|they|the user|user|the customer|customer|the client|client|the assistant's user|"
    r"the owner|the team|the family|(?:the )?user's \w+|(?:his|her|their) \w+)\s+" + _ADVERBS + r"(?P<rest>.+)$"
)
_NAME = re.compile(r"^(?P<name>[A-Z][a-z'’\-]+(?:\s+[A-Z][a-z'’\-]+)?)\s+(?P<rest>.+)$")
_NOT_A_NAME = frozenset(
    """i i've i'm i'd i'll it this that there here these those they we you he she what when where why how who which
    please thanks thank hi hello hey ok okay yes no sure maybe perhaps also and but so if then now
    today tomorrow yesterday tonight just let lets let's can could would should will did do does
    is are was were have has had great nice cool good awesome wow oh ah haha lol omg sounds looks
    seems same happy sorry glad welcome congrats congratulations merry hope good morning night
    well right true definitely absolutely totally honestly actually anyway btw love miss see""".split()
)
# A predicate with content after a subject: being something, having, doing, a life event.
_CONTENT_VERB = re.compile(
    r"^(?:(?:don't|don’t|do not|doesn't|does not|didn't|did not|never|no longer|can't|cannot|still|"
    r"also|usually|often|always|now|just|finally|recently|used to|started|start|stopped|plan to|"
    r"planning to|'m planning to|am planning to|want to|wants to|hope to|going to|'m going to|gonna|"
    r"decided to|have decided to|will|'ll|would like to)\s+)*"
    r"(?:is|are|was|were|'s|’s|am|'m|be|been|has|have|had|'ve|got|get|gets|own|owns|live|lives|lived|living|"
    r"work|works|worked|working|study|studies|studied|studying|teach|teaches|taught|run|runs|ran|"
    r"swim|swims|play|plays|played|read|reads|reading|watch|watches|train|trains|training|cook|cooks|"
    r"bake|bakes|collect|collects|drive|drives|drove|use|uses|used|love|loves|loved|like|likes|liked|"
    r"enjoy|enjoys|enjoyed|hate|hates|hated|dislike|dislikes|prefer|prefers|preferred|need|needs|eat|eats|"
    r"ate|drink|drinks|take|takes|took|go|goes|went|visit|visits|visited|visiting|move|moves|moved|moving|"
    r"start|starts|started|starting|quit|quits|join|joins|joined|buy|buys|bought|adopt|adopted|marry|"
    r"married|graduate|graduated|graduating|finish|finished|retire|retired|retiring|decide|decided|plan|"
    r"plans|planned|volunteer|volunteers|practice|practise|practices|speak|speaks|grew|grow|born|wake|"
    r"wakes|sleep|sleeps|ride|rides|hike|hikes|climb|climbs|paint|paints|draw|draws|sing|sings|dance|"
    r"dances|write|writes|wrote|make|makes|made|build|builds|built|fly|flies|flew|travel|travels|"
    r"traveled|travelled|won|lost|broke|signed|booked|switched|changed|sold|rent|rents|rented|manage|turn|turns|turned|"
    r"manages|lead|leads|belong|belongs|come|comes|came|attend|attends|attended|met|celebrate|"
    r"celebrated|named|call|calls|called|spend|spends|spent|save|saves|saved|invest|invested|avoid|avoids|"
    r"keep|keeps|kept|wear|wears|grow|grows|raise|raises|raised|care|cares|suffer|suffers|"
    r"allergic|diagnosed|pregnant|expecting|engaged|divorced|single|vegan|vegetarian|deaf|blind|"
    r"left-handed|lefty|gluten|lactose|diabetic|interested|into|from|based|originally|allergic|"
    r"responsible|in charge|a|an|the|\d)\b"
)

# Chat drops the subject: "Finally finished my first marathon!", "Started a pottery class on
# Thursdays". A life event in the past tense, not work in progress (the object is not a deploy, a
# test, a ticket …); no progressive form ("Reading config.yaml…" is an agent's tool log).
_ELIDED = re.compile(
    r"^(?:(?:just|finally|also|recently|officially|so|literally|actually)\s+)*"
    r"(?:started|finished|got|bought|adopted|joined|visited|booked|signed up for|moved (?:to|into|in with)|quit|"
    r"graduated|ran|training for|planning to|turned|won|passed|switched to|picked up|took up|gave up|spent|"
    r"baked|cooked|painted|celebrated|thinking (?:of|about) (?:moving|getting|buying|switching|quitting))\s+"
    r"(?P<rest>.+)$"
)
_WORK = re.compile(
    r"\b(?:deploy\w*|merg\w*|pull request|pr|commit\w*|build|builds|tests?|testing|ticket|bug|fix|migration|"
    r"release|script|code|server|logs?|pipeline|branch|staging|prod|ci|job|task|report|review|refactor\w*|"
    r"patch|rollback|container|cluster|query|endpoint|it|that|this|the hang of it|back to you)\b"
)

# Verbs of the conversation and of work in hand, whenever they happen: "I check back tomorrow",
# "we follow up next week", "we retry every morning".
_TALK = re.compile(
    r"^(?:ping|check|checking|follow|circle|touch|talk|speak|chat|sync|meet up|catch up|get back|reply|respond|answer|"
    r"call|text|email|message|dm|write|send|update|try|retry|rerun|re-run|revisit|continue|resume|look|review|"
    r"test|debug|push|merge|deploy|ship|release|rebase|restart|run|fix|finish|start|handle|sort|tackle|"
    r"let you know|tell|ask|remind|see)\b"
)

# Standing instructions about how to answer.
_INSTRUCTION = re.compile(
    r"^(?:please\s+|pls\s+|plz\s+|and\s+)?(?:"
    r"(?:always|never|from now on|going forward|in (?:the )?future|by default|every time|whenever you)\b.{0,80}"
    r"\b(?:reply|replies|answer|answers|respond|responses|write|use|call|speak|talk|format|include|add|"
    r"give|show|send|keep|address|refer|explain|say|mention|ask|remind|suggest|recommend|cite|sign|spell|"
    r"be|put|list|avoid|assume|translate|round|convert|quote)\b"
    r"|(?:reply|respond|answer|write|talk|speak)\s+(?:to me\s+)?(?:only\s+)?in\s+\w+"
    r"|call me\s+\S|address me as\s+\S|you can call me\s+\S|my name is\s+\S|my name's\s+\S|i go by\s+\S"
    r"|(?:don't|don’t|do not|never|stop)\s+(?:ever\s+)?(?:use|using|add|adding|include|including|send|sending|"
    r"call|calling|give|giving|suggest|suggesting|recommend|recommending|mention|mentioning|show|showing|"
    r"say|saying|ask|asking|write|writing|reply|replying|answer|answering|assume|assuming)\b.{0,60}"
    r"\b(?:me|my|i|us|our|again|emoji|emojis|jargon|markdown|bullet points?|tables?|exclamation)\b"
    r"|keep (?:your |the |all )?(?:answers|replies|responses|messages|summaries|explanations)\s+\w+"
    r"|(?:answers|replies|responses) (?:should|must) (?:be|stay|always)\b"
    r"|(?:use|prefer) (?:the )?(?:metric|imperial|celsius|fahrenheit|24-hour|12-hour|british|american|us)\b"
    r"|(?:metric|imperial) units\b|(?:celsius|fahrenheit|24-hour time|12-hour time) (?:only|please)\b"
    r")"
)

# A question, however it is asked: a question mark, a Chinese question particle at the end, an
# A-not-A question ("他是不是搬家了").
_QUESTION_MARK = re.compile(r"[?？][\"'”’」』)]*$")
_QUESTION = re.compile(
    r"(?:吗|么|呢|嘛)[。.!！~～]*$|是不是|有没有|要不要|能不能|会不会|对不对|好不好|行不行|可不可以|是否"
)
_SPACES = re.compile(r"\s+")
_CLAUSES = re.compile(r"[,;:!，；：！。～~—–]+|\s-\s|\.\s")
# Sentences: after a full stop, an exclamation or a question mark (a question is judged on its own).
_SENTENCES = re.compile(r"(?<=[?？!！。])\s*|(?<=\.)\s+")
# Where a question starts inside a clause that runs on from a statement without a comma ("I've got
# the interview on Monday so fingers crossed can you check my answer?"): the words before it are judged.
_ASKS = re.compile(
    r"\s(?:(?:can|could|would|will|do|does|did|should|shall)\s+(?:you|u|ya|anyone|someone|we|i)\b|"
    r"any (?:tips|ideas|advice|thoughts|suggestions|recommendations)\b|"
    r"(?:what|how|where|which|who)\s+(?:do|does|should|would|can|could|is|are)\b)"
)
_TOLD_YOU = re.compile(
    r"^(?:did i (?:tell|mention to|mention|say to) you|have i (?:told|mentioned to) you|did you know)\b"
)
# What is read of a text: a statement of fact is made early or not at all (a long document is judged
# sentence by sentence: policies/segments.py), and the bounds keep every pattern's cost linear.
MAX_CHARS = 600
MAX_CLAUSES = 12


_CONTRACTIONS = (
    (re.compile(r"\b(i|we|you|they)'ve\b"), r"\1 have"),
    (re.compile(r"\b(i|we|you|they)'d\b"), r"\1 would"),
    (re.compile(r"\b(i|we|you|they)'ll\b"), r"\1 will"),
    (re.compile(r"\b(we|you|they)'re\b"), r"\1 are"),
    (re.compile(r"\bi'?m\b"), "i am"),
    (re.compile(r"\b(he|she)'s\b"), r"\1 is"),
)


def _expand(prepared: str) -> str:
    """Apostrophes made plain and the first and second person's contractions written out."""
    out = prepared.replace("’", "'")
    if "'" not in out and "im" not in out:
        return out
    for pattern, repl in _CONTRACTIONS:
        out = pattern.sub(repl, out)
    return out


def statement_kind(prepared: str, text: str = "") -> Kind | None:
    """The kind of statement of fact ``prepared`` makes (``text``: the same sentence as written,
    for a name as its subject), or None when it makes none. A question is never a statement, but a
    question does not hide the statements beside it ("my brother turns 40 next week. any gift
    ideas?", "我下个月想试试，你们在哪儿打？"): the clause that asks is dropped, the rest judged; and
    "did I tell you we're moving?" tells."""
    body = _SPACES.sub(" ", _expand(_EMOJI.sub(" ", prepared[:MAX_CHARS]))).strip()
    if not body:
        return None
    # The written text in the same normal form but for case, so that its sentences and clauses pair
    # with the prepared text's ("…" is "..." in both).
    written = _SPACES.sub(" ", _EMOJI.sub(" ", unicodedata.normalize("NFKC", text[:MAX_CHARS]))).strip()
    sentences = _SENTENCES.split(body)[:MAX_CLAUSES]
    originals = _SENTENCES.split(written)[:MAX_CLAUSES] if written else []
    if len(originals) != len(sentences):  # the written text cannot be paired: no names from it
        originals = []
    budget = MAX_CLAUSES
    for i, sentence in enumerate(sentences):
        sentence = sentence.strip()
        if not sentence:
            continue
        told = _TOLD_YOU.match(sentence) is not None
        marked = not told and _QUESTION_MARK.search(sentence) is not None
        if not marked and (_INSTRUCTION.search(_strip_lead(sentence)) or ZH_INSTRUCTION.search(sentence)):
            return "instruction"
        clauses = [c.strip() for c in _CLAUSES.split(sentence)]
        original = [c.strip() for c in _CLAUSES.split(originals[i])] if originals else []
        if len(original) != len(clauses):
            original = []
        for n, clause in enumerate(clauses):
            budget -= 1
            if budget < 0:
                return None
            if (marked and n == len(clauses) - 1) or (not told and _QUESTION.search(clause)):
                asks = _ASKS.search(clause)  # the clause that asks: only what runs on before its question
                if asks is None or len(clause[: asks.start()].split()) < 4:
                    continue
                clause = clause[: asks.start()]
            clause = _strip_lead(clause)
            if not clause:
                continue
            kind = zh_clause(clause) if CJK.match(clause) else _en_clause(clause)
            if kind is None and original and not CJK.match(clause):
                kind = _named_clause(_strip_lead_original(original[n]))
            if kind is not None:
                return kind
    return "when" if when_reply(body, asks=_QUESTION.search(body) is not None) else None


# Where a statement that overrules a reject can begin: a first- or third-person subject, or the words
# of a standing instruction (a cheap gate before the clause patterns).
_OVERRULING_CUES = re.compile(
    r"\b(?:i|im|me|we|my|our|mine|ours|he|she|they|his|her|their|user|customer|client|owner|team|family|"
    r"always|never|from|going|by|every|whenever|reply|respond|answer|write|talk|speak|call|address|keep|"
    r"don't|dont|do|stop|use|prefer|metric|imperial|celsius|fahrenheit|answers|replies|responses)\b"
    r"|我|咱|他|她|用户|客户|以后|今后|从现在|之后|往后|每次|一律|始终|总是|永远|默认|叫我|称呼|别|不要|不许|不准|用中文|用英文|回答|回复"
)


def overruling_kind(prepared: str, text: str = "") -> Kind | None:
    """:func:`statement_kind` where only a kind that overrules a reject matters (``SHORT_OVERRULING``):
    the same answer for those, None for the others, and no clause pattern run on a text without a
    subject or an instruction's words in it (most noise)."""
    if not _OVERRULING_CUES.search(prepared[:MAX_CHARS]) and not names_when(prepared[:MAX_CHARS]):
        return None
    kind = statement_kind(prepared, text)
    return kind if kind in SHORT_OVERRULING else None


def _strip_lead(clause: str) -> str:
    return _LEAD.sub("", clause).strip()


def _strip_lead_original(clause: str) -> str:
    lead = _LEAD.match(clause.casefold())
    return clause[lead.end() :].strip() if lead else clause.strip()


def _en_clause(clause: str) -> Kind | None:
    be = _SELF_BE.match(clause)
    if be is not None and re.match(r"^(?:i am|we are|i was|we were|i have been|we have been)\b", clause):
        rest = be["rest"]
        if _NOT_A_STATE.match(rest) or _NOT_A_FACT_VERB.match(rest) or _doing_now(rest):
            return None
        return "self" if _content(rest) else None
    verb = _SELF_VERB.match(clause)
    if verb is not None:
        rest = verb["rest"]
        if _CANNOT.match(rest) and _FOR_NOW.search(rest) is None:
            return "self"
        if _NOT_A_FACT_VERB.match(rest):
            return None
        if _CONTENT_VERB.match(rest) and _content(rest):
            return "self"
        # Any other verb with a day, a date or a recurrence ahead is a plan or a habit ("we launch the
        # new app on the 15th", "I coach the under-9s every saturday") — not work under way or talk
        # to the listener ("I push the fix tomorrow", "we sync next week", "I ping you monday"). A
        # kind of its own: kept, but never overruling a reject rule (progress, a request, a question).
        if _WORK.search(rest) or _TALK.match(rest) or _doing_now(rest) or not _content(rest):
            return None
        return "plan" if _WHEN.search(rest[:200]) else None
    owned = _POSSESSIVE.match(clause)
    if owned is not None and not _NOT_A_POSSESSIVE.match(owned["thing"]) and not _WORK_OBJECT.search(owned["thing"]):
        state = _BE_PREFIX.sub("", owned["rest"])
        if state != owned["rest"] and (_NOT_A_STATE.match(state) or _doing_now(state)):
            return None
        return "self" if clause.startswith(("my ", "our ", "mine ", "ours ")) else "person"
    elided = _ELIDED.match(clause)
    if elided is not None:
        rest = elided["rest"]
        return "elided" if _content(rest) and not _WORK.search(rest) else None
    person = _PERSON.match(clause)
    if person is not None:
        rest = person["rest"]
        if _NOT_A_FACT_VERB.match(rest) or re.match(r"^(?:said|says|asked|asks|told|thinks|thought)\b", rest):
            return None
        state = _BE_PREFIX.sub("", rest)
        if state != rest and (_NOT_A_STATE.match(state) or _doing_now(state)):
            return None
        return "person" if _CONTENT_VERB.match(rest) and _content(rest) else None
    return None


_BE_PREFIX = re.compile(r"^(?:is|are|was|were|am|'s|'re|has been|have been)\s+" + _ADVERBS)
# A name is a capitalised word that is not a verb or a word a tool log or a heading starts with
# ("Started the deploy", "Restart the server", "Found 3 matches"), and what follows it is a verb
# in the third person ("Alice loves …", "Charlie is …", "Bob moved …").
_NOT_A_NAME_SHAPE = re.compile(r"^(?:\w+ed|\w+ing)$")
_IMPERATIVES = frozenset(
    """restart open update found run check read merge fix add remove use try set make see let go get put
    call send tool note step error warning output result done next todo install start stop build test
    deploy create delete write edit move copy review close reply ask tell show find search fetch load
    save print log summary status task goal plan action agenda attendees decision decisions notes""".split()
)
_THIRD_PERSON = re.compile(
    r"^(?:is|was|'s|has|had|\w+s|\w+ed|took|went|got|made|bought|began|ran|won|lost|found|gave|left|met|"
    r"came|drove|flew|wrote|sold|built|broke|fell|grew|kept|spent|taught|brought|rode|swam|sang|quit|"
    r"became|threw|caught|chose|wore|ate|drank|slept|sent|felt|paid|held|led|told|heard|sat|stood|won't|"
    r"can't|doesn't|didn't)\b"
)


def _named_clause(clause: str) -> Kind | None:
    """A clause whose subject is a name as written ("Alice loves programming in Python", "Charlie is
    interested in quantum physics", "The office wifi is called Orchard-5G")."""
    thing = re.match(
        r"^(?:the|our|this|that)\s+(?P<what>[\w\-' ]{2,40}?)\s+(?P<rest>(?:is|are|was|were|has|have)\s.+)$",
        clause,
        re.I,
    )
    if thing is not None and not re.match(
        r"^(?:one|thing|point|idea|problem|question|best|worst)$", thing["what"], re.I
    ):
        rest = thing["rest"].casefold()
        state = re.sub(r"^(?:is|are|was|were|has|have)\s+" + _ADVERBS, "", rest)
        if not _NOT_A_STATE.match(state) and not _doing_now(state):
            return "thing" if _content(rest) else None
        return None
    named = _NAME.match(clause)
    if named is None:
        return None
    first = named["name"].split()[0].casefold()
    if first in _NOT_A_NAME or first in _IMPERATIVES or _NOT_A_NAME_SHAPE.match(first):
        return None
    rest = named["rest"].casefold()
    if re.match(r"^(?:are|were|have|do|don't|did|can|will|would|should|could)\b", rest):
        return None  # a plural ("Tests are passing now") or a modal: no sure subject
    rest = re.sub(r"^(?:" + _ADVERBS + r")", "", rest)
    if _NOT_A_FACT_VERB.match(rest) or re.match(r"^(?:said|says|asked|asks|told|thinks|thought)\b", rest):
        return None
    if not _THIRD_PERSON.match(rest):
        return None
    state = re.sub(r"^(?:is|was|'s|’s)\s+" + _ADVERBS, "", rest)
    if state != rest and (_NOT_A_STATE.match(state) or _doing_now(state)):
        return None
    return "named" if _CONTENT_VERB.match(rest) and _content(rest) else None


def _content(rest: str) -> bool:
    """Whether the predicate says something: at least one word of three letters or more beyond
    the verb, or a number ("I'm 34")."""
    words = re.findall(r"[a-z][a-z'’\-]+|\d+", rest)
    return len(words) >= 2 or any(w.isdigit() for w in words) or (len(words) == 1 and len(words[0]) >= 4)
