"""Tag filters on the read path: a query in either spelling finds data in both, with the exact
semantics of every ``tags_match`` mode (checked against ``policies.tagfilter``, which implements
Hindsight's)."""

from __future__ import annotations

from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.policies import tagfilter
from memwarden.policies.tag_query import (
    MAX_EXACT_LEAVES,
    LabelSpace,
    TagQueryError,
    list_filters,
    normalize_request,
    rewrite_leaf,
    spellings,
)
from memwarden.policies.tags import canonicalize_tags

MODES = ["any", "all", "any_strict", "all_strict", "exact"]
KEYS = ["topic", "user", "stage"]
VALUES = ["infra", "alice", "decision"]


def colon(tag: str) -> str:
    return tag.replace("=", ":", 1) if "=" in tag and (":" not in tag or tag.index("=") < tag.index(":")) else tag


def test_spellings() -> None:
    assert spellings("topic:infra") == ["topic:infra", "topic=infra"]
    assert spellings("topic=infra") == ["topic=infra", "topic:infra"]
    assert spellings("url:http://x") == ["url:http://x", "url=http://x"]
    assert spellings("user:*") == ["user:*", "user=*"]
    for plain in ("urgent", ":x", "x:", "", "中文标签"):
        assert spellings(plain) == [plain]
    assert spellings("项目:搜索") == ["项目:搜索", "项目=搜索"]


tag = st.builds(lambda k, v, sep: f"{k}{sep}{v}", st.sampled_from(KEYS), st.sampled_from(VALUES), st.sampled_from(":="))
plain = st.sampled_from(["urgent", "draft"])
memory_tags = st.frozensets(st.one_of(tag, plain), max_size=4)
query_tags = st.lists(st.one_of(tag, plain), max_size=3)


def matches(body: dict[str, Any], have: frozenset[str]) -> bool:
    pred = tagfilter.build(body.get("tags"), body.get("tags_match", "any"), body.get("tag_groups"))
    return pred is None or pred(have)


@settings(max_examples=600, deadline=None)
@given(memories=st.lists(memory_tags, min_size=1, max_size=12), tags=query_tags, mode=st.sampled_from(MODES))
def test_a_query_in_either_spelling_finds_what_one_spelling_would(
    memories: list[frozenset[str]], tags: list[str], mode: str
) -> None:
    """For every mode: the rewritten query over mixed-spelling data selects exactly the memories
    that the query selects once data and query are written in one spelling."""
    body, _ = normalize_request({"query": "q", "tags": tags, "tags_match": mode})
    reference = {"query": "q", "tags": [colon(t) for t in tags], "tags_match": mode}
    for have in memories:
        assert matches(body, have) == matches(reference, frozenset(colon(t) for t in have)), (body, have)


@settings(max_examples=400, deadline=None)
@given(
    memories=st.lists(memory_tags, min_size=1, max_size=10),
    first=query_tags,
    second=query_tags,
    m1=st.sampled_from(MODES),
    m2=st.sampled_from(MODES),
    negate=st.booleans(),
)
def test_tag_groups_leaves_are_rewritten_at_every_depth(
    memories: list[frozenset[str]], first: list[str], second: list[str], m1: str, m2: str, negate: bool
) -> None:
    inner: dict[str, Any] = {"or": [{"tags": first, "match": m1}, {"tags": second, "match": m2}]}
    groups = [{"not": inner} if negate else inner, {"tags": first, "match": m2}]
    body, _ = normalize_request({"query": "q", "tag_groups": groups})

    def canon(node: Any) -> Any:
        if "tags" in node:
            return {**node, "tags": [colon(t) for t in node["tags"]]}
        key = next(k for k in ("and", "or", "not") if k in node)
        return {key: canon(node[key])} if key == "not" else {key: [canon(c) for c in node[key]]}

    reference = {"query": "q", "tag_groups": [canon(g) for g in groups]}
    for have in memories:
        assert matches(body, have) == matches(reference, frozenset(colon(t) for t in have))


