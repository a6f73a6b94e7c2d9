"""What names a credential, and what says a value is not one: the words ``secret_cues.py`` reads
by (a cue, a connector, a speaker's fillers, the words of an expired or a placeholder value, the
codes that open nothing)."""

from __future__ import annotations

import re

NUM_WORD = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|niner)"
CN_DIGIT = "零〇洞幺拐一二两三四五六七八九壹贰貳叁參肆伍陆陸柒捌玖"  # and the capital ones of cheques
CN_NUMBER = rf"[{CN_DIGIT}十]{{1,4}}"

# Cues: what names a credential. A code is named by what it opens or proves ("gate code"), or by
# any word before "code" unless that word says it opens nothing (NOT_A_SECRET_CODE).
# What a code opens, after "the code for/to …".
_OPENS = (
    r"(?:door|gate|alarm|safe|keypad|lock|locker|lockbox|padlock|garage|entry|building|storage\s+unit|storage|shed"
    r"|room|elevator|lift|parking|pool|gym|ipad|iphone|phone|house|apartment|flat|unit|complex|bike|mailbox|box|wifi"
    r"|bin\s+store|cupboard|cabinet|cage)"
)
CODE_CUE = (
    r"(?:door|gate|alarm|disarm|safe|keypad|lock|locker|lockbox|padlock|garage|entry|building|front\s+door"
    r"|host|access|verification|security|one[\s\-]time|login|check[\s\-]in|confirmation|authentication|auth"
    r"|otp|2fa|sms|unlock|bike\s+room|mailbox|voicemail|alarm\s+panel|kiosk|storage|room|elevator|parking|pool"
    r"|gym|ipad|iphone|phone|screen|house|apartment|unit|complex|bike|backup|recovery)(?:\s+\w{1,6})?\s+(?:pass)?(?:codes?|pin|combo|combination)"
    r"|gate|(?<!next\s)(?<!next-)door|keypad|intercom|otp|disarm|key\s?safe|(?:manager|master|till|admin|staff|supervisor)\s+override|override\s+(?:code|pin)|(?:2fa|mfa)(?:\s+backup)?|(?<!last\s)(?<!first\s)(?:four|six|eight|4|6|8)[\s\-]digits?(?:\s+(?:code|pin|passcode|otp))?\b|security\s+number"
    r"|\b(?:use|enter|dial|punch\s+in)\s+code"
    # Any other code named by what it is for (a locker's, a parcel's, an app's): unless that word
    # says it opens nothing (NOT_A_SECRET_CODE). Its value is digits.
    r"|(?!(?:the|this|that|these|those|its|new|old|same|any|some|your|our|their|his|her|which|what)\s)"
    r"[A-Za-z]{3,}\s+codes?"
    # … and what it opens after it: "a single code for the luggage room, 3 0 0 9"
    + r"(?:\s+(?:for|to|of|on)\s+(?:the\s+|my\s+|your\s+|our\s+|their\s+)?(?:\w+\s+)?"
    + _OPENS
    + r")?"
    # The same, said the other way round: "the code for the storage unit", "the code to the shed".
    r"|codes?\s+(?:for|to|of|on)\s+(?:the\s+|my\s+|your\s+|our\s+|their\s+)?(?:\w+\s+)?"
    + _OPENS
    # what it does: "the code to get into Sophie's building", "the code to unlock it"
    + r"|codes?\s+to\s+(?:get\s+in(?:to)?|open|unlock|disarm|verify|log\s+in|sign\s+in)\b"
)
# The commonest misspellings of "password": "pasword", "passwrd", "passowrd", "pssword".
MISSPELT_PASSWORD = r"pas?s?w(?:o?r|ro)ds?|passowrd|pss?word"  # noqa: S105 (a pattern, not a password)
CUE = re.compile(
    r"(?i)(?<![A-Za-z0-9_<{$/.:@\-])(?:"
    r"passwords?|passwd|pwd|pw|p/w|passphrase|pass\s?code|pass\s?key|pass(?=\s*[:=]|\s+(?:for|is|to\b))"
    r"|(?:temp(?:orary)?|new|default|initial)\s+pass(?![\w\-])|passnumber|(?:[itm]-?)?pins?(?!\s*\d{1,2}(?![\d.,:/\-–]|\s*\d)|(?<=s)\s*\d\s*[\-–]\s*\d{1,2}(?![\d\-–])|\s+(?:diagram|header|map|mapping|assignments?|layout)\b)(?:\s+(?:code|number))?"
    r"|" + MISSPELT_PASSWORD + r"|" + CODE_CUE + r"|combo|combination|cvv|cvc|csc"
    r"|(?:host|master|admin|wi-?fi|wpa2?|network|encryption|aes|signing|secret|api|access|private|resource|subscription"
    r"|account|storage|service|client|app|auth|licen[cs]e|product|root)[\s_\-]?key"
    r"|psk|pre-?shared[\s_\-]?key|(?:shared|enable|radius|client|app|webhook|signing)[\s_\-]secret|(?:security|memorable)\s+word"
    r"|code\s?word|(?:security|secret)\s+answer|parental\s+(?:lock|controls?)(?:\s+(?:pin|code|passcode))?"
    r")(?![A-Za-z0-9_>}@\-])"
    r"|密码锁|密码盒|密码箱|密码|口令|暗号|密钥|秘钥|私钥|验证码|取[件餐货物]码|提货码|签收码|收货码|核销码|备用码|恢复码|临时码"
    r"|(?:[四五六八]|\d)位(?:数字?)?的?码|校验码|动态码|安全码|开锁码|门禁码?|门锁|保险柜|保险箱|PIN码"
    r"|大门|单元门|车库门|密码锁|通行码|开门码|锁屏|门口键盘|(?:开柜|柜|开箱|解锁|授权|撤防|布防)码"
    r"|万能码|查询码|登录码|登陆码|激活码|访问码|动态口令|接口\s*(?i:key)|短信码|开闸码|电子锁|智能锁|指纹锁|储物柜"
    # A safe, a locker, a padlock: their value must look like a dial's numbers (36-14-52).
    r"|(?i:(?<![a-z])(?:safe|locker|lockbox|padlock|key\s?box|(?:bike|bicycle|cable|luggage|suitcase|combination)\s+lock)(?![a-z]))"
    r"|(?i:(?<![a-z])(?:(?:keepass(?:xc)?|bitwarden|1password|lastpass)\s+master|master\s+(?:password|pass|pw|key))(?![a-z]))"
)
# What a code is when it opens nothing: the words before "code", the characters before "码".
# The words before "code" that say it opens nothing, or that it is a program's code.
NOT_A_SECRET_CODE = frozenset(
    "zip post postal area country dial dialing dialling promo promotion promotional discount coupon voucher"
    " vouchers gift referral invite invitation product item sku tax tariff sort swift bic routing branch airport"
    " iata flight booking reservation reference ref tracking order course class module dress color colour source"
    " machine byte qr bar language currency medical icd cpt diagnosis billing program fault trouble diagnostic"
    " obd dtc event reason result type status error exit return response http cost budget project job client"
    " customer account sample example cheat morse short more less python java javascript rust html css sql"
    " legacy production test dead app application backend frontend server library starter template"
    " generated compiled native open review clean good bad nice secret name zoom teams meeting webex skype conference"
    " dial-in".split()
)


