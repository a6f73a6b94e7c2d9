"""The hermes-vecmem source-quality filter, re-implemented from its description.

Source: ``../shared/reference/peers.md`` §1.1 (``_should_store_fact``) and §1.3 (``derive_metadata``),
read from xing006/hermes-vecmem HEAD 06bcda5. It is the baseline ``bench/filter_quality.py``
compares memwarden against; it has no topic × stage labels, so its ``memory_type`` is mapped to the
nearest topic (documented below) and it has no stage at all.
"""

from __future__ import annotations

import re

PREFIXES = (
    "active_context:",
    "current_project:",
    "idea_backlog:",
    "paused_project:",
    "abandoned_project:",
    "mvp_backlog:",
)
REQUEST = (
    "请",
    "帮我",
    "帮忙",
    "麻烦",
    "读取",
    "检查",
    "执行",
    "创建",
    "修改",
    "生成",
    "发布",
    "please",
    "can you",
    "could you",
)
QUESTION = ("吗", "是不是", "有没有", "如何", "怎么", "为啥", "为什么", "能不能", "可不可以", "要不要", "哪个", "是否")
PROGRESS = (
    "刚才",
    "这次",
    "本轮",
    "当前",
    "今天",
    "明天",
    "下一步",
    "已经完成",
    "已完成",
    "正在做",
    "进行中",
    "待办",
    "todo",
    "真实订单",
    "订单",
    "order_id",
    "item_id",
    "proc_",
    "发布结果",
    "smoke test",
    "验证通过",
    "跑通",
    "点击成功",
    "后台进程",
)
HALF_FORMED = ("想法是", "想如果", "想既然", "目的是", "场景可能", "刚发现", "新会话里", "一下就能用")
SECRETS = (
    re.compile(r"(?:密码|口令|password|passwd|pwd)[:：=\s]+\S+", re.I),
    re.compile(r"(?:token|api[_-]?key|secret|密钥|令牌)[:：=\s]+[a-zA-Z0-9_\-]{8,}", re.I),
)


def should_store(text: str) -> bool:
    t = re.sub(r"\s+", " ", text).strip()
    low = t.casefold()
    if len(t) < 10 or len(t) > 1000:
        return False
    prefixed = low.startswith(PREFIXES)
    if not prefixed:
        if (
            re.fullmatch(r"路径[:：]\s*\S+", t)
            or re.fullmatch(r"(?:https?://|s://|www\.)\S+", low)
            or re.fullmatch(r"[a-zA-Z]:[/\\][^\s]+", t)
            or t.startswith(("路径: s://", "路径：https://", "路径: http://", "路径: www."))
        ):
            return False
        if any(m in low for m in REQUEST):
            return False
    if any(p.search(t) for p in SECRETS):
        return False
    if t.endswith(("?", "？")) or any(q in t for q in QUESTION):
        return False
    if re.match(r"偏好: ?(是|有没有|如何|怎么|还是|这个|来|户)", t) or t.startswith(("用户问", "用户询问")):
        return False
    if t.startswith(("偏好:", "偏好：")):
        value = t.split(":", 1)[-1].split("：", 1)[-1].strip()
        if (
            len(value) < 8
            or "?" in value
            or "？" in value
            or value.startswith(("是", "了", "这个", "那个", "还是", "来", "户"))
        ):
            return False
    if not prefixed and any(p in low for p in PROGRESS):
        return False
    if t.startswith(HALF_FORMED):
        return False
    return not re.fullmatch(r"已配置 (?:KEY|key|token|API_KEY)", t)


def memory_type(text: str) -> str:
    """``derive_metadata``'s memory_type (rules 1-9, condensed)."""
    t = text.strip()
    if t.startswith("active_context:"):
        return "active_context"
    if t.startswith("current_project:"):
        return "project"
    if t.startswith(("idea_backlog:", "paused_project:", "abandoned_project:", "mvp_backlog:")):
        return "idea_index"
    if re.match(r"^(用户偏好|偏好)[:：]", t):
        return "preference"
    if re.match(r"^(默认模型|默认)[:：]", t):
        return "environment"
    if re.search(r"项目\s*\S+\s*(路径|目录|位置)[:：]", t):
        return "project"
    low = t.casefold()
    if any(w in low for w in ("已配置", "api key", "api_key", "token", "密钥", "凭据")):
        return "credential_hint"
    if any(w in t for w in ("工作流", "流程", "步骤", "约定", "优先")):
        return "workflow"
    if any(w in low for w in ("报错", "坑", "quirk", "注意", "必须", "需要")):
        return "tool_quirk"
    return "environment"


# The nearest memwarden topic for each vecmem memory_type (vecmem has no topics of its own).
TYPE_TO_TOPIC = {
    "active_context": "dev_tools",
    "project": "dev_tools",
    "idea_index": "content",
    "preference": "dev_tools",
    "environment": "infra",
    "credential_hint": "infra",
    "workflow": "dev_tools",
    "tool_quirk": "dev_tools",
}


def topic(text: str) -> str:
    return TYPE_TO_TOPIC[memory_type(text)]
