from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memwarden.policies.tags import canonical_tag, canonicalize_tags, protected_tags, tag_value


@pytest.mark.parametrize(
    ("tag", "colon", "equals"),
    [
        ("topic=infra", "topic:infra", "topic=infra"),
        ("topic:infra", "topic:infra", "topic=infra"),
        ("Topic : Infra", "topic:infra", "topic=infra"),
        (" user:Alice ", "user:Alice", "user=Alice"),  # only label values are casefolded
        ("session=abc-1", "session:abc-1", "session=abc-1"),
        ("plain tag", "plain tag", "plain tag"),
        ("stage: Reference", "stage:reference", "stage=reference"),
        ("url:https://x.io/a", "url:https://x.io/a", "url=https://x.io/a"),
    ],
)
def test_both_spellings_become_one(tag: str, colon: str, equals: str) -> None:
    assert canonical_tag(tag) == colon
    assert canonical_tag(tag, separator="=") == equals


def test_duplicates_and_empties_are_dropped_in_order() -> None:
    assert canonicalize_tags(["topic=infra", "user:bob", "topic:infra", " ", "TOPIC: INFRA"]) == [
        "topic:infra",
        "user:bob",
    ]


def test_tag_value_reads_either_spelling() -> None:
    assert tag_value(["user:bob", "topic=code"], "topic") == "code"
    assert tag_value(["user:bob"], "topic") is None


@given(st.lists(st.text(max_size=20), max_size=8), st.sampled_from([":", "="]))
def test_canonicalization_is_a_projection(tags: list[str], sep: str) -> None:
    once = canonicalize_tags(tags, separator=sep)
    assert canonicalize_tags(once, separator=sep) == once


@pytest.mark.parametrize(
    ("tag", "reserved"),
    [
        ("source:web", True),
        ("\uff53\uff4f\uff55\uff52\uff43\uff45:web", True),  # full-width
        ("\u0455ource:web", True),  # Cyrillic dze
        ("s\u0585urce:web", True),  # Armenian o
        ("\u13daource:web", True),  # Cherokee S
        ("so\ufe0furce:web", True),  # a variation selector
        ("Verified : TRUE", True),
        ("s\u1d0f\u1d1c\u0280\u1d04\u1d07:web", True),  # small capitals
        ("ve\u0280ified:true", True),
        ("source\u02f8web", True),  # a colon's look-alike
        ("sources:web", False),
        ("resource:web", False),
        ("verified:false", False),
        ("source", False),  # a key alone is no key:value tag
    ],
)
def test_protected_tags_are_compared_as_they_look(tag: str, reserved: bool) -> None:
    assert bool(protected_tags([tag], ["source", "verified:true"])) is reserved
