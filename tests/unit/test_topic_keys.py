from __future__ import annotations

import pytest

from memwarden.policies.quality import prepare
from memwarden.policies.topic_keys import derive_topic_key, slug


@pytest.mark.parametrize(
    ("text", "key", "cardinality"),
    [
        ("默认模型：deepseek/deepseek-v4-flash", "config.default_model", "single"),
        ("默认模型：gpt-4.1", "config.default_model", "single"),
        ("当前默认模型是 gpt-4.1", "config.default_model", "single"),
        ("Default model: claude-sonnet-4", "config.default_model", "single"),
        ("项目 hermes-vecmem 路径：E:/projects/hermes-vecmem", "project.path.hermes-vecmem", "single"),
        ("项目 记忆系统 路径：D:/work/记忆系统", "project.path.记忆系统", "single"),
        ("用户偏好：回答简洁务实", "user.preference.response_style", "single"),
        ("用户偏好：回答用中文", "user.preference.response_style", "single"),
        ("偏好：用中文交流", "user.preference.language", "single"),
        ("active_context: 正在推进 P1 改造", "active_context", "replace"),
        ("idea_backlog: Agent Skills Daily", "idea_index.agent-skills-daily", "multi"),
        ("retain_every_n_turns 设为 20", "config.retain_every_n_turns", "single"),
    ],
)
def test_keys(text: str, key: str, cardinality: str) -> None:
    derived = derive_topic_key(prepare(text))
    assert derived is not None
    assert (derived.key, derived.cardinality) == (key, cardinality)


@pytest.mark.parametrize("text", ["工作流：先写测试再写代码", "Bob is allergic to peanuts.", "决定用激活码订阅模式"])
def test_most_facts_have_no_key(text: str) -> None:
    assert derive_topic_key(prepare(text)) is None


def test_slug_keeps_cjk_and_never_collapses_to_nothing() -> None:
    assert slug("记忆 系统") == "记忆-系统"
    assert slug("!!!") == "unknown"
