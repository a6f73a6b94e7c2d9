"""policies/quality.py: every rule's examples both ways, plus the traps substring filters fall into."""

from __future__ import annotations

import pytest

from memwarden.policies.quality import QualityFilter
from memwarden.policies.quality_allow import ALLOW_RULES
from memwarden.policies.quality_rules import REJECT_RULES, Rule

FILTER = QualityFilter()


def rule_cases(kind: str) -> list[tuple[Rule, str]]:
    rules = REJECT_RULES if kind == "reject" else ALLOW_RULES
    attr = "fires_on"
    return [(r, text) for r in rules for text in getattr(r, attr)]


def test_every_rule_has_examples_both_ways() -> None:
    for rule in (*REJECT_RULES, *ALLOW_RULES):
        assert rule.fires_on, f"{rule.id} has no example it fires on"
        assert rule.spares, f"{rule.id} has no example it spares"


def test_rule_ids_are_unique() -> None:
    ids = [r.id for r in (*REJECT_RULES, *ALLOW_RULES)]
    assert len(ids) == len(set(ids))


@pytest.mark.parametrize(
    ("rule", "text"),
    [(r, t) for r in REJECT_RULES for t in r.fires_on],
    ids=lambda x: x.id if isinstance(x, Rule) else x[:30],
)
def test_reject_rule_stops_its_examples(rule: Rule, text: str) -> None:
    verdict = FILTER.assess(text)
    assert not verdict.keep, f"{text!r} was kept ({verdict.rule})"
    assert verdict.rule == rule.id, f"{text!r} stopped by {verdict.rule}, expected {rule.id}"


@pytest.mark.parametrize(
    ("rule", "text"),
    [(r, t) for r in REJECT_RULES for t in r.spares],
    ids=lambda x: x.id if isinstance(x, Rule) else x[:30],
)
def test_reject_rule_spares_its_counter_examples(rule: Rule, text: str) -> None:
    verdict = FILTER.assess(text)
    assert verdict.keep, f"{text!r} was stopped by {verdict.rule}: {verdict.reason}"


@pytest.mark.parametrize(
    ("rule", "text"),
    [(r, t) for r in ALLOW_RULES for t in r.fires_on],
    ids=lambda x: x.id if isinstance(x, Rule) else x[:30],
)
def test_allow_rule_vouches_for_its_examples(rule: Rule, text: str) -> None:
    from memwarden.policies.quality import prepare

    assert FILTER.fires(rule.id, prepare(text))


@pytest.mark.parametrize(
    ("rule", "text"),
    [(r, t) for r in ALLOW_RULES for t in r.spares],
    ids=lambda x: x.id if isinstance(x, Rule) else x[:30],
)
def test_allow_rule_does_not_vouch_for_its_counter_examples(rule: Rule, text: str) -> None:
    from memwarden.policies.quality import prepare

    assert not FILTER.fires(rule.id, prepare(text))


@pytest.mark.parametrize(
    ("text", "keep", "rule"),
    [
        ("ok", False, "chatter"),
        ("短句", False, "length.too_short"),
        ("We keep the nightly backups for 30 days on the NAS. " * 100, True, "allow.fact"),  # a fact, however long
        ("active_context: 正在推进 P1 改造", True, "allow.structured_prefix"),
        ("偏好: 是这个", False, "structured.fragment"),
        ("偏好：有没有？", False, "structured.fragment"),
        ("默认模型：deepseek/deepseek-v4-flash", True, "allow.structured_prefix"),
        ("申请 API 额度需要企业认证，审批约 3 个工作日", True, "keep.default"),
        ("当前默认模型是 gpt-4.1", True, "keep.default"),
        ("todoist 是团队的任务管理工具", True, "keep.default"),
        ("订单服务按用户 ID 分库", True, "keep.default"),
        ("如何部署：先 build 镜像，再 docker compose up -d", True, "keep.default"),
    ],
)
def test_traps_and_structure(text: str, keep: bool, rule: str) -> None:
    verdict = FILTER.assess(text)
    assert (verdict.keep, verdict.rule) == (keep, rule), verdict.reason


def test_extra_rules_and_disabled_rules_from_config() -> None:
    extra = Rule("custom.jira", "ticket chatter", (r"^jira-\d+ (moved|assigned)",), fires_on=("x",), spares=("y",))
    custom = QualityFilter(extra_rules=[extra], disabled=["chatter"])
    assert custom.assess("JIRA-123 moved to review").rule == "custom.jira"
    assert custom.assess("thanks a lot").keep  # chatter is off here
    assert QualityFilter().assess("thanks a lot").rule == "chatter"