def names_no_secret(cue: str) -> bool:
    """A code's cue whose word says the code opens nothing ("zip code", "source code", "error
    code"; "the code" is no cue at all)."""
    m = re.match(r"(?i)([A-Za-z]{3,})\s+codes?(?![A-Za-z])", cue)
    return m is not None and m.group(1).lower() in NOT_A_SECRET_CODE


# A password's name (what may be followed by any kind of value); every other cue names a code.
# (A passkey is a device's: named by a code's digits, "the parental passkey is 2 8 1 0".)
PASSWORD_CUE = re.compile(
    r"(?i)pass(?!\s?key)|pas?w|pssw|p/w|pw|密码(?!锁|盒|箱)|口令|暗号|(?!pass\s?key).*key(?!pad)|密钥|秘钥|私钥|keepass|master|psk"
    r"|(?:security|memorable)\s+word|code\s?word|(?:security|secret)\s+answer"
)
CONNECTOR = re.compile(
    r"(?i)(?:\b(?:is|was|are|now|changed\s+to|set\s+to|reset\s+to|updated\s+to|to|be|it'?s|that'?s"
    r"|enter|dial|type|key\s+in|punch\s+in)\b|['’]s\b|输入|(?<!\d)[:=](?!//)|[：→]|->|是不是|(?<!不)是|为|為"
    r"|改成了?|换成了?|改为|设为|设成了?|设了(?=[ \t]*[\dA-Za-z])|设的是?|设置为|更新为|重置为|重置成了?|变成了?"
    # a dial's: "拨到3-8-1", "turn it to 4 1 7"
    r"|(?:转|拨|拧|调|扭)到|\bturn(?:ed)?\s+(?:it\s+)?to\b"
    # a value quoted after what is said or written: "说「蓝天863」", "写的是 …"
    r"|说(?=[ \t]*[「“\"'‘『])|\bopens\s+with\b)"
)
# A bridge between the cue and its connector may not end a sentence or a line.
# (Nor a speaker's pause right after "is"/"was": "the password for the lab machine is... correct horse".)
BRIDGE_END = re.compile(r"[\n。！？；;]|(?<!\bi\.e)(?<!\be\.g)(?<!\bis\.\.)(?<!\bwas\.\.)[.!?](?:\s|$)")
MAX_BRIDGE = 64
# What a speaker says between "is" and the value: "is, uh,", "是……", "是，嗯，", "is the word".
FILLER = re.compile(
    r"(?i)(?:[ \t\u3000,，…、:：—–]|\.{2,}|\b(?:uh|um|er|erm|like|so|okay|ok|well|just|the\s+word|actually|literally|simply|basically|still|now"
    r"|(?:a\s+|the\s+)?(?:new\s+|temporary\s+|temp\s+)?(?:value|code|pin))\b"
    r"|嗯|呃|啊|那个|就是){0,24}"  # bounded: a run of "PIN PIN PIN …" is not read to its end from every cue
)

