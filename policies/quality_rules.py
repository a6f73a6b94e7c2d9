"""The quality filter's rule tables: data, not code.

Each :class:`Rule` has a stable id, a human reason, its patterns (regular expressions searched in
the *prepared* text: NFKC, casefolded, whitespace collapsed, punctuation kept), and examples both
ways — ``fires_on`` must be stopped by it, ``spares`` must get past it. A test runs every
example of every rule, so a rule cannot be added without showing what it does.

Matching is anchored or bounded where substring search would over-reject: ``请`` fires only as
a clause-initial verb (not inside 申请/邀请/请求), ``当前`` is not progress on its own
("当前默认模型是 X" is a fact), ``todo`` is a whole word (not "todoist"), ``如何`` is a question
only at the end of a question.

The allow rules are in :mod:`policies.quality_allow`. Users extend the tables from the config
file (``[policies.quality] extra_rules``) and can switch rules off by id (``disabled_rules``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Literal

Kind = Literal["reject", "allow"]


@dataclass(frozen=True)
class Rule:
    id: str
    reason: str
    patterns: tuple[str, ...]
    kind: Kind = "reject"
    # An overridable reject yields to an allow marker in the same text ("已修复 X，根因是 Y").
    overridable: bool = False
    fires_on: tuple[str, ...] = field(default=(), compare=False)
    spares: tuple[str, ...] = field(default=(), compare=False)


CJK = r"\u3400-\u9fff\uf900-\ufaff"

STRUCTURED_PREFIXES: tuple[str, ...] = (
    "active_context",
    "current_project",
    "idea_backlog",
    "paused_project",
    "abandoned_project",
    "mvp_backlog",
    "decision",
    "preference",
    "reflection",
    "lesson",
    "fact",
    "config",
    "用户偏好",
    "偏好",
    "默认模型",
    "默认",
    "决定",
    "结论",
    "根因",
    "教训",
    "反思",
)

CHATTER_WORDS = (
    r"ok(ay)?|k|好的?|好吧|好嘞|嗯+|哦+|噢+|啊+|谢谢(你|您)?|多谢|感谢|thanks?( you| a lot)?|thx|ty|got it|收到|明白(了)?|了解|"
    r"知道了|懂了|sure|cool|great|nice|awesome|lol|haha|哈哈+|👍+|yes|yep|no|nope|是的|对的?|行|可以|没问题|try this|try again|"
    r"试试(这个|看)?|再试(一下|一次)?|继续|go on|continue|go ahead|done|hi|hello|你好|在吗"
)

REJECT_RULES: tuple[Rule, ...] = (
    Rule(
        "chatter",
        "chatter with nothing to remember",
        (r"^(" + CHATTER_WORDS + r")([\s,，、.。!！~]+(" + CHATTER_WORDS + r"))*[\s.!,~。！，~]*$",),
        fires_on=("好的", "ok", "Thanks!", "try this", "谢谢你！", "好的，谢谢"),
        spares=("好的设计是把配置与代码分开", "OK 按钮放在右下角是产品约定"),
    ),
    Rule(
        "question.mark",
        "a question: searching for an answer, not a decided one",
        (r"[?？]\s*[\"')\]」』]*$",),
        fires_on=("这个功能有没有必要？", "Which database should we use?", "what about redis?"),
        spares=("决定不用 Redis：连接数不够。", "The FAQ answers “why?” in one line."),
    ),
    Rule(
        "question.zh",
        "a question (Chinese question particle or construction)",
        (
            r"(吗|么|嘛|呢)[\s。.!！~]*$",
            r"^(请问|想问|问一下|问下)",
            r"(是否|能不能|要不要|可不可以|有没有|是不是|会不会|对不对|行不行|"
            r"好不好|该不该|能否|怎么办|怎么(样|弄|做|回事)|为什么|为啥|哪个好|如何是好)",
        ),
        overridable=True,
        fires_on=("这个功能有必要吗", "要不要把缓存关掉", "为什么 CI 一直失败", "请问部署在哪台机器"),
        spares=(
            "是否开启缓存由 cache_enabled 决定",
            "有没有缓存都一样快，结论是瓶颈在数据库",
            "怎么部署：先 build 再 docker compose up",
        ),
    ),
    Rule(
        "question.en",
        "a question without a question mark",
        (
            r"^(can|could|would|will) (you|we|i)\b",
            r"^(shall|should) (we|i)\b",
            r"^(do|did|does) (you|we|it)\b",
            r"^is (it|there|this|that) (possible|ok|okay|fine|better|worth)\b",
            r"^(what|how) about\b",
            r"^what if\b",
            r"^any (idea|ideas|thoughts)\b",
            r"^why (is|are|do|does|did|would|can't|won't|isn't|doesn't)\b",
            r"^(wondering|i wonder) (if|whether|why|how)\b",
            r"^how (do|does|did|can|should|could) (i|we|you)\b",
        ),
        fires_on=("should we move to postgres", "can you summarise the logs", "what if we cache it"),
        spares=(
            "We should move to Postgres once the ledger passes 1 GB: decided in review.",
            "Shall-we is the name of the team chat bot.",
        ),
    ),
    Rule(
        "request.zh",
        "a request addressed to the assistant",
        (
            r"(^|[，,。.!！；;:：\s])请(?![求假教示柬客帖愿])",
            r"帮(我|忙)",
            r"麻烦(你|您)",
            r"给我(看|查|找|写|发|改|生成|整理)",
            r"^(你|您)(帮|去|来|先|把)",
            r"^(读取|检查|执行|创建|修改|生成|发布|查看|运行|打开|看看|看下|查一下|查下|搜一下)",
            r"^把.{1,30}(改成|换成|删掉|删了|加上|发给|放到|写成|弄成|调成|调到)",
        ),
        fires_on=(
            "请把日志发我",
            "帮我检查一下配置",
            "麻烦你重启服务",
            "检查一下 nginx 配置",
            "把这段代码改成异步的，谢谢",
        ),
        spares=("申请 API 额度需要企业认证", "邀请制注册已关闭", "请求超时设为 30 秒", "请假流程走飞书审批"),
    ),
    Rule(
        "request.en",
        "a request addressed to the assistant",
        (
            r"^(please|pls|plz)\b",
            r"\bplease (check|look|run|fix|help|make|create|update|send|review|read|open|show|tell|"
            r"remind|add|remove)\b",
            r"\bhelp me\b",
            r"^let'?s\b",
            r"\bi need you to\b",
            r"\bi want you to\b",
            r"^(check|look at|fix|show|tell|give|send|read|open|summari[sz]e|explain|review) (me|this|that|it|the logs)\b",
        ),
        fires_on=("please restart the worker", "help me fix the build", "let's try the other port", "check this"),
        spares=("The please-wait spinner shows after 300 ms", "Users ask for help menus in Chinese"),
    ),
    Rule(
        "conversation_note",
        "a note of the conversation itself (a question asked, a summary requested, thanks): nothing learned",
        (
            # the whole text one such note: a question asked, thanks, a greeting — nothing after a comma,
            # no reason given. What a user asked *us* to do ("asked us to stop…", "requested invoices
            # in EUR") is a preference, not a note: "asked for/us/to/that" is not here.
            r"^(?=.{0,200}$)(the )?(user|customer|client|caller)\s+(asked|asks|wanted to know|wants to know|inquired|"
            r"enquired) (about|what|how|when|where|why|whether|if|which|who)\b(?![^,;]*\b(because|since)\b)[^,;]*$",
            r"^(?=.{0,200}$)(the )?(user|customer|client|caller)\s+(requested|requests|asked for) (a|an|another|the) "
            r"(summary|recap|rewrite|translation|shorter version|longer version|joke|poem|haiku|example|explanation)"
            r"\b[^,;]*$",
            r"^(?=.{0,200}$)(the )?(user|customer|client|caller)\s+(thanked|greeted|said (thanks|thank you|hello|hi|"
            r"goodbye|bye)|said (they|he|she)('d| would) be back|confirmed (that )?the (snippet|code|fix|answer|"
            r"solution|steps?) (worked|works|helped)|was satisfied)\b[^,;]*$",
            r"^(?=.{0,120}$)用户(问|询问|咨询|让助手|请助手|想让助手|感谢|表示感谢|道谢|打招呼|说谢谢|"
            r"确认(代码|代码片段|方案|修复|步骤)|对.{1,16}表示(不满|满意|感谢))(?![^，,；;]*(以后|今后|一直|总是|每次|默认|因为))"
            r"[^，,；;]*$",
            r"^thank you for (your (message|email|patience)|contacting us|reaching out)\b.{0,60}"
            r"\b(get back to you|respond|reply)",
            r"^感谢您的(来信|留言|耐心).{0,16}(尽快|稍后)(回复|联系)",
        ),
        fires_on=(
            "User asked about tomorrow's weather forecast.",
            "User requested a summary of the previous message.",
            "User said they'd be back in 10 minutes.",
            "用户问东京现在几点。",
            "用户对报错信息表示不满。",
            "Thank you for your message; we will get back to you shortly.",
        ),
        spares=(
            "User prefers answers in Spanish.",
            "The user asked us to always reply in Spanish.",
            "User asked us to stop sending marketing emails.",
            "Customer requested account deletion under GDPR.",
            "The user asked us not to call after 8pm.",
            "User asked to be called Sam.",
            "Client requested invoices in EUR.",
            "User asked for vegetarian recipes because she is vegetarian.",
            "用户请求删除账号",
            "用户是素食者",
            "用户问过两次退款政策，最后决定续费年付",
        ),
    ),
    Rule(
        "secret_breadcrumb",
        "a secret breadcrumb with no context (which key, where, for what)",
        (
            r"^(已经?|有)?(配置|设置|添加|加|配)(了|好了?|上了?)?\s*(了)?\s*[\w\s\-.]{0,30}?(api[_\s\-]?key|key|token|密钥|secret|"
            r"password|密码|凭据|凭证|pat|令牌)\s*[。.!！]*$",
            r"^(i )?(have |has )?(configured|set up|added|set|got|created)( the| an| a| my| our)? [\w\s\-.]{0,30}?"
            r"(api[_\s\-]?key|key|token|secret|password|credentials?|pat)\s*[.!]*$",
            r"^(api[_\s\-]?key|token|secret|password|密钥)\s*(已|已经)?(配置|设置)(好|了)?\s*[。.!]*$",
        ),
        fires_on=("已配置 API_KEY", "已配置 token", "configured the API key", "token 已配置"),
        spares=("已在 .env 配置 OPENAI_API_KEY，服务启动时读取", "GitHub token is stored in 1Password under 'ci-bot'"),
    ),
    Rule(
        "bare.url",
        "a bare URL: a link without what it is or why it matters",
        (
            r"^((链接|地址|网址|url|link|see|参考|见|ref)\s*[:：]?\s*)?((https?|s|ftp)://|www\.)\S+(\s+((https?|s)://|www\.)\S+)*"
            r"[\s.。]*$",
        ),
        fires_on=("https://example.com/some/page", "链接：https://docs.example.com/a", "see https://x.io"),
        spares=("Hindsight docs live at https://docs.example.com (bank config page)",),
    ),
    Rule(
        "bare.path",
        "a bare path: where, but not what",
        (r"^((路径|目录|位置|path|dir|directory|file)\s*[:：]?\s*)?([a-z]:[\\/]|~?/|\./|\.\./)[^\s]*[\s.。]*$",),
        fires_on=("路径: E:/projects/tmp", "/var/log/nginx/error.log", "C:\\Users\\me\\x.txt"),
        spares=("项目 hermes-vecmem 路径：E:/projects/hermes-vecmem", "Nginx logs go to /var/log/nginx/"),
    ),
    Rule(
        "progress.zh",
        "transient progress: true now, stale tomorrow",
        (
            r"已完成|完成了|搞定了?|做完了|弄好了|正在(运行|跑|处理|做|进行|部署|修|看|调试|写|改|测|排查|推进|等)|进行中|下一步|接下来(要|准备)?|"
            r"待办|跑通了?|验证通过|测试通过了|还没(好|完成|修好|跑完)|仍然?(失败|报错)|还在(跑|报错|失败)|刚才|这次|本轮|"
            r"今天(先|继续|做了|在)|明天(再|继续)|稍后(再)?|暂时先|已修复|修好了|已经?提交|已经?推送|已部署|"
            r"[pP]\d+(-\d+)?\s*(已|完成)",
            r"(部署|构建|迁移|升级|重启|编译|安装|上传|同步)中[，,。.\s]|预计.{0,6}(分钟|小时)",
        ),
        overridable=True,
        fires_on=(
            "P1-2 已完成，下一步准备跑测试",
            "正在跑全量测试",
            "已修复登录 bug",
            "明天继续调这个接口",
            "部署中，预计 10 分钟",
        ),
        spares=("当前默认模型是 deepseek-v4", "已修复登录失败，根因是 cookie 域名写错", "订单系统用 MySQL 8 存储"),
    ),
    Rule(
        "progress.en",
        "transient progress: true now, stale tomorrow",
        (
            r"\b(wip|work in progress|in progress|still (broken|failing|running|not working)|now running|is running now|"
            r"currently running|running now|next step|next up|to-?do\b|step \d+ (of|/) \d+|\d+/\d+ (done|complete)|"
            r"just (now|finished|fixed|pushed|deployed|merged)|will (do|continue|finish)( it)? (later|tomorrow)|"
            r"for now|almost done|fixed it|on it|working on it|(am|are|is) (now )?(running|working on|fixing|testing|"
            r"deploying)|(all )?done( now)?[.!]*$|finished( now)?[.!]*$)",
            r"^(done|finished|fixed|merged|deployed)\b[,.!:]",
            r"\bpushed to (main|master|prod|staging)\b",
            r"\bnow (passing|green|failing)\b|\b(passing|green|failing) now\b",
        ),
        overridable=True,
        fires_on=(
            "still broken",
            "step 3 of 7 done",
            "working on it, tests are running now",
            "WIP: auth refactor",
            "Done, pushed to main",
            "Tests are passing now",
        ),
        spares=(
            "todoist is the task app the team uses",
            "Deploys are done via Ansible playbooks",
            "Fixed the 502s: root cause was a stale keep-alive",
        ),
    ),
    Rule(
        "progress.under_way",
        "a process under way, and nothing else: stale in minutes",
        (
            # short, and ending where a process under way ends: "…", "...", a percentage, or "now"
            # right after the verb or a work object ("deploying now", "running the tests now")
            r"^(?=.{0,200}$)[\d\s:./\-\[\]tz]{0,40}([\w\- ]{1,30} (done|finished|merged|pushed|fixed), )?"
            r"(running|syncing|downloading|uploading|installing|building|compiling|deploying|rebooting|restarting|"
            r"updating|upgrading|indexing|backing up|loading|processing|waiting for)\b"
            r"([^.!?,;\n]{0,80}(\.\.\.|…|\d{1,3} ?%)|( (the|a|my|our))?( [\w\-]+)?( (tests?|test suite|build|"
            r"migrations?|deploy|backup|update|upgrade|router|server|containers?|job|pipeline|script|installer|"
            r"packages?|dependencies|cluster|database|db|app))?( again)? now)\s*$",
            r"^(?=.{0,120}$)waiting for\b[^,;.!?]{0,40}\bto (propagate|finish|complete|come back|load|start|restart)"
            r"\s*[.!…]*$",
            r"^(?=.{0,80}$)正在(下载|上传|安装|同步|编译|构建|部署|更新|升级|重启|备份|加载|处理)[^，,。；;]{0,30}"
            r"(\d{1,3} ?%|…|\.\.\.)\s*$",
        ),
        fires_on=(
            "syncing photos…",
            "2024-06-03 14:22:10 running test suite...",
            "waiting for DNS to propagate",
            "正在下载更新 67%",
            "refactor done, running the test suite now",
        ),
        spares=(
            "I'm running the Berlin marathon in October",
            "running 5k every morning now",
            "Backups run nightly at 02:00",
            "Running a small bakery now",
            "Running the Denver office now",
            "Running Arch Linux on my laptop now",
            "Building my own house now",
            "Waiting for my green card now",
            "正在更新护照",
            "正在升级为金卡会员",
        ),
    ),
    Rule(
        "half_formed",
        "a half-formed idea: a guess, not a conclusion",
        (
            r"^(也许|可能|或许|大概|好像|似乎|刚发现|想法是|想如果|想既然|目的是|场景可能|新会话里|一下就能用|感觉|不确定|说不定|我在想|要不|突然想到)",
            r"^(maybe|perhaps|possibly|probably|might|i wonder|wondering|not sure|i think maybe|idea:? maybe|could be|"
            r"i guess|thinking about|just (found|noticed|realized))\b",
            r"\bi wonder\b",
        ),
        overridable=True,
        fires_on=("刚发现这个插件也许可以改一下", "maybe we could cache embeddings", "可能是网络问题"),
        spares=(
            "Redis might evict keys once maxmemory is reached (documented)",
            "可能的根因是时区：日志用 UTC，cron 用本地时间",
        ),
    ),
    Rule(
        "debug.stack_trace",
        "debugging residue: a stack trace or an error dump",
        (
            r"traceback \(most recent call last\)",
            r"^\s*file \".+\", line \d+",
            r"\bat [\w.$]+\([\w.]+:\d+\)",
            r"exception in thread",
            r"^[\w.]*(error|exception)\s*:\s",
            r"^panic:",
            r"segmentation fault",
            r"core dumped",
        ),
        overridable=True,
        fires_on=(
            'Traceback (most recent call last): File "a.py", line 3',
            "ValueError: invalid literal for int()",
            "panic: runtime error: index out of range",
        ),
        spares=("ValueError in the importer was caused by BOM-prefixed CSV files",),
    ),
    Rule(
        "debug.log_line",
        "debugging residue: a log line",
        (
            r"^\[?\d{4}-\d{2}-\d{2}[ t]\d{2}:\d{2}(:\d{2})?\S*\]?\s.{0,80}\b(info|debug|warn|warning|error|fatal|trace)\b",
            r"^\[(info|debug|warn|warning|error|fatal|trace|err)\]",
            r"^(info|debug|warn|warning|fatal|trace)\s*[:|-]\s",
            r"^[ewi]\d{4} \d{2}:\d{2}",
        ),
        overridable=True,
        fires_on=(
            "2026-06-01 12:00:01 ERROR worker crashed",
            "[WARN] retrying in 5s",
            "INFO | worker started on :8000",
        ),
        spares=("Errors are logged to Sentry with the request id",),
    ),
    Rule(
        "debug.shell",
        "debugging residue: a shell command or its output",
        (
            r"^(\$|#|>|%)\s+\S",
            r"^(sudo\s+)?(ssh|scp|rsync)\s+\S+@\S+",
            r"^(sudo\s+)?(cd|ls|cat|grep|curl|wget|chmod|chown|mkdir|rm|mv|cp|tail|head|echo|export|ping|telnet|nc)\s+[-a-z0-9./~$_'\"]",
            r"^(sudo\s+)?git (clone|pull|push|status|log|checkout|commit|diff|reset|rebase|stash|fetch)\b",
            r"^(sudo\s+)?docker(-compose)? (ps|run|exec|logs|compose|build|pull|stop|rm|images|restart)\b",
            r"^(sudo\s+)?(kubectl|helm) (get|apply|describe|logs|delete|exec|install|upgrade)\b",
            r"^(sudo\s+)?(npm|pnpm|yarn) (install|run|i|start|test|ci)\b",
            r"^(sudo\s+)?(pip3?|uv pip|uv) (install|sync)\b",
            r"^(sudo\s+)?systemctl (restart|start|stop|status|enable)\b",
            r"^(sudo\s+)?apt(-get)? (install|update|upgrade)\b",
            r"\bcommand not found\b",
            r"\bno such file or directory\b",
            r"\bexit (code|status) [1-9]\d*\b",
            r"\breturned non-zero\b",
        ),
        overridable=True,
        fires_on=("$ docker compose up -d", "ssh root@10.0.0.5", "git pull origin main", "bash: jq: command not found"),
        spares=(
            "部署命令是 docker compose up -d，在 /srv/app 下执行",
            "Docker 容器 restart policy 统一设为 unless-stopped",
        ),
    ),
    Rule(
        "debug.ssh_trial",
        "debugging residue: SSH/CLI trial and error",
        (
            r"(试了|尝试了?|试过|又试)\s*(一下|一次)?\s*(ssh|scp|登录|连接|login|connect|重连)",
            r"(ssh|scp|rsync).{0,30}"
            r"(被拒|拒绝|失败|超时|连不上|refused|denied|failed|timed out|timeout)",
            r"permission denied \(publickey",
            r"connection (refused|timed out|reset)",
            r"host key verification failed",
            r"no route to host",
            r"\btried (ssh|scp|to connect|to log ?in|again)\b",
        ),
        overridable=True,
        fires_on=("6/1 试了 SSH 密钥被拒", "ssh to the box timed out again", "Permission denied (publickey)."),
        spares=("6/1 决定用密钥认证不用密码", "SSH 连接超时的根因是安全组没开 22 端口"),
    ),
)
