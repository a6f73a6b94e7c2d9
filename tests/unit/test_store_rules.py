"""Hindsight's input rules as pure functions (``store/rules.py``); over HTTP, and against the real
server, they are checked by ``tests/hindsight_cases.py``."""

from __future__ import annotations

import pytest

from memwarden.policies.bank_config import KNOWN_FIELDS
from memwarden.store.banks import hindsight_defaults
from memwarden.store.rules import CONFIG_FIELD_TYPES, check_config_updates, check_new_bank_id, mentioned_at, tag_pattern


def test_every_config_field_has_its_type() -> None:
    # One list of Hindsight's per-bank fields in three places: the guard's, the defaults', the types'.
    assert set(CONFIG_FIELD_TYPES) == set(KNOWN_FIELDS) == set(hindsight_defaults())


@pytest.mark.parametrize(
    ("updates", "error"),
    [
        ({"recall_budget_adaptive_mid": 1}, None),  # JSON has no int/float line: 1 is a ratio
        ({"recall_budget_fixed_mid": 2.5}, "recall_budget_fixed_mid must be an integer, got float"),
        ({"enable_observations": 1}, "enable_observations must be a boolean, got int"),
        ({"retain_chunk_size": True}, "retain_chunk_size must be an integer, got bool"),  # a bool is no number
        ({"default_observation_scopes": 5}, "default_observation_scopes must be a string or a list, got int"),
        ({"retain_mission": None, "disposition_empathy": None}, None),  # null clears an override
        ({"recall_budget_max": 10}, "recall_budget_min (20) must be <= recall_budget_max (10)"),  # the default min
    ],
)
def test_config_values_are_checked_as_hindsight_checks_them(updates: dict[str, object], error: str | None) -> None:
    if error is None:
        check_config_updates(updates, hindsight_defaults())
    else:
        with pytest.raises(ValueError, match="^" + error.replace("(", r"\(").replace(")", r"\)") + "$"):
            check_config_updates(updates, hindsight_defaults())


@pytest.mark.parametrize(
    ("bank_id", "error"),
    [
        ("数据" * 32, None),  # 64 CJK characters: 192 bytes, the most there is room for
        ("数据" * 32 + "x", "Bank id is too long"),
        ("", "Bank id must not be empty"),
        ("a\tb", "Bank id must not contain control characters"),
        ("a\x00b", "Bank id must not contain control characters"),
        ("_meta", "Bank id must not start with '_'"),
        ("team/a b", None),
    ],
)
def test_new_bank_ids(bank_id: str, error: str | None) -> None:
    if error is None:
        check_new_bank_id(bank_id)
    else:
        with pytest.raises(ValueError, match=error):
            check_new_bank_id(bank_id)


def test_an_items_timestamp_as_hindsight_stores_it() -> None:
    now = "2026-11-30T12:00:00+00:00"
    assert mentioned_at(None, now) == now
    assert mentioned_at("", now) == now
    assert mentioned_at("UNSET", now) is None
    assert mentioned_at("2024-01-15T10:30:00Z", now) == "2024-01-15T10:30:00+00:00"
    assert mentioned_at("2024-01-15T10:30:00-05:00", now) == "2024-01-15T15:30:00+00:00"


def test_tag_patterns_are_ilike() -> None:
    tags = ["user:alice", "User:Bob", "team_a", "teamXa", "role-admin", "a.b"]

    def listed(q: str) -> list[str]:
        return [t for t in tags if tag_pattern(q).fullmatch(t)]

    assert listed("user:*") == ["user:alice", "User:Bob"]
    assert listed("team_a") == ["team_a", "teamXa"]  # _ is any one character
    assert listed("*-admin") == ["role-admin"]
    assert listed("a.b") == ["a.b"]  # no regex leaks through
    assert listed("user") == []
