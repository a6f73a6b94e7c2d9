"""Topic × stage labels: every stored memory carries exactly one ``topic:`` and one ``stage:``.

Labels the client sent are validated: known values pass, aliases map (``infrastructure`` →
``infra``), anything else is refused with a clear reason. Missing labels are inferred by a
deterministic keyword classifier (Chinese and English lexicons, weighted), with a confidence.
Facts about the AI system itself (memory engine, retain, bank config, tags, PATCH/DELETE side
effects) that match no other topic default to ``reflection`` — and so does anything that matches
nothing at all, with confidence 0: never an item without a topic.

Stages: ``decision`` (kept forever), ``process`` (archived after 7 days), ``reference``
(archived after 30 days). Vocabularies, aliases and lexicons are data, extendable from config.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from memwarden.policies.fastre import PatternSet
from memwarden.policies.fastre import split_alternatives as _split_top

TOPICS: tuple[str, ...] = (
    "business",
    "infra",
    "dev_tools",
    "code",
    "content",
    "research",
    "reflection",
    "personal",
)
STAGES: tuple[str, ...] = ("decision", "process", "reference")
ENGINEERING: tuple[str, ...] = ("infra", "dev_tools", "code")  # in the order ties are broken

TOPIC_ALIASES: dict[str, str] = {
    "biz": "business",
    "product": "business",
    "sales": "business",
    "marketing": "business",
    "finance": "business",
    "商业": "business",
    "业务": "business",
    "infrastructure": "infra",
    "ops": "infra",
    "devops": "infra",
    "server": "infra",
    "deploy": "infra",
    "运维": "infra",
    "基础设施": "infra",
    "tools": "dev_tools",
    "tooling": "dev_tools",
    "devtools": "dev_tools",
    "dev-tools": "dev_tools",
    "tool": "dev_tools",
    "工具": "dev_tools",
    "coding": "code",
    "programming": "code",
    "dev": "code",
    "代码": "code",
    "开发": "code",
    "writing": "content",
    "blog": "content",
    "media": "content",
    "内容": "content",
    "study": "research",
    "analysis": "research",
    "调研": "research",
    "研究": "research",
    "people": "personal",
    "person": "personal",
    "life": "personal",
    "family": "personal",
    "health": "personal",
    "个人": "personal",
    "生活": "personal",
    "家庭": "personal",
    "meta": "reflection",
    "retro": "reflection",
    "lesson": "reflection",
    "lessons": "reflection",
    "反思": "reflection",
    "复盘": "reflection",
}
STAGE_ALIASES: dict[str, str] = {
    "decided": "decision",
    "decisions": "decision",
    "permanent": "decision",
    "决策": "decision",
    "决定": "decision",
    "in_progress": "process",
    "wip": "process",
    "ongoing": "process",
    "progress": "process",
    "过程": "process",
    "进行中": "process",
    "ref": "reference",
    "info": "reference",
    "fact": "reference",
    "facts": "reference",
    "参考": "reference",
}

# (pattern, weight) per topic; patterns are searched in the prepared (casefolded) text.
TOPIC_LEXICON: dict[str, tuple[tuple[str, float], ...]] = {
    "business": (
        (
            r"代理商|分成|渠道|引流|付费用户|审批|飞书|请假|报销|产品|套餐|周报|团队|用户(反馈|问|增长)|店铺|注册|\b(reseller|channel|"
            r"acquisition|signups?|trial|freemium|product|owner|seats?|plan|weekly report|jira|team|users ask|"
            r"customers?)\b",
            2.0,
        ),
        (
            r"客户|订阅|收入|营收|利润|亏损|盈利|定价|价格|激活码|付费|商业|市场|销售|运营|闲鱼|淘宝|订单|融资|合同|成本|报价|"
            r"退款|变现|转化率|用户增长|竞品|¥|￥",
            2.0,
        ),
        (
            r"\b(revenue|pricing|price|customers?|subscriptions?|sales|market|profit|loss|invoices?|business|startup|"
            r"monetiz\w*|churn|mrr|arr|b2b|saas|refunds?|competitors?|contract|funding|paying users)\b|\$\d",
            2.0,
        ),
    ),
    "infra": (
        (
            r"跳板机|告警|机器|主机|负载|日志(轮转|保留)|\b(sentry|alerts?|on-call|pagerduty|heroku|bastion|sev\d|runners?|"
            r"hetzner|keep-alive|uvicorn|502s?|503s?|logs? (rotate|are kept)|ci)\b",
            1.5,
        ),
        (
            r"服务器|部署|容器|集群|数据库|端口|域名|证书|云服务|腾讯云|阿里云|华为云|公网|内网|备份|监控|防火墙|安全组|负载均衡|"
            r"显卡|内存|磁盘|带宽|机房|节点|反向代理|重启策略|密钥认证",
            2.0,
        ),
        (
            r"\b(docker|containers?|k8s|kubernetes|nginx|postgres(ql)?|mysql|redis|ssh|dns|ssl|tls|aws|gcp|azure|vps|"
            r"jetson|gpu|cuda|systemd|cron|servers?|deploy(ment|s|ed)?|cluster|database|backups?|monitoring|"
            r"firewall|load balancer|terraform|ansible|helm|ingress|restart policy|ubuntu|debian|linux|ci/cd|"
            r"prometheus|grafana|s3|bucket|vpc|subnet|orin|raspberry pi|nas)\b",
            2.0,
        ),
    ),
    "dev_tools": (
        (r"用户(偏好|喜欢|不喜欢|习惯)|偏好|提交信息|\b(the user|user prefers|prefers|dislikes|the assistant)\b", 3.0),
        (r"\b(uv|conda|venv|pyenv|commit messages?|emoji|claude code|\.env|1password|dotenv)\b|\.env\b", 2.0),
        (
            r"插件|编辑器|快捷键|终端|命令行|工具链|配置文件|工作流|提示词|智能体|回答|回复|输出|格式|语言|模型|技能",
            1.5,
        ),
        (
            r"\b(ide|vs ?code|cursor|neovim|vim|emacs|git|github|gitlab|plugins?|cli|terminal|shell|zsh|bash|alias|"
            r"dotfiles|hermes|agents?|llm|prompts?|claude|gpt[\w.\-]*|deepseek[\w/.\-]*|openai|gemini|qwen|"
            r"ollama|copilot|mcp|extensions?|workflow|skills?|tmux|homebrew|obsidian|notion|todoist|"
            r"retain_every_n_turns|model|response style|answers?)\b",
            1.5,
        ),
    ),
    "code": (
        (
            r"时间戳|注释|环境变量|异步|导出|导入|模块|脚本|按钮|超时|数据库表|表结构|\b(cookie|jwt|middleware|csv|importer|exporter|"
            r"encoding|utf-8(-sig)?|timestamps?|docstrings?|env var|scripts?|spinner|button|stdout|tty|json|zustand|"
            r"timeout|crlf|line endings|[a-z]*error|exceptions?|flaky|module|helpers?|state)\b",
            1.5,
        ),
        (
            r"代码|函数|类型|接口|路由|重构|单元测试|测试用例|依赖|版本号|分支|合并|前端|后端|数据结构|算法|报错|异常处理|项目使用|项目测试",
            2.0,
        ),
        (
            r"\b(python|pytest|typescript|javascript|rust|golang|java|kotlin|sql|schema|migrations?|controllers?|"
            r"routes?|endpoints?|functions?|class(es)?|refactor\w*|unit tests?|tests?|dependenc(y|ies)|packages?|"
            r"librar(y|ies)|commits?|branch(es)?|pull requests?|lint|mypy|ruff|django|flask|fastapi|react|vue|"
            r"frontend|backend|api|bug|regex|async|orm|npm|pip|pyproject|cargo|compiler|type hints?)\b",
            2.0,
        ),
    ),
    "content": (
        (r"长文|首图|原文链接|\b(faq|newsletter)\b", 2.0),
        (
            r"文章|发文|博客|公众号|知乎|掘金|小红书|视频|b站|标题|写作|草稿|选题|推文|稿|专栏|读者|粉丝|阅读量|排版|封面",
            2.5,
        ),
        (
            r"\b(csdn|blog|posts?|articles?|newsletter|tweets?|thread|youtube|video|draft|headline|seo|readers|"
            r"audience|publish\w*|medium|substack|daily|writing|copywriting)\b",
            2.0,
        ),
    ),
    "research": (
        (r"结论|宽查询|\d+\s*ms\b|\b(concluded|benchmarked|p50|p99|latency)\b", 2.5),
        (r"调研|研究|论文|实验|数据集|对比|评测|综述|分析|实测|结论|准确率|召回率|基准", 2.0),
        (r"条结果|搜索结果|检索结果", 3.0),
        (
            r"\b(research|papers?|arxiv|benchmarks?|experiments?|datasets?|survey|evaluat\w*|measured|findings?|"
            r"study|studies|results?|recall@\d+|precision|accuracy|hypothes[ie]s|compar\w+|analysis)\b",
            2.0,
        ),
    ),
    # People's lives: health, diet, family, pets, hobbies, home. Besides inferring the topic, it keeps
    # the learned layer from labelling a fact about a person with an engineering topic (and back).
    "personal": (
        (
            r"过敏|糖尿病|高血压|血糖|尿酸|素食|吃素|忌口|怀孕|孕期|医生|医院|体检|胃镜|住院|减肥|老公|老婆|媳妇|"
            r"男朋友|女朋友|对象|儿子|女儿|孩子|宝宝|爸爸|妈妈|爸妈|父母|哥哥|姐姐|弟弟|妹妹|爷爷|奶奶|外婆|外公|姥姥|"
            r"家人|婚礼|结婚|离婚|分手|猫咪|小猫|小狗|狗狗|宠物|爱好|健身|瑜伽|羽毛球|吉他|钢琴|度假|产假|陪产假|病假",
            2.0,
        ),
        (
            r"\b(allerg\w*|diabet\w*|prediabet\w*|vegan|vegetarian|gluten|lactose|celiac|pregnan\w*|dentist|"
            r"surgery|blood pressure|wife|husband|boyfriend|girlfriend|daughter|mom|mum|dad|"
            r"sister|brother|grandma|grandpa|grandmother|grandfather|aunt|uncle|cousin|"
            r"wedding|anniversary|puppy|kitten|parrot|hobby|hobbies|marathon|yoga|knitting|"
            r"parental leave|maternity leave|paternity leave|sick leave|divorced?|married|engaged)\b",
            2.0,
        ),
    ),
    "reflection": (
        (r"我以为|教训|反思|复盘|踩坑|改进[:：]", 3.0),
        (r"\b(i thought|i assumed|turned out|lessons?|retrospective|in hindsight|taught us)\b", 3.0),
    ),
}
# Where the text gives no signal, the structured prefix it carries does.
PREFIX_TOPICS: dict[str, str] = {
    "active_context": "dev_tools",
    "current_project": "dev_tools",
    "idea_backlog": "content",
    "mvp_backlog": "business",
    "paused_project": "dev_tools",
    "abandoned_project": "dev_tools",
}

# Facts about the memory system itself: reflection unless another topic clearly wins.
META_LEXICON = (
    r"hindsight|mem0|zep|记忆(库|系统|引擎)?|memory (engine|bank|system)|\bbanks?\b|observations?|consolidation|"
    r"\bretain\b|召回|recall|entity_labels|retain_mission|标签|\btags?\b|\bpatch\b|\bdelete\b|副作用|side effects?|embedding"
)

STAGE_LEXICON: dict[str, tuple[str, ...]] = {
    "process": (
        r"^active_context\b|^current_project\b|正在|进行中|推进|本周|这周|本月|下周|当前(任务|进度|阶段)|冲刺|计划|截止|在谈|"
        r"\b(in progress|currently|this week|next week|sprint|wip|deadline|working on|plan to|planned for)\b",
    ),
    "decision": (
        r"决定|决策|统一|规定|约定|偏好|默认|一律|不再|改用|采用|必须|禁止|以后|设为|设置为|使用|我以为|根因|改进|教训|禁用|只允许|"
        r"不允许|不超过|都要|都用|策略|规范|每次|只开|不复用|政策|"
        r"\b(always|never|decided|decision|prefers?|preference|default|policy|convention|must|standard\w*|"
        r"set to|we use|uses|use \w+ for|switched to|lessons?|root cause|from now on|follows?|are named|are mapped|"
        r"should|only|every (day|week|monday|tuesday|wednesday|thursday|friday)|stopped using|dislikes?)\b",
    ),
}


class Labels(NamedTuple):
    topic: str
    stage: str
    topic_source: str  # "client", "alias", "inferred", "fallback"
    stage_source: str
    confidence: float  # of the inferred topic, 0..1 (1 for client labels)


@dataclass(frozen=True)
class LabelError:
    """A client label that is neither a known value nor an alias."""

    key: str
    value: str

    vocabulary: tuple[str, ...] = ()  # the deployment's, when the classifier knows it

    @property
    def reason(self) -> str:
        vocabulary = self.vocabulary or (TOPICS if self.key == "topic" else STAGES)
        return f"unknown {self.key} '{self.value}': use one of {', '.join(vocabulary)}"


@dataclass
class LabelClassifier:
    """Topic and stage inference plus client-label validation; build once, call per item."""

    topics: Sequence[str] = TOPICS
    stages: Sequence[str] = STAGES
    topic_aliases: Mapping[str, str] = field(default_factory=lambda: dict(TOPIC_ALIASES))
    stage_aliases: Mapping[str, str] = field(default_factory=lambda: dict(STAGE_ALIASES))
    extra_keywords: Mapping[str, Sequence[str]] = field(default_factory=dict)
    fallback_topic: str = "reflection"

    def __post_init__(self) -> None:
        # Every lexicon entry, the stage lexicons and the meta lexicon, found in one pass over the
        # text (literal alternatives) plus the few entries that stay regular expressions.
        # Group names start with "label/" so that they can share one PatternSet (one scan per
        # text) with the quality rules: see :meth:`share`.
        groups: dict[str, list[str]] = {}
        self._weights: dict[str, tuple[str, float]] = {}  # group → (topic, weight)
        for topic in self.topics:
            for i, (pattern, weight) in enumerate(TOPIC_LEXICON.get(topic, ())):
                groups[f"label/{topic}#{i}"] = _split_top(pattern)
                self._weights[f"label/{topic}#{i}"] = (topic, weight)
        for topic, words in self.extra_keywords.items():
            if words:
                groups[f"label/{topic}#extra"] = [re.escape(w.casefold()) for w in words]
                self._weights[f"label/{topic}#extra"] = (topic, 2.0)
        groups["label/meta"] = _split_top(META_LEXICON)
        for stage, patterns in STAGE_LEXICON.items():
            groups[f"label/stage:{stage}"] = _split_top("|".join(patterns))
        self._groups = groups
        self._patterns = PatternSet(groups)

    @property
    def groups(self) -> Mapping[str, Sequence[str]]:
        """The pattern groups this classifier searches (all named ``label/…``)."""
        return self._groups

    def share(self, patterns: PatternSet) -> None:
        """Search through ``patterns``, a set that also holds this classifier's groups."""
        self._patterns = patterns

    def scan(self, prepared: str) -> dict[str | int, int]:
        return self._patterns.scan(prepared)

    def _found(self, group: str, prepared: str, hits: dict[str | int, int]) -> bool:
        return self._patterns.search(f"label/{group}", prepared, hits)

    def resolve(self, key: str, value: str) -> tuple[str, str] | LabelError:
        """A client label's canonical value and how it was found ("client" or "alias")."""
        vocabulary, aliases = (self.topics, self.topic_aliases) if key == "topic" else (self.stages, self.stage_aliases)
        v = value.strip().casefold().replace("-", "_").replace(" ", "_")
        if v in vocabulary:
            return v, "client"
        alias = aliases.get(v) or aliases.get(value.strip().casefold())
        if alias is not None:
            return alias, "alias"
        return LabelError(key, value, tuple(vocabulary))

    def topic_scores(self, prepared: str, hits: dict[str | int, int] | None = None) -> dict[str, float]:
        """Each topic's lexicon score for the text (0 where no lexicon word is in it)."""
        hits = self._patterns.scan(prepared) if hits is None else hits
        scores = dict.fromkeys(self.topics, 0.0)
        for group in self._patterns.candidates(hits):
            weighted = self._weights.get(group)
            if weighted is not None and weighted[0] in scores:
                n = self._patterns.count(group, prepared, hits)
                if n:
                    scores[weighted[0]] += weighted[1] * n
        return scores

    def infer_topic(self, prepared: str, hits: dict[str | int, int] | None = None) -> tuple[str, float, str]:
        hits = self._patterns.scan(prepared) if hits is None else hits
        scores = self.topic_scores(prepared, hits)
        reflective = scores.get("reflection", 0.0)
        best, top = "", -1.0
        for t in self.topics:  # the highest score; the earlier topic on a tie
            if t != "reflection" and scores[t] > top:
                best, top = t, scores[t]
        if reflective >= 3.0 and reflective >= scores[best]:
            return "reflection", min(1.0, reflective / 6), "inferred"
        if scores[best] > 0:
            total = sum(scores.values()) or 1.0
            return best, round(scores[best] / total, 2), "inferred"
        if self._found("meta", prepared, hits):
            return "reflection", 0.5, "inferred"
        prefix = re.match(r"^(\w+)\s*[:：]", prepared)
        if prefix and prefix.group(1) in PREFIX_TOPICS:
            return PREFIX_TOPICS[prefix.group(1)], 0.3, "prefix"
        return self.fallback_topic, 0.0, "fallback"

    def infer_stage(self, prepared: str, topic: str, hits: dict[str | int, int] | None = None) -> str:
        hits = self._patterns.scan(prepared) if hits is None else hits
        if self._found("stage:process", prepared, hits):
            return "process"
        if self._found("stage:decision", prepared, hits) or topic == "reflection":
            return "decision"
        return "reference"

    def classify(
        self,
        prepared: str,
        *,
        topic: str | None = None,
        stage: str | None = None,
        hits: dict[str | int, int] | None = None,
    ) -> Labels | LabelError:
        """Labels for an item: the client's (validated) where given, inferred otherwise. ``hits``
        is the scan of ``prepared`` when the caller already has it."""
        topic_source = stage_source = "inferred"
        confidence = 1.0
        if hits is None:
            hits = self._patterns.scan(prepared) if topic is None or stage is None else {}
        if topic is not None:
            resolved = self.resolve("topic", topic)
            if isinstance(resolved, LabelError):
                return resolved
            topic, topic_source = resolved
        else:
            topic, confidence, topic_source = self.infer_topic(prepared, hits)
        if stage is not None:
            resolved = self.resolve("stage", stage)
            if isinstance(resolved, LabelError):
                return resolved
            stage, stage_source = resolved
        else:
            stage = self.infer_stage(prepared, topic, hits)
        return Labels(topic, stage, topic_source, stage_source, confidence)
