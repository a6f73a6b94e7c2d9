"""The pure rules of config governance: formats, entity_labels forms, merges, missions, drops."""

from __future__ import annotations

import pytest

from memwarden.policies.bank_config import (
    ConfigInputError,
    Templates,
    check_fields,
    drops,
    merge_entity_labels,
    normalize_entity_labels,
    parse_updates,
    plan_update,
    restore_updates,
    settled,
    watched_counts,
)

TEMPLATES = Templates(["infra", "code", "reflection"], ["decision", "process", "reference"], "MISSION", "OBS")


def test_wrapped_and_flat_bodies_give_the_same_updates() -> None:
    assert parse_updates({"updates": {"retain_mission": "x"}}) == ({"retain_mission": "x"}, "wrapped")
    assert parse_updates({"retain_mission": "x"}) == ({"retain_mission": "x"}, "flat")
    assert parse_updates({"HINDSIGHT_API_RETAIN_MISSION": "x"})[0] == {"retain_mission": "x"}


def test_unknown_fields_are_named() -> None:
    with pytest.raises(ConfigInputError, match=r"\['entity_label'\]"):
        check_fields({"entity_label": [], "retain_mission": "x"})
    check_fields({"brand_new_field": 1}, extra_fields=["brand_new_field"])


def test_simple_form_becomes_groups_with_tag_true_on_topic_and_stage() -> None:
    groups = normalize_entity_labels(
        {"topic": ["infra", {"value": "code", "description": "source"}], "stage": ["decision"], "team": ["a"]}
    )
    by_key = {g["key"]: g for g in groups}
    assert by_key["topic"]["tag"] is True
    assert by_key["stage"]["tag"] is True
    assert by_key["team"]["tag"] is False
    assert by_key["topic"]["values"] == [
        {"value": "infra", "description": ""},
        {"value": "code", "description": "source"},
    ]


def test_list_and_attributes_forms_are_accepted_and_topic_is_always_tagged() -> None:
    listed = [{"key": "topic", "tag": False, "values": ["infra"]}]
    assert normalize_entity_labels(listed)[0]["tag"] is True
    assert normalize_entity_labels({"attributes": listed}) == normalize_entity_labels(listed)


@pytest.mark.parametrize(
    "bad",
    [
        None,
        "topic",
        ["topic"],
        [{"values": []}],
        [{"key": "t", "values": "x"}],
        [{"key": "t", "tag": "yes"}],
        [{"key": "t"}, {"key": "t"}],
        {"topic": "infra"},
        [{"key": "t", "values": [3]}],
    ],
)
def test_malformed_entity_labels_are_refused(bad: object) -> None:
    with pytest.raises(ConfigInputError, match="Invalid entity_labels format"):
        normalize_entity_labels(bad)


def test_merge_keeps_other_groups_and_unions_values() -> None:
    current = [{"key": "project", "values": [{"value": "atlas"}]}, {"key": "topic", "values": [{"value": "infra"}]}]
    merged = merge_entity_labels(current, normalize_entity_labels({"topic": ["code", "infra"]}))
    assert [g["key"] for g in merged] == ["project", "topic"]
    assert [v["value"] for v in merged[1]["values"]] == ["infra", "code"]
    assert merged[1]["tag"] is True


def test_seed_adds_only_what_is_absent() -> None:
    sent, overridden = plan_update({}, {"retain_mission": "ours"}, mode="seed", templates=TEMPLATES)
    assert "retain_mission" not in sent
    assert sent["observations_mission"] == "OBS"
    assert {g["key"] for g in sent["entity_labels"]} == {"topic", "stage"}
    assert overridden == []
    # Already seeded: nothing more to send.
    current = {**sent, "retain_mission": "ours"}
    assert plan_update({}, current, mode="seed", templates=TEMPLATES) == ({}, [])


def test_enforce_replaces_client_values_and_names_them() -> None:
    sent, overridden = plan_update(
        {"retain_mission": "mine", "retain_chunk_size": 5}, {}, mode="enforce", templates=TEMPLATES
    )
    assert sent["retain_mission"] == "MISSION"
    assert sent["retain_chunk_size"] == 5
    assert overridden == ["retain_mission"]
    # The client's same value is not an override.
    assert plan_update({"retain_mission": "MISSION"}, {}, mode="enforce", templates=TEMPLATES)[1] == []


def test_off_passes_client_values_through() -> None:
    assert plan_update({"retain_mission": "mine"}, {}, mode="off", templates=TEMPLATES) == (
        {"retain_mission": "mine"},
        [],
    )


def test_restore_puts_old_values_back_and_resets_added_keys() -> None:
    before = {"retain_mission": "a", "entity_labels": [1]}
    after = {"retain_mission": "b", "entity_labels": [1], "retain_chunk_size": 9}
    assert restore_updates(before, after) == {"retain_mission": "a", "retain_chunk_size": None}
    assert restore_updates(before, before) == {}


def test_watched_counts_and_drops() -> None:
    stats = {"nodes_by_fact_type": {"world": 229, "experience": 3, "observation": 40}, "total_documents": 229}
    counts = watched_counts(stats, ["world", "experience", "documents"])
    assert counts == {"world": 229, "experience": 3, "documents": 229}
    after = {"world": 59, "experience": 3, "documents": 228}
    assert drops(counts, after, tolerance=0) == {
        "world": {"before": 229, "after": 59, "delta": -170},
        "documents": {"before": 229, "after": 228, "delta": -1},
    }
    assert drops(counts, after, tolerance=1) == {"world": {"before": 229, "after": 59, "delta": -170}}
    assert drops(counts, {"world": 300, "experience": 3, "documents": 229}, tolerance=0) == {}


def test_settled_reads_pending_work() -> None:
    assert settled({"pending_operations": 0})
    assert not settled({"pending_operations": 2})
    assert not settled({"pending_operations": 0, "pending_consolidation": 1})