EXPIRED = re.compile(
    r"(?i)\b(?:expired|no longer (?:valid|works?)|stopped working|used to be"
    r"|(?<!not )(?<!not the )old(?:\s+[\w-]+)?\s+(?:one|code|pin|password|passcode|combo|key)"
    r"|previous|former|revoked"
    r"|invalidated|deactivated|used it|already used|was used|were used|(?:['’]s|has|have|had)\s+already\s+been\s+used|is\s+used\s+now|used\s+up"
    r"|(?:can|could)\s+no\s+longer\s+be\s+used)\b"
    # (not a lifetime ahead: "一分钟后就失效了", "30 秒就过期")
    r"|作废|已过期|(?<!后就)(?<!秒就)(?<!钟就)(?<!后)过期了|已失效|(?<!后就)(?<!后)失效了|已使用|已被使用|用过了|已经换了"
    r"|以前的|旧的|老的|原来的|被取出|已取出|已取件|取回来了|取走了|拿回来了|没用了|不能用了"
    r"|(?i:\b(?:was|were|been|already)\s+(?:picked\s+up|collected)\b)"
    r"|(?<!不是)(?:原来|之前|以前)那个|输进去了|已经登上|登进去了|已经登录"
    r"|(?i:\b(?:timed\s+out\s+before|but\s+(?:i|we|they|he|she)\s+changed\s+it)\b)"
    r"|(?:今天|即日|当天)起失效|已经过期|过期没用|用掉了|已经取了|已经取走|登录上了|登上了"
    r"|已经?\s*(?:used|expired)|(?i:\b(?:no|doesn'?t\s+need\s+a|without\s+a|don'?t\s+need\s+a)\s+password\b)"
    r"|不需要密码|无需密码|没有密码|不用密码|免密码"
)
# A credential said to be needed by none ("访客WiFi不用密码", "no password needed for guests"): what it
# says of its own network, not of a password named after it in the sentence.
NOT_NEEDED = re.compile(
    r"(?i)\b(?:no|doesn'?t\s+need\s+a|without\s+a|don'?t\s+need\s+a)\s+password\b|不需要密码|无需密码|没有密码|不用密码|免密码"
)
# Revoked, said of the value right before it or after it on its line ("已经 revoke 掉了：ghp_…",
# "（LTAI…）已经禁用并删除了", "token … was revoked"): not of anything else in its sentence.
REVOKED = re.compile(
    r"已经?[^\n，。；]{0,16}?(?:revoke|禁用|删除|吊销|注销|停用)|(?:revoke|禁用|删除|吊销|停用)\s*(?:掉)?了"
    r"|(?i:\b(?:was|were|been|is|are|now|got)\s+(?:revoked|disabled|deleted|deactivated|rotated)\b"
    r"|\b(?:revoked|deactivated)\s+and\s+deleted\b|\brotated\s+out\b)"
)
PLACEHOLDER_VALUE = re.compile(
    r"(?i)^(?:<[^>]*>|<[A-Za-z_\u4e00-\u9fff][^\s>]*|\{\{?[^{}]*\}\}?|(?:[^\s]*[-_])?(?:example|do-not-use|dummy|placeholder|not[-_]real|fake)(?:[-_][^\s]*)?|\[[^\]]*\]|\$\{?[\w.]+\}?|%\w*%|x{3,}|\*+|•+|\.{3}|…|_{3,}|-{3,}|your[\w\-]*|example[\w\-]*"
    r"|changeme|placeholder|redacted|none|null|nil|empty|unset|n/a|tbd|todo|same|hidden|secret|password\d*)$"
)
# A phrase of plain words is a passphrase only after one of these names and an explicit "is"/":".
PHRASE_CUE = re.compile(
    r"(?i)^(?:passwords?|passphrase|pass|pwd|pw|wi-?fi\s+password|密码|code\s?word|(?:security|memorable)\s+word"
    r"|(?:security|secret)\s+answer)$"
)
PHRASE_CONNECTOR = re.compile(r"(?i)^(?:is|was|now|it'?s|:|：|=|是|为)$")
# Words that tell where or how a password is, not what it is.
NOT_A_PHRASE = frozenset(
    "the a an in on at of to for and or is it be not no never with from my your our their his her its this that these"
    " those stored saved kept written required needed changed reset rotated expired same still being set sent shared"
    " encrypted hashed hidden masked wrong incorrect correct invalid valid weak strong long short case sensitive"
    " managed handled generated available missing empty blank unknown different new old what where how who which"
    " too very also just only please here there any all some into onto via using use paste send sent type typed"
    " enter entered ask asked call called tell told give given get got will would should must can could may"
    " have has had been did does do don doesn won isn wasn"
    " user users account accounts login email mail manager vault file files note notes app".split()
)


