"""The shaped detectors: each a named pattern — a vendor's token by its prefix, a credential in a
URL, an assignment (``password = …``, ``api_key: …``) whose value looks like a value, a command
line's password option, a code after what it opens. :func:`~memwarden.policies.secrets.find_secrets`
runs them (and ``secret_cues``'s), then drops what only looks like a secret."""

from __future__ import annotations

import re
from dataclasses import dataclass


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
_RANDOM = r"((?=[A-Za-z0-9_\-.+/=]{0,256}?\d)(?=[A-Za-z0-9_\-.+/=]{0,256}?[A-Za-z])[A-Za-z0-9_\-.+/=]{16,512})"
# Names start after a non-alphanumeric: env and config names hold them ("MINIO_ROOT_PASSWORD=",
# "DD_API_KEY="), words do not ("1Password", "bypass").
_START = r"(?<![A-Za-z0-9])"
# Or a camelCase name's last word: "adminPassword=", "keyStorePassword=".
# A camelCase name's last word ("adminPassword=", "keyStorePassword="): its value must look like one
# (a letter and a digit, no call, no attribute): "confirmPassword=newPassword" is code.
_CAMEL_PASSWORD = (
    r"(?-i:(?<=[a-z])(?:Password|PASSWORD|Passwd|Pwd|Passphrase))" + r"[\"']?[ \t]*[:=][ \t]*[\"']?"
    r"((?=[^\s'\"`,;]*\d)(?=[^\s'\"`,;]*[A-Za-z])(?![\w.]*\()(?![A-Za-z_]\w*\.\w)[^\s'\"`,;()\[\]{}]{6,})"
)
# Between a name and its value: a closing quote (JSON, YAML), a note in brackets ("secret
# (base32) ="), "is"/"为"/"是", the sign, an opening quote.
_ASSIGN = r"[\"']?(?:\s*\([^()\n]{0,24}\))?[ \t]*+(?:(?:is|为|是)[ \t]*+)?[:：=][ \t]*+[\"']?"
# "… for the staging box", "… of our NAS": what a credential belongs to, between name and value.
_OWNER = r"(?:\s+(?:for|of|to|on|at|in)\s+(?:the\s+|my\s+|our\s+|this\s+)?[\w.@'-]+(?:\s+[\w.@'-]+){0,3})?"
_LOGIN_WORDS = r"(?:password|passwd|passphrase|passcode|pwd|pw|pass|密码|口令)"
_CREDENTIAL_NAMES = (
    r"(?:api[_\-\s]?key|apikey|access[_\-\s]?key(?:[_\-\s]?secret)?|secret[_\-\s]?access[_\-\s]?key"
    r"|secret(?:[_\-\s]?key)?|(?:app|client|consumer|shared|signing|webhook|jwt)[_\-\s]?secret"
    r"|(?:auth|access|refresh|session|bot|api)[_\-\s]?token|token|bearer"
    r"|(?:private|signing|encryption|master|license|routing|integration)[_\-\s]?key|密钥|秘钥|私钥|令牌)"
    # a name's last part that says which one, not what about it: "secret_key_base", "API_KEY_PROD"
    r"(?:[_\-](?:base|value|prod|production|live|v\d))?"
)
# A password said in words: "the wifi password for the office is Tr0ub4dor", "login pass is
# hunter2", "the passphrase was 'sunshine'". A bare "pass" needs a word that makes it a login's
# ("the mountain pass is 2300m" is not one).
_SPOKEN = (
    r"(?i)(?:\b(?:password|passwd|passphrase|passcode|pwd|pw)|\b(?:login|wifi|wi-fi|admin|root|account|user|ssh|vpn"
    r"|\w*mail|server|router|sudo|db|database)\s+(?:pass|pw)\b)" + _OWNER + r"(?:\s*\([^()\n]{0,24}\))?"
    # "… password I set last night is …": who set it, in a few words
    r"(?:\s+(?:that\s+)?(?:i|we|you|he|she|they)\s+[a-z']+(?:\s+[a-z']+){0,2}?(?=\s+(?:is|was)\b))?"
    r"\s+(?:is|was|are|=)\s+(?:now\s+)?"
)
# "changed the password to …", "set the VPN password to …": a new password given.
_SET_TO = (
    r"(?i)(?:\bset\s+(?:the\s+|my\s+|our\s+|his\s+|her\s+)?(?:[\w-]+\s+){0,2}(?:password|passphrase|passcode|PIN)"
    r"|\b(?:password|passphrase|passcode)\s+(?:was\s+|is\s+|has\s+been\s+|got\s+|just\s+)?(?:changed|reset|updated|set))"
    r"\s+to\s*:?\s+"
)
_GLUE = (
    r"(?:by|the|in|on|not|yet|of|to|at|for|and|or|is|be|an|it|as|up|out|all|set|case|auto|self|well|hard|easy"
    r"|end|state|never|ever|one|same|usual|no|any)"
)
_B32_GROUPS = r"((?=[A-Za-z ]{0,160}?[2-7])(?:[A-Za-z2-7]{4} ?){4,40}[A-Za-z2-7]{0,8})"
_CODES = r"((?=[\w \-]{0,40}?\d)(?:[A-Za-z0-9]{4,10}(?:-[A-Za-z0-9]{4,10})?[\s,;，、]+){2,}[A-Za-z0-9]{4,10}(?:-[A-Za-z0-9]{4,10})?)"
# A password's characters (ASCII only: "至少8位包含字母A" after 密码 is a rule, not a value), and a
# value of them with a letter and a digit.
_PW = r"[A-Za-z0-9_!@#$%^&*+\-.=?~]"
PW_VALUE = rf"((?={_PW}*\d)(?={_PW}*[A-Za-z]){_PW}{{6,}})"
# A command line that takes a password as an option: database clients, sshpass, registry logins,
# redis-cli, curl's user, any --password.
_CLI_OPTIONS = (
    r"\b(?:mysql|mysqldump|mysqladmin|mariadb(?:-dump)?)\b[^\n]{0,200}?\s-p['\"]?([^\s'\"]{4,})",
    r"\bsshpass\s+-p\s*['\"]?([^\s'\"]{4,})",
    r"\b(?:docker|podman|helm|nerdctl|buildah|skopeo|oras)\s+(?:registry\s+)?login\b[^\n]{0,200}?\s-p[=\s]+['\"]?([^\s'\"]{4,})",
    r"\bredis-cli\b[^\n]{0,200}?\s-a\s+['\"]?([^\s'\"]{4,})",
    r"\bcurl\b[^\n]{0,200}?\s(?:-u|--user)[=\s]+['\"]?[^\s:'\"]+:([^\s'\"@]{4,})",
    r"--password(?:=|\s+)['\"]?([^\s'\"-][^\s'\"]{3,})",
)
# The end of a token that may end in "-": a word boundary, or a "-" with no word character or "-" after.
_END = r"(?:\b|(?<=-)(?![\w\-]))"

