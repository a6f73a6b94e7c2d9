"""Secret detection: always on, before anything else looks at the text.

Each detector is a named pattern; :func:`find_secrets` returns the spans it found, and
:func:`mask` replaces them with ``[REDACTED:<kind>]``. A secret is never stored, forwarded or
logged in clear: in ``reject`` mode the item is refused, in ``redact`` mode the masked text goes on;
either way the audit keeps only the masked text and the hash.

Assignments (``password = …``, ``api_key: …``) count only when the value looks like a value —
not a placeholder (``***``, ``<token>``, ``xxx``), not a word that describes instead of
disclosing (``密码认证``, "password auth"): "决定用密钥认证不用密码" is a decision, not a leak.
"""

from __future__ import annotations

import base64
import math
import re
import urllib.parse
from collections import Counter
from dataclasses import dataclass

from memwarden.policies.secret_cues import EXPIRED, NEW, cued_secrets, expired_after
from memwarden.policies.secret_kinds import SecretFinding, word_automaton

__all__ = ["PLACEHOLDER", "SecretFinding", "SecretPattern", "find_secrets", "mask", "may_hold_secrets"]


@dataclass(frozen=True)
class SecretPattern:
    kind: str
    pattern: re.Pattern[str]
    group: int = 0  # the part of the match that is the secret
    # Words (casefolded) of which every match holds one: a text with none skips the pattern, which
    # is cheaper than letting ``re`` try it at every position.
    needs: tuple[str, ...] = ()


def _p(kind: str, regex: str, group: int = 0, flags: int = 0, needs: tuple[str, ...] = ()) -> SecretPattern:
    return SecretPattern(kind, re.compile(regex, flags), group, needs)


# A value must hold a letter or a digit: "密码：请找运维同事当面获取" tells where, it does not disclose.
_VALUE = r"((?=[^\s'\"`,;，；。]*[A-Za-z0-9])[^\s'\"`,;，；。]{6,})"
# After "is"/"是" a value must look like one (letters and digits): "password is stored in 1Password"
# describes, it does not disclose.
_STRICT_VALUE = r"((?=[^\s'\"`,;，；。]*\d)(?=[^\s'\"`,;，；。]*[A-Za-z])[^\s'\"`,;，；。]{6,})"
# A key's value (not a password's): letters and digits, or long — "MAX_TOKEN=128000" and
# "secret: false" are settings; it ends at "&" (the next parameter of a URL's query).
_KEY_VALUE = r"((?=[^\s'\"`,;，；。&]*\d)(?=[^\s'\"`,;，；。&]*[A-Za-z])[^\s'\"`,;，；。&]{6,}|[^\s'\"`,;，；。&]{20,})"
# A random value written right after a credential's name, with no "=" or "is": "auth token
# 8a0c1f…", "AppSecret 09a3…". Letters and digits, 16+: "token bucket", "secret sauce" are words.
_RANDOM = r"((?=[\w\-.+/=]*\d)(?=[\w\-.+/=]*[A-Za-z])[\w\-.+/=]{16,})"
# Names start after a non-alphanumeric: env and config names hold them ("MINIO_ROOT_PASSWORD=",
# "DD_API_KEY="), words do not ("1Password", "bypass").
_START = r"(?<![A-Za-z0-9])"
# Between a name and its value: a closing quote (JSON, YAML), a note in brackets ("secret
# (base32) ="), "is"/"为"/"是", the sign, an opening quote.
_ASSIGN = r"[\"']?(?:\s*\([^()\n]{0,24}\))?[ \t]*(?:is|为|是)?[ \t]*[:：=][ \t]*[\"']?"
# "… for the staging box", "… of our NAS": what a credential belongs to, between name and value.
_OWNER = r"(?:\s+(?:for|of|to|on|at|in)\s+(?:the\s+|my\s+|our\s+|this\s+)?[\w.@'-]+(?:\s+[\w.@'-]+){0,3})?"
_LOGIN_WORDS = r"(?:password|passwd|passphrase|passcode|pwd|pw|pass|密码|口令)"
_CREDENTIAL_NAMES = (
    r"(?:api[_\-\s]?key|apikey|access[_\-\s]?key(?:[_\-\s]?secret)?|secret[_\-\s]?access[_\-\s]?key"
    r"|secret(?:[_\-\s]?key)?|(?:app|client|consumer|shared|signing|webhook|jwt)[_\-\s]?secret"
    r"|(?:auth|access|refresh|session|bot|api)[_\-\s]?token|token|bearer"
    r"|(?:private|signing|encryption|master|license)[_\-\s]?key|密钥|秘钥|私钥|令牌)"
)
# A password said in words: "the wifi password for the office is Tr0ub4dor", "login pass is
# hunter2", "the passphrase was 'sunshine'". A bare "pass" needs a word that makes it a login's
# ("the mountain pass is 2300m" is not one).
_SPOKEN = (
    r"(?i)(?:\b(?:password|passwd|passphrase|passcode|pwd|pw)|\b(?:login|wifi|wi-fi|admin|root|account|user|ssh|vpn"
    r"|\w*mail|server|router|sudo|db|database)\s+(?:pass|pw)\b)" + _OWNER + r"(?:\s*\([^()\n]{0,24}\))?"
    r"\s+(?:is|was|are|=)\s+(?:now\s+)?"
)
# "changed the password to …", "set the VPN password to …": a new password given.
_SET_TO = (
    r"(?i)(?:\bset\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+)?(?:[\w-]+\s+){0,2}(?:password|passphrase|passcode|PIN)"
    r"|\b(?:password|passphrase|passcode)\s+(?:was\s+|is\s+|has\s+been\s+|got\s+|just\s+)?(?:changed|reset|updated|set))"
    r"\s+to\s*:?\s+"
)
_B32_GROUPS = r"((?=[A-Za-z ]*[2-7])(?:[A-Za-z2-7]{4} ?){4,}[A-Za-z2-7]*)"
_CODES = r"((?=[\w \-]*\d)(?:[A-Za-z0-9]{4,10}(?:-[A-Za-z0-9]{4,10})?[\s,;，、]+){2,}[A-Za-z0-9]{4,10}(?:-[A-Za-z0-9]{4,10})?)"
# A password's characters (ASCII only: "至少8位包含字母A" after 密码 is a rule, not a value), and a
# value of them with a letter and a digit.
_PW = r"[A-Za-z0-9_!@#$%^&*+\-.=?~]"
_PW_VALUE = rf"((?={_PW}*\d)(?={_PW}*[A-Za-z]){_PW}{{6,}})"
# A command line that takes a password as an option: database clients, sshpass, registry logins,
# redis-cli, curl's user, any --password.
_CLI_OPTIONS = (
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb(?:-dump)?)\b[^\n]*?\s-p['\"]?([^\s'\"]{4,})",
    r"\bsshpass\s+-p\s*['\"]?([^\s'\"]{4,})",
    r"\b(?:docker|podman|helm|nerdctl|buildah|skopeo|oras)\s+(?:registry\s+)?login\b[^\n]*?\s-p[=\s]+['\"]?([^\s'\"]{4,})",
    r"\bredis-cli\b[^\n]*?\s-a\s+['\"]?([^\s'\"]{4,})",
    r"\bcurl\b[^\n]*?\s(?:-u|--user)[=\s]+['\"]?[^\s:'\"]+:([^\s'\"@]{4,})",
    r"--password(?:=|\s+)['\"]?([^\s'\"-][^\s'\"]{3,})",
)
# The end of a token that may end in "-": a word boundary, or a "-" with no word character or "-" after.
_END = r"(?:\b|(?<=-)(?![\w\-]))"

SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)",
        needs=("private key",),
    ),
    _p("anthropic_key", r"\bsk-ant-[A-Za-z0-9_\-]{20,}", needs=("sk-ant-",)),
    _p("openai_key", r"\bsk-(?:proj-|svcacct-|admin-)?[A-Za-z0-9_\-]{20,}", needs=("sk-",)),
    _p(
        "github_token",
        r"\b(?:gh[pousr]_[A-Za-z0-9]{30,}|github_pat_[A-Za-z0-9_]{22,})",
        needs=("ghp_", "gho_", "ghu_", "ghs_", "ghr_", "github_pat_"),
    ),
    # Written whole or split into groups ("AKIA IOSF ODNN 7EXA MPLE"); a split one needs a digit.
    _p(
        "aws_access_key",
        r"\b(?:AKIA|ASIA|AGPA|AIDA|AROA)(?:[ \-]?[0-9A-Z]){16}\b",
        needs=("akia", "asia", "agpa", "aida", "aroa"),
    ),
    _p("memwarden_key", r"\bmwk_[0-9a-f]{12}_[A-Za-z0-9_\-]{20,}", needs=("mwk_",)),
    # A token may end in "-": there ``\b`` never matches (issue #33: such a Google key passed as an id).
    _p("google_api_key", r"\bAIza[0-9A-Za-z_\-]{35}" + _END, needs=("aiza",)),
    _p("slack_token", r"\bx(?:ox[abposr]|app)-[A-Za-z0-9\-]{10,}", needs=("xox", "xapp-")),
    # Secret and restricted keys; a publishable key (pk_) is public by design.
    _p(
        "stripe_key",
        r"\b(?:sk|rk)_(?:live|test)_[A-Za-z0-9]{16,}|\bwhsec_[A-Za-z0-9]{24,}",
        needs=("sk_", "rk_", "whsec_"),
    ),
    # Vendors' documented token shapes, by their fixed prefix: the prefix is the vendor's promise
    # that the rest is a credential (GitLab, Hugging Face, Replicate, Groq, Shopify, DigitalOcean,
    # Supabase, New Relic, Postman, Grafana, Vault, npm, PyPI, Linear, Figma, Doppler, Mailgun,
    # SendGrid, Atlassian, Notion, Databricks, Perplexity, xAI, LangSmith, Sentry, Square, Age, Google
    # OAuth, Firebase, Mapbox, Terraform Cloud, Airtable, Twilio, Telegram and Discord bots).
    _p(
        "vendor_token",
        r"\b(?:gl(?:pat|dt|rt|ptt|cbt|soat)-[\w\-]{20,}|hf_[A-Za-z]{30,}|r8_[A-Za-z0-9]{30,}|gsk_[A-Za-z0-9]{40,}"
        r"|shp(?:at|ca|pa|ss)_[a-fA-F0-9]{32}|do[opr]_v1_[a-f0-9]{64}|sbp_[a-f0-9]{40}|NRAK-[A-Z0-9]{27}"
        r"|PMAK-[a-f0-9]{24}-[a-f0-9]{34}|glsa_[A-Za-z0-9]{32}_[a-f0-9]{8}|glc_[A-Za-z0-9+/]{32,}"
        r"|hv[sb]\.[\w\-]{24,}|npm_[A-Za-z0-9]{36}|pypi-AgEIcHlwaS5vcmc[\w\-]{50,}|lin_api_[A-Za-z0-9]{40}"
        r"|figd_[\w\-]{40}|dp\.(?:st|pt|ct|sa|scim|audit)\.(?:[\w\-]{2,35}\.)?[A-Za-z0-9]{40,}|key-[0-9a-f]{32}"
        r"|SG\.[\w\-]{22}\.[\w\-]{43}|ATATT3[\w\-=]{50,}|secret_[A-Za-z0-9]{43}|ntn_[A-Za-z0-9]{40,}"
        r"|dapi[a-f0-9]{32}|pplx-[A-Za-z0-9]{40,}|xai-[A-Za-z0-9]{60,}|lsv2_(?:pt|sk)_[a-f0-9]{32}_[a-f0-9]{10}"
        r"|sntr[ysu]_[\w=+/]{40,}|sq0(?:atp|csp)-[\w\-]{22,}|AGE-SECRET-KEY-1[0-9A-Z]{58}|ya29\.[\w\-]{24,}"
        r"|AAAA[\w\-]{7}:APA91b[\w\-]{100,}|sk\.eyJ[\w\-]{21,}\.[\w\-]{20,}|[A-Za-z0-9]{14}\.atlasv1\.[\w\-]{60,}"
        r"|pat[A-Za-z0-9]{14}\.[a-f0-9]{64}|SK[0-9a-f]{32}|\d{8,10}:AA[\w\-]{33}"
        r"|[MNO][A-Za-z\d]{23,25}\.[\w\-]{6}\.[\w\-]{27,38})" + _END,
    ),
    # Chinese clouds' access key ids and secrets: Tencent (AKID), Alibaba (LTAI), Volcengine
    # (AKLT), Baidu (ALTAK, bce-v3), JD Cloud (JDC_), DingTalk's signing secret (SEC + 64 hex).
    _p(
        "cloud_key",
        r"\b(?:AKID[A-Za-z0-9]{32}|LTAI[A-Za-z0-9]{12,20}|AKLT[\w\-]{30,}|ALTAK-[A-Za-z0-9]{20,}"
        r"|bce-v3/ALTAK-[\w/\-]{20,}|JDC_[A-F0-9]{28}|SEC[a-f0-9]{64})\b",
        needs=("akid", "ltai", "aklt", "altak", "jdc_", "sec"),
    ),
    _p(
        "azure_key",
        r"(?i)\b(?:AccountKey|SharedAccessKey)=([A-Za-z0-9+/]{40,}={0,2})",
        group=1,
        needs=("accountkey=", "sharedaccesskey="),
    ),
    _p("jwt", r"\beyJ[A-Za-z0-9_\-]{8,}\.eyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}", needs=("eyj",)),
    # The user may be empty ("redis://:pw@host").
    _p("connection_string", r"\b[a-z][a-z0-9+.\-]{1,20}://[^\s:/@]*:([^\s@/]{3,})@[^\s/]+", group=1, needs=("://",)),
    _p("connection_string", r"\bjdbc:oracle:[a-z]+:[^\s/@:]+/([^\s@/]{3,})@", group=1, needs=("jdbc:oracle:",)),
    # TOTP seeds: an otpauth:// URI's secret, or a base32 key named as a 2FA/MFA/TOTP key or seed.
    _p("totp_seed", r"(?i)\botpauth://[th]otp/[^\s?]*\?\S*?secret=([A-Z2-7]{16,})", group=1, needs=("otpauth://",)),
    _p(
        "totp_seed",
        r"(?i)\b(?:2fa|mfa|totp|otp|authenticator|two[\- ]factor)\s+(?:setup\s+|secret\s+|seed\s+)?(?:key|secret|seed)"
        + _OWNER
        + r"\s*(?:\([^()\n]{0,24}\))?\s*(?:is|was|[:：=])\s*"
        + _B32_GROUPS,
        group=1,
        needs=("2fa", "mfa", "otp", "authenticator", "two"),
    ),
    # A webhook's address is its credential: Slack's, and any ".../hook(s)/..." or
    # ".../webhook(s)/..." path ending in a random token (Discord, Feishu/Lark, Zapier, …).
    _p(
        "webhook_url",
        r"\bhttps?://(?:hooks\.slack\.com/(?:services|workflows|triggers)/[\w/]{20,}"
        r"|[^\s/?#]+/(?:[^\s?#]*/)?(?:web)?hooks?/(?:[^\s?#]*/)?(?=[\w\-]*\d)(?=[\w\-]*[A-Za-z])[\w\-]{20,})",
        needs=("hook",),
    ),
    # A credential in a URL's query ("?access_token=…", "&sig=…", "?key=…").
    _p(
        "url_credential",
        r"(?i)[?&](?:access_token|auth_token|token|api_?key|apikey|key|secret|client_secret|sig|signature|auth)="
        r"((?=[\w\-.~%+/=]*\d)(?=[\w\-.~%+/=]*[A-Za-z])[\w\-.~%+/=]{16,})",
        group=1,
        needs=("=",),
    ),
    _p(
        "password",
        r"(?i)" + _START + _LOGIN_WORDS + _ASSIGN + _VALUE,
        group=1,
        needs=("pass", "pw", "密码", "口令"),
    ),
    _p(
        "password",
        r"(?i)(?:\bpassword|\bpasswd|密码|口令)\s*(?:is|为|是)\s*" + _STRICT_VALUE,
        group=1,
        needs=("pass", "密码", "口令"),
    ),
    _p("password", _SPOKEN + r"[`'\"“‘]?" + _STRICT_VALUE, group=1, needs=("pass", "pw")),
    # A passphrase of one long run of letters: "the password is purplemonkeydishwasher".
    _p("password", _SPOKEN + r"([a-z]{14,})\b", group=1, needs=("pass", "pw")),
    # A password straight after its name, no "is": "password hunter2-Build-77", "密码 Zw@19880615",
    # "密码改成了 Jmp!8848Qz" (a letter and a digit in it: "password reset" is words).
    _p(
        "password",
        r"(?i)(?:\bpassword|\bpasswd|\bpwd|密码|口令|授权码)[ \t]*(?:改成了?|换成了?|改为|设为|设成了?|更新为|to)?[ \t]*[`'\"“‘]?"
        + _PW_VALUE,
        group=1,
        needs=("pass", "pwd", "密码", "口令", "授权码"),
    ),
    # A login and its password side by side: "admin / Kp!77router", "user jchen, pass Bl0ss0m#Tr33",
    # "design@acme.io / Pixel-Perfect-2024" after a word that says it is a login.
    _p(
        "password",
        r"(?i)\b(?:login|logs?\s+in\s+as|log\s+in\s+with|creds?|credentials|account|user(?:name)?)\b[^\n]{0,40}?"
        r"[\w.@+\-]{2,64}[ \t]*(?:/|,?[ \t]*(?:pass(?:word)?|pw|pwd)[ \t]*:?)[ \t]*[`'\"]?" + _PW_VALUE,
        group=1,
        needs=("login", "log", "cred", "account", "user"),
    ),
    # An app password or mail authorization code: random letters, no digit needed.
    _p(
        "password",
        r"(?i)(?:授权码|客户端专用密码|应用专用密码|app[ \-]specific password|app password)[ \t]*(?:是|为|is|[:：=])?[ \t]*"
        r"([A-Za-z0-9]{12,24}|[a-z]{4}(?: [a-z]{4}){3})\b",
        group=1,
        needs=("授权码", "专用密码", "app"),
    ),
    *(_p("cli_password", option, group=1, needs=("-p", "-a", "-u", "--user", "--password")) for option in _CLI_OPTIONS),
    # Go's MySQL DSN ("user:pass@tcp(host:3306)/db") and a JDBC call given the password.
    _p("connection_string", r"\b[\w.\-]+:([^\s@:/'\"]{4,})@(?:tcp|unix)\(", group=1, needs=("@tcp(", "@unix(")),
    _p(
        "password",
        r"\bgetConnection\(\s*[^,()]+,\s*\"[^\"]*\",\s*\"([^\"]{4,})\"",
        group=1,
        needs=("getconnection",),
    ),
    # XML and .config files: <add key="ClearTextPassword" value="…" />, <Password>…</Password>.
    _p(
        "password",
        r"(?i)key=\"(?:cleartext)?(?:password|passwd|pwd|secret|apikey|api_key|token)\"\s+value=\"([^\"]{4,})\"",
        group=1,
        needs=("key=",),
    ),
    # An authenticator's setup key read out: "the setup key was ru42 yfjm dqkq …".
    _p(
        "totp_seed",
        r"(?i)\b(?:setup|secret)\s+key\b[^\n]{0,60}?\b(?:is|was|[:：])\s*" + _B32_GROUPS,
        group=1,
        needs=("setup", "secret"),
    ),
    # A password in an environment variable named for one: "PGPASSWORD=…", "MYSQL_PWD=…".
    _p(
        "password",
        r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PWD)[ \t]*=[ \t]*['\"]?([^\s'\"]{4,})",
        group=1,
        needs=("password", "passwd", "pwd"),
    ),
    # .netrc: "machine … login … password <value>".
    _p("password", r"(?m)^[ \t]*password[ \t]+(\S{6,})[ \t]*$", group=1, needs=("password",)),
    _p("password", _SPOKEN + r"[\"'“‘]([^\"'”’\n]{4,64})[\"'”’]", group=1, needs=("pass", "pw")),
    _p("password", _SET_TO + r"[\"'“‘]?" + _STRICT_VALUE, group=1, needs=("pass", "pin")),
    _p(
        "pin",
        r"\b(?:PIN|[Pp]in code|PIN code|PIN number)" + _OWNER + r"\s*(?:is|was|:|=|是|为)\s*(\d(?:[\s\-]?\d){3,7})\b",
        group=1,
        needs=("pin",),
    ),
    # Codes that open something: "the alarm disarm code is 5590", "door code: 4821".
    _p(
        "pin",
        r"(?i)\b(?:door|gate|alarm|disarm|safe|keypad|lock|lockbox|garage|entry|building)\s+(?:code|pin|combo|combination)"
        r"\s*(?:is|was|:|=)?\s*(\d(?:[ \-]?\d){3,7})\b(?![ \-]?\d)",
        group=1,
        needs=("code", "pin", "combo"),
    ),
    # "keypad at the user's place is 7 3 9 1 then #"
    _p(
        "pin",
        r"(?i)\b(?:keypad|door|gate|garage|lockbox|alarm)\b[^\n.]{0,40}?\b(?:is|was|:)\s*(\d(?:[ \-]?\d){3,7})\b",
        group=1,
        needs=("keypad", "door", "gate", "garage", "lockbox", "alarm"),
    ),
    # 门禁 / 车库 / 保险柜 codes: "门禁 4396#", "车库卷帘门 0815".
    _p(
        "pin",
        r"(?:门禁|门锁|车库|保险柜|保险箱|密码锁|开门)[^\d\n，。；]{0,6}?(?:密码|码)?\s*(?:是|为|[:：])?\s*(\d{4,8})(?![\d年月日号位个层楼次天])",
        group=1,
        needs=("门禁", "门锁", "车库", "保险", "密码锁", "开门"),
    ),
    # Digits after 密码/口令/验证码 (with or without 是/为/：): "取款密码 604218", "验证码是 482913".
    # Not a length ("密码 12 位" has too few digits; "6 位" follows no name).
    _p(
        "password",
        r"(?:密码|口令|验证码|校验码|动态码)\s*(?:是|为|[:：])?\s*(\d{4,8})(?![\d位个次年天])"
        r"(?![^。\n]{0,12}(?:已过期|过期了|已失效|失效了|已使用|用过了))",
        group=1,
        needs=("码", "口令"),
    ),
    _p("bearer_header", r"(?i)\bAuthorization:\s*Bearer\s+([A-Za-z0-9_\-\.=]{16,})", group=1, needs=("authorization",)),
    _p("basic_auth", r"(?i)\bAuthorization:\s*Basic\s+([A-Za-z0-9+/]{8,}={0,2})", group=1, needs=("authorization",)),
    _p(
        "credential",
        r"(?i)" + _START + _CREDENTIAL_NAMES + _ASSIGN + _KEY_VALUE,
        group=1,
        needs=("key", "secret", "token", "bearer", "密钥", "秘钥", "私钥", "令牌"),
    ),
    _p(
        "credential",
        r"(?i)(?:\b(?:api[_\-\s]?key|secret|token)|密钥|令牌)\s*(?:is|为|是)\s*" + _STRICT_VALUE,
        group=1,
        needs=("key", "secret", "token", "密钥", "令牌"),
    ),
    _p(
        "credential",
        # The name a whole word ("tokenizer/BPETokenizer2024" is not "token" and a value).
        r"(?i)"
        + _START
        + _CREDENTIAL_NAMES
        + r"(?![A-Za-z0-9])"
        + _OWNER
        + r"\s*(?:is|was|为|是|[:：=—–→-])?\s*[\"'“]?"
        + _RANDOM,
        group=1,
        needs=("key", "secret", "token", "bearer", "密钥", "秘钥", "私钥", "令牌"),
    ),
    # Session cookies: the value is a logged-in session ("sessionid=…", "PHPSESSID=…",
    # "connect.sid=…", "SESSDATA=…", any cookie on a "Cookie:" line).
    _p(
        "session_cookie",
        r"(?i)(?<![\w.\-])(?:[\w\-]*sess(?:ion)?(?:[_.\-]?id)?|[\w\-]*\.sid|sid|sessdata|\.aspxauth"
        r"|remember_[\w]*token)=((?=[^\s;,&]*\d)(?=[^\s;,&]*[A-Za-z])[^\s;,&]{16,})",
        group=1,
        needs=("sess", "sid=", "aspxauth", "token"),
    ),
    _p(
        "session_cookie",
        r"(?im)^\s*(?:set-)?cookie:\s*(?:[^\n]*?[;\s])?[\w.\-]+=((?=[^\s;]*\d)(?=[^\s;]*[A-Za-z])[^\s;,]{20,})",
        group=1,
        needs=("cookie",),
    ),
    # Recovery (backup) codes: a list of codes after their name.
    _p(
        "recovery_codes",
        r"(?i)\b(?:recovery|backup|scratch|emergency)\s+codes?(?:" + _OWNER[3:-2] + r"|[^\n:：]{0,80})"
        r"\s*(?:are|is|[:：=—–-])+\s*" + _CODES,
        group=1,
        needs=("code",),
    ),
    _p("recovery_codes", r"(?:恢复码|备用码|救援码|备份码)\s*(?:是|为|[:：])\s*" + _CODES, group=1, needs=("码",)),
)

