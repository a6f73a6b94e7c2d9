from __future__ import annotations

import pytest

from memwarden.policies.labels import LabelClassifier, LabelError
from memwarden.policies.quality import prepare

CLASSIFIER = LabelClassifier()


@pytest.mark.parametrize(
    ("text", "topic", "stage"),
    [
        ("决定用激活码订阅模式", "business", "decision"),
        ("Docker 容器 restart policy 统一设为 unless-stopped", "infra", "decision"),
        ("默认模型：deepseek/deepseek-v4-flash", "dev_tools", "decision"),
        ("项目使用 Python 3.11。", "code", "decision"),
        ("默认不发文章，Sir 决定发 CSDN→掘金→知乎→公众号", "content", "decision"),
        ("实测 BM25 单独的 recall@5 是 0.58", "research", "reference"),
        ("我以为 X / 实际 Y / 根因 Z / 改进 W", "reflection", "decision"),
        ("Hindsight PATCH 副作用清空 221 条数据", "reflection", "decision"),
        ("active_context: 正在推进 P1 改造", "dev_tools", "process"),
        ("The staging cluster has 3 nodes with 16 GB RAM each.", "infra", "reference"),
    ],
)
def test_inferred_labels(text: str, topic: str, stage: str) -> None:
    labels = CLASSIFIER.classify(prepare(text))
    assert not isinstance(labels, LabelError)
    assert (labels.topic, labels.stage) == (topic, stage)


def test_meta_facts_default_to_reflection_and_nothing_is_without_a_topic() -> None:
    meta = CLASSIFIER.classify(prepare("retain 的 observation 按完整标签集分组"))
    assert not isinstance(meta, LabelError)
    assert meta.topic == "reflection"
    unknown = CLASSIFIER.classify(prepare("zzzz qqqq wwww"))
    assert not isinstance(unknown, LabelError)
    assert (unknown.topic, unknown.topic_source, unknown.confidence) == ("reflection", "fallback", 0.0)


@pytest.mark.parametrize(
    ("topic", "stage", "expected"),
    [
        ("infra", "decision", ("infra", "decision")),
        ("Infrastructure", "WIP", ("infra", "process")),
        ("运维", "参考", ("infra", "reference")),
    ],
)
def test_client_labels_are_validated_through_aliases(topic: str, stage: str, expected: tuple[str, str]) -> None:
    labels = CLASSIFIER.classify("whatever", topic=topic, stage=stage)
    assert not isinstance(labels, LabelError)
    assert (labels.topic, labels.stage) == expected


def test_unknown_client_labels_are_refused_with_the_vocabulary() -> None:
    error = CLASSIFIER.classify("whatever", topic="gardening")
    assert isinstance(error, LabelError)
    assert "unknown topic 'gardening'" in error.reason
    assert "business" in error.reason
    assert isinstance(CLASSIFIER.classify("x", stage="forever"), LabelError)


def test_vocabulary_extends_from_config() -> None:
    custom = LabelClassifier(extra_keywords={"research": ["ablation"]}, topic_aliases={"ml": "research"})
    labels = custom.classify(prepare("ablation without the reranker"))
    assert not isinstance(labels, LabelError)
    assert labels.topic == "research"
    aliased = custom.classify("x", topic="ml")
    assert not isinstance(aliased, LabelError)
    assert aliased.topic == "research"