SECRET_PATTERNS: tuple[SecretPattern, ...] = (
    _p(
        "private_key",
        r"-----BEGIN (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(?:-----END (?:[A-Z0-9]+ )*PRIVATE KEY(?: BLOCK)?-----|$)"
        r"|-----BEGIN OpenVPN Static key V\d-----[\s\S]*?(?:-----END OpenVPN Static key V\d-----|$)",
        needs=("private key", "static key"),
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
    # WooCommerce's REST API consumer key and secret
    _p("woocommerce_key", r"\bc[ks]_[0-9a-f]{40}\b", needs=("ck_", "cs_")),
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
        r"(?i)[?&](?:access_token|auth_token|token|api_?key|apikey|appid|app_key|key|secret|client_secret|sig|signature|auth)="
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
    # Or words joined by dashes (three or more): "the password is old-mill-road-oak-tree".
    # (not a description: "hard-to-guess", "case-sensitive-by-default", "in-the-usual-place" — no
    # word of a sentence's glue in it)
    _p(
        "password",
        _SPOKEN + r"(?![a-z\-_.]{0,120}?(?<![a-z])" + _GLUE + r"(?![a-z]))"
        r"([a-z]{2,12}(?:[\-_.][a-z]{2,12}){2,7})(?![\w\-])",
        group=1,
        needs=("pass", "pw"),
    ),
    # A password straight after its name, no "is": "password hunter2-Build-77", "密码 Zw@19880615",
    # "密码改成了 Jmp!8848Qz" (a letter and a digit in it: "password reset" is words).
    _p(
        "password",
        r"(?i)(?:\bpassword|\bpasswd|\bpwd|密码|口令|授权码)[ \t]*+(?:(?:改成了?|换成了?|改为|设为|设成了?|更新为|to)[ \t]*+)?[`'\"“‘]?"
        + PW_VALUE,
        group=1,
        needs=("pass", "pwd", "密码", "口令", "授权码"),
    ),
    # "公司邮箱密码重置了，新的是 Qiye#2025spring": the new one, a clause on.
    _p(
        "password",
        r"(?:密码|口令)(?!管理|策略|规则|强度|本|学|箱|器)[^\n。；]{0,12}?(?:新的是|新密码是|现在是|改成了?|换成了?|重置为|重置成)[ \t]*[:：]?[ \t]*"
        + PW_VALUE,
        group=1,
        needs=("密码", "口令"),
    ),
    # A login and its password side by side: "admin / Kp!77router", "user jchen, pass Bl0ss0m#Tr33",
    # "design@acme.io / Pixel-Perfect-2024" after a word that says it is a login.
    _p(
        "password",
        r"(?i)\b(?:login|logs?\s+in\s+as|log\s+in\s+with|creds?|credentials|account|user(?:name)?)\b[^\n]{0,40}?"
        r"[\w.@+\-]{2,64}[ \t]*+(?:/|,?+[ \t]*+(?<![\w\-])(?:pass(?:word)?|pw|pwd)[ \t]*+:?)[ \t]*+[`'\"]?" + PW_VALUE,
        group=1,
        needs=("login", "log", "cred", "account", "user"),
    ),
    # An app password or mail authorization code: random letters, no digit needed.
    _p(
        "password",
        r"(?i)(?:授权码|客户端专用密码|应用专用密码|app[ \-]specific password|app password)[ \t]*"
        r"(?:[^\n:：=，。]{0,8}?(?:是|为|is|[:：=]))?[ \t]*"
        r"([A-Za-z0-9]{12,24}|[a-z]{4}(?: [a-z]{4}){3})\b",
        group=1,
        needs=("授权码", "专用密码", "app"),
    ),
    *(_p("cli_password", option, group=1, needs=("-p", "-a", "-u", "--user", "--password")) for option in _CLI_OPTIONS),
    _p("password", _CAMEL_PASSWORD, group=1, needs=("password", "passwd", "pwd", "passphrase")),
    # A keypad's code between a star and a hash, after "press": "后按 *5931# 即可抬杆" — not a
    # carrier's service code ("按 *1234# 查询余额", "*3001#12345#*").
    _p(
        "pin",
        r"(?i)(?:按|摁|press|punch\s+in)[ \t]*([*＊]\d{4,8}[#＃])(?![\d*#＃])"
        r"(?![^\n]{0,24}(?:查询|余额|话费|流量|信号|查一下|balance|check|test|mode|menu|data|minutes))",
        group=1,
        needs=("按", "摁", "press", "punch"),
    ),
    # Redis's AUTH at its prompt or said ("127.0.0.1:6379> AUTH 9c!Lr4#vZpW1", "redis 的 AUTH 是 …").
    _p(
        "cli_password",
        r"(?:>[ \t]*(?i:auth)[ \t]+(?:[\w.\-]+[ \t]+)?|\bAUTH[ \t]*(?:是|为|is|[:：])[ \t]*)" + PW_VALUE,
        group=1,
        needs=("auth",),
    ),
    # A secret written into a file named for one: "echo 'marble tiger stapler seven' > ~/.vault_pass".
    _p(
        "password",
        r"(?i)\becho[ \t]+(?:-n[ \t]+)?(['\"])([^'\"\n$]{4,80})\1[ \t]*>{1,2}[ \t]*(?:\S*/)?\.?(?:[\w\-]*[._\-])?"
        r"(?:vault[_\-]?pass(?:word)?|pass(?:word)?s?|passwd|pwd|secrets?|token|credentials?|creds|api[_\-]?key)"
        r"(?:\.txt)?(?![\w.\-])",
        group=2,
        needs=("echo",),
    ),
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
        r"\b[A-Z][A-Z0-9_]*(?:PASSWORD|PASSWD|PWD)[ \t]*=[ \t]*['\"]?([^\s'\"，；。]{4,})",
        group=1,
        needs=("password", "passwd", "pwd"),
    ),
    # .netrc: "machine … login … password <value>".
    _p("password", r"(?m)^[ \t]*password[ \t]+(\S{6,})[ \t]*$", group=1, needs=("password",)),
    _p("password", _SPOKEN + r"[\"'“‘]([^\"'”’\n]{4,64})[\"'”’]", group=1, needs=("pass", "pw")),
    _p("password", _SET_TO + r"[\"'“‘]?" + _STRICT_VALUE, group=1, needs=("pass", "pin")),
    # (not what anyone likes: "set the password to whateveryouwant", "… to expireautomatically")
    _p(
        "password",
        _SET_TO
        + r"[\"'“‘]?(?!whatever|something|anything|expire|never|blank|empty|nothing|random|your|their)([a-z]{14,})\b",
        group=1,
        needs=("pass",),
    ),
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
        r"\s*+(?:(?:is|was|:|=)\s*+)?(\d(?:[ \-]?\d){3,7})\b(?![ \-]?\d)",
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
        # (not opening hours: "开门时间：0900-1800", "车库门开到 2200")
        r"(?:门禁|门锁|车库|保险柜|保险箱|密码锁|开门)(?:(?!时间|时段|开放|营业|开到)[^\d\n，。；]){0,6}?(?:密码|码)?\s*"
        r"(?:是|为|[:：])?\s*(\d{4,8})(?![\d年月日号位个层楼次天])(?!\s*[-~～至到])",
        group=1,
        needs=("门禁", "门锁", "车库", "保险", "密码锁", "开门"),
    ),
    # Digits after 密码/口令/验证码 (with or without 是/为/：): "取款密码 604218", "验证码是 482913".
    # Not a length ("密码 12 位" has too few digits; "6 位" follows no name).
    _p(
        "password",
        r"(?:密码|口令|验证码|校验码|动态码)\s*+(?:(?:是|为|[:：])\s*+)?(\d{4,8})(?![\d位个次年天])"
        r"(?![^。\n]{0,12}(?:已过期|过期了|已失效|失效了|已使用|用过了))",
        group=1,
        needs=("码", "口令"),
    ),
    _p("bearer_header", r"(?i)\bAuthorization:\s*Bearer\s+([A-Za-z0-9_\-\.=]{16,})", group=1, needs=("authorization",)),
    # A Telegram bot's token (its id, then "AA" and 33 characters), a BitLocker recovery key.
    _p("telegram_bot_token", r"(?:(?<=bot)|(?<![\w:]))\d{8,10}:AA[A-Za-z0-9_\-]{30,40}(?![\w\-])", needs=(":aa",)),
    _p("recovery_key", r"(?<![\d\-])\d{6}(?:-\d{6}){7}(?![\d\-])", needs=("bitlocker", "recovery", "恢复")),
    # An authenticator's seed (base32): "VPN的OTP种子给你 KQ4TM2LXNBVGC6DR", "TOTP secret: JBSW…".
    _p(
        "otp_seed",
        r"(?i:otp|totp|2fa|mfa|authenticator|身份验证器)[^\n]{0,16}?(?i:种子|seed|secret|密钥)[^\n]{0,8}?(?<![A-Z2-7])([A-Z2-7]{16,64})(?![A-Za-z0-9])",
        group=1,
        needs=("otp", "2fa", "mfa", "authenticator", "身份验证器"),
    ),
    # Recovery codes listed on one line after their name: "recovery codes：5kq2-8xlw / 7dnm-3pzr / 0vtc-9hfy".
    _p(
        "recovery_codes",
        r"(?i)(?:(?:recovery|backup)\s+codes?|恢复码|备用码)[^\n]{0,12}?[:：][ \t]*"
        r"((?:[a-z0-9]{4,6}-[a-z0-9]{4,6}[ \t]*[/,|;，][ \t]*){2,}[a-z0-9]{4,6}-[a-z0-9]{4,6})",
        group=1,
        needs=("recovery", "backup", "恢复码", "备用码"),
    ),
    # A key named for what it opens, then its value, 32+ hex or 24+ letters and digits: "save my
    # OpenWeather key for the garden station: 8f3c…" (not a cache's, a hash's or a public one).
    _p(
        "credential",
        r"(?i)\bkey\b"
        r"(?<!cache[ _\-]key)(?<!hash[ _\-]key)(?<!idempotency[ _\-]key)(?<!primary[ _\-]key)(?<!public[ _\-]key)(?<!publishable[ _\-]key)(?<!partition[ _\-]key)(?<!sort[ _\-]key)"
        r"(?<!object[ _\-]key)(?<!dedup[ _\-]key)(?<!foreign[ _\-]key)(?<!composite[ _\-]key)(?<!host[ _\-]key)(?<!ssh[ _\-]key)(?<!gpg[ _\-]key)(?<!pgp[ _\-]key)(?<!ed25519[ _\-]key)(?<!rsa[ _\-]key)(?<!ecdsa[ _\-]key)"
        r"(?![^\n:=]{0,40}?(?:fingerprint|sha\d|md5|\bid\b|commit|checksum|hash|digest|changes|file))[^\n:=]{0,40}[:=][ \t]*['\"]?([0-9a-f]{32,}|(?=[A-Za-z0-9_\-]*\d)(?=[A-Za-z0-9_\-]*[a-z])(?=[A-Za-z0-9_\-]*[A-Z])[A-Za-z0-9_\-]{24,})(?![\w\-])",
        group=1,
        needs=("key",),
    ),
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
        + r"\s*+(?:(?:is|was|为|是|[:：=—–→-])\s*+)?[\"'“]?"
        + _RANDOM,
        group=1,
        needs=("key", "secret", "token", "bearer", "密钥", "秘钥", "私钥", "令牌"),
    ),
    # A few words between the name and its "is"/":": "AppSecret reset 之后是 9c4e…", "forwarding.secret
    # contents: 9Lk2…" (not an id, a hash or a name said of it: "token request id is …").
    _p(
        "credential",
        r"(?i)"
        + _START
        + _CREDENTIAL_NAMES
        + r"(?![A-Za-z0-9])(?:(?!\bids?\b|hash|fingerprint|commit|sha|digest|uuid|request|trace|name|编号|指纹|名)"
        + r"[^\n。；;=:：\"'`]){1,16}?(?:\bis\b|\bwas\b|是|为|[:：=])\s*[\"'“]?(?![/\\])"
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
        r"(?im)^\s*(?:set-)?cookie:\s*(?:[^\n]*?[;\s])?(?!_ga\b|_gid\b|_gat\w*|_fbp\b|_gcl_\w+|_ga_\w+)[\w.\-]+="
        r"((?=[^\s;]*\d)(?=[^\s;]*[A-Za-z])[^\s;,]{20,})",
        group=1,
        needs=("cookie",),
    ),
    # Recovery (backup) codes: a list of codes after their name.
    _p(
        "recovery_codes",
        r"(?i)\b(?:recovery|backup|scratch|emergency)\s+codes?(?:" + _OWNER[3:-2] + r"|[^\n:：]{0,80})"
        r"\s*+(?:(?:are|is|[:：=—–-])\s*+){1,3}" + _CODES,
        group=1,
        needs=("code",),
    ),
    _p("recovery_codes", r"(?:恢复码|备用码|救援码|备份码)\s*(?:是|为|[:：])\s*" + _CODES, group=1, needs=("码",)),
    # One recovery code: "Patreon 2FA backup code: 8k2m-9qpz-4wxr", "steam guard recovery code R48293" —
    # two digits or more and not a word with a number ("backup code repo2024", "Python3").
    _p(
        "recovery_codes",
        r"(?i)\b(?:recovery|backup)\s+code(?:[ \t]+(?:for|of|on)[ \t]+[\w.\-]+)?[ \t]*+(?:(?:is|was|[:：=—–-])[ \t]*+)?"
        r"(?![a-z]{3,}\d+(?![\w\-]))"
        r"((?=[A-Za-z0-9\-]{0,64}?\d[A-Za-z\-]{0,64}?\d)(?=[A-Za-z0-9\-]{0,64}?[A-Za-z])[A-Za-z0-9]{4,24}(?:-[A-Za-z0-9]{3,8}){0,7})"
        r"(?![\w\-])",
        group=1,
        needs=("code",),
    ),
    # An authenticator's backup key in capitals, in groups of four: "谷歌验证器备用密钥 N4XQ 7KZP 2MRT VW5J".
    _p(
        "totp_seed",
        r"(?i:验证器|authenticator|2fa|mfa|totp|authy)[^\n]{0,12}?(?i:备用密钥|备份密钥|密钥|backup\s+key|setup\s+key)"
        r"[ \t]*[:：—–-]?[ \t]*((?=[A-Z2-7 ]{0,40}?[2-7])(?:[A-Z2-7]{4}[ \t]){3,15}[A-Z2-7]{4})(?![A-Za-z0-9])",
        group=1,
        needs=("验证器", "authenticator", "2fa", "mfa", "totp", "authy"),
    ),
)
