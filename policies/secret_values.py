"""What a credential's value looks like once a cue has named it (``secret_cues.py`` finds the cue):
digits grouped, spaced, starred or in Chinese numerals; a dial's turns; letters spelled one by one;
a token mixing kinds of characters; a quoted value; a passphrase of plain words; one plain word
after "the password is"; capitals and digits after a code's name — and what only looks like one
(a time, an amount, a year, an example, a placeholder, a password manager's name)."""

from __future__ import annotations

import re

from memwarden.policies.secret_numbers import WHEN_OR_HOW_MUCH, YEAR, plain_number
from memwarden.policies.secret_words import (
    CN_DIGIT,
    CN_NUMBER,
    CONNECTOR,
    FILLER,
    MISSPELT_PASSWORD,
    NOT_A_PHRASE,
    NUM_WORD,
    PASSWORD_CUE,
    PHRASE_CONNECTOR,
    PHRASE_CUE,
    PLACEHOLDER_VALUE,
)

DIGITS = re.compile(
    r"(?:[*#]|(?i:star|hash|pound)[ \t]+)?(?:\d(?:[ ]\d){2,3}(?:,[ \t]\d(?:[ ]\d){2,3})+|\d(?:[ \-]?\d){3,11})#?"
    r"(?![\d.,:/]?\d)(?![A-Za-z])"
    r"(?!\s*(?:位|个|次|年|月|日|号|天|分钟|小时|秒|元|块|款|型|版|代|系列|%|％|st\b|nd\b|rd\b|th\b"
    r"|am\b|pm\b|digits?|characters?|chars?|letters?|times|days?|hours?|min|mins|minutes|seconds|years?|km|mb|gb|px"
    r"|(?i:mah|kwh|wh|db|grams?)\b"
    r"|ms\b|m\b|ft\b|feet|meters?|metres?|miles?|kg|lbs?|cm|mm|people|users|lines?|bytes?|yen|dollars?|euros?"
    r"|pounds?|quid|bucks|rupees?|usd|eur|gbp|rmb|model|edition|long|wide|tall|high|deep))"
    r"(?!-(?!(?:enter|ok|tick|hash)\b)[A-Za-z])"  # a keypad's last key may follow: "8-0-3-5-enter"
)

THREE_DIGITS = re.compile(
    r"\d(?:[ \-]?\d){2}(?![\d.,:/]?\d)(?![A-Za-z])"
    r"(?!\s*(?:位|个|次|年|月|日|号|天|分钟|小时|秒|元|块|米|公斤|%|kg|cm|mm|ft|feet|inch|degrees?|°))"
)

# A padlock's three, in Chinese numerals ("四零九"; not a count or a date: "三百", "三个", "二零二").
CN_THREE = re.compile(
    rf"(?<!价格：)(?<!价格:)(?<!价钱：)(?<!售价：)[{CN_DIGIT}]{{3}}(?![{CN_DIGIT}十百千万亿])"
    r"(?!\s*(?:位|个|次|年|月|日|号|天|元|块|毛|角|米|人|分|室|宿舍|房|间|伏|瓦|楼|栋|层|单元|户|路|班|级|届|期|页|条|张|台|件|只|把|斤|克|度))"
)

# One by one, spaced or listed ("四 七 零 二", "四、七、零、二").
CN_DIGITS = re.compile(
    rf"[{CN_DIGIT}]{{4,12}}|(?<!第)[{CN_DIGIT}](?:[ \t]+[{CN_DIGIT}]){{3,11}}(?![{CN_DIGIT}])"
    rf"|(?<!第)[{CN_DIGIT}](?:[ \t]*+[、，,][ \t]*+[{CN_DIGIT}]){{4,11}}(?![{CN_DIGIT}])"
)

# Numbers said in groups: "三六，然后零八，最后是二十五", "36-14-52" (a dial's).
CN_GROUPS = re.compile(rf"(?<!第){CN_NUMBER}(?:[，、,\s]+(?:然后是?|再是?|最后是?)?{CN_NUMBER}){{2,}}")