PLACEHOLDER = re.compile(
    r"^(?:\*+|x+|\.+|<[^>]*>|\$\{?[A-Za-z_]+\}?|%[A-Za-z_]+%|changeme|redacted|\[redacted.*"
    r"|(?:my|your)?(?:password|passwd|pass|pwd|secret)"
    r"|(?:your|insert|enter|replace)[_\-]\w*|\w*[_\-]here)$",
    re.I,
)
# A value that names where the secret is, in code: "os.environ[…]", "settings.OPENAI_API_KEY".
_REFERENCE = re.compile(
    r"^(?:os\.(?:environ|getenv)|process\.env|settings\.|config\.|env\.|ENV\[|System\.getenv|getenv\(|secrets\."
    r"|vault:|self\.|this\.|import\.meta\.env|var\.|data\.|local\.|module\.|jsondecode\(|lookup\(|arn:)"
)
_IN_ARN = re.compile(r"\barn:aws[\w\-]*:[^\s\"']*$")
# Masked or elided anywhere in the value: "ghp_XXXXXXXXXXXX", "sk-…", "AKIA****", "${{ secrets.X }}".
_MASKED = re.compile(r"\*{3,}|[xX]{6,}|•{3,}|…|\.{3}|\[(?:redacted|filtered|masked|hidden|removed)|\$\{|\$\(", re.I)
_TOKEN = re.compile(r"[A-Za-z0-9+/_\-]{24,}={0,2}")
_HEX_OR_UUID = re.compile(r"^(?:[0-9a-fA-F]+|[0-9a-fA-F\-]{36})$")
# Random by design and public: Stripe's object ids and publishable keys, integrity digests.
_PUBLIC_ID = re.compile(
    r"^(?:(?:cus|pi|ch|pm|py|tok|seti|sub|si|in|ii|price|prod|evt|txn|re|po|acct|src|card|ba|btok|cs_live|cs_test"
    r"|pk_live|pk_test"
    # Agent platforms' object ids (threads, runs, messages, tool calls, files …): public handles.
    r"|thread|run|msg|call|toolu|asst|file|batch|resp|step|vs|req)_|(?:chatcmpl|file|org)-|sha(?:1|256|384|512)-)"
)
# Where random text is public: PEM public keys and certificates, SSH public keys, digests, a
# URL's path (document, file and video ids; the webhooks whose path is secret have their detector).
_PUBLIC_SPANS = re.compile(
    r"-----BEGIN (?:[A-Z0-9]+ )*(?:PUBLIC KEY|CERTIFICATE)(?: BLOCK)?-----[\s\S]*?-----END[^\n]*?-----"
    r"|\b(?:ssh-(?:rsa|ed25519|dss)|ecdsa-sha2-\S+|sk-ssh-\S+)\s+AAAA[A-Za-z0-9+/=]+"
    r"|\b(?i:sha)(?:1|256|384|512)[:\-][A-Za-z0-9+/=]+"
    r"|\bdata:[\w/+.\-]+;base64,[A-Za-z0-9+/=]+"
    r"|\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}"  # a bcrypt hash: what a password is checked against
    r"|\bhttps?://(?:[^\s/?#@]*@)?([^\s/?#@]+/[^\s?#]*)"
)


