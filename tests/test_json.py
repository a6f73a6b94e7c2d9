"""``memwarden.fronts.asgi``'s JSON: orjson where it can, the standard library for what orjson refuses; a
client reads the same values either way."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memwarden.fronts.asgi import dumps, loads

VALUES: list[Any] = [
    {"results": [{"text": '支付团队 ✓ "quoted"\n\t', "scores": {"final": 0.016393442622950821, "semantic": None}}]},
    [1.5e-05, -0.0, 1e300, 2**63 - 1, -(2**63), "é", True, None, {}],
    {"big": 2**70},  # past 64 bits: orjson refuses
    {1: "a", "b": 2},  # a key that is not a string: orjson refuses
    {"text": "a \ud800 alone"},  # a lone surrogate: orjson refuses, and it is not valid UTF-8
]


@pytest.mark.parametrize("value", VALUES)
def test_dumps_writes_what_the_standard_library_reads_back(value: Any) -> None:
    body = dumps(value)
    body.decode("utf-8")  # always valid UTF-8
    assert json.loads(body) == json.loads(json.dumps(value))


@pytest.mark.parametrize("value", VALUES)
def test_loads_reads_what_the_standard_library_reads(value: Any) -> None:
    body = json.dumps(value).encode()  # ASCII escapes, lone surrogates included
    assert loads(body) == json.loads(body)


def test_invalid_json_is_a_value_error() -> None:
    """What the callers catch (``ValueError``), as with the standard library alone."""
    for body in (b"", b"{", b'{"a": }', b"\xff"):
        with pytest.raises((json.JSONDecodeError, UnicodeDecodeError)):
            loads(body)