# Digits said in two or three breaths: "四七零，二九一".
CN_SPLIT = re.compile(rf"[{CN_DIGIT}]{{2,6}}(?:[，、,\s]+[{CN_DIGIT}]{{2,6}}){{1,3}}")

# One digit at a time, dashed: "9-0-2-1" (a combination box's).
DASHED = re.compile(r"(?<![\d\-])\d(?:(?:-|,[ \t]?)\d){3,7}(?![\d\-])")

DIAL = re.compile(r"\d{1,2}(?:[ \t]*-[ \t]*\d{1,2}|\s\d{1,2}){2,3}(?![\d\-])")

SAID_ONE = rf"(?:(?:double|triple)[\s\-]+)?{NUM_WORD}"

# "seven four, uh, one nine", "…three, then five", "six... two... six"
_SAID_GAP = r"(?>(?:[\s,，、\-]|\.{2,3}|…)+)(?:(?:uh|um|er|erm|then|and)(?>(?:[\s,，、\-]|\.{2,3}|…)+))?"
SAID = re.compile(
    rf"(?i){SAID_ONE}(?:{_SAID_GAP}{SAID_ONE}){{3,11}}\b|{SAID_ONE}(?:{_SAID_GAP}{SAID_ONE}){{2,}}\b(?=.{{0,3}}$|[.!?])"
)

# Numbers said in pairs, as PINs and codes are read out: "sixty-one, ninety-nine, oh four", "forty-one,
# seventeen", "code's seventeen ninety-one", "double-four, double-one".
_TENS = r"(?:twenty|thirty|forty|fourty|fifty|sixty|seventy|eighty|ninety)"
_TEENS = r"(?:ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen|seventeen|eighteen|nineteen)"
_ONE_TO_NINE = r"(?:one|two|three|four|five|six|seven|eight|nine)"
_PAIR = rf"(?:{_TENS}(?:[\s\-]+{_ONE_TO_NINE}\b)?|{_TEENS}|(?:oh|zero)[\s\-]+{_ONE_TO_NINE}\b|{SAID_ONE})"
SAID_PAIRS = re.compile(
    rf"(?i)(?<![A-Za-z]){_PAIR}(?:(?:{_SAID_GAP}|\.{{2,3}}[ \t]*|…[ \t]*){_PAIR}){{1,7}}(?![A-Za-z])"
)
_WORD_DIGITS = {
    **dict.fromkeys(("zero", "oh", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "niner"), 1),
    **dict.fromkeys(_TENS[3:-1].split("|") + _TEENS[3:-1].split("|"), 2),
}


# Digits as speech recognition writes them ("for" 4, "to"/"too" 2, "won" 1, "ate" 8), a run of them
# that ends the clause or a keypad's next key: read only right after a code's "is".
_HEARD_ONE = r"(?:four|for|fore|two|to|too|one|won|eight|ate|oh|zero|three|five|six|seven|nine)"
HEARD = re.compile(
    rf"(?i){_HEARD_ONE}(?:[ \t,\-]+{_HEARD_ONE}){{3,7}}(?=[ \t,]*(?:$|[.!;]|and\b|then\b|press\b|enter\b|off\b|#))"
)


def said_in_pairs(text: str, at: int, end: int | None = None) -> tuple[int, int] | None:
    """Digits said in pairs at ``at`` (four to twelve of them, one number at least said as a pair),
    not a year said as one ("nineteen eighty-four", "twenty twenty-three")."""
    m = SAID_PAIRS.match(text, at, len(text) if end is None else end)
    if m is None:
        return None
    if (pause := max(m.group(0).rfind("..."), m.group(0).rfind("…"))) >= 0:
        # a speaker's false start ("six... sixty-six, twelve, eighty"): what follows the last pause,
        # read once (no pause left in it, or nothing)
        after = re.match(r"[.…]+[ \t]*", m.group(0)[pause:])
        m = SAID_PAIRS.match(text, m.start() + pause + (after.end() if after else 0), len(text) if end is None else end)
        if m is None or "..." in m.group(0) or "…" in m.group(0):
            return None
    words = re.findall(r"[a-z]+", m.group(0).lower())
    if not any((w in _WORD_DIGITS and _WORD_DIGITS[w] == 2) or w in ("double", "triple") for w in words):
        return None  # all single digits: SAID's
    digits, tens = 0, False
    for w in words:
        if w in ("double", "triple"):
            digits += 1 if w == "double" else 2
        elif w in _WORD_DIGITS:
            if tens and _WORD_DIGITS[w] == 1 and w not in ("oh", "zero"):
                tens = False  # "sixty-one": one number of two digits
                continue
            digits += _WORD_DIGITS[w]
            tens = w.endswith("ty")
        else:
            tens = False
    year = re.fullmatch(
        r"(?i)(?:nineteen|twenty)[\s\-]+(?:(?:oh|zero)[\s\-]+\w+|\w+(?:[\s\-]+\w+)?)", m.group(0).strip()
    )
    if not 4 <= digits <= 12 or (digits == 4 and year is not None):
        return None
    return m.start(), m.end()