def shannon_entropy(text: str) -> float:
    counts = Counter(text)
    n = len(text)
    return -sum(c / n * math.log2(c / n) for c in counts.values())


def _public_spans(text: str) -> list[tuple[int, int]]:
    """Where random-looking text is public by design (see ``_PUBLIC_SPANS``)."""
    return [m.span(1) if m.group(1) else m.span() for m in _PUBLIC_SPANS.finditer(text)]


def _inside(start: int, end: int, spans: list[tuple[int, int]]) -> bool:
    return any(s <= start and end <= e for s, e in spans)


def _high_entropy(text: str) -> list[SecretFinding]:
    """Long random-looking tokens with letters and digits mixed: keys with no known prefix."""
    found = []
    public: list[tuple[int, int]] | None = None
    for m in _TOKEN.finditer(text):
        token = m.group(0)
        if _HEX_OR_UUID.match(token) or _PUBLIC_ID.match(token) or _path_or_slug(token):
            continue  # hashes, commit ids, UUIDs, public object ids, paths and slugs: not credentials
        classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
        if classes == 3 and shannon_entropy(token) >= 4.2 and _decoded_text(token) is None:
            public = _public_spans(text) if public is None else public
            if not _inside(m.start(), m.end(), public):
                found.append(SecretFinding("high_entropy", m.start(), m.end()))
    return found


