"""The default label vocabulary: every topic and stage with a description and example sentences.

The learned layer (``policies/learned.py``) is trained with these examples among its data, and a
topic or stage a deployment adds in its config (``[labels.topics.<name>]``, a description and
examples) is classified from its examples without retraining. Data only.
"""

from __future__ import annotations

from typing import NamedTuple


class Entry(NamedTuple):
    description: str
    examples: tuple[str, ...]


TOPICS: dict[str, Entry] = {
    "business": Entry(
        "Customers, pricing, revenue, sales, marketing, product plans, contracts, how the team works.",
        (
            "The Pro plan costs $12 a month; the Team plan $40 for five seats.",
            "Acme renews its contract in March and wants an annual invoice.",
            "年费从 199 元调到 299 元，老用户保留原价。",
            "周报每周五下午发到飞书群里。",
            "Most signups in Q3 came from the SEO blog posts.",
            "渠道代理商的分成是 20%。",
        ),
    ),
    "infra": Entry(
        "Servers, deployment, running databases, networks, DNS, cloud, monitoring, backups, hardware.",
        (
            "The staging cluster runs three nodes with 16 GB of RAM each.",
            "Nightly database backups are kept for 30 days on the NAS.",
            "DNS moved from Cloudflare to DNSPod because of the ICP filing.",
            "生产数据库的内网地址是 10.0.3.12，端口 5432。",
            "监控告警统一发到值班群，P1 五分钟内必须响应。",
            "Nginx terminates TLS and proxies to the app on port 8080.",
        ),
    ),
    "dev_tools": Entry(
        "Developer tools and their settings: editors, CLIs, package managers, CI configuration, AI models.",
        (
            "We use pnpm instead of npm in every repository.",
            "The default model for the coding assistant is gpt-4.1.",
            "CI runs the linters before the tests on every pull request.",
            "VS Code 统一用 Prettier 格式化，保存时自动格式化。",
            "本地开发环境用 Docker Compose 起依赖服务。",
            "Pre-commit hooks run ruff and mypy.",
        ),
    ),
    "code": Entry(
        "Source code, APIs, libraries, architecture, bugs and their causes, code conventions.",
        (
            "Order ids are prefixed ORD and sharded by user id.",
            "The timeout bug came from a missing await in the retry loop.",
            "All SQL must use parameterized queries; no string concatenation.",
            "接口返回统一用 {code, data, message} 的结构。",
            "支付回调的签名校验放在中间件里做。",
            "The public API is versioned under /v2; /v1 is frozen.",
        ),
    ),
    "content": Entry(
        "Writing, blog posts, videos, social media, published docs, design assets, the editorial calendar.",
        (
            "Blog posts go out on Tuesdays and Thursdays at 9 am.",
            "The launch video is 90 seconds, subtitled in English and Chinese.",
            "公众号文章标题不超过 20 个字。",
            "The docs site uses sentence case for every heading.",
            "小红书账号每周发三篇，周末发生活类内容。",
            "Brand colours: navy #1B2A41 and coral #FF6F59.",
        ),
    ),
    "research": Entry(
        "Experiments, measurements, papers, benchmarks, comparisons, study notes.",
        (
            "The A/B test showed a 4% lift in signups for the shorter form.",
            "BM25 beat the embedding model on exact product names in our benchmark.",
            "论文结论：数据量翻倍，准确率只提升 1.2 个点。",
            "实验组的留存比对照组高 3%，样本量 2000。",
            "Latency p99 dropped from 180 ms to 95 ms with connection pooling.",
            "The survey had 312 answers; 41% want offline mode.",
        ),
    ),
    "reflection": Entry(
        "Lessons learned, retrospectives, how the assistant or its memory should behave.",
        (
            "Lesson: always snapshot the bank before changing its config.",
            "Next time, write the migration rollback before running it.",
            "复盘：上线前没做灰度，导致全量用户受影响。",
            "The assistant should ask before deleting anything.",
            "教训：不要在周五下午发布。",
            "Memories should be one fact each, stated on their own.",
        ),
    ),
    "personal": Entry(
        "People's lives: preferences, health, diet and allergies, family, friends, pets, hobbies, plans, "
        "life events, travel, home, personal finances.",
        (
            "Alice prefers dark roast coffee and no sugar.",
            "Bob is allergic to peanuts.",
            "My daughter starts primary school in September.",
            "我老婆不吃香菜。",
            "我们下个月搬到杭州，新家在西湖区。",
            "He runs a half marathon every spring and trains on Sundays.",
            "妈妈的生日是 5 月 3 日。",
            "We adopted a rescue cat named Miso.",
        ),
    ),
}

STAGES: dict[str, Entry] = {
    "decision": Entry(
        "Durable: a decision or rule that was made, a standing preference or convention, a fact about a "
        "person that stays true, a dated change with its reason.",
        (
            "We decided to use Postgres 16 for staging.",
            "Bob is allergic to peanuts.",
            "决定：激活码统一走发卡平台自动发放。",
            "Always run the migrations in a transaction.",
            "用户偏好简洁的回答，不要长篇解释。",
            "DNS moved from Cloudflare to DNSPod because of the ICP filing.",
        ),
    ),
    "reference": Entry(
        "The current state of things, which can go stale: numbers, versions, addresses, configuration, "
        "measurements, who owns what now.",
        (
            "The staging cluster has three nodes.",
            "MRR crossed $5k in October.",
            "显卡驱动版本 550，CUDA 12.4。",
            "Alice lives in Berlin now.",
            "订单服务目前由小王负责。",
            "The API answers in 40 ms at p50.",
        ),
    ),
    "process": Entry(
        "Work in progress whose state matters for days: what is half done, what is left, what is planned next.",
        (
            "The migration to Postgres 16 is half done; the orders table is left.",
            "我们正在把日志迁到 Loki，预计下周完成。",
            "The redesign is in review; the mobile screens are still missing.",
            "招聘进行中：已面试 5 人，下周二终面。",
            "We are moving billing to Stripe over the next two sprints.",
            "装修进行到一半，厨房下周完工。",
        ),
    ),
}