COMBINATION = re.compile(
    rf"(?i)(?>(?:先\s*+)?(?:right|left|r|l|(?:向|往)?左|(?:向|往)?右)\s*+(?:转\s*+)?(?:(?:three\s+times\s+)?to\s*+|[一两二三四]圈(?:到|停在)?|到|停在)?\s*+"
    rf"(?:\d{{1,2}}|{NUM_WORD}|[a-z]+ty(?:-[a-z]+)?|eleven|twelve|[a-z]+teen|{CN_NUMBER})"
    r"[\s,，、;；.]*+(?:then\s+|and\s+|再|然后|最后)?){2,}"
)

CAPS_CODE = re.compile(r"(?=[A-Z0-9]*\d)(?=[A-Z0-9]*[A-Z][A-Z0-9]*[A-Z])[A-Z0-9]{5,10}(?![\w\-])")
# In groups, as activation and backup codes are printed: "7DH4 9PXK 2MWE", "KQ7M-PX3R-TN9W-BV2L".
GROUPED_CODE = re.compile(
    r"(?=[A-Z0-9 \-]{0,30}\d)(?=[A-Z0-9 \-]{0,30}[A-Z])[A-Z0-9]{3,5}(?:[ \-][A-Z0-9]{3,5}){0,3}[ \-][A-Z0-9]{2,5}(?![\w\-])"
)
LOWER_CODE = re.compile(r"(?=[a-z0-9]*\d)(?=[a-z0-9]*[a-z])[a-z0-9]{6,10}(?![\w\-])")
# A keypad's with a letter key: "C4921".
KEYPAD_CODE = re.compile(r"[A-D]\d{4,8}(?![\w\-])")

PROMOTION = re.compile(r"(?i)%|\boff\b|discount|checkout|coupon|promo|\bsale\b|\bsave\b|折|优惠|满减")

REFERENCE_CODE = re.compile(r"(?i)confirmation|check[\s\-]?in|booking|reference|order|tracking|promo|discount|coupon")


def _turns(said: str) -> int:
    """How many turns of a dial ``said`` holds ("左转三圈停在 17，右转停在 42，左转停在 8": three)."""
    return len(re.findall(r"(?i)\b(?:left|right)\b|[左右]", said))


# The turns written number first: "27 left, 14 right, 3 left".
COMBINATION_AFTER = re.compile(
    rf"(?i)(?>(?:\d{{1,2}}|{NUM_WORD}|[a-z]+ty(?:-[a-z]+)?|eleven|twelve|[a-z]+teen)\s*+(?:to\s+the\s+)?(?:left|right)\b"
    r"[\s,，、;；.]*+(?:then\s+|and\s+)?){2,}"
)

SPELL_ITEM = (
    rf"(?:(?:capital|uppercase|upper|lowercase|lower|small|大写的?|小写的?)\s*)?(?:[A-Za-z0-9]|{NUM_WORD}|[{CN_DIGIT}]"
    r"|alpha|bravo|charlie|delta|echo|foxtrot|golf|hotel|india|juliett?|kilo|lima|mike|november|oscar|papa|quebec"
    r"|romeo|sierra|tango|uniform|victor|whiskey|x-?ray|yankee|zulu|[A-Za-z]\s+as\s+in\s+[A-Za-z]+"
    r"|at\s+sign|at符号|下划线|underscore|dash|hyphen|exclamation\s+marks?|感叹号)(?![A-Za-z])"
)

