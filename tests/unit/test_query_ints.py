"""fronts/query.bounded_int: the one reading of an integer query parameter of memwarden's own routes
(its copies each had their own bugs: "²" passed ``str.isdigit()`` and crashed ``int()``)."""

from __future__ import annotations

import pytest

from memwarden.fronts.query import QueryProblem, bounded_int


@pytest.mark.parametrize("raw", ["²", "1e3", " 5", "5 ", "-1", "+5", "", "0", "1001", "9" * 400, "٣", "0x10"])
def test_anything_but_plain_ascii_digits_within_the_bounds_is_refused_naming_the_parameter(raw: str) -> None:
    with pytest.raises(QueryProblem) as caught:
        bounded_int({"limit": raw}, "limit", 100, 1, 1000)
    assert caught.value.detail() == {
        "detail": [
            {
                "type": "value_error",
                "loc": ["query", "limit"],
                "msg": "limit must be an integer from 1 to 1000",
                "input": raw[:100],
            }
        ]
    }


def test_a_value_within_the_bounds_is_read_and_an_absent_one_is_the_default() -> None:
    assert bounded_int({"limit": "1000"}, "limit", 100, 1, 1000) == 1000
    assert bounded_int({"limit": "007"}, "limit", 100, 1, 1000) == 7
    assert bounded_int({"limit": "00000000100"}, "limit", 100, 1, 1000) == 100  # leading zeros aside
    assert bounded_int({}, "limit", 100, 1, 1000) == 100
    assert bounded_int({}, "tail", None, 1, 1000) is None
    assert bounded_int({"offset": "0"}, "offset", 0, 0, 10**18 - 1) == 0
