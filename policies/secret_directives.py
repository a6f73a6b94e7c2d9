"""Configuration directives and command lines whose value is a password (``requirepass``, ``psk=``,
SNMP communities, Cisco's ``password 0``, SQL's ``IDENTIFIED BY``, WordPress's ``DB_PASSWORD``,
``.pgpass`` lines, PowerShell's ``ConvertTo-SecureString … -AsPlainText``, an LDAP tool's ``-w``,
a Google app password where mail is sent, RCON's ``-p``, ``walletpassphrase``, a game server's
``/login``, a Twitch bot's ``PASS oauth:``, a basic auth's ``user:password``, a setting's name and
its quoted value in prose), and recovery codes
copied out one a line: the secrets known by the directive that holds them. Each pattern runs only
where one of its words is.
"""

from __future__ import annotations

import re

from memwarden.policies.secret_kinds import SecretFinding, word_automaton
from memwarden.policies.secret_patterns import PW_VALUE
from memwarden.policies.secret_words import PLACEHOLDER_VALUE

# Sixteen letters in four groups, one group at least with no vowel ("uxkq fmbz ryot wles", not "this
# team list mail").
_APP_PASSWORD = r"((?=(?:[a-z]{4} ){0,3}[b-df-hj-np-tv-xz]{4}(?![a-z]))[a-z]{4} [a-z]{4} [a-z]{4} [a-z]{4})"  # noqa: S105
# Configuration directives whose value is a password: redis, wpa_supplicant/hostapd, SNMP, a Cisco
# "password 0 …" (type 0: clear text), SQL's IDENTIFIED BY, WordPress's DB_PASSWORD, an XML element
# named for one, .npmrc's _auth.
_DIRECTIVES: tuple[tuple[tuple[str, ...], re.Pattern[str]], ...] = tuple(
    (words, re.compile(pattern))
    for words, pattern in (
        (
            ("requirepass", "masterauth", "passphrase", "psk", "community", "auth_pass"),
            r"(?im)^[ \t]*+(?:requirepass|masterauth|wpa_passphrase|psk|snmp-server[ \t]+community|auth_pass)(?:[ \t]*+=[ \t]*+|[ \t]++)\"?([^\s\"]{6,})",
        ),
        ((" 0 ",), r"(?i)\b(?:password|secret)[ \t]+0[ \t]+(\S{6,})"),
        (("identified",), r"(?i)\bIDENTIFIED\s+(?:WITH\s+\w+\s+)?BY\s+'([^'\n]{4,})'"),
        (("define(",), r"(?i)\bdefine\(\s*['\"]\w*(?:PASSWORD|PASS|SECRET|KEY)\w*['\"]\s*,\s*['\"]([^'\"\n]{4,})['\"]"),
        (("</",), r"(?i)<(?:pass|password|passwd|secret|token|api_?key)\b[^>]{0,200}>([^<\s]{4,})</"),
        (("_auth",), r"(?i)\b_auth(?:Token)?\s*=\s*(\S{8,})"),
        (
            (":",),
            r"(?m)^[^\s:#]{1,200}:\d{2,5}:[^\s:]{1,200}:[^\s:]{1,200}:(\S{6,})$",
        ),  # ~/.pgpass
        # a .pgpass line quoted in prose: "added to ~/.pgpass on the bastion: db-replica.internal:5432:*:readonly:Vr9-lagoon-x"
        (
            ("pgpass",),
            r"(?m)(?<=[ \t])(?!(?:[0-9A-Fa-f]{2}:){4})[\w.\-*\[\]]{1,200}:\d{2,5}:[^\s:]{1,200}:[^\s:]{1,200}:(\S{6,})$",
        ),
        # said in prose: "set redis requirepass to `p0tato-Salad-Rain`"
        (
            ("requirepass", "masterauth"),
            r"(?i)\b(?:requirepass|masterauth)[ \t]+(?:to[ \t]+)?[`'\"]([^`'\"\s]{6,})[`'\"]"
            # "把 Redis requirepass 改成了 R3dis_Stg_7788": letters and digits, after a Chinese "changed to"
            r"|\b(?:requirepass|masterauth)[ \t]*(?:改成了?|改为|设为|设成了?|是)[ \t]*"
            r"((?=[^\s，。]*\d)(?=[^\s，。]*[A-Za-z])[^\s，。]{6,})",
        ),
        # PowerShell's: ConvertTo-SecureString 'B@ckup-Nightly-93' -AsPlainText
        (
            ("convertto-securestring",),
            r"(?i)\bConvertTo-SecureString\s+(?:-String\s+)?(?:'([^'\n]{4,})'|\"([^\"\n]{4,})\")\s+-AsPlainText",
        ),
        # "logged in as admin with 'scanme2fold'", "log on as CORP\\da-mwright (R1verb3nd&Co!)"
        (
            ("logged in as", "log in as", "log on as", "login as", "logged on as"),
            r"(?i)\blog(?:ged)?\s*(?:in|on)\s+as\s+[\w.@\\\-]{2,60}\s+(?:with\s+|using\s+)?(?:(?:the\s+)?password\s+)?"
            r"(?:'((?=[^'\s]*[\d_!@#$%^&*+=?~.\-])[^'\s]{6,40})'|\"((?=[^\"\s]*[\d_!@#$%^&*+=?~.\-])[^\"\s]{6,40})\"|\(((?=[^)\s]*\d)(?=[^)\s]*[A-Za-z])[^)\s]{6,40})\))",
        ),
        # SNMP's community said in prose: "SNMP community on the core switch is nmsR3ad0nly_fh"
        (
            ("community",),
            r"(?i)\bsnmp\b[^\n]{0,20}?\bcommunity(?:\s+string)?\b[^\n]{0,30}?\b(?:is|:|=)[ \t]*['\"]?"
            r"(?!public\b|private\b)((?=[^\s'\",]*\d)[^\s'\",]{6,})",
        ),
        # htpasswd's batch mode, Postfix's sasl_passwd, etcdctl's --user, HAProxy's stats auth, SSSD's
        # authtok, snmpd's communities, npm's one-time password, Rails' master key, Windows' unattend
        # file, a Terraform/Packer variable's default.
        (
            ("htpasswd",),
            r"\bhtpasswd\s+-(?=[A-Za-z]{0,8}b)[A-Za-z]{1,9}\s+\S+\s+\S+\s+(?:'([^'\s]{4,})'|\"([^\"\s]{4,})\"|([^\s'\"]{4,}))",
        ),
        (("sasl_passwd",), r"(?m)^\[?[\w.\-]+\]?(?::\d+)?[ \t]+[^\s:]+:(\S{6,})$"),
        (("--user",), r"(?<![\w\-])--user[= ]+(?!-)[^\s:'\"]+:([^\s'\"]{4,})"),
        (("stats auth",), r"\bstats\s+auth\s+[^\s:]+:(\S{4,})"),
        (("authtok",), r"(?i)\b\w*authtok\s*=\s*(?!password\b)(\S{4,})"),
        (("community",), r"(?im)^[ \t]*(?:rw|ro)community6?[ \t]+(?!public\b|private\b)(\S{6,})"),
        (("--otp",), r"--otp[= ](\d{6})\b"),
        (("master.key",), r"\bmaster\.key\W{1,6}([0-9a-f]{32})\b"),
        (("password>",), r"(?i)<\w*Password>\s*<Value>([^<\s]{4,})</Value>"),
        (
            ("variable",),
            r"(?i)\bvariable\s+\"\w*(?:password|passwd|secret|token)\w*\"\s*\{[^}]{0,200}?\bdefault\s*=\s*\"([^\"\s]{6,})\"",
        ),
        # An LDAP tool's bind password: ldapsearch … -w 'L3dger!Moss'
        (("ldap",), r"\bldap\w{0,20}\b[^\n]{0,200}?[ \t]-w[ \t]+(?:'([^'\s]{4,})'|\"([^\"\s]{4,})\"|([^\s'\"]{4,}))"),
        # a key named for a password, quoted, its value quoted: "'PGPASSWORD': 'qL2-ferry-Nimbus'"
        (
            ("password", "passwd", "secret"),
            r"(?i)['\"]\w{0,30}(?:password|passwd|secret|pwd)\d?['\"][ \t]*:[ \t]*['\"]((?=[^'\"\s]*[\d_!@#$%^&*+=?~.\-])[^'\"\s]{6,})['\"]"
            # Gradle's and similar: storePassword "Ampl3-Tide!"
            r"|\b[a-z]\w*(?-i:Password)[ \t]+\"([^\"\s]{6,})\"|\b[a-z]\w*(?-i:Password)[ \t]+'([^'\s]{6,})'",
        ),
        # A Google app password (four groups of four random letters — one group at least with no vowel)
        # where mail is sent or the app password named.
        (
            ("smtp", "gmail", "app password", "app-specific", "应用专用"),
            r"(?i:smtp|gmail|app[ \-]?(?:specific[ \-])?password|应用专用)[\s\S]{0,120}?(?<![A-Za-z])"
            + _APP_PASSWORD
            + r"(?![A-Za-z])"
            r"|(?<![A-Za-z])" + _APP_PASSWORD + r"(?![A-Za-z])[\s\S]{0,80}?(?i:smtp|gmail|app[ \-]?password)",
        ),
        (("wifi:",), r"(?i)\bWIFI:[^\n]{0,200}?\bP:([^;\s]{6,});"),  # a Wi-Fi QR code's payload
        # A Minecraft server's console (RCON): a quoted value whole, not a word ("the rcon -p flag").
        (
            ("rcon",),
            r"\b(?:mcrcon|rcon-cli|rcon)\b[^\n]{0,200}?\s-p[ \t]*"
            r"(?:'([^'\n]{4,64})'|\"([^\"\n]{4,64})\"|(?![a-z]+\b)([^\s'\"]{4,}))",
        ),
        # A wallet unlocked from its command line (not the manual's "walletpassphrase 'passphrase'").
        (("walletpassphrase",), r"\bwalletpassphrase\s+['\"](?!passphrase['\"])([^'\"\n]{4,})['\"]"),
        # A game server's login command (AuthMe: "/login Emerald_Sword9"; not "/login username2"), a
        # Twitch chat bot's "PASS oauth:…", a basic auth's "user:password" in a log line.
        (
            ("/login", "/register", "/l "),
            r"(?i)(?:^|[\s'\"`])/(?:login|register|l)\s+(?!(?:user(?:name)?|pass(?:word)?|your\w*|my\w*|pwd)\d*\b)"
            + PW_VALUE
            + r"(?![^\s'\"`])",
        ),
        (("oauth:",), r"\boauth:([a-z0-9]{20,40})\b"),
        # A setting's name quoted in prose, then its quoted value with a letter and a digit:
        # "DB_PASSWORD 'p7Tq!zWm3Kx'" (not "DB_PASSWORD 'undefined'", "GITHUB_TOKEN 'read-only'").
        (
            ("password", "passwd", "pwd", "secret", "token", "api_key"),
            r"\b[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)*_(?:PASSWORD|PASSWD|PWD|SECRET|SECRET_KEY|TOKEN|API_KEY)\b['\"]?[ \t]{1,4}"
            r"(?:is[ \t]{1,4})?['\"]((?=[^'\"\s]{0,64}?\d)(?=[^'\"\s]{0,64}?[A-Za-z])(?![$/])[^'\"\s/]{6,64})['\"]",
        ),
        (
            ("basic auth", "basic-auth", "basicauth"),
            r"(?i)\bbasic[ \-]?auth\b[^\n]{0,32}?[ \t]['\"]?[\w.\-@]{2,40}:" + PW_VALUE + r"(?=[\s,;)'\"]|$)",
        ),
        (("0x",), r"(?i)(?:wallet\(|private[_\s-]?key|privkey)\W{0,6}(0x[0-9a-fA-F]{64})\b"),
        (
            ("提取码", "访问码", "extraction"),
            r"(?i)(?:提取码|访问码|extraction\s+code)\s*[:：是为]?\s*([A-Za-z0-9]{4})\b",
        ),
        (
            ("is your", "use ", "是您的", "为您的"),
            # A one-time code named after it: "329-876 is your … security code", "Use 133194 to sign in".
            r"(?i)\b(\d{3}[\s\-]?\d{3}|\d{4}[\s\-]\d{4}|\d{4,8})\s+is\s+your\b[^.\n]{0,40}?\b(?:code|passcode|pin|password)\b"
            r"|\buse\s+(\d{4}[\s\-]\d{4}|\d{3}[\s\-]\d{3}|\d{4,8})\s+as\s+your\b[^.\n]{0,20}?\b(?:code|passcode|pin)\b"
            r"|\buse\s+(\d{4,8})\s+to\s+(?:sign|log)\s+in\b|\b(\d{4,8})\s*(?:是您的|为您的)[^。\n]{0,12}验证码",
        ),
    )
)


