"""The Mem0 front's open-source REST dialect through plain HTTP (self-hosted, and in front of Mem0's
real engine), and the contract table of Mem0's error answers in both dialects: each bad request a precise 4xx in the dialect's shape, nothing
written (no ledger row, no audit event), the server serving on."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from testing.keys import make_key
from tests import mem0_rig as rig
from tests.conftest import running_warden


@pytest.fixture(scope="module", params=["local", "mem0"])
def url(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[str]:
    """memwarden self-hosted, or in front of Mem0's real engine (``testing/mem0.py``)."""
    data = tmp_path_factory.mktemp("mem0-rest")
    if request.param == "mem0":
        mem0_url, _ = request.getfixturevalue("mem0_server")
        settings = rig.mem0_settings(mem0_url, data)
    else:
        settings = rig.local_settings(data)
    with running_warden(settings) as served:
        yield served


def test_the_rest_dialect_round_trip(url: str) -> None:
    m = f"{url}/mem0"
    user = f"u-{uuid.uuid4().hex[:6]}"
    added = httpx.post(
        f"{m}/memories",
        json={
            "messages": [
                {"role": "user", "content": "Erin's team uses Grafana for dashboards."},
                {"role": "user", "content": "thanks!"},
            ],
            "user_id": user,
            "metadata": {"source": "slack"},
            "infer": False,
        },
    )
    assert added.status_code == 200, added.text
    [result] = added.json()["results"]
    assert result["event"] == "ADD"
    assert result["memory"] == "Erin's team uses Grafana for dashboards."
    assert added.headers["x-warden-decisions"] == '{"store":1,"reject":1}'
    memory_id = result["id"]
    got = httpx.get(f"{m}/memories/{memory_id}").json()
    assert got["user_id"] == user
    assert got["metadata"] == {"source": "slack"}
    assert got["hash"]
    listed = httpx.get(f"{m}/memories", params={"user_id": user}).json()["results"]
    assert [r["id"] for r in listed] == [memory_id]
    found = httpx.post(
        f"{m}/search", json={"query": "Grafana dashboards", "filters": {"user_id": user, "source": "slack"}}
    )
    assert [r["id"] for r in found.json()["results"]] == [memory_id]
    moved = httpx.post(f"{m}/search", json={"query": "Grafana", "user_id": user})  # deprecated top-level id
    assert [r["id"] for r in moved.json()["results"]] == [memory_id]
    updated = httpx.put(f"{m}/memories/{memory_id}", json={"text": "Erin's team uses Grafana and Loki."})
    assert updated.json() == {"message": "Memory updated successfully!"}
    history = httpx.get(f"{m}/memories/{memory_id}/history").json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert httpx.delete(f"{m}/memories/{memory_id}").json() == {"message": "Memory deleted successfully"}
    assert httpx.get(f"{m}/memories/{memory_id}").status_code == 404
    httpx.post(
        f"{m}/memories",
        json={
            "messages": [{"role": "user", "content": "Frank owns the billing runbook."}],
            "agent_id": "a1",
            "infer": False,
        },
    )
    assert httpx.delete(f"{m}/memories", params={"agent_id": "a1"}).json() == {
        "message": "All relevant memories deleted"
    }
    assert httpx.get(f"{m}/memories", params={"agent_id": "a1"}).json()["results"] == []


def _written(url: str) -> tuple[int, int]:
    """How many ledger rows and audit events the Mem0 bank has."""
    return len(rig.ledger(url)), len(rig.audit(url))


LONG_FILTER: dict[str, Any] = {"user_id": "a"}
for _ in range(10):
    LONG_FILTER = {"AND": [LONG_FILTER]}
WIDE = {"OR": [{"user_id": f"u{i}"} for i in range(65)]}
MESSAGES = [{"role": "user", "content": "Gina's laptop runs Fedora 40."}]
P, R = "/mem0", "/mem0"  # the platform's paths end in /, the server's do not