SPELLED = re.compile(
    # The separator is atomic: a run of spaces is never split again (it was exponential on "a b c    !").
    rf"(?i)(?<![A-Za-z]){SPELL_ITEM}(?:(?>(?:[\s,，、]+|\s*(?:then|and|然后|再|，然后)\s*)+){SPELL_ITEM}){{3,}}"
)

TOKEN = re.compile(r"[^\s，。；;,'\"“”‘’()（）<>\[\]{}]{4,64}")

QUOTED = re.compile(r"[\"'“‘「『]([^\"'”’」』\n]{3,64})[\"'”’」』]")

HYPHENATED = re.compile(r"[A-Za-z]{3,}(?:-[A-Za-z0-9]{2,}){2,5}\b")

WORDS = re.compile(r"[A-Za-z]{3,}(?:[ \-][A-Za-z]{3,}){2,5}\b")

CJK = re.compile(r"[\u4e00-\u9fff]")

NEW = re.compile(
    r"(?i)\bnew\b|\bnow\b|\b(?:changed|changes|reset)\s+(?:it\s+)?to\b|新|改成|换成|改为|重置成|重置为|设成|设为"
)


def is_placeholder(value: str) -> bool:
    """``<token>``, ``{secret.Value}``, ``your-access-key``, ``***``, ``changeme`` …"""
    return PLACEHOLDER_VALUE.match(value.rstrip(";,.")) is not None


def classes(value: str) -> int:
    """Kinds of characters in ``value``: lower, upper, digit, symbol (not ``_ - .``), Chinese."""
    return (
        any(c.islower() for c in value)
        + any(c.isupper() for c in value)
        + any(c.isdigit() for c in value)
        + any(not c.isalnum() and c not in "_-." for c in value)
        + bool(CJK.search(value))
    )


def token_value(value: str) -> bool:
    """A password-like token: two kinds of characters at least, 6+ long (4+ with three kinds), not
    a place, a call or a placeholder."""
    value = value.rstrip(".:!?")  # a sentence's end, not the password's (a "!" inside stays)
    if "://" in value or value.count("/") > 1 or "(" in value or PLACEHOLDER_VALUE.match(value):
        return False
    if any(value.lower().startswith(w) for w in ("http", "www.", "ssh", "sudo")):
        return False
    kinds = classes(value)
    return (kinds >= 2 and len(value) >= 6) or (kinds >= 3 and len(value) >= 4)


PASSWORD_NAME = re.compile(
    r"(?i)pw|p/w|pwd|passwd|passwords?|" + MISSPELT_PASSWORD + r"|passphrase|pass\s?code|密码|口令"
)