# Three or more lines of codes alone (xxxxx-xxxxx, 1234-5678): recovery codes copied out.
_ONE_CODE = r"(?:\d{1,2}[.)][ \t]*)?(?=[a-z0-9 -]*\d)[a-z0-9]{4,6}[- ][a-z0-9]{4,6}"
_CODE_LINES = re.compile(
    rf"(?m)(?:^[ \t]*{_ONE_CODE}(?:[ \t]+{_ONE_CODE})?[ \t]*\n){{2,}}^[ \t]*{_ONE_CODE}(?:[ \t]+{_ONE_CODE})?[ \t]*$"
)


# Which directives a word calls for: one pass of an automaton over the text finds every directive
# worth running (a substring look for each word of each directive was a hot spot of the pipeline).
_DIRECTIVES_OF: dict[str, list[int]] = {}
for _i, (_words, _) in enumerate(_DIRECTIVES):
    for _word in _words:
        _DIRECTIVES_OF.setdefault(_word, []).append(_i)
_DIRECTIVE_WORDS = word_automaton(_DIRECTIVES_OF)


def directives(text: str, folded: str) -> list[SecretFinding]:
    """Each directive's pattern, run only where one of its words is (a long text costs one pass
    for all the words, not every pattern at every position)."""
    found = []
    called = {i for _, word in _DIRECTIVE_WORDS.iter(folded) for i in _DIRECTIVES_OF[word]}
    for i in sorted(called):
        pattern = _DIRECTIVES[i][1]
        for m in pattern.finditer(text):
            group = next(i for i in range(1, (pattern.groups or 0) + 1) if m.group(i) is not None)
            if not PLACEHOLDER_VALUE.match(m.group(group)):
                found.append(SecretFinding("password", m.start(group), m.end(group)))
    if "\n" in text:
        found += [SecretFinding("recovery_codes", m.start(), m.end()) for m in _CODE_LINES.finditer(text)]
    return found
