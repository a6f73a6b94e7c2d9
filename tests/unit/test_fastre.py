"""The pattern machinery must give the answers plain ``re`` gives: same matches, only faster."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from memwarden.policies.fastre import PatternSet, _flatten, expand_literals, required_literals
from memwarden.policies.labels import LabelClassifier
from memwarden.policies.quality import QualityFilter, prepare

DATA = Path(__file__).parents[1] / "data" / "candidates.jsonl"
TEXTS = [prepare(json.loads(line)["text"]) for line in DATA.read_text(encoding="utf-8").splitlines()]


def _groups() -> list[tuple[str, PatternSet, dict[str, list[str]]]]:
    quality, labels = QualityFilter(), LabelClassifier()
    return [("quality", quality._patterns, quality._groups), ("labels", labels._patterns, labels._groups)]


GROUPS = _groups()
# Fragments the rule tables care about, so that generated texts hit rules, gates and boundaries.
FRAGMENTS = sorted(
    {
        s
        for _, _, groups in GROUPS
        for ps in groups.values()
        for p in ps
        for a in _flatten(p)
        for s in expand_literals(a) or ()
    }
    | {
        s
        for _, _, groups in GROUPS
        for ps in groups.values()
        for p in ps
        for a in _flatten(p)
        for s in required_literals(a) or ()
    }
)
texts = st.lists(
    st.one_of(st.sampled_from(FRAGMENTS), st.text(alphabet="ab1 _-.:?$@/()", max_size=4), st.text(max_size=3)),
    max_size=8,
).map("".join)


def _check(text: str) -> None:
    for where, patterns, groups in GROUPS:
        hits = patterns.scan(text)
        maybe = patterns.candidates(hits)
        for name, group in groups.items():
            expected = re.search("|".join(f"(?:{p})" for p in group), text) is not None
            assert patterns.search(name, text, hits) == expected, (where, name, text)
            assert not expected or name in maybe, (where, name, text)


def test_same_answers_as_re_on_the_labelled_set() -> None:
    for text in TEXTS:
        _check(text)


@settings(max_examples=150, deadline=None)
@given(texts)
def test_same_answers_as_re_on_generated_text(text: str) -> None:
    _check(text)


def _reference_count(alternative: str, text: str) -> int:
    """Each literal string an alternative expands to counts on its own (``记忆`` and ``记忆系统``
    both count in ``记忆系统``); other alternatives count their non-overlapping matches."""
    strings = expand_literals(alternative)
    if strings is None:
        return len(re.findall(alternative, text))
    left = r"\b" if alternative.startswith(r"\b") else ""
    right = r"\b" if alternative.endswith(r"\b") else ""
    return sum(len(re.findall(f"{left}{re.escape(s)}{right}", text)) for s in strings)


def test_counts_match_re_on_the_labelled_set() -> None:
    _, patterns, groups = GROUPS[1]
    for text in TEXTS:
        hits = patterns.scan(text)
        for name, group in groups.items():
            expected = sum(_reference_count(a, text) for p in group for a in _flatten(p))
            assert patterns.count(name, text, hits) == expected, (name, text)


@pytest.mark.parametrize(
    ("pattern", "required"),
    [
        (r"由于.{1,40}导致", {"由于"}),  # the rarer of two runs
        (r"[pP]\d+(-\d+)?\s*(已|完成)", {"已", "完成"}),  # a CJK group beats a Latin letter
        (r"^(please|pls|plz)\b", {"please", "pls", "plz"}),  # each alternative whole
        (r"\bexit (code|status) [1-9]\d*\b", {"exit "}),
        (r"^[ewi]\d{4} \d{2}:\d{2}", None),  # only a space: too common to be worth a gate
        (r"(?i:token)\d", None),  # case-insensitive literals are not literals
    ],
)
def test_required_literals(pattern: str, required: set[str] | None) -> None:
    assert required_literals(pattern) == (frozenset(required) if required else None)


def test_required_literals_occur_in_every_match() -> None:
    for _, _, groups in GROUPS:
        for group in groups.values():
            for alt in (a for p in group for a in _flatten(p)):
                required = required_literals(alt)
                if required is None:
                    continue
                for text in TEXTS:
                    for m in re.finditer(alt, text):
                        assert any(s in m.group(0) for s in required), (alt, m.group(0))