def value_at(text: str, at: int, cue: str, connector: str) -> tuple[int, int] | None:
    """The span of the value starting at ``at`` (after spaces and an opening quote), or None."""
    explicit = bool(connector)
    at = FILLER.match(text, at).end()  # type: ignore[union-attr]  # it matches the empty string
    code = not PASSWORD_CUE.match(cue)
    safe = re.search(r"(?i)safe|combination|combo|lock|保险|锁", cue) is not None
    if safe and (m := COMBINATION_AFTER.match(text, at)):
        return m.start(), m.end()
    if (m := COMBINATION.match(text, at)) and m.end() - m.start() >= 6 and (safe or _turns(m.group(0)) >= 3):
        return m.start(), m.end()
    if safe and ((m := DIAL.match(text, at)) or (m := CN_GROUPS.match(text, at))):
        return m.start(), m.end()
    if re.fullmatch(r"(?i)safe|locker|lockbox|padlock|key\s?box|\w+\s+lock", cue):
        # The word alone: a dial's numbers, or digits after "is"/"set to" — or right after a lock
        # that is always a combination ("bike lock 4471"), not a year.
        combination = re.fullmatch(r"(?i)(?:bike|bicycle|cable|luggage|suitcase|combination)\s+lock", cue) is not None
        m = (DIGITS.match(text, at) or THREE_DIGITS.match(text, at)) if explicit or combination else None
        return (m.start(), m.end()) if m and (explicit or not YEAR.fullmatch(m.group(0))) else None
    # Not a closing quote (a straight one right after a word); “ ‘ 「 『 only ever open.
    if (m := QUOTED.match(text, at)) and (text[at] in "“‘「『" or not (at > 0 and text[at - 1].isalnum())):
        inner = m.group(1)
        if inner != inner.strip() or "(" in inner or "=" in inner:
            return None  # a closing quote and the next opening one, not a value
        if connector.strip() == "说" and not re.search(r"[0-9A-Za-z]", inner):
            return None  # what was said, not a watchword: "物业说「补办要五十块」"
        if (
            re.search(r"(?i)pin", cue)
            and " " in inner
            and re.search(r"[A-Za-z\u4e00-\u9fff]", inner)
            and not SAID.search(inner)
        ):
            return None  # a PIN is not a phrase: "PIN? It's 'sign in from another device'"
        phrase_or_mixed = " " in inner or classes(inner) >= 2
        counted = code and re.fullmatch(r"\d{4,12}", inner) is not None  # "取件码『40937718』"
        if (
            (explicit or phrase_or_mixed or counted)
            and not PLACEHOLDER_VALUE.match(inner)
            and not inner.endswith((":", "："))
        ):
            # "is 'pancake'", not name="password" nor {'password': 'not-the-right-one'}
            spoken = len(inner) >= 6 and connector.strip() not in ("", "=", ":")
            if classes(inner) >= 2 or " " in inner or spoken or re.fullmatch(r"\d{4,}", inner):
                return m.start(1), m.end(1)
        return None
    if m := SPELLED.match(text, at):
        items = re.findall(SPELL_ITEM, m.group(0), flags=re.I)
        if len(items) >= 4 and (not code or any(not i.isdigit() for i in items)):
            return m.start(), m.end()
    if m := DIGITS.match(text, at):
        return m.start(), m.end()
    # A dial's, where a lock is named just before: "那把锁是密码的，拧到6 4 8" (not an oven's "turn it to 180").
    dial = re.fullmatch(r"(?i)(?:转|拨|拧|调|扭)到|turn(?:ed)?\s+(?:it\s+)?to", connector.strip()) is not None
    near_lock = dial and re.search(r"(?i)lock|safe|dial|锁|保险", text[max(0, at - 60) : at]) is not None
    if (safe or near_lock) and explicit and ((m := THREE_DIGITS.match(text, at)) or (m := CN_THREE.match(text, at))):
        return m.start(), m.end()  # a padlock's: "拨到3-8-1", "三位数的密码锁：四零九"
    if (m := CN_DIGITS.match(text, at)) or (m := SAID.match(text, at)):
        return m.start(), m.end()
    if (span := said_in_pairs(text, at)) is not None:
        return span
    if code and explicit and (m := HEARD.match(text, at)):  # speech recognition's: "is for to won oh, then …"
        return m.start(), m.end()
    if (m := CN_SPLIT.match(text, at)) and sum(c in CN_DIGIT for c in m.group(0)) >= 4:
        return m.start(), m.end()
    if code and not safe:
        # A code is digits — or letters and digits in capitals where it opens something: "pickup code
        # 4KT7QZ", "access code HDFS4YIW", "activation code: 7DH4 9PXK 2MWE" (not a booking's or an
        # order's reference); after an explicit "is"/":", one in lower case ("join code: k3xq7bf", not
        # a hex digest) or one mixing three kinds of characters ("登录码 DY-kd83Jq2m").
        if REFERENCE_CODE.search(cue):
            return None
        m = CAPS_CODE.match(text, at) or GROUPED_CODE.match(text, at)
        if m is None and (explicit or ONE_TIME.search(cue)):
            m = LOWER_CODE.match(text, at)
            if m is not None and re.fullmatch(r"[0-9a-f]+", m.group(0)):
                m = None
        if m is None and explicit:
            m = KEYPAD_CODE.match(text, at)
        t = TOKEN.match(text, at) if m is None else None
        # (not the sentence going on: "door code会在check-in当天2pm短信发")
        if t is not None and len(t.group(0)) >= 8 and classes(t.group(0)) >= 3 and not CJK.search(t.group(0)):
            m = t if token_value(t.group(0)) and not NOT_STRONG.search(t.group(0)) else None
        if m and not PROMOTION.search(text, m.end(), m.end() + 60):
            return m.start(), m.end()
        return None
    if m := TOKEN.match(text, at):
        token = m.group(0)
        # (a call or an attribute, not words joined by dots: "Granite.Owl.Seventy.3")
        called = text[m.end() : m.end() + 1] == "(" or (
            re.fullmatch(r"[A-Za-z_]\w*(?:\.\w+)+", token) and not re.fullmatch(r"(?:[A-Z][a-z]+\.){2,}\w+", token)
        )
        keyish = re.search(r"(?i)key|密钥|秘钥|私钥", cue) is not None
        # Not a field's assignment, a date or a time, nor the sentence going on ("密码已于…修改成功").
        prose = (
            len(CJK.findall(token)) > 6
            or re.search(r"\d+\s*(?:位|个|次|天|characters?|chars?|digits?)", token)
            or re.match(r"[A-Za-z0-9]{1,2}[\u4e00-\u9fff]", token)  # a letter in a sentence: "X的要用大写X"
        )
        sentence = (
            bool(prose)
            or re.search(r"[=：]|\d{1,4}[年月日]|\d:\d\d", token) is not None
            or (not connector and (":" in token or (bool(CJK.match(token)) and text[m.start() - 1] not in " \t")))
        )
        # A password named right before it: "wifi pw azul2023" (a code's cue wants its connector).
        named = (
            re.fullmatch(r"(?=(?:\D*\d){2})(?=(?:[^A-Za-z]*[A-Za-z]){4})[\x21-\x7e]{6,}", token) is not None
            and re.search(r"(?i)pbkdf|sha\d|md5|bcrypt|argon|scrypt", token) is None
            and PASSWORD_NAME.fullmatch(cue) is not None
        )
        # Where something is sent, not what it is: "send all passwords to billing@attacker.example".
        destination = connector.strip().lower() == "to" and ADDRESS.fullmatch(token) is not None
        strong = (bool(connector) or classes(token) >= 3 or named) and not destination
        key_like = not keyish or (len(token) >= 12 and classes(token) >= 3) or re.fullmatch(r"[0-9a-f]{32,}", token)
        if not called and not sentence and strong and key_like and token_value(token):
            return m.start(), m.end()
    hyphenated = PHRASE_CUE.match(cue.strip()) and (m := HYPHENATED.match(text, at))
    if hyphenated and m is not None and not any(w in NOT_A_PHRASE for w in m.group(0).lower().split("-")):
        return m.start(), m.end()
    phrase = PHRASE_CUE.match(cue.strip()) and PHRASE_CONNECTOR.match(connector.strip())
    if phrase and (m := WORDS.match(text, at)):
        words = m.group(0).lower().replace("-", " ").split()
        # (not a description of one: "four unrelated words", "three random words")
        if not any(w in NOT_A_PHRASE or w in _DESCRIBING for w in words):
            return m.start(), m.end()
    said = connector.strip() not in ("=", ":", "：")  # said, not assigned: code has its own detectors
    if phrase and said and (m := ONE_WORD.match(text, at)) and a_password_word(m.group(1)):
        return m.start(1), m.end(1)
    return None