def absent(n: int) -> str:
    """A memory or event id no test made (the same at every collection: pytest-xdist's workers compare
    the tests they collect)."""
    return f"{n:032x}"


# (method, path, body or raw bytes, status, the words the answer must hold); {id}: a live memory's id
CASES: list[tuple[str, str, Any, int, str]] = [
    # the platform
    ("POST", f"{P}/v3/memories/add/", {"messages": MESSAGES}, 400, "At least one identifier"),
    ("POST", f"{P}/v3/memories/add/", b"{not json", 400, "not valid JSON"),
    ("POST", f"{P}/v3/memories/add/", {"messages": "x", "user_id": 5}, 400, "user_id"),
    (
        "POST",
        f"{P}/v3/memories/add/",
        {"messages": [{"role": "user", "content": [{"type": "image_url"}]}], "user_id": "u"},
        400,
        "only text content",
    ),
    (
        "POST",
        f"{P}/v3/memories/add/",
        {"messages": MESSAGES, "user_id": "u", "metadata": {"api_key": "sk-live-4f9a8b7c6d5e4f3a2b1c"}},
        400,
        "secret",
    ),
    ("POST", f"{P}/v3/memories/add/", {"messages": MESSAGES, "user_id": " spaced "}, 400, "user_id"),
    ("POST", f"{P}/v3/memories/add/", {"messages": [], "user_id": "u"}, 400, "messages"),
    ("POST", f"{P}/v3/memories/", {"filters": {"user_id": {"regex": "a"}}}, 400, "unknown operator"),
    ("POST", f"{P}/v3/memories/", {"filters": {"colour": "red"}}, 400, "unknown filter field"),
    ("POST", f"{P}/v3/memories/", {"filters": LONG_FILTER}, 400, "levels deep"),
    ("POST", f"{P}/v3/memories/", {"filters": WIDE}, 400, "more than 64"),
    ("POST", f"{P}/v3/memories/", {"filters": {"created_at": {"gt": "yesterday"}}}, 400, "ISO 8601"),
    ("POST", f"{P}/v3/memories/", {"user_id": "u", "filters": {}}, 400, "Top-level entity"),
    ("POST", f"{P}/v3/memories/", {}, 400, "filters is required"),
    ("POST", f"{P}/v3/memories/search/", {"query": "x"}, 400, "filters is required"),
    ("POST", f"{P}/v3/memories/search/", {"query": "x", "filters": {"user_id": {"gt": "a"}}}, 400, "not supported"),
    ("POST", f"{P}/v3/memories/search/", {"query": "x", "filters": {}, "top_k": 0}, 400, "top_k"),
    ("GET", f"{P}/v1/memories/{absent(1)}/", None, 404, "Memory not found"),
    ("PUT", f"{P}/v1/memories/{absent(2)}/", {"text": "Hank uses vim."}, 404, "Memory not found"),
    ("PUT", f"{P}/v1/memories/{{id}}/", {}, 400, "At least one of text or metadata"),
    ("DELETE", f"{P}/v1/memories/{absent(3)}/", None, 404, "Memory not found"),
    ("GET", f"{P}/v1/memories/{absent(4)}/history/", None, 404, "Memory not found"),
    ("GET", f"{P}/v1/event/{absent(5)}/", None, 404, "Event not found"),
    ("DELETE", f"{P}/v2/entities/planet/mars/", None, 400, "entity type"),
    ("DELETE", f"{P}/v2/entities/user/nobody-absent/", None, 404, "Entity not found"),
    ("PUT", f"{P}/v1/batch/", {"memories": [{"memory_id": str(i), "text": "x"} for i in range(1001)]}, 400, "memories"),
    ("DELETE", f"{P}/v1/batch/", {"memories": [{"memory_id": absent(99)}]}, 404, "Memory not found"),
    # the open-source server
    ("POST", f"{R}/memories", {"messages": MESSAGES}, 400, "At least one identifier (user_id, agent_id, run_id)"),
    ("POST", f"{R}/memories", {"messages": MESSAGES, "user_id": "u", "infer": "maybe"}, 422, "infer"),
    ("POST", f"{R}/memories", {"messages": MESSAGES, "user_id": "u", "memory_type": 123}, 422, "memory_type"),
    ("POST", f"{R}/search", {"query": "x", "filters": {"user_id": "u"}, "top_k": -1}, 422, "top_k"),
    ("POST", f"{R}/memories", b"[1, 2", 422, "JSON decode error"),  # FastAPI's own words
    (
        "POST",
        f"{R}/memories",
        {"messages": [{"role": "user", "content": {"image": 1}}], "user_id": "u"},
        400,
        "only text content",
    ),
    ("GET", f"{R}/memories/{absent(6)}", None, 404, "Memory not found"),
    ("GET", f"{R}/memories/{absent(7)}/history", None, 404, "Memory not found"),
    ("DELETE", f"{R}/memories", None, 400, "At least one identifier"),
    ("POST", f"{R}/search", {"query": "x", "filters": {"user_id": {"like": "a"}}}, 400, "unknown operator"),
    ("POST", f"{R}/search", {"filters": {}}, 422, "query"),
    ("GET", f"{R}/memories?top_k=5000", None, 422, "top_k"),
    ("GET", f"{R}/memories?top_k=%C2%B2", None, 422, "top_k"),  # "²": a digit to str.isdigit(), not to int()
    ("POST", f"{P}/v3/memories/?page=%C2%B2", {"filters": {"user_id": "u"}}, 400, "page"),
    ("POST", f"{P}/v3/memories/?page_size={'9' * 5000}", {"filters": {"user_id": "u"}}, 400, "page_size"),
]