@settings(max_examples=300, deadline=None)
@given(memories=st.lists(memory_tags, min_size=1, max_size=12), tags=query_tags, mode=st.sampled_from(MODES))
def test_list_fan_out_is_the_same_set(memories: list[frozenset[str]], tags: list[str], mode: str) -> None:
    """``GET .../memories/list`` takes only tags + tags_match: the union of the fanned-out queries
    is the normalized filter."""
    queries = list_filters(tags, mode)
    reference = {"query": "q", "tags": [colon(t) for t in tags], "tags_match": mode}
    for have in memories:
        found = any(matches({"tags": t, "tags_match": m}, have) for t, m in queries)
        assert found == matches(reference, frozenset(colon(t) for t in have))


def test_what_the_rewrite_looks_like() -> None:
    body, changed = normalize_request({"query": "q", "tags": ["topic=infra", "urgent"], "tags_match": "any_strict"})
    assert changed
    assert body["tags"] == ["topic=infra", "topic:infra", "urgent"]
    body, _ = normalize_request({"query": "q", "tags": ["topic:infra", "user:alice"], "tags_match": "all_strict"})
    assert "tags" not in body
    assert "tags_match" not in body
    assert body["tag_groups"] == [
        {
            "and": [
                {"tags": ["topic:infra", "topic=infra"], "match": "any_strict"},
                {"tags": ["user:alice", "user=alice"], "match": "any_strict"},
            ]
        }
    ]
    # Nothing to do: the body is untouched.
    assert normalize_request({"query": "q", "tags": ["urgent"], "tags_match": "all"}) == (
        {"query": "q", "tags": ["urgent"], "tags_match": "all"},
        False,
    )
    # Both tags and tag_groups: the backend's 400, not ours to fix.
    both = {"query": "q", "tags": ["topic:x"], "tag_groups": [{"tags": ["topic:x"]}]}
    assert normalize_request(both) == (both, False)
    # A leaf keeps its other keys.
    body, _ = normalize_request({"query": "q", "tag_groups": [{"tags": ["topic:x"], "resolve": "fuzzy"}]})
    assert body["tag_groups"] == [{"tags": ["topic:x", "topic=x"], "match": "any_strict", "resolve": "fuzzy"}]


def test_an_exact_filter_too_wide_to_rewrite_is_refused() -> None:
    four = [f"k{i}:v" for i in range(4)]
    assert len(rewrite_leaf(four, "exact")["or"]) == MAX_EXACT_LEAVES
    with pytest.raises(TagQueryError, match="exact"):
        normalize_request({"query": "q", "tags": [*four, "k9:v"], "tags_match": "exact"})


# -- memwarden's labels invisible to a filter that does not name them ----------------------------

SPACE = LabelSpace.of(["infra", "personal"], ["decision", "reference"])
# A client's own tags, among them a topic or a stage the vocabulary does not know ("topic:homelab"):
# memwarden keeps those as the client's, and a filter naming them stays label-blind.
client_tag = st.builds(
    lambda k, v: f"{k}:{v}",
    st.sampled_from(["user", "team", "topic", "stage"]),
    st.sampled_from(["alice", "ops", "homelab"]),
)
client_tags = st.frozensets(st.one_of(client_tag, plain), max_size=3)
# A label pair and the separator memwarden wrote with: a deployment that changed its separator
# holds memories of both.
label_pair = st.tuples(st.sampled_from(SPACE.topics), st.sampled_from(SPACE.stages), st.sampled_from([":", "="]))
client_query = st.lists(st.one_of(client_tag, plain), max_size=3)


def labelled(client: frozenset[str], pair: tuple[str, str, str], through_memwarden: bool) -> frozenset[str]:
    """The tags a memory holds: through memwarden, the client's canonical in its separator plus the
    labels; written around memwarden, the client's as sent."""
    if not through_memwarden:
        return client
    topic, stage, sep = pair
    return frozenset([*canonicalize_tags(client, separator=sep), f"topic{sep}{topic}", f"stage{sep}{stage}"])


def unlabelled(client: frozenset[str], pair: tuple[str, str, str], through_memwarden: bool) -> frozenset[str]:
    """The same memory had memwarden added no labels."""
    return frozenset(canonicalize_tags(client, separator=pair[2])) if through_memwarden else client