# Traditional characters (and written Cantonese's commonest words: 係 "is", 咗 "done", 喺 "at" …)
# read as the simplified ones the cues are written in, one character for one: "密碼鎖係0529" is
# "密码锁是0529", and every position stays where it was.
_SIMPLIFIED = str.maketrans(
    "碼鑰為門經證鎖險號驗過櫃開問設車庫權個兩專單換寫題轉復複態輸錄刪銷認應鹽動廢舊來進當沒請發說時訪記詞詢餘額備統親決現該貨鍵盤變無並風規則長強確訴報麼間訂臨銀測試賬帳運維獲戶話費簾層樓鐘塊優滿減劃線嘆從於機項預網係咗嘅喺唔冇畀俾嗰啲邊嚟點鎖鑰碼撥調擰簽數佈後",
    "码钥为门经证锁险号验过柜开问设车库权个两专单换写题转复复态输录删销认应盐动废旧来进当没请发说时访记词询余额备统亲决现该货键盘变无并风规则长强确诉报么间订临银测试账账运维获户话费帘层楼钟块优满减划线叹从于机项预网是了的在不没给给那些边来点锁钥码拨调拧签数布后",
)


_TRADITIONAL = re.compile("[" + "".join(chr(c) for c in _SIMPLIFIED) + "]")


def simplified(text: str) -> str:
    """``text`` with the characters above replaced, the same length (a text holding none, as
    most do, is returned as it is: one scan, no copy)."""
    return text.translate(_SIMPLIFIED) if _TRADITIONAL.search(text) else text
