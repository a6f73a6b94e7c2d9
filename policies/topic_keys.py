"""Topic keys: a deterministic key per fact, so that two facts about the same thing meet.

Keys keep CJK names intact (``project.path.记忆系统``, not ``project.path.unknown``). Each kind of
key is declared:

* ``single`` — one value at a time: same key + same content is a duplicate, same key + different
  content is a conflict held for review (``config.default_model``, ``project.path.<name>``,
  ``user.preference.<aspect>``, ``config.<setting>``);
* ``replace`` — single-valued and superseded in place by the newer value (``active_context``,
  ``current_project``);
* ``multi`` — many values may coexist; the key only groups them (``idea_index.<name>``).

Text that matches no pattern has no key and never conflicts.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from memwarden.policies.fastre import required_literals

Cardinality = Literal["single", "replace", "multi"]


@dataclass(frozen=True)
class TopicKey:
    key: str
    cardinality: Cardinality


_SLUG_DROP = re.compile(r"[^\w.\-]+")
_IDEA = r"(idea_backlog|paused_project|abandoned_project|mvp_backlog)"


def slug(text: str, *, limit: int = 48) -> str:
    """Casefolded, non-word runs to ``-``; CJK and other letters are word characters and stay."""
    s = _SLUG_DROP.sub("-", text.casefold()).strip("-.")
    return s[:limit].rstrip("-.") or "unknown"


def _preference_aspect(value: str) -> str:
    if re.search(
        r"回答|回复|响应|简洁|废话|解释|长篇|啰嗦|\b(answers?|responses?|replies|concise|verbose|brief)\b", value
    ):
        return "response_style"
    if re.search(r"中文|英文|语言|\b(chinese|english|language)\b", value):
        return "language"
    if re.search(r"markdown|格式|结构|列表|表格|\b(format|formatting|lists?|tables?)\b", value):
        return "format"
    return slug(value, limit=24)


_PATTERNS: tuple[tuple[re.Pattern[str], str], ...] = (
    (re.compile(r"^active_context\s*[:：]"), "active_context"),
    (re.compile(r"^current_project\s*[:：]"), "current_project"),
    (re.compile(rf"^{_IDEA}\s*[:：]\s*(?P<name>[^,，;；。]+)"), "idea"),
    (
        re.compile(r"^(默认模型|default[ _]model)\s*[:：=]|^(当前)?默认模型(是|为|设为)|\bdefault model (is|set to|=)"),
        "default_model",
    ),
    (re.compile(r"^项目\s*(?P<name>\S+?)\s*(的)?(路径|目录|位置)\s*[:：是为]"), "project_path"),
    (re.compile(r"^(the )?project (?P<name>\S+?)('s)? (path|dir|directory|location)\s*(is|:|=)"), "project_path"),
    (re.compile(r"^(用户)?偏好\s*[:：]\s*(?P<value>.+)$"), "preference"),
    (re.compile(r"^(the )?user prefers (?P<value>.+)$"), "preference"),
    (
        re.compile(
            r"^(?P<name>[a-z][\w.\- ]{1,60}?|[\w\u3400-\u9fff][\w\u3400-\u9fff .\-]{1,30}?)\s*(统一)?\s*"
            r"(设为|设置为|改为|调到|set to|=)\s*\S"
        ),
        "setting",
    ),
)


# Each pattern's required literals (one of them occurs in every match): one search for any of them
# rules out most texts at once, a substring test per pattern skips the rest.
_GATED = tuple((pattern, kind, required_literals(pattern.pattern) or frozenset({""})) for pattern, kind in _PATTERNS)
_ANY_GATE = re.compile("|".join(sorted({re.escape(s) for _, _, r in _GATED for s in r}, key=len, reverse=True)))


def derive_topic_key(prepared: str) -> TopicKey | None:
    """The topic key of a prepared (NFKC, casefolded) text, or None."""
    if _ANY_GATE.search(prepared) is None:
        return None
    for pattern, kind, required in _GATED:
        if not any(s in prepared for s in required):
            continue
        m = pattern.search(prepared)
        if not m:
            continue
        if kind in ("active_context", "current_project"):
            return TopicKey(kind, "replace")
        if kind == "idea":
            return TopicKey(f"idea_index.{slug(m.group('name'))}", "multi")
        if kind == "default_model":
            return TopicKey("config.default_model", "single")
        if kind == "project_path":
            return TopicKey(f"project.path.{slug(m.group('name'))}", "single")
        if kind == "preference":
            return TopicKey(f"user.preference.{_preference_aspect(m.group('value'))}", "single")
        if kind == "setting":
            return TopicKey(f"config.{slug(m.group('name'))}", "single")
    return None
