from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from memwarden.policies.normalize import content_hash, content_hash_prepared, normalize
from memwarden.policies.quality import prepare


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("用户偏好：输出简洁准确", " 用户偏好：输出简洁准确 "),
        ("用户偏好：输出简洁准确", "用户偏好：输出简洁准确。"),
        ("用户偏好：输出简洁准确", "用户偏好:输出简洁准确"),  # full-width colon
        ("Alice prefers TEA.", "alice  prefers tea"),
        ("ＡＰＩ ｌｉｍｉｔ ６０", "API limit 60"),  # full-width Latin and digits
        ("「引号」测试！", '"引号"测试'),
    ],
)
def test_same_memory_same_hash(a: str, b: str) -> None:
    assert normalize(a) == normalize(b)
    assert content_hash(a) == content_hash(b)


@pytest.mark.parametrize(("a", "b"), [("用户偏好：输出简洁", "用户偏好：输出详细"), ("port 8080", "port 8081")])
def test_different_memories_differ(a: str, b: str) -> None:
    assert content_hash(a) != content_hash(b)


@given(st.text())
def test_normalization_is_idempotent(text: str) -> None:
    assert normalize(normalize(text)) == normalize(text)


@given(st.text())
def test_hash_from_the_prepared_form_is_the_same_hash(text: str) -> None:
    assert content_hash_prepared(prepare(text)) == content_hash(text)
