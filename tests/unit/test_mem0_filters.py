"""Mem0's filter grammar as the Mem0 front reads it (``fronts/mem0/filters.py``): what each filter
selects from a few memories, the backend's tag pre-filter never dropping a memory the whole filter
selects, and what is refused."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.fronts.mem0.filters import ENTITY_TAG, FilterError, Record, matches, parse, tag_sets

MEMORIES = [
    Record(
        id="m1",
        text="Alice prefers dark roast coffee.",
        entities={"user_id": "alice", "agent_id": "barista"},
        metadata={"source": "chat", "n": 3, "tags": ["pref", "drink"]},
        categories=["preferences"],
        created_at="2026-01-10T09:00:00+00:00",
        updated_at="2026-01-10T09:00:00+00:00",
    ),
    Record(
        id="m2",
        text="Bob moved the standup to 9:30.",
        entities={"user_id": "bob", "run_id": "r-7"},
        metadata={"source": "email", "n": 10},
        categories=["work"],
        created_at="2026-03-02T12:00:00+00:00",
        updated_at="2026-03-05T12:00:00+00:00",
    ),
    Record(
        id="m3",
        text="鲍勃喜欢绿茶。",
        entities={"user_id": "bob", "agent_id": "barista"},
        metadata={},
        categories=[],
        created_at="2026-05-20T08:00:00+00:00",
        updated_at="2026-05-20T08:00:00+00:00",
    ),
]

CASES: list[tuple[dict[str, Any], bool, set[str]]] = [
    ({"user_id": "alice"}, False, {"m1"}),
    ({"user_id": {"eq": "bob"}}, False, {"m2", "m3"}),
    ({"user_id": {"ne": "bob"}}, False, {"m1"}),
    ({"user_id": {"in": ["alice", "carol"]}}, False, {"m1"}),
    ({"user_id": {"nin": ["alice"]}}, False, {"m2", "m3"}),
    ({"run_id": "*"}, False, {"m2"}),
    ({"AND": [{"user_id": "bob"}, {"agent_id": "barista"}]}, False, {"m3"}),
    ({"OR": [{"user_id": "alice"}, {"run_id": "r-7"}]}, False, {"m1", "m2"}),
    ({"NOT": {"user_id": "bob"}}, False, {"m1"}),
    ({"NOT": [{"user_id": "bob"}, {"agent_id": "barista"}]}, False, {"m1", "m2"}),  # a list: ANDed, then negated
    ({"user_id": "bob", "agent_id": "barista"}, False, {"m3"}),  # flat keys: ANDed
    ({"created_at": {"gte": "2026-03-01"}}, False, {"m2", "m3"}),
    ({"created_at": {"gt": "2026-01-10T09:00:00Z", "lt": "2026-05-01"}}, False, {"m2"}),
    ({"updated_at": {"lte": "2026-03-05T12:00:00+00:00"}}, False, {"m1", "m2"}),
    ({"text": {"contains": "standup"}}, False, {"m2"}),
    ({"text": {"icontains": "ALICE"}}, False, {"m1"}),
    ({"keywords": {"contains": "绿茶"}}, False, {"m3"}),
    ({"categories": {"in": ["work", "travel"]}}, False, {"m2"}),
    ({"categories": {"contains": "preferences"}}, False, {"m1"}),
    ({"memory_ids": {"in": ["m1", "m3"]}}, False, {"m1", "m3"}),
    ({"metadata": {"source": "chat"}}, False, {"m1"}),
    ({"metadata": {"source": {"ne": "chat"}}}, False, {"m2", "m3"}),  # unset counts as "not chat"
    ({"metadata": {"n": {"gt": 5}}}, False, {"m2"}),
    ({"metadata": {"tags": {"contains": "drink"}}}, False, {"m1"}),
    ({"user_id": "bob", "source": "email"}, True, {"m2"}),  # the open-source dialect: flat metadata keys
    ({"OR": [{"source": "chat"}, {"n": {"gte": 10}}]}, True, {"m1", "m2"}),
]


@pytest.mark.parametrize(("filters", "oss", "selected"), CASES)
def test_what_a_filter_selects(filters: dict[str, Any], oss: bool, selected: set[str]) -> None:
    tree = parse(filters, oss=oss)
    assert {m.id for m in MEMORIES if matches(tree, m)} == selected


REFUSED = [
    ({"user_id": {"regex": "a"}}, "unknown operator"),
    ({"colour": "red"}, "unknown filter field"),
    ({"user_id": {"gt": "a"}}, "not supported"),
    ({"created_at": {"gt": "yesterday"}}, "ISO 8601"),
    ({"AND": {"user_id": "a"}}, "AND takes a non-empty list"),
    ({"user_id": {"in": ["x"] * 257}}, "1 to 256 values"),
    ({"OR": [{"user_id": str(i)} for i in range(65)]}, "more than 64"),
]


@pytest.mark.parametrize(("filters", "words"), REFUSED)
def test_what_cannot_be_read_exactly_is_refused(filters: dict[str, Any], words: str) -> None:
    with pytest.raises(FilterError, match=words):
        parse(filters)


def test_a_tree_too_deep_is_refused() -> None:
    deep: dict[str, Any] = {"user_id": "a"}
    for _ in range(9):
        deep = {"AND": [deep]}
    with pytest.raises(FilterError, match="levels deep"):
        parse(deep)


USERS = ["alice", "bob", "carol"]
leaf = st.one_of(
    st.builds(lambda f, v: {f: v}, st.sampled_from(["user_id", "agent_id", "run_id"]), st.sampled_from(USERS)),
    st.builds(
        lambda f, vs: {f: {"in": vs}},
        st.sampled_from(["user_id", "agent_id"]),
        st.lists(st.sampled_from(USERS), min_size=1, max_size=3),
    ),
    st.builds(lambda v: {"user_id": {"ne": v}}, st.sampled_from(USERS)),
    st.builds(lambda v: {"metadata": {"source": v}}, st.sampled_from(["chat", "email"])),
)
trees = st.recursive(
    leaf,
    lambda inner: st.one_of(
        st.builds(lambda cs: {"AND": cs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda cs: {"OR": cs}, st.lists(inner, min_size=1, max_size=3)),
        st.builds(lambda c: {"NOT": c}, inner),
    ),
    max_leaves=8,
)
records = st.builds(
    lambda u, a, r, s: Record(
        id="x",
        text="t",
        entities={k: v for k, v in (("user_id", u), ("agent_id", a), ("run_id", r)) if v},
        metadata={"source": s} if s else {},
        categories=[],
        created_at="2026-01-01T00:00:00+00:00",
        updated_at="2026-01-01T00:00:00+00:00",
    ),
    *(st.sampled_from([*USERS, None]) for _ in range(3)),
    st.sampled_from(["chat", "email", None]),
)


@settings(max_examples=400, deadline=None)
@given(trees, records)
def test_the_tag_prefilter_never_drops_a_memory_the_filter_selects(filters: dict[str, Any], record: Record) -> None:
    """The backend (or the ledger's query) applies ``tag_sets`` first: every memory the whole filter
    selects must pass it, whichever separator its tags were written in."""
    tree = parse(filters)
    if not matches(tree, record):
        return
    held = {f"{ENTITY_TAG[k]}{sep}{v}" for k, v in record.entities.items() for sep in (":",)}
    for group in tag_sets(tree):
        assert held & set(group), (filters, record.entities, group)
