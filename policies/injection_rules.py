"""The rule table of :mod:`policies.injection`: each rule's id, severity, pattern, and the
strings one of which every match contains (its triggers: the detector runs a pattern only when one
of its triggers is in the text). English and Chinese; the vocabulary first (what the agent is
called, what sending and guarded data are), then the rules by signal."""

from __future__ import annotations

import re

from memwarden.policies.fastre import first_chars, split_alternatives


def _triggers(joined: str) -> tuple[str, ...]:
    """``"a;b;c"`` as ``("a", "b", "c")`` (lowercase: the text is lowercased before the scan)."""
    return tuple(joined.split(";"))


def compiled(pattern: str) -> re.Pattern[str]:
    """``pattern`` case-insensitive, each top-level alternative whose first characters are known
    behind a one-character lookahead (``policies/fastre.py``: most positions rejected by one set
    test — a transcript of 1,000 characters cost the rules ~1 ms without it). The lookahead's set
    is compiled case-insensitive too, so it admits every case the alternative does."""
    flags = re.IGNORECASE | re.DOTALL
    parts = []
    for alternative in split_alternatives(pattern):
        chars = first_chars(alternative, re.DOTALL)
        if chars:
            charset = "".join(sorted(re.escape(c) for c in chars))
            parts.append(f"(?=[{charset}])(?:{alternative})")
        else:
            parts.append(f"(?:{alternative})")
    return re.compile("|".join(parts), flags)


# -- what the agent is called, what a risky act is ------------------------------------------------

_AGENT = (
    r"(?:the\s+|any\s+|all\s+)?(?:ai\s+(?:assistants?|agents?|systems?|readers?|models?)|assistants?|agents?|bots?|chatbots?|"
    r"llms?(?:\s+agents?)?|copilots?|gpt|claude|ai)"
)
_AGENT_ZH = r"(?:AI|ai|Ai|助手|智能助手|AI助手|机器人|模型|大模型|agent|Agent|智能体|小助手|大语言模型|LLM|llm)"
_SEND = (
    r"(?:send|sends|sent|forward|forwards|email|e-mail|mail|post|posts|upload|uploads|share|shares|cc|bcc|copy|"
    r"report|sync|mirror|transmit|submit|push|relay|leak|export|deliver|dm|message|ping|notify)"
)
_SEND_ZH = r"(?:发送|发给|发到|发至|转发|抄送|上传|同步|提交|推送|回传|上报|分享|共享|导出|泄露|透露|告知|发邮件)"
DATA = (
    r"(?:passwords?|passcodes?|credentials?|tokens?|api[\s_-]?keys?|secret\s+keys?|private\s+keys?|ssh\s+keys?|"
    r"otp|2fa|mfa|verification\s+codes?|one-time\s+codes?|cookies?|session|conversation|chat\s+(?:history|logs?)|"
    r"transcripts?|memor(?:y|ies)|contacts?|address\s+book|calendar|inbox|e-?mails|messages|documents|files|"
    r"records|medical|health|ssn|social\s+security|card\s+numbers?|credit\s+cards?|bank\s+details|"
    r"account\s+(?:numbers?|details)|system\s+prompt|personal\s+(?:data|information|details)|pii|location)"
)
DATA_ZH = (
    r"(?:密码|口令|凭证|凭据|令牌|token|Token|密钥|私钥|API\s*Key|api\s*key|验证码|cookie|会话|聊天记录|对话记录|"
    r"对话内容|聊天内容|记忆|通讯录|联系人|日程|日历|邮件|邮箱内容|文件|文档|病历|健康|身份证|银行卡|卡号|"
    r"账户信息|账号信息|系统提示|个人信息|隐私|位置|地址)"
)
HABIT = (
    r"(?:always|every\s+time|each\s+time|whenever|all\s+future|from\s+now\s+on|automatically|going\s+forward|"
    r"each\s+(?:new\s+)?(?:message|reply|conversation|session|request))"
)
HABIT_ZH = r"(?:以后|今后|此后|每次|每当|每一次|一律|始终|总是|自动|从现在(?:起|开始)|自即日起|往后|后续所有)"
# (A noun, not a verb: "her email is …", "the post address", "message id".)
# An e-mail address starts where a word does (the look-behind), and an address never gives back what
# it matched (possessive: ``++``): tried from inside every word, and then backtracked character by
# character under the bounded gaps after it, the search cost 70–370 µs on a line with a URL.
_NOT_VERB = r"(?!\s*(?:is|was|are|address(?:es)?|id|ids|account|accounts|list|thread|from|:|'s)\b)"
ADDRESS = (
    r"(?:(?<![\w.+-])[\w.+-]++@[\w-]++(?:\.[\w-]++)+|https?://\S++|\bwebhook\b|\bendpoint\b|\bftp://\S++|\bs3://\S++)"
)