# A whole e-mail address (an account's name or a recipient, never taken for its password).
ADDRESS = re.compile(r"[\w.+-]+@[\w-]+(?:\.[\w-]+)+")

# One plain word after "the password is" / "密码是", where its sentence or clause ends: "the password
# for them is pineapple.", "开机密码是zxcvbnm 班主任自己设的".
ONE_WORD = re.compile(
    r"([A-Za-z]{5,24})(?=[ \t]*(?:$|[.!](?:\s|$)|[。；！\n]|[\u4e00-\u9fff]|all\s+(?:lower|small|caps)"
    # or a comma, then how it is spelled: "is chaichai, c-h-a-i twice", "is bluebird, then 1955"
    r"|,[ \t]*(?:then\b|all\b|lower|upper|capital|no\s+spaces|spel(?:led|t)\b|[a-z](?:-[a-z]){2,})"
    # or how it is written, in Chinese: "是 moleculardynamics，全小写，没有空格"
    r"|[，,][ \t]*(?:(?:全|都是?|全部)?[小大]写|(?:没有|不带|无)空格)))"
)

NOT_A_PASSWORD_WORD = frozenset(
    "incorrect mandatory optional protected expired invalid empty blank unknown default simple complex"
    " visible encrypted public private ready below above attached inside printed okay fine none"
    " needed correct required wrong hidden secret changed different temporary sensitive strong"
    " unchanged unique random secure insecure easy obvious right there here same broken stale lowercase"
    " uppercase outdated obsolete compromised leaked working invalid simple short long mixed current active"
    " updated accepted rejected locked".split()
)


