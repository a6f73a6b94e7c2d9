"""``memwarden.wire.asgi``'s JSON: orjson where it can, the standard library for what orjson refuses; a
client reads the same values either way."""

from __future__ import annotations

import json
from typing import Any

import pytest

from memwarden.wire.asgi import dumps, loads

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


# -- issue #33: a body's values are counted before it is parsed (wire/json_budget.py) ------------


def test_a_body_past_the_value_budget_is_a_413_counted_in_another_process() -> None:
    import asyncio

    from memwarden.wire import json_budget
    from memwarden.wire.asgi import BodyError, parse_json_async

    many = b"[" + b",".join([b"{}"] * 250_000) + b"]"
    assert json_budget.marks_here(many) > json_budget.MAX_JSON_VALUES
    with pytest.raises(BodyError) as refused:
        asyncio.run(parse_json_async(many))
    assert refused.value.status == 413
    assert "more than 200,000 values" in str(refused.value)
    # Commas in prose are not values: 300,000 of them in one string is one value, parsed.
    prose = json.dumps({"items": [{"content": "a, b, " * 150_000}]}).encode()
    assert json_budget.marks_upper_bound(prose) > json_budget.MAX_JSON_VALUES  # so it is counted apart
    assert asyncio.run(json_budget.marks_apart(prose)) == json_budget.marks_here(prose) < 10
    assert asyncio.run(parse_json_async(prose))["items"][0]["content"].count(",") == 300_000


def test_only_utf8_json_is_read() -> None:
    """UTF-16 and UTF-32 bodies were read by the standard library's fallback: past the value budget,
    which counts UTF-8 bytes (a review of issue #33's change found it)."""
    import asyncio

    from memwarden.wire.asgi import BodyError, parse_json_async, starts_like_json

    body = json.dumps({"items": [{"content": "The cache has 4 shards."}]})
    for encoded in (
        body.encode("utf-16-le"),
        body.encode("utf-16"),
        body.encode("utf-32"),
        b"\xef\xbb\xbf" + body.encode(),
    ):
        with pytest.raises(BodyError):
            asyncio.run(parse_json_async(encoded))

        async def starts(raw: bytes = encoded) -> bool:
            messages = [{"type": "http.request", "body": raw, "more_body": False}]

            async def receive() -> dict[str, Any]:
                return messages.pop(0)

            like, _ = await starts_like_json(receive)  # type: ignore[arg-type]
            return like

        assert asyncio.run(starts())  # judged as JSON when sent without a Content-Type: refused, not passed on
    assert asyncio.run(parse_json_async(body.encode()))["items"][0]["content"] == "The cache has 4 shards."