_WORD = re.compile(r"^(?:[A-Za-z][a-z]+|[A-Z]+|\d+)$")


def _path_or_slug(token: str) -> bool:
    """A path (``/Users/alice/src/BPETokenizer2024v3Final``, ``feature/JIRA-1234-fixLogin``) whose
    parts are none of them random alone, or a slug of words (``-Users-alice-Projects-MyApp2024``):
    names people and tools make, not keys. Base64 (a ``+``, or ``=`` padding) is not a path."""
    if "/" in token and "+" not in token and not token.endswith("="):
        return not any(_random(part) for part in token.split("/") if len(part) >= 24)
    parts = [p for p in token.split("-") if p]
    return len(parts) >= 3 and sum(bool(_WORD.match(p)) for p in parts) >= 0.6 * len(parts)


def _random(token: str) -> bool:
    classes = sum(bool(re.search(p, token)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
    return classes == 3 and shannon_entropy(token) >= 4.2 and not _path_or_slug(token)


def _decoded_text(token: str) -> str | None:
    """``token`` read as base64 (standard or URL-safe) when it decodes to printable text: encoded
    words are not random (whether they hide a secret is :func:`_encoded`'s question)."""
    try:
        raw = base64.b64decode(token.replace("-", "+").replace("_", "/") + "=" * (-len(token) % 4), validate=True)
        decoded = raw.decode("utf-8")
    except (ValueError, UnicodeDecodeError):
        return None
    if not decoded or sum(ch.isprintable() or ch in "\n\t" for ch in decoded) < 0.9 * len(decoded):
        return None
    return decoded


def _aws_whole_or_digits(value: str) -> bool:
    """A key id written whole, or split into groups with a digit among them: "AKIA IS A BANK CODE
    FOR ..." in capitals is not one."""
    return not any(c in " -" for c in value) or any(c.isdigit() for c in value)


_GROUPS = re.compile(r"(?<![\w-])(?:[A-Za-z0-9]{3,8}[ \-]){3,}[A-Za-z0-9]{3,8}(?![\w-])")
_WORDLIKE = re.compile(r"^(?:[a-z]+|[A-Z][a-z]*|[A-Z]+)$")


def _split_tokens(text: str) -> list[SecretFinding]:
    """A random key written in groups ("aZ3k Q9pL 2mX8 vB7n C4wE 6rT1"): at least four groups, most
    of them not word-shaped (a digit, or case changing inside), 20+ characters joined, letters of
    both cases and digits, and random enough. "Use GPT4o with Claude3 and Llama3" is not one."""
    found = []
    for m in _GROUPS.finditer(text):
        groups = re.split(r"[ \-]", m.group(0))
        joined = "".join(groups)
        odd = sum(not _WORDLIKE.match(g) for g in groups)
        if len(joined) < 20 or odd < 0.7 * len(groups):
            continue
        classes = sum(bool(re.search(p, joined)) for p in (r"[a-z]", r"[A-Z]", r"[0-9]"))
        if classes == 3 and shannon_entropy(joined) >= 4.0 and not _inside(m.start(), m.end(), _public_spans(text)):
            found.append(SecretFinding("split_key", m.start(), m.end()))
    return found


_BASE64 = re.compile(r"(?<![A-Za-z0-9+/=_\-])[A-Za-z0-9+/_\-]{16,}={0,2}(?![A-Za-z0-9+/=_\-])")
# "user:password" (what HTTP Basic encodes): a name, a colon, a value with letters and digits.
_USER_PASS = re.compile(r"^(?=.{18})[\w.@+\-]{2,64}:(?=\S*\d)(?=\S*[A-Za-z])\S{6,}$")


def _encoded(text: str) -> list[SecretFinding]:
    """Base64 (standard or URL-safe) that decodes to text holding a secret, or to a
    "user:password" pair: an encoded key or login."""
    found = []
    for m in _BASE64.finditer(text):
        decoded = _decoded_text(m.group(0))
        if decoded is not None and (_USER_PASS.match(decoded) or find_secrets(decoded, decode=False)):
            found.append(SecretFinding("encoded_secret", m.start(), m.end()))
    return found


_PERCENT = re.compile(r"(?<!\S)\S*%[0-9A-Fa-f]{2}\S*")


def _url_encoded(text: str) -> list[SecretFinding]:
    """Percent-encoded text ("token%3D…%26user%3Dops") that holds a secret once decoded: the
    assignment's "=" and ":" are hidden from the other detectors until then."""
    found: list[SecretFinding] = []
    if "%" not in text:
        return found
    for m in _PERCENT.finditer(text):
        decoded = urllib.parse.unquote(m.group(0))
        if decoded != m.group(0) and find_secrets(decoded, decode=False):
            found.append(SecretFinding("encoded_secret", m.start(), m.end()))
    return found


# A key cut into quoted pieces joined with "+" ("'ghp_UnUy…' + 'xOFO…'"), or spelled out one
# character at a time ("A K I A M K U Q …"): the pieces are joined and scanned again.
_CONCAT = re.compile(r"""['"][^'"\s]{1,100}['"](?:\s*\+\s*['"][^'"\s]{1,100}['"])+""")
_PIECE = re.compile(r"""['"]([^'"\s]*)['"]""")
# Digits said aloud (a call's transcript, a voicemail): "four nine one six", "五 五 幺 八",
# "two-two-six-eight-one". A run of 4+ digit words after a word that names a code is one.
_DIGIT_WORDS = r"(?:zero|oh|one|two|three|four|five|six|seven|eight|nine|[0-9]|零|〇|幺|一|二|两|三|四|五|六|七|八|九)"
_SAID_DIGITS = re.compile(rf"(?i)(?<![a-z]){_DIGIT_WORDS}(?:(?:[ \t,、，\-]|\s*,\s*)+{_DIGIT_WORDS}){{3,11}}(?![a-z])")
_SAID_NAMES = re.compile(
    r"(?i)(?:\bpin\b|\bpuk\b|passcode|password|passwd|pass code|\bcode\b|combination|密码|口令|PIN码|PUK码|门禁|保险柜)"
)


def _said_digits(text: str) -> list[SecretFinding]:
    """Four or more digits said as words after a code's name on the same line, within 80 characters:
    "the PIN is four nine one six", "交易密码是 幺 九 八 七 零 六"."""
    found = []
    for m in _SAID_DIGITS.finditer(text):
        if not any(c.isalpha() for c in m.group(0)):  # digit words, English or Chinese
            continue  # plain digits: the other detectors' (a number written, not said)
        line_start = text.rfind("\n", 0, m.start()) + 1
        before = text[max(line_start, m.start() - 80) : m.start()]
        if _SAID_NAMES.search(before) and not re.search(
            r"(?:后四位|last four|ending in|尾号|卡号|card number)", before, re.I
        ):
            found.append(SecretFinding("spoken_pin", m.start(), m.end()))
    return found


_SPELLED = re.compile(r"(?<![\w-])[A-Za-z0-9][ \-][A-Za-z0-9][ \-](?:[A-Za-z0-9][ \-]){10,}[A-Za-z0-9](?![\w-])")


def _joined(text: str) -> list[SecretFinding]:
    found = []
    for m in _CONCAT.finditer(text) if "+" in text else ():
        if find_secrets("".join(_PIECE.findall(m.group(0))), decode=False):
            found.append(SecretFinding("split_key", m.start(), m.end()))
    for m in _SPELLED.finditer(text):
        if find_secrets(re.sub(r"[ \-]", "", m.group(0)), decode=False):
            found.append(SecretFinding("split_key", m.start(), m.end()))
    return found


# Every detector above needs one of these (casefolded) or a long token: most texts have neither,
# and one search rules them out. A vendor's prefix needs no word here when the token after it is
# 24+ characters of the long token's alphabet (``_PREFILTER_TOKEN`` finds it); the short ones
# (LTAI…, a Chinese cloud's) are listed.
# The literal words in one Aho-Corasick automaton (one pass over the text, ~1 µs for a short field
# where the alternation took ~10); the few that are patterns in a small regular expression.
_PREFILTER_LITERALS = (
    "private key|sk-|sk_|rk_|pk_|mwk_|pin|pw|ghp_|gho_|ghu_|ghs_|ghr_|github_pat_|akia|asia|agpa|aida|aroa|aiza|"
    "xox|eyj|://|pass|pwd|密码|口令|key|secret|token|bearer|密钥|秘钥|私钥|令牌|authorization|jdbc:|ltai|seed|"
    "sid=|aspxauth|cookie:|sess|"
    # Command lines that take a password, door codes, app passwords (their detectors' words).
    "mysql|mariadb|sshpass|docker login|podman login|registry login| login -u|redis-cli| -a |curl -u|curl --user|"
    "--password|keypad|lockbox|garage|alarm|door|gate code|safe code|lock code|entry code|combo|combination|"
    "门禁|门锁|车库|保险柜|保险箱|密码锁|开门|授权码|专用密码|app password|app-specific|"
    "@tcp(|@unix(|getconnection|key=|setup key|puk"
).split("|")
_PREFILTER_PATTERNS = re.compile(r"sess[a-z_.\-]*=|[?&](?:sig|signature|auth)=")
# What the login-pair detector needs (casefolded): a login word, then a "/" or "pass" — searched only
# when the text has either.
_PREFILTER_PAIR = re.compile(r"(?:log(?:s|ged)? ?in|creds?\b|credential|account|user)[^\n]{0,80}?(?:\S\s*/\s*\S|pass)")


_AUTOMATON = word_automaton(_PREFILTER_LITERALS)


def _prefilter_words(folded: str) -> bool:
    """One of the trigger words is in ``folded`` ("sess" only as "sess…=": a session cookie)."""
    for _, word in _AUTOMATON.iter(folded):
        if word != "sess" or _PREFILTER_PATTERNS.search(folded):
            return True
    return ("?" in folded or "&" in folded) and _PREFILTER_PATTERNS.search(folded) is not None


_PREFILTER_TOKEN = re.compile(r"[a-z0-9+/_\-]{24}")
# A key split into groups: three groups of letters and digits mixed, among at most five.
_PREFILTER_GROUPS = re.compile(r"(?:(?=[a-z]{0,7}\d)(?=\d{0,7}[a-z])[a-z\d]{3,8}[ \-](?:[a-z\d]{3,8}[ \-])?){3}")
# Each of those groups has a letter beside a digit: one cheap search (it starts at a digit) rules
# most texts out before the groups' own, which tries every position.
_PREFILTER_LETTER_DIGIT = re.compile(r"\d(?:(?<=[a-z]\d)|[a-z])")
# A key spelled out a character at a time (what ``_SPELLED`` needs: 13 characters).
_PREFILTER_SPELLED = re.compile(r"(?<![a-z0-9])[a-z0-9][ \-][a-z0-9][ \-][a-z0-9][ \-](?:[a-z0-9][ \-]){9}")
# Codes that open something or stand in for a password ("door code", "recovery codes", "验证码",
# "恢复码"): looked for only when "code" or "码" is there ("VS Code", "代码" are not them).
_PREFILTER_CODES = re.compile(
    r"(?:door|gate|alarm|disarm|safe|keypad|lock|garage|entry|building|recovery|backup|scratch|emergency)\s+code"
)
_PREFILTER_MA = re.compile(r"[证验态复用援份]码")
# Percent-encoding and quoted pieces joined with "+": looked for only when "%" or "+" is there.
_PREFILTER_PERCENT = re.compile(r"%[0-9a-f]{2}")
_PREFILTER_CONCAT = re.compile(r"""['"]\s*\+\s*['"]""")


def may_hold_secrets(folded: str) -> bool:
    """False when no detector can match: ``folded`` is the casefolded text."""
    return (
        _prefilter_words(folded)
        or (("/" in folded or "pass" in folded) and _PREFILTER_PAIR.search(folded) is not None)
        or _PREFILTER_TOKEN.search(folded) is not None
        or (_PREFILTER_LETTER_DIGIT.search(folded) is not None and _PREFILTER_GROUPS.search(folded) is not None)
        or _PREFILTER_SPELLED.search(folded) is not None
        or ("code" in folded and _PREFILTER_CODES.search(folded) is not None)
        or ("码" in folded and _PREFILTER_MA.search(folded) is not None)
        or ("%" in folded and _PREFILTER_PERCENT.search(folded) is not None)
        or ("+" in folded and _PREFILTER_CONCAT.search(folded) is not None)
    )


_SAID_KINDS = frozenset({"password", "pin", "spoken_pin"})


def _expired(text: str, f: SecretFinding) -> bool:
    """Whether the sentence around a code says it is expired, used, or the old one (not when it
    calls it the new one)."""
    start = max(text.rfind("\n", 0, f.start), text.rfind("。", 0, f.start)) + 1
    before = EXPIRED.search(text, start, f.start) is not None and not NEW.search(text, start, f.start)
    return before or expired_after(text, start, (f.start, f.end))


# What protects a password rather than discloses it: a hash (bcrypt, argon2, crypt(3), hex named as
# an MD5/SHA/hash), an encrypted value (an Ansible vault, sops, a Bitnami SealedSecret's "Ag…").
_PROTECTED = re.compile(
    r"\$2[abxy]?\$\d\d\$[./A-Za-z0-9]{53}|\$argon2(?:id|i|d)\$[^\s'\"]+|\$[156y]\$[^\s'\"]{8,}"
    r"|\$ANSIBLE_VAULT;[^\n]*(?:\n[ \t]*[0-9a-f]+)*|!vault\b|\bENC\[[^\]]+\]|\bENC\([^)]+\)"
    r"|(?i:md5|sha-?(?:1|256|512)|hash|哈希|摘要|加盐)[^\n]{0,20}?\b[0-9a-f]{32,128}\b"
    r"|\b[0-9a-f]{32,128}\b(?=[^\n]{0,8}(?i:md5|sha|hash|哈希|加盐))"
)
_SEALED = re.compile(r"\bAg[A-Za-z0-9+/=]{40,}")
# A constant's name in code (FAKE_PWD, DB_PASSWORD): where the value comes from, not the value.
_CONSTANT = re.compile(r"^[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+[)}\],;]*$")


def _protected(text: str) -> list[tuple[int, int]]:
    spans = (
        [m.span() for m in _PROTECTED.finditer(text)]
        if ("$" in text or "!vault" in text or "ENC[" in text or "ENC(" in text or re.search(r"[0-9a-f]{32}", text))
        else []
    )
    if "SealedSecret" in text:
        spans += [m.span() for m in _SEALED.finditer(text)]
    return spans


def _not_disclosed(text: str, findings: list[SecretFinding]) -> list[SecretFinding]:
    """The findings that disclose: not inside a hash or an encrypted value, not a constant's name."""
    protected = _protected(text)
    kept = []
    for f in findings:
        value = text[f.start : f.end]
        if any(start < f.end and f.start < end for start, end in protected):
            continue
        if _CONSTANT.match(value):
            continue
        kept.append(f)
    return kept


_WRAPPED = re.compile(r"[<{\[$%]")


def _unless_placeholder(text: str, findings: list[SecretFinding]) -> list[SecretFinding]:
    """The cued findings whose value is not a placeholder, a reference or masked, nor inside
    ``<…>``, ``{{…}}``, ``${…}``, ``[…]``."""
    kept = []
    for f in findings:
        value = text[f.start : f.end]
        wrapped = f.start > 0 and _WRAPPED.match(text, f.start - 1) is not None
        if wrapped or PLACEHOLDER.match(value) or _REFERENCE.match(value) or _MASKED.search(value) or "{{" in value:
            continue
        kept.append(f)
    return kept


def find_secrets(
    text: str,
    *,
    extra: tuple[SecretPattern, ...] = (),
    folded: str | None = None,
    random_tokens: bool = True,
    decode: bool = True,
) -> list[SecretFinding]:
    """Every secret span in ``text``, left to right, overlaps merged (first detector wins).
    ``folded`` is ``text`` casefolded (whitespace collapsed is fine), if the caller has it.
    ``random_tokens``: also long random-looking tokens, whole or split into groups — off for ids
    (a document id may be random by design); ``decode``: also base64 that decodes to a secret."""
    folded = text.casefold() if folded is None else folded
    if not extra and not may_hold_secrets(folded):
        return _unless_placeholder(text, cued_secrets(text))
    spans: list[SecretFinding] = []
    for detector in (*SECRET_PATTERNS, *extra):
        if detector.needs and not any(word in folded for word in detector.needs):
            continue
        for m in detector.pattern.finditer(text):
            value = m.group(detector.group)
            if detector.group and (PLACEHOLDER.match(value) or _REFERENCE.match(value)):
                continue
            if detector.group and _IN_ARN.search(text, max(0, m.start(detector.group) - 120), m.start(detector.group)):
                continue  # an AWS resource's name ("…:secret:prod/orders/db-Xk29Qa"): where a secret is
            if detector.kind != "private_key" and _MASKED.search(value):
                continue
            if detector.kind == "aws_access_key" and not _aws_whole_or_digits(value):
                continue
            if detector.group and value.endswith("("):
                continue  # a call that asks for it: password = input(…)
            if "EXAMPLE" in value:
                continue  # AWS's documented example keys (AKIAIOSFODNN7EXAMPLE, …EXAMPLEKEY)
            spans.append(SecretFinding(detector.kind, m.start(detector.group), m.end(detector.group)))
    if random_tokens:
        spans.extend(_high_entropy(text))
        spans.extend(_split_tokens(text))
    if decode:
        spans.extend(_encoded(text))
        spans.extend(_url_encoded(text))
        spans.extend(_joined(text))
    if _SAID_NAMES.search(text):
        spans.extend(_said_digits(text))
    spans.extend(_unless_placeholder(text, cued_secrets(text)))
    spans = [f for f in _not_disclosed(text, spans) if f.kind not in _SAID_KINDS or not _expired(text, f)]
    spans.sort(key=lambda f: (f.start, -(f.end - f.start)))
    merged: list[SecretFinding] = []
    for span in spans:
        if merged and span.start < merged[-1].end:
            continue
        merged.append(span)
    return merged


def mask(text: str, findings: list[SecretFinding]) -> str:
    """``text`` with every finding replaced by ``[REDACTED:<kind>]``."""
    out, last = [], 0
    for f in findings:
        out.append(text[last : f.start])
        out.append(f"[REDACTED:{f.kind}]")
        last = f.end
    out.append(text[last:])
    return "".join(out)