@pytest.mark.parametrize(("method", "path", "body", "status", "words"), CASES)
def test_mem0_error_contract(url: str, method: str, path: str, body: Any, status: int, words: str) -> None:
    if "{id}" in path:
        added = httpx.post(f"{url}/mem0/memories", json={"messages": MESSAGES, "user_id": "contract", "infer": False})
        path = path.replace("{id}", added.json()["results"][0]["id"])
    before = _written(url)
    content = body if isinstance(body, bytes) else None
    answer = httpx.request(
        method, url + path, json=None if content is not None else body, content=content,
        headers={"content-type": "application/json"}, timeout=30,
    )  # fmt: skip
    assert answer.status_code == status, answer.text
    shaped = answer.json()
    platform = "/v" in path
    if platform:
        assert set(shaped) == {"error"}
        assert words in shaped["error"]
    else:
        assert set(shaped) == {"detail"}
        assert words in str(shaped["detail"])
    rows, events = _written(url)
    # Nothing written, nothing audited — but a secret's refusal, which is audited (where, never what).
    assert (rows, events) == (before[0], before[1] + (words == "secret"))
    if words == "secret":
        assert rig.audit(url)[-1]["action"] == "secret_refused"
    assert httpx.get(f"{url}/mem0/v1/ping/").status_code == 200  # serving on