def a_password_word(word: str) -> bool:
    """A word that may be a password rather than say what a password is ("incorrect", "required",
    "expiring", "changed")."""
    lower = word.lower()
    if lower in NOT_A_PHRASE or lower in NOT_A_PASSWORD_WORD:
        return False
    return not lower.endswith(("ing", "ed", "ly", "able", "ible", "ful", "less", "ous", "ive"))


MIXED = re.compile(
    r"(?<![\w@./:\-])(?=[^\s，。；;,'\"“”‘’()（）]*\d)(?=[^\s，。；;,'\"“”‘’()（）]*[A-Za-z])[^\s，。；;,'\"“”‘’()（）]{8,40}"
)


def shaped_in(
    text: str, start: int, end: int, cue: str, *, said: bool = False, own: bool = True
) -> tuple[int, int] | None:
    """A value that says what it is by its shape, anywhere in the words after a cue: spelled out
    letter by letter, digits said as words, a dial's turns; in the cue's ``own`` sentence, a token
    of three kinds of characters a few words on ("密码统一 Js@Welcome88"); once a connector has been
    said (or anywhere in a reply), a token of letters and digits (what follows a description: "the
    pinyin of …, mingtian888")."""
    safe = re.search(r"(?i)safe|combination|combo|lock|保险|锁", cue) is not None
    window = text[start:end]
    replies = (DIGITS, CN_SPLIT) if said else ()
    dials = (COMBINATION, COMBINATION_AFTER, CN_GROUPS, DASHED) if safe else ()
    for m in SAID_PAIRS.finditer(text, start, end):
        if (span := said_in_pairs(text, m.start(), end)) is not None and not WHEN_OR_HOW_MUCH.search(
            text, max(start, span[0] - 16), span[0]
        ):
            return span  # (not a time said: "gate B thirty six boarding at ten forty")
    for pattern in (SPELLED, SAID, CN_DIGITS, *replies, *dials):
        for m in pattern.finditer(text, start, end):
            if pattern is SPELLED and not re.search(r"[A-Za-z]", m.group(0)):
                continue
            if pattern is COMBINATION and m.end() - m.start() < 6:
                continue
            if pattern is SAID and WHEN_OR_HOW_MUCH.search(text, max(start, m.start() - 16), m.start()):
                continue  # a time said
            return m.start(), m.end()
    if not PASSWORD_CUE.match(cue):
        # A code said further on in its clause, once a connector has been said: "code is the house
        # number twice so 1717", "set the combo to my bday 0614".
        bare = re.fullmatch(r"(?i)safe|locker|lockbox|padlock", cue) is not None  # a locker's number is not its code
        if own and not bare and (connector := CONNECTOR.search(window)) is not None:
            for m in DIGITS.finditer(text, start + connector.end(), end):
                if plain_number(text, start, m.span()):
                    return m.start(), m.end()
        # A one-time code a few words on, no connector: "OTP 来了 882 471", "动态口令牌显示 804 127".
        sent = DIGITS.search(text, start, min(end, start + 24)) if own and ONE_TIME.search(cue) else None
        if (
            sent is not None
            and plain_number(text, start, sent.span())
            and not PHONE_BEFORE.search(text, start, sent.start())
        ):
            return sent.start(), sent.end()
        return None
    # A token of three kinds of characters a few words after a password's name: "密码统一 Js@Welcome88".
    near = min(end, start + 24) if own else start
    for m in MIXED.finditer(text, start, near if not KEPT_IN.search(text, start, near) else start):
        token = m.group(0)
        if m.end() == near and m.end() < len(text) and not text[m.end()].isspace():
            continue  # cut short by the window ("1Passwor")
        if LABELLED.match(token):
            continue  # a label, then its number: "钥匙编号K-03"
        if len(token) >= 8 and classes(token) >= 3 and token_value(token) and not NOT_STRONG.search(token):
            return m.start(), m.end()
    connector = CONNECTOR.search(window)
    if connector is not None and OTHER_NUMBER.search(text, start, start + connector.start()):
        return None  # another number's "is": "密码改了，学号是 20210344"
    if connector is not None or said:  # in a reply, what is said is the value: "项目名拼音加年份，yunhe2024"
        after = start + connector.end() if connector is not None else start
        field = re.compile(r"[=:：]").search(text, after, end)  # the next field's: not this value's words
        stop = field.start() if field else end
        if KEPT_IN.search(text, after, stop):
            return None  # where it is kept: "is in 1Password under 'pg-prod-02 / reporting'"
        for m in MIXED.finditer(text, after, stop):
            token = m.group(0)
            letters, digits = sum(c.isalpha() for c in token), sum(c.isdigit() for c in token)
            if (
                letters >= 2
                and digits >= 2
                and token_value(token)
                and not re.search(r"[=:/?&]|^0x", token)
                and not re.fullmatch(r"(?i)[0-9a-f]{8}(?:-[0-9a-f]{4}){3}-[0-9a-f]{12}", token)  # a request's id
                and not _REFERENCE_BEFORE.search(text, max(after, m.start() - 16), m.start())  # "order ref SG-0098812"
            ):
                return m.start(), m.end()
        if connector is not None and own:
            # Digits, after a description of them: "密碼是他生日 0621" (not a time, an amount, a year).
            for m in DIGITS.finditer(text, after, stop):
                if plain_number(text, start, m.span()):
                    return m.start(), m.end()
    return None


