"""policies/regex_syntax.py and the analyses fastre builds on it: the characters a match starts
with, the strings a pattern expands to and the literals every match holds must be true of what
``re`` itself matches — on generated patterns as well as the rule tables' — or be None."""

from __future__ import annotations

import re

import pytest
from hypothesis import assume, given, settings
from hypothesis import strategies as st

from memwarden.policies.fastre import compile_fast, expand_literals, first_chars, required_literals
from memwarden.policies.regex_syntax import parse

ALPHABET = "abcAB -_1"
ATOMS = [
    "a", "b", "c", "A", "-", " ", "1", r"\-", r"\.", r"\x61", r"\u0062", r"\N{LATIN SMALL LETTER C}",
    "[ab]", "[a-c]", "[^a]", "[-a]", "[a-]", r"[\w]", r"[\d-]", ".", r"\b", r"\B", r"\w", r"\s", r"\d", "^", "$",
]  # fmt: skip
QUANTIFIERS = [
    "",
    "",
    "",
    "?",
    "*",
    "+",
    "{2}",
    "{1,2}",
    "{,2}",
    "{2,}",
    "{,}",
    "{}",
    "??",
    "*?",
    "?+",
    "*+",
    "++",
    "{x",
]


def patterns() -> st.SearchStrategy[str]:
    literal = st.sampled_from(["a", "b", "A", "B", "-", " "])
    atom = st.one_of(literal, literal, st.sampled_from(ATOMS))  # literals weigh more: they are what gets analysed
    base = st.builds(lambda a, q: a + q, atom, st.sampled_from(QUANTIFIERS))

    def extend(inner: st.SearchStrategy[str]) -> st.SearchStrategy[str]:
        seq = st.lists(inner, min_size=1, max_size=4).map("".join)
        alts = st.lists(seq, min_size=1, max_size=3).map("|".join)
        wrapper = st.sampled_from(
            [
                "(?:{})", "({})", "(?i:{})", "(?i:{})", "(?-i:{})", "(?={})", "(?!{})", "(?<=a){}", "(?>{})",
                "(?P<n>{})", "(?#c){}", "{}(?#c)", r"(?#\)[)]){}", "(?x:{} #)", "(?x: {} )", "{}",
            ]
        )  # fmt: skip
        grouped = st.builds(lambda w, body: w.replace("{}", body, 1), wrapper, alts)
        return st.builds(lambda g, q: g + q, grouped, st.sampled_from(QUANTIFIERS))

    return st.recursive(base, extend, max_leaves=8)


def compiles(pattern: str) -> bool:
    try:
        re.compile(pattern)
    except (re.error, FutureWarning, DeprecationWarning):
        return False
    return True


texts = st.lists(st.text(alphabet=ALPHABET, max_size=8), min_size=1, max_size=8)


@settings(max_examples=1500, deadline=None)
@given(patterns(), texts)
def test_every_analysis_holds_for_what_re_matches(pattern: str, samples: list[str]) -> None:
    assume(compiles(pattern))
    regex, fast = re.compile(pattern), compile_fast(pattern)
    first, required, strings = first_chars(pattern), required_literals(pattern), expand_literals(pattern)
    for text in samples:
        assert [m.span() for m in fast.finditer(text)] == [m.span() for m in regex.finditer(text)], (pattern, text)
        for m in regex.finditer(text):
            if first is not None:
                assert m.group(), (pattern, text)
                assert m.group()[0] in first, (pattern, text)
            if required is not None:
                assert any(r in m.group() for r in required), (pattern, text, required)
            if strings is not None and r"\b" not in pattern:
                assert m.group() in strings, (pattern, text, strings)
    if strings is not None and r"\b" not in pattern:
        for s in strings:
            assert regex.fullmatch(s), (pattern, s)


@pytest.mark.parametrize(
    ("pattern", "first", "strings"),
    [
        ("abc|abd", {"a"}, ["abc", "abd"]),
        (r"\bcolou?r\b", {"c"}, ["color", "colour"]),
        ("(?i:abc)", None, None),  # A as well as a: nothing sure
        ("(?i)abc", None, None),
        ("x?+x", {"x"}, None),  # possessive: "x" alone never matches
        ("(?>ab|a)c", None, None),  # atomic
        ("[^a]b", None, None),
        (r"\x41\u0042", {"A"}, ["AB"]),
        ("a{2}", {"a"}, None),
        ("(?#a comment)ab", {"a"}, ["ab"]),
        (r"(a)\1", {"a"}, None),
        ("^ab", None, None),
        ("ab{,}c", {"a"}, None),  # {,} is *, not four characters
        ("ab{}c", {"a"}, ["ab{}c"]),  # {} is two characters
        ("ba(?#x)*c", None, None),  # the * repeats the a: left to re
        (r"(?#\)[)]x", None, None),  # re skips the escaped ) in the comment: left to re
        ("(?x:#)abc(\n)", None, None),  # verbose: left to re
        ("(?-i:ab)", {"a"}, ["ab"]),
    ],
)
def test_what_the_analyses_say_of_known_patterns(
    pattern: str, first: set[str] | None, strings: list[str] | None
) -> None:
    assert first_chars(pattern) == first
    got = expand_literals(pattern)
    assert (sorted(got) if got is not None else None) == strings


def test_what_re_refuses_or_the_reader_does_not_know_is_left_alone() -> None:
    assert parse("a(") is None
    assert parse("(?(1)a|b)") is None  # a conditional group
    assert compile_fast("(a)?(?(1)b|c)").pattern == "(a)?(?(1)b|c)"  # compiled as it is