def test_a_bank_per_key_hides_other_banks_memories(tmp_path: Path) -> None:
    alice = make_key(tmp_path, name="alice", scopes=("--write", "mem0-*"))
    bob = make_key(tmp_path, name="bob", scopes=("--write", "mem0-*"))
    settings = rig.local_settings(tmp_path, bank="mem0-{key}")
    with running_warden(settings) as served:
        m = f"{served}/mem0"

        def auth(token: str) -> dict[str, str]:
            return {"authorization": f"Token {token}"}

        ping = httpx.get(f"{m}/v1/ping/", headers=auth(alice)).json()
        assert ping["project_id"] == f"mem0-{alice[:16]}"
        added = httpx.post(
            f"{m}/v3/memories/add/", headers=auth(alice), json={"messages": MESSAGES, "user_id": "g", "infer": False}
        )
        memory_id = httpx.get(f"{m}/v1/event/{added.json()['event_id']}/", headers=auth(alice)).json()["results"][0][
            "id"
        ]
        assert httpx.get(f"{m}/v1/memories/{memory_id}/", headers=auth(alice)).status_code == 200
        foreign = httpx.get(f"{m}/v1/memories/{memory_id}/", headers=auth(bob))
        assert (foreign.status_code, foreign.json()) == (404, {"error": "Memory not found"})
        assert httpx.delete(f"{m}/v1/memories/{memory_id}/", headers=auth(bob)).status_code == 404
        assert httpx.get(f"{m}/v1/event/{added.json()['event_id']}/", headers=auth(bob)).status_code == 404
        assert httpx.get(f"{m}/v1/ping/").status_code == 401  # no key: refused (keys exist)
        everything = httpx.delete(f"{m}/v1/memories/", headers=auth(alice))  # the whole bank: admin only
        assert everything.status_code == 403
        assert httpx.get(f"{m}/v1/memories/{memory_id}/", headers=auth(alice)).status_code == 200


@pytest.mark.parametrize(
    ("method", "path", "status", "allow", "detail"),
    [
        ("POST", f"{P}/v1/ping/", 405, "GET", 'Method "POST" not allowed.'),  # Django REST framework's words
        ("GET", f"{P}/v3/memories/add/", 405, "POST", 'Method "GET" not allowed.'),
        ("PATCH", f"{P}/v1/memories/{{id}}/", 405, "DELETE, GET, PUT", 'Method "PATCH" not allowed.'),
        ("GET", f"{P}/v1/batch/", 405, "DELETE, PUT", 'Method "GET" not allowed.'),
        ("GET", f"{R}/search", 405, "POST", "Method Not Allowed"),  # FastAPI's
        ("PATCH", f"{R}/memories", 405, "DELETE, GET, POST", "Method Not Allowed"),
        ("GET", f"{P}/v9/nothing/", 404, None, "Not Found"),
        ("GET", f"{R}/nothing", 404, None, "Not Found"),
    ],
)
def test_a_wrong_method_or_path_under_mem0(
    url: str, method: str, path: str, status: int, allow: str | None, detail: str
) -> None:
    """Answered by the front in the dialect's words, never passed to the backend; nothing written."""
    before = _written(url)
    answer = httpx.request(method, url + path.replace("{id}", uuid.uuid4().hex), timeout=30)
    assert (answer.status_code, answer.json()) == (status, {"detail": detail})
    assert answer.headers.get("allow") == allow
    assert _written(url) == before


def test_the_servers_coercions_are_mem0s(url: str) -> None:
    """As Mem0's open-source server reads a body: a null ``infer`` is its default and "yes" is
    true; a null ``top_k`` is its default and 0 finds nothing."""
    m = f"{url}/mem0"
    for n, infer in enumerate((None, "yes")):
        fact = ["Dana is vegetarian and lives in Lisbon.", "Dana trains for the Porto marathon in May."][n]
        r = httpx.post(
            f"{m}/memories",
            json={"messages": [{"role": "user", "content": fact}], "user_id": "coerced", "infer": infer},
            timeout=30,
        )
        assert r.status_code == 200, r.text
        assert [x["memory"] for x in r.json()["results"]] == [fact]
    search = {"query": "Where does Dana live?", "filters": {"user_id": "coerced"}}
    r = httpx.post(f"{m}/search", json={**search, "top_k": None}, timeout=30)
    assert r.status_code == 200, r.text
    assert any("Lisbon" in x["memory"] for x in r.json()["results"])
    r = httpx.post(f"{m}/search", json={**search, "top_k": 0}, timeout=30)
    assert (r.status_code, r.json()) == (200, {"results": []})