# A number named as something else just before a connector: its value is not the cue's.
OTHER_NUMBER = re.compile(r"(?:学号|工号|手机号|电话|卡号|订单号|单号|编号|房号|尾号|流水号|会员号|座号)[ \t]*\Z")
_REFERENCE_BEFORE = re.compile(
    r"(?i)\b(?:ref|reference|order|invoice|ticket|case|booking|tracking|account|customer)\s*(?:no\.?|number|#)?\s*[:#]?\s*\Z"
)
LABELLED = re.compile(r"[\u4e00-\u9fff]*(?:编号|号码|号|单)[A-Za-z0-9]")
_DESCRIBING = frozenset("words letters characters digits unrelated random".split())
# A code sent once, to prove a login: its digits may follow a few words after its name.
ONE_TIME = re.compile(r"(?i)otp|2fa|verification|one[\s\-]time|sms|验证码|动态码|动态口令|校验码")
# Where a code was sent, not the code: "验证码已发送至尾号3381的手机", "sent to the mobile ending 42".
PHONE_BEFORE = re.compile(r"(?i)尾号|后四位|手机|\bending(?:\s+in)?\b|\blast\s+(?:four|4)\b|\bmobile\b|\bphone\b")
# Where a password is kept, said instead of it.
KEPT_IN = re.compile(r"(?i)1password|bitwarden|lastpass|keepass|dashlane|\bvault\b|密码本|保险库")


# Not a password said a few words after its name: a password manager's name, a field, a path, a
# status code, a placeholder.
NOT_STRONG = re.compile(r"(?i)1password|bitwarden|lastpass|keepass|dashlane|[=/\[\]{}()<>*:：]|^0x[0-9a-f]+$|x{3,}")