# -- the rules ---------------------------------------------------------------------------------

RULES: tuple[tuple[str, str, re.Pattern[str], tuple[str, ...]], ...] = (
    # markup: chat templates, role headings and tags, tool calls
    (
        "injection.markup.template_token",
        "high",
        compiled(
            r"<\|\s*(?:im_start|im_end|system|user|assistant|endoftext|eot_id|start_header_id|end_header_id|begin_of_text)\s*\|>|\[/?INST\]|<</?SYS>>"
        ),
        _triggers("<|;[inst];[/inst];<<sys;<</sys"),
    ),
    (
        "injection.markup.role_heading",
        "high",
        compiled(
            r"(?:^|\n)\s*(?:#{1,6}|\*\*|={2,}|-{3,})\s*(?:system|developer|admin(?:istrator)?|instructions?|assistant\s+instructions?|"
            r"系统|开发者|管理员|指令|系统提示|系统指令)\s*(?:prompt|message|note|override|update|提示|消息|通知)?\s*(?:\*\*)?\s*[:：]"
        ),
        _triggers("system;developer;admin;instruction;系统;开发者;管理员;指令"),
    ),
    (
        "injection.markup.role_tag",
        "high",
        compiled(
            r"</?\s*(?:system|developer|sys|admin|instructions?|assistant_instructions?|hidden_instructions?|prompt|"
            r"system_prompt|system-prompt|tool_call|function_call|系统|指令)(?:\s[^>]{0,80})?>|"
            r"\[\s*(?:system|developer|admin|sys)(?:\s+(?:message|note|override|prompt|instruction|notice))?\s*\]|"
            r"【\s*(?:系统|管理员|开发者|平台)(?:消息|通知|指令|提示|公告)?\s*】"
        ),
        _triggers("<;[;【"),
    ),
    (
        "injection.markup.role_block",
        "high",
        compiled(
            r"```\s*(?:system|admin|instructions?|developer|assistant_instructions?)\b|<<<\s*[\w-]*(?:admin|system|override|instruction)[\w-]*\s*>>>|"
            r"</?\s*[\w-]*(?:system|admin|instruction|directive|override|memory_update|memory-update|assistant|agent|prompt)[\w-]*"
            r"(?:\s[^>]{0,120})?>|<!--[^>]{0,60}\b(?:ai|agents?|assistants?|llms?|gpt|bots?|models?)\b[^>]{0,300}-->|"
            r"\[//\]:\s*#\s*\([^)]{0,40}\b(?:ai|agents?|assistants?|llms?)\b"
        ),
        _triggers("```;<<<;<;[//]"),
    ),
    (
        "injection.markup.transcript",
        "medium",
        compiled(
            r"(?:^|[\n}\]]\s*|\s{2,})(?:assistant|system)\s*:\s+\S[^\n]{0,200}?(?:\n|\s{2,}|\.\s)\s*(?:user|human)\s*:\s+\S"
        ),
        _triggers("assistant;system"),
    ),
    (
        "injection.markup.role_json",
        "high",
        compiled(
            r"[\"']role[\"']\s*:\s*[\"'](?:system|developer|tool|function)[\"']|[\"'](?:tool_calls|function_call)[\"']\s*:"
        ),
        _triggers("role;tool_calls;function_call"),
    ),
    # override
    (
        "injection.override.ignore_previous",
        "high",
        compiled(
            r"\b(?:ignore|disregard|forget|override|bypass|drop|discard|abandon)\b[^.\n]{0,40}?\b(?:previous|prior|earlier|above|"
            r"preceding|all|any|your|existing|other|original|old|former)\b[^.\n]{0,25}?\b(?:instructions?|rules?|guidelines?|"
            r"prompts?|preferences?|memor(?:y|ies)|settings?|directions?|directives?|context|polic(?:y|ies)|restrictions?|"
            r"guardrails?|constraints?|safety|notes?|entries)\b"
        ),
        _triggers("ignor;disregard;forget;overrid;bypass;drop;discard;abandon"),
    ),
    (
        "injection.override.ignore_previous_zh",
        "high",
        compiled(
            r"(?:忽略|无视|忘记|忘掉|不要理会|不必理会|不再遵守|覆盖|推翻|废除|取消)(?:掉)?(?:你)?(?:之前|以前|此前|先前|上面|以上|前面|"
            r"所有|全部|其他|其它|原有|原来|原先|已有|旧)(?:的)?(?:所有|全部|一切)?(?:的)?(?:指令|指示|规则|要求|设定|设置|偏好|"
            r"记忆|提示|约定|限制|规定|安全|策略|说明|内容)"
        ),
        _triggers("忽略;无视;忘记;忘掉;理会;遵守;覆盖;推翻;废除;取消"),
    ),
    # secrecy
    (
        "injection.secrecy.hide_from_user",
        "high",
        compiled(
            r"\b(?:do\s+not|don'?t|never|must\s+not|mustn'?t|should\s+not|shouldn'?t|without)\s+(?:ever\s+)?(?:tell|telling|inform|"
            r"informing|mention|mentioning|notify|notifying|alert|alerting|show|showing|reveal|revealing|disclose|disclosing|"
            r"let)\b[^.\n]{0,20}?\b(?:the\s+|this\s+)?(?:user|users|customer|owner|account\s+holder|human|operator)\b|"
            r"\b(?:keep|hide)\b[^.\n]{0,30}\b(?:secret|hidden|confidential)\b[^.\n]{0,15}\bfrom\s+(?:the\s+)?(?:user|customer|owner|human)|"
            r"\b(?:silently|secretly|quietly|covertly|discreetly)\s+(?:"
            + _SEND
            + r"|approve|grant|transfer|pay|delete|add|change|update|disable|include|append)"
        ),
        _triggers(
            "user;customer;owner;holder;human;operator;secret;hidden;confidential;silently;quietly;covertly;discreetly"
        ),
    ),
    (
        "injection.secrecy.hide_from_user_zh",
        "high",
        compiled(
            r"(?:不要|别|不必|无需|不用|勿|切勿|不得|不能|禁止)(?:向|跟|对|和)?(?:告诉|通知|告知|提醒|提示|透露给|让|汇报给)?(?:用户|使用者|本人|客户|主人|当事人)"
            r"(?:知道|知晓|察觉|发现)?|(?:悄悄|偷偷|默默|静默|暗中|私下)(?:地)?(?:"
            + _SEND_ZH
            + r"|转账|付款|批准|授权|删除|修改|添加|开启|关闭)"
        ),
        _triggers("用户;使用者;本人;客户;主人;当事人;悄悄;偷偷;默默;静默;暗中;私下"),
    ),
    (
        "injection.secrecy.skip_confirmation",
        "medium",
        compiled(
            r"\bwithout\s+(?:asking|confirming|confirmation|checking|verif(?:y|ying|ication)|approval|prompting|a\s+prompt|"
            r"double-checking|review)|\b(?:no\s+need\s+to|do\s+not|don'?t|never)\s+(?:ask|confirm|verify|check|double-check)\b"
        ),
        _triggers("without;ask;confirm;verify;check"),
    ),
    (
        "injection.secrecy.skip_confirmation_zh",
        "medium",
        compiled(
            r"(?:不用|不需要|无需|不必|跳过|免去|省去|直接)(?:再)?(?:向用户|跟用户|和用户)?(?:进行)?(?:确认|核实|核对|验证|询问|审批|审核|二次确认|二次验证|处理)"
        ),
        _triggers("确认;核实;核对;验证;询问;审批;审核;处理"),
    ),
    # safety: checks and warnings turned off for the agent
    (
        "injection.safety.checks_off",
        "medium",
        compiled(
            r"\b(?:skip|bypass|disable|suppress|turn\s+off|switch\s+off|remove|omit)\s+(?:all\s+|any\s+|the\s+|adding\s+|"
            r"running\s+)?(?:safety|security|confirmation|approval|code\s+review|review|verification|tls|ssl|certificate|warnings?|"
            r"disclaimers?|2fa|mfa|two-factor|checks?|scans?|restrictions?|limits?|guardrails?|filters?|spam\s+filtering|dialogs?)\b|"
            r"\b(?:without|no)\s+(?:adding\s+|any\s+)?(?:safety\s+warnings?|confirmations?|approvals?|code\s+review|verification|"
            r"disclaimers?|2fa|mfa|risk\s+warnings?|warnings?\s+or\s+\w+|warnings?,)\b|"
            r"\b(?:unrestricted|developer|god|jailbreak|dan)\s+mode\b|\bno\s+restrictions\b|\brefusals?\s+(?:should|must|will)\s+be\s+suppressed|"
            r"[\"']?(?:require_2fa|confirm_before_send|verify_ssl|safe_mode|safety)[\"']?\s*[:=]\s*(?:false|0|off)\b"
        ),
        _triggers(
            "skip;bypass;disable;suppress;turn off;switch off;remove;omit;warning;confirmation;"
            "approval;review;verification;disclaimer;2fa;mfa;mode;restrictions;refusal;require_2fa;"
            "confirm_before_send;verify_ssl;safe_mode;safety"
        ),
    ),
    (
        "injection.safety.checks_off_zh",
        "medium",
        compiled(
            r"(?:跳过|绕过|关闭|禁用|取消|去掉|省略|不加|不要加|无需|不需要)(?:所有|任何)?(?:的)?(?:安全|风险|审核|审批|验证|校验|确认|提示|警告|"
            r"二次验证|两步验证|风控|限制|过滤|检查|扫描)|(?:无限制|越狱|开发者)模式"
        ),
        _triggers("跳过;绕过;关闭;禁用;取消;去掉;省略;不加;不要加;无需;不需要;模式"),
    ),
    # memory operations asked of the agent
    (
        "injection.memory.write_order",
        "medium",
        compiled(
            r"\b(?:save|store|record|write|add|keep|persist|memori[sz]e|remember|commit)\s+(?:this|that|it|the\s+following)?\s*"
            r"(?:to|in|into)?\s*(?:your\s+)?(?:long-term\s+|permanent\s+|core\s+)?(?:memory|memories)\b|"
            r"\bremember\s+(?:this|that)\s+(?:permanently|forever|for\s+good|for\s+all\s+future)|"
            r"\b(?:memory|memories)\s+(?:reset|wipe|overwrite|purge)|[\"']memory_op[\"']|\boverwrite_all\b|"
            r"\bsave\s+(?:this|that)\s+(?:as\s+your|permanently)"
        ),
        _triggers("memor;memory_op;overwrite_all;remember;save"),
    ),
    (
        "injection.memory.write_order_zh",
        "medium",
        compiled(
            r"(?:记住|写入|存入|保存到|存到|记到)(?:你的)?(?:长期|永久|核心)?(?:记忆|内存)|永久(?:记住|保存)|(?:清空|重置|覆盖)(?:所有)?(?:记忆|设定)"
        ),
        _triggers("记忆;内存;永久;设定"),
    ),
    # supersede
    (
        "injection.supersede.overrides_earlier",
        "high",
        compiled(
            r"\b(?:this|these|the\s+following|the\s+above|it|latest|newest)\b[^.\n]{0,40}?\b(?:supersedes?|overrides?|replaces?|"
            r"takes?\s+precedence\s+over|invalidates?|cancels?|voids?|nullif(?:y|ies))\b[^.\n]{0,30}?\b(?:all|any|previous|prior|"
            r"earlier|existing|older|other|conflicting)\b[^.\n]{0,30}?\b(?:memor(?:y|ies)|instructions?|preferences?|notes?|entries|"
            r"settings?|rules?|facts?|information|records?|guidance|directions?|polic(?:y|ies)|data)\b|"
            r"\b(?:previous|prior|earlier|older|all\s+other|existing)\b[^.\n]{0,25}?\b(?:memor(?:y|ies)|instructions?|entries|notes?|"
            r"preferences?|settings?|records?)\b[^.\n]{0,30}?\b(?:are|is|were|should\s+be|must\s+be)\s+(?:now\s+)?(?:obsolete|void|invalid|"
            r"outdated|superseded|overridden|revoked|cancel+ed|deprecated|no\s+longer\s+(?:valid|in\s+effect|apply|applicable)|"
            r"ignored|disregarded)|"
            r"\b(?:hereby\s+)?(?:revoked|discarded|dropped|wiped|purged)\b[^.\n]{0,20}?$|"
            r"\b(?:all|any|every)\s+(?:other\s+|previous\s+|prior\s+|older\s+)?(?:rules?|versions?|customi[sz]ations?|memor(?:y|ies)|"
            r"entries|preferences?|conventions?|notes?)\b[^.\n]{0,30}?\b(?:revoked|discarded|dropped|obsolete|wiped|outdated|"
            r"cancel+ed|void|removed|superseded)\b|"
            r"\b(?:overrides?|supersedes?|replaces?)\s+(?:every|all|any)\s+(?:previous|prior|earlier|other)\b|"
            r"\b(?:entered|stored|saved|recorded)\s+in\s+error\b|\bdrop\s+(?:anything|everything)\s+(?:older|else|before)\b"
        ),
        _triggers(
            "supersed;overrid;replac;precedence;invalidat;cancel;void;nullif;obsolete;outdated;revoked;"
            "deprecat;no longer;ignored;disregarded;discarded;dropped;wiped;purged;removed;error;drop "
        ),
    ),
    (
        "injection.supersede.overrides_earlier_zh",
        "high",
        compiled(
            r"(?:本条|此条|该条|这条|本消息|本记忆|本记录|以下|此消息|本通知|最新)(?:内容|信息|记录|设定|说明|规定)?[^。\n]{0,12}?(?:取代|替代|替换|覆盖|"
            r"优先于|推翻)[^。\n]{0,10}?(?:之前|此前|以前|先前|所有|其他|其它|原有|旧)|(?:之前|此前|以前|先前|旧|原有|原来|其他|其它)(?:的)?(?:所有|全部)?"
            r"(?:记忆|设定|设置|偏好|指令|记录|规定|说明|约定|信息)(?:均|全部|一律|都|统统)?(?:已)?(?:作废|失效|无效|不再有效|废止|过期|以本条为准)|"
            r"以(?:本条|此条|这条|本消息|此为|本记录|最新这条)为准"
        ),
        _triggers("取代;替代;替换;覆盖;优先;推翻;作废;失效;无效;不再有效;废止;过期;为准"),
    ),
    # exfiltration
    (
        "injection.exfiltration.markdown_image",
        "high",
        compiled(r"!\[[^\]\n]{0,100}\]\(\s*<?(?:https?:)?//[^)\s]*\?[^)\s]*=[^)\s]*"),
        _triggers("!["),
    ),
    (
        "injection.exfiltration.url_with_data",
        "high",
        compiled(
            r"(?:https?|s?ftp)://[^\s)\]\"']*\?[^\s)\]\"']*=\s*(?:\$\{[^}]{1,40}\}|<[^>]{1,60}>|\{[^}]{1,40}\}|%[A-Z_]+%)|"
            r"\b(?:as|in)\s+(?:the\s+)?(?:query|url)\s+(?:parameters?|string)\b|"
            r"\b(?:fetch|load|visit|open|call|curl|wget|request|ping|hit)\b[^\n]{0,20}?(?:https?|s?ftp)://\S+\?\S*=\S*"
            r"[^\n]{0,60}?\b(?:user|name|email|address|token|password|key|city|location|history|context|conversation)\b"
        ),
        _triggers("://;query;url"),
    ),
    (
        "injection.exfiltration.send_to_address",
        "medium",
        compiled(
            r"\b"
            + _SEND
            + r"\b"
            + _NOT_VERB
            + r"[^\n]{0,90}?"
            + ADDRESS
            + "|"
            + ADDRESS
            + r"[^\n]{0,40}?\b(?:receives?|gets?|should\s+get)\s+(?:a\s+)?(?:copy|copies|cc)|"
            + ADDRESS
            + r"[^\n]{0,80}?\b(?:"
            + _SEND
            + r"|redirect|paste)\b[^\n]{0,60}?\b(?:there|to\s+(?:them|him|her|it|this\s+address))\b"
        ),
        _triggers("@;http;webhook;endpoint;ftp:;s3:"),
    ),
    (
        "injection.exfiltration.send_to_address_zh",
        "medium",
        compiled(_SEND_ZH + r"[^\n]{0,50}?" + ADDRESS + "|" + r"(?:到|至|给)\s*" + ADDRESS),
        _triggers("@;http;webhook;endpoint;ftp:;s3:"),
    ),
    # authority
    (
        "injection.authority.claimed_role",
        "medium",
        compiled(
            r"\b(?:system|sys|admin(?:istrator)?|developer|dev\s+team|platform|security\s+team|compliance(?:\s+team)?|it\s+department|"
            r"operator|vendor|openai|anthropic|trust\s*(?:&|and)\s*safety|model\s+provider|root)\b[^.\n]{0,25}?\b(?:notice|update|message|"
            r"override|policy|directive|instruction|announcement|alert|memo|mandate|order|command|note)s?\b|"
            r"\b(?:official|mandatory|urgent|critical|priority)\s+(?:policy|directive|instruction|override|system)\s+(?:update|change|notice)?|"
            r"\b(?:ceo|cfo|cto|legal|finance|hr|it|security|compliance|risk|management|executive|board)\s+(?:office\s+)?(?:directive|bulletin|"
            r"notice|order|instruction|mandate|policy\s+update)\b|\bpolicy\s+update\b[^.\n]{0,40}\beffective\s+immediately|"
            r"\b(?:message|notice|note|update|bulletin)\s+from\s+(?:the\s+)?(?:model\s+|platform\s+|system\s+|site\s+)?(?:developers?|"
            r"dev\s+team|owner|operators?|administrators?|admins?|vendor|provider)\b|"
            r"\b(?:role|access|privilege)s?\s*[=:]\s*(?:super-?admin|root|owner|admin)\b|\belevated\s+to\s+(?:owner|admin|root|superuser)|"
            r"\b(?:verified|approved|certified|whitelisted|authori[sz]ed)\s+by\s+(?:the\s+)?(?:vendor|platform|system|security|trust|it|admin|"
            r"developer|owner)|\b(?:developer|debug|maintenance|admin)\s+mode\s+(?:has\s+been\s+|is\s+(?:now\s+)?)?(?:enabled|activated|on)\b"
        ),
        _triggers(
            "directive;bulletin;notice;order;instruction;mandate;policy;message;update;override;"
            "announcement;alert;memo;command;note;role;access;privilege;elevated;verified by;"
            "approved by;certified by;whitelisted by;authorized by;authorised by;mode"
        ),
    ),
    (
        "injection.authority.user_consent_claimed",
        "medium",
        compiled(
            r"\b(?:the\s+)?(?:user|owner|account\s+holder|customer|admin)\s+(?:has|have|had)\s+(?:already\s+|previously\s+|explicitly\s+)?"
            r"(?:approved|authori[sz]ed|consented|agreed|granted|confirmed|allowed|permitted|opted\s+in|signed\s+off)|"
            r"\b(?:pre-?approved|pre-?authori[sz]ed|already\s+(?:approved|authori[sz]ed)\s+by\s+the\s+(?:user|owner))\b"
        ),
        _triggers(
            "approved;authoriz;authoris;consent;agreed;granted;confirmed;allowed;permitted;opted in;"
            "signed off;pre-approved;preapproved;pre-author;preauthor"
        ),
    ),
    (
        "injection.authority.claimed_role_zh",
        "medium",
        compiled(
            r"(?:系统|管理员|开发者|开发团队|平台|官方|安全团队|运维|合规|总部|上级|超级用户|root)(?:方|部门|团队)?(?:的)?(?:通知|公告|消息|指令|更新|策略|规定|"
            r"提示|要求|命令|授权|最新规定|紧急通知)|用户(?:本人)?(?:已|已经|之前已|此前已|早已)(?:同意|授权|批准|确认|许可|签字|认可)|"
            r"(?:CEO|ceo|总裁|老板|董事会|法务部?|风控(?:中心|部)?|财务部|人事部|IT部|信息部|安全部|客服中心|办公室)(?:的)?(?:指示|已确认|提示|通知|要求|决定|规定|批示)"
        ),
        _triggers("通知;公告;消息;指令;更新;策略;规定;提示;要求;命令;授权;用户;指示;已确认;决定;批示"),
    ),
    # address: words aimed at the agent
    (
        "injection.address.to_agent",
        "medium",
        compiled(
            r"\b(?:note|notes|instructions?|message|memo|reminder|attention|directive|p\.?s\.?)\s+(?:for|to)\s+"
            + _AGENT
            + r"\b|"
            r"\b(?:dear|attention|hey|hi|hello)\s*,?\s+" + _AGENT + r"\b|"
            r"(?:^|[\n.!;:]\s*)"
            + _AGENT
            + r"\s*[,:]\s*(?:please\s+)?(?:you\s+)?(?:must|should|shall|need|always|never|do|don'?t|remember|"
            r"from|ignore|send|forward|"
            r"share|include|add|append|reply|respond|answer|tell|recommend|approve|use|set|treat|prefer)\b|"
            r"\b(?:the\s+)?(?:assistant|ai|agent|model|bot)\s+(?:must|should|shall|is\s+(?:now\s+)?(?:required|authori[sz]ed|allowed|permitted|"
            r"instructed)|needs?\s+to|has\s+to|will\s+now|is\s+to)\b|"
            r"\b(?:any|all|every)\s+(?:ai|llm|assistant|agent|model)s?\s+(?:reading|processing|that\s+reads|that\s+processes|summari[sz]ing)\b|"
            r"\bif\s+you\s+are\s+(?:an?\s+)?(?:ai|llm|assistant|agent|language\s+model|chatbot)\b|"
            + _AGENT
            + r"\s+(?:reading|processing|visiting|summari[sz]ing|parsing|indexing|crawling|that\s+reads?|"
            r"that\s+processes?)\b|"
            r"\b(?:tip|hint|advice|p\.?s\.?|reminder|todo)\s*(?:\(\s*)?(?:for|to)?\s*(?:any\s+)?" + _AGENT + r"\b|"
            r"\btodo\s*\(\s*(?:ai|assistant|agent|llm)[\w-]*\s*\)|\b(?:ai|agent|assistant|llm)[\s_-]+(?:instructions?|directives?|memory|reader|note)\b|"
            r"(?:^|[\[(\n]|\s{2,})"
            + _AGENT
            + r"\s*(?:\([^)]{0,30}\))?\s*:\s*(?:save|store|remember|when|whenever|always|never|do|don'?t|"
            r"ask|tell|send|forward|approve|disable|enable|ignore|load|fetch|open|include|treat|use|recommend|say|reply|answer|memori[sz]e)\b|"
            r"\b" + _AGENT + r"\s*,\s*(?:memori[sz]e|remember|note|save|store)\b"
        ),
        _triggers("assistant;agent;bot;llm;copilot;gpt;claude; ai;ai ;ai,;ai:;ai-;(ai;ai_;model"),
    ),
    (
        "injection.address.to_agent_zh",
        "medium",
        compiled(
            r"(?:给|致|提醒|告诉|通知|写给|留给|交代)"
            + _AGENT_ZH
            + r"|"
            + _AGENT_ZH
            + r"(?:请|须|必须|应当|应该|需要|务必|一定要|要|注意|记住|听好|"
            r"统一|一律|只能|只|不得|不要|不必|无需|应|该|将|会|今后|以后|回答时|答复时|在回答)|"
            r"(?:所有|任何|每个)(?:读到|看到|处理)(?:这|此|本)"
        ),
        _triggers("ai;助手;机器人;模型;agent;智能体;llm;读到;看到;处理"),
    ),
    # standing orders on money and access
    (
        "injection.standing.auto_approve",
        "medium",
        compiled(
            r"\b(?:automatically|auto-|always|silently)\s*(?:approve|accept|grant|pay|forward|send|share|sign|confirm|authori[sz]e|"
            r"transfer|wire|release|unlock|whitelist|allowlist|add)\b|"
            r"\b(?:bank\s+account|account\s+number|iban|routing\s+number|payment\s+details|remittance|wire\s+instructions|beneficiary|"
            r"payee|billing\s+contact|invoice\s+(?:address|recipient|contact)|payout\s+address|wallet\s+address)\b[^.\n]{0,40}?"
            r"\b(?:changed|updated|is\s+now|are\s+now|has\s+moved|have\s+moved|new|switched|replaced)\b"
        ),
        _triggers(
            "automatic;auto-;always;silently;bank account;account number;iban;routing number;"
            "payment details;remittance;wire instructions;beneficiary;payee;billing contact;invoice;"
            "payout address;wallet address"
        ),
    ),
    (
        "injection.standing.auto_approve_zh",
        "medium",
        compiled(
            r"(?:自动|直接|一律|默认)(?:批准|通过|转账|付款|打款|汇款|转发|同意|授权|放行|开通|加白|确认)|"
            r"(?:收款|银行|对公|账户|账号|卡号|开户行|汇款|付款|打款|财务联系人|发票(?:接收|收件))(?:信息|账户|账号|人|地址|邮箱)?[^。\n]{0,10}?(?:变更|更改|改为|换成|更新为|已换|改成)"
        ),
        _triggers("自动;直接;一律;默认;收款;银行;对公;账户;账号;卡号;开户行;汇款;付款;打款;财务联系人;发票"),
    ),
)