def selects(request: dict[str, Any], tags: frozenset[str]) -> bool:
    """What the client's own filter selects, up to spelling (the rewrite without labels)."""
    return matches(normalize_request(request)[0], tags)


@settings(max_examples=600, deadline=None)
@given(
    memories=st.lists(st.tuples(client_tags, label_pair, st.booleans()), min_size=1, max_size=12),
    tags=client_query,
    mode=st.sampled_from(MODES),
)
def test_a_filter_naming_no_label_selects_what_it_would_without_labels(
    memories: list[tuple[frozenset[str], tuple[str, str, str], bool]], tags: list[str], mode: str
) -> None:
    """Memories written through memwarden carry a topic and a stage; others (written around it)
    do not. A filter that names neither key selects, from the labelled data, exactly what the
    client's own filter selects from the data as the client wrote it."""
    body, _ = normalize_request({"query": "q", "tags": tags, "tags_match": mode}, SPACE)
    original = {"query": "q", "tags": tags, "tags_match": mode}
    for client, pair, through in memories:
        have = labelled(client, pair, through)
        assert matches(body, have) == selects(original, unlabelled(client, pair, through)), (body, client, pair)


@settings(max_examples=300, deadline=None)
@given(
    memories=st.lists(st.tuples(client_tags, label_pair, st.booleans()), min_size=1, max_size=10),
    first=client_query,
    second=client_query,
    m1=st.sampled_from(MODES),
    m2=st.sampled_from(MODES),
    negate=st.booleans(),
)
def test_label_blind_tag_groups_at_every_depth(
    memories: list[tuple[frozenset[str], tuple[str, str, str], bool]],
    first: list[str],
    second: list[str],
    m1: str,
    m2: str,
    negate: bool,
) -> None:
    inner: dict[str, Any] = {"or": [{"tags": first, "match": m1}, {"tags": second, "match": m2}]}
    groups = [{"not": inner} if negate else inner, {"tags": first, "match": m2}]
    body, _ = normalize_request({"query": "q", "tag_groups": groups}, SPACE)
    original = {"query": "q", "tag_groups": groups}
    for client, pair, through in memories:
        assert matches(body, labelled(client, pair, through)) == selects(original, unlabelled(client, pair, through))


@pytest.mark.parametrize("mode", MODES)
def test_a_filter_naming_a_label_uses_the_labels(mode: str) -> None:
    body, _ = normalize_request({"query": "q", "tags": ["topic:infra", "user:alice"], "tags_match": mode}, SPACE)
    have = frozenset({"topic:infra", "stage:decision", "user:alice"})
    original = {"query": "q", "tags": ["topic:infra", "user:alice"], "tags_match": mode}
    assert matches(body, have) == matches(original, have)
    # No label-only alternative was added: a memory holding only labels is not admitted by any mode.
    assert not matches(body, frozenset({"topic:personal", "stage:reference"}))


def test_an_exact_filter_finds_the_memory_memwarden_labelled() -> None:
    """The issue's case: through memwarden, ``tags: ["user:alice"], tags_match: "exact"`` found 0
    where Hindsight found 2."""
    body, changed = normalize_request({"query": "q", "tags": ["user:alice"], "tags_match": "exact"}, SPACE)
    assert changed
    assert matches(body, frozenset({"user:alice", "topic:infra", "stage:decision"}))
    assert not matches(body, frozenset({"user:alice", "team:ops", "topic:infra", "stage:decision"}))


@settings(max_examples=300, deadline=None)
@given(
    memories=st.lists(st.tuples(client_tags, label_pair, st.booleans()), min_size=1, max_size=12),
    tags=client_query,
    mode=st.sampled_from(MODES),
)
def test_label_blind_list_fan_out_is_the_same_set(
    memories: list[tuple[frozenset[str], tuple[str, str, str], bool]], tags: list[str], mode: str
) -> None:
    queries = list_filters(tags, mode, SPACE)
    original = {"query": "q", "tags": tags, "tags_match": mode}
    for client, pair, through in memories:
        have = labelled(client, pair, through)
        got = any(matches({"tags": q, "tags_match": m}, have) for q, m in queries)
        assert got == selects(original, unlabelled(client, pair, through)), (queries, client, pair)
