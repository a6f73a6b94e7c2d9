"""A secret in a field outside the memory text is refused the same way by every front
(``governance/refusals.py``): the dialect's invalid-body answer naming the field, one
``secret_refused`` audit event saying where and what kind — never the value —, and nothing else
written or sent on."""

from __future__ import annotations

import json
import secrets
import string
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from tests import mem0_rig as rig
from tests.conftest import running_warden

BANK = "refusals"


def aws_key() -> str:
    return "AKIA" + "".join(secrets.choice(string.ascii_uppercase + "234567") for _ in range(16))


@pytest.fixture(scope="module")
def url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_warden(rig.local_settings(tmp_path_factory.mktemp("refusals"))) as served:
        yield served


def audit(url: str, bank: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": 1000})
    assert r.status_code == 200, r.text
    events: list[dict[str, Any]] = r.json()["events"]
    return events


def ledger(url: str, bank: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{url}/warden/v1/banks/{bank}/memories")
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


# (what, method, path, body with {key}, the field the refusal names, the status)
CASES = [
    (
        "hindsight_retain",
        "/v1/default/banks/{bank}/memories",
        {"items": [{"content": "Dana moved to Lyon.", "metadata": {"note": "{key}"}}]},
        ["body", "items", 0, "metadata", "note"],
        422,
    ),
    (
        "hindsight_recall",
        "/v1/default/banks/{bank}/memories/recall",
        {"query": "what is {key}"},
        ["body", "query"],
        422,
    ),
    (
        "mem0_platform_add",
        "/mem0/v3/memories/add/",
        {"messages": [{"role": "user", "content": "Dana moved to Lyon."}], "user_id": "u1", "metadata": {"n": "{key}"}},
        None,
        400,
    ),
    (
        "mem0_rest_add",
        "/mem0/memories",
        {"messages": [{"role": "user", "content": "Dana moved to Lyon."}], "user_id": "u1", "metadata": {"n": "{key}"}},
        None,
        422,
    ),
    ("mem0_rest_search", "/mem0/search", {"query": "what is {key}", "user_id": "u1"}, None, 422),
]


@pytest.mark.parametrize(("what", "path", "body", "loc", "status"), CASES, ids=[c[0] for c in CASES])
def test_a_secret_in_a_field_is_refused_audited_without_its_value_and_nothing_is_written(
    url: str, what: str, path: str, body: dict[str, Any], loc: list[Any] | None, status: int
) -> None:
    key = aws_key()
    bank = BANK if path.startswith("/v1/") else "mem0"
    before_audit, before_rows = len(audit(url, bank)), len(ledger(url, bank))
    sent = json.loads(json.dumps(body).replace("{key}", key))
    r = httpx.post(url + path.format(bank=bank), json=sent)
    assert r.status_code == status, r.text
    assert key not in r.text
    if loc is not None:  # Hindsight's validation shape, the field named, the value redacted
        (detail,) = r.json()["detail"]
        assert (detail["type"], detail["loc"], detail["input"]) == ("secret", loc, "[REDACTED]")
    events = audit(url, bank)
    assert len(events) == before_audit + 1, events[before_audit:]  # the refusal, and nothing else
    refusal = events[-1]
    assert refusal["action"] == "secret_refused"
    assert refusal["after"]["kinds"]
    assert refusal["after"]["count"] == 1
    assert refusal["after"]["fields"][0].split(".")[0] in ("items[0]", "query", "metadata")
    assert key not in json.dumps(refusal)
    assert len(ledger(url, bank)) == before_rows


def test_the_audit_keeps_at_most_twenty_fields_and_cuts_long_names(url: str) -> None:
    long = "n" * 500
    metadata = {f"{long}{i}": aws_key() for i in range(30)}
    r = httpx.post(f"{url}/v1/default/banks/{BANK}/memories", json={"items": [{"content": "ok", "metadata": metadata}]})
    assert r.status_code == 422
    assert len(r.json()["detail"]) == 30  # the client is told every field
    refusal = audit(url, BANK)[-1]
    assert refusal["after"]["count"] == 30
    assert len(refusal["after"]["fields"]) == 20
    assert all(len(f) < 100 for f in refusal["after"]["fields"])


def test_a_random_token_used_as_a_key_is_masked_in_the_audit_and_a_dry_run_audits_nothing(url: str) -> None:
    token = "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(40))
    body = {"items": [{"content": "Dana moved to Lyon.", "metadata": {token: aws_key()}}]}
    before = len(audit(url, BANK))
    dry = httpx.post(f"{url}/v1/default/banks/{BANK}/memories?dry_run=true", json=body)
    assert dry.status_code == 422
    assert len(audit(url, BANK)) == before  # a dry run writes nothing, its refusal neither
    r = httpx.post(f"{url}/v1/default/banks/{BANK}/memories", json=body)
    assert r.status_code == 422
    refusal = audit(url, BANK)[-1]
    assert refusal["after"]["fields"] == ["items[0].metadata.[REDACTED]"]
    assert token not in json.dumps(refusal)
