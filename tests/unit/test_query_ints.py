"""fronts/query.bounded_int: the one reading of an integer query parameter of memwarden's own routes
(its copies each had their own bugs: "²" passed ``str.isdigit()`` and crashed ``int()``)."""

from __future__ import annotations

import json

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


# -- declared parameters: read_query and openapi_parameters read one declaration -----------------


def test_a_declared_query_is_read_with_its_defaults_choices_and_lists() -> None:
    from starlette.datastructures import QueryParams

    from memwarden.fronts.admin.queries import LedgerListing, OutboxQuery, OverviewQuery
    from memwarden.fronts.query import read_query

    assert read_query(QueryParams(""), OutboxQuery) == OutboxQuery(state=None, bank=None, limit=100, offset=0)
    got = read_query(QueryParams("state=dead&bank=&limit=007"), OutboxQuery)
    assert (got.state, got.bank, got.limit) == ("dead", None, 7)  # a blank bank is no filter
    listing = read_query(QueryParams("status=active,review&status=active&tag=a&tag=&tag=b&q=x"), LedgerListing)
    assert (listing.status, listing.tag, listing.q) == (("active", "review"), ("a", "b"), "x")
    assert read_query(QueryParams("status="), OverviewQuery).status == ()  # the route then counts active
    assert read_query(QueryParams(""), OverviewQuery).status == ("active",)


def test_a_blank_optional_count_is_none_given_and_a_blank_entity_is_refused() -> None:
    from starlette.datastructures import QueryParams

    from memwarden.fronts.admin.queries import AuditQuery
    from memwarden.fronts.mem0.queries import EntityQuery
    from memwarden.fronts.query import read_query

    audit = read_query(QueryParams("tail=&bank=&since="), AuditQuery)
    assert (audit.tail, audit.bank, audit.since, audit.limit) == (None, None, None, 100)
    with pytest.raises(QueryProblem):  # a count with a default is not optional: blank is no count
        read_query(QueryParams("limit="), AuditQuery)
    assert read_query(QueryParams(""), EntityQuery).names_any() is False
    # A blank entity id names no entity — read as "none named" it would widen a delete to the bank.
    for blank in ("user_id=", "agent_id=&user_id=alice"):
        with pytest.raises(QueryProblem) as caught:
            read_query(QueryParams(blank), EntityQuery)
        assert "at least 1 character" in str(caught.value)
    assert read_query(QueryParams("user_id=alice"), EntityQuery).named() == {"user_id": "alice"}


@pytest.mark.parametrize(
    ("query", "name", "msg"),
    [
        ("state=lost", "state", "state must be one of sending, queued, delivered, dead, given_up"),
        ("limit=0", "limit", "limit must be an integer from 1 to 1000"),
        ("offset=-1", "offset", "offset must be an integer from 0 to 999999999999999999"),
        ("status=active,nope", "status", "status must be one of pending, active, review, rejected, archived,"),
    ],
)
def test_a_value_a_declaration_does_not_take_is_refused_naming_the_parameter(query: str, name: str, msg: str) -> None:
    from starlette.datastructures import QueryParams

    from memwarden.fronts.admin.queries import LedgerListing, OutboxQuery
    from memwarden.fronts.query import read_query

    model = LedgerListing if name == "status" else OutboxQuery
    with pytest.raises(QueryProblem) as caught:
        read_query(QueryParams(query), model)
    [error] = caught.value.detail()["detail"]
    assert error["loc"] == ["query", name]
    assert error["msg"].startswith(msg)


def test_the_openapi_document_lists_what_the_handler_reads() -> None:
    from memwarden.fronts.admin.queries import LedgerListing, OutboxQuery
    from memwarden.fronts.openapi import document
    from memwarden.fronts.query import openapi_parameters

    listed = {p["name"]: p for p in openapi_parameters(LedgerListing)}
    assert list(listed) == list(LedgerListing.model_fields)
    assert listed["limit"]["schema"] == {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}
    assert listed["status"]["schema"]["items"]["enum"][:2] == ["pending", "active"]
    assert listed["tag"]["schema"] == {"type": "array", "items": {"type": "string"}, "default": []}
    served = json.loads(document())["paths"]["/warden/v1/outbox"]["get"]["parameters"]
    assert served == openapi_parameters(OutboxQuery)


@pytest.mark.parametrize(("raw", "read"), [("true", True), ("YES", True), ("1", True), ("false", False), ("0", False)])
def test_a_boolean_parameter_takes_the_usual_spellings(raw: str, read: bool) -> None:
    from starlette.datastructures import QueryParams

    from memwarden.fronts.admin.queries import RollbackQuery
    from memwarden.fronts.query import read_query

    assert read_query(QueryParams(f"preview={raw}"), RollbackQuery).preview is read
    assert read_query(QueryParams(""), RollbackQuery).preview is False


@pytest.mark.parametrize("raw", ["ture", "", "2", "on"])
def test_anything_else_in_a_boolean_is_refused_not_read_as_false(raw: str) -> None:
    from starlette.datastructures import QueryParams

    from memwarden.fronts.admin.queries import RollbackQuery
    from memwarden.fronts.query import read_query

    with pytest.raises(QueryProblem, match="preview must be true or false"):
        read_query(QueryParams(f"preview={raw}"), RollbackQuery)
