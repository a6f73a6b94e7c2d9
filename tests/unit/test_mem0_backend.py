"""The Mem0 backend's translation and its failure paths, against a scripted Mem0 (httpx's
MockTransport); the real engine is in ``tests/loopback/test_mem0_backend.py``."""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import httpx
import pytest

from memwarden.backends import mem0_json as mj
from memwarden.backends.base import BackendRejected, BackendUnavailable
from memwarden.backends.hindsight_shim import create_shim_app
from memwarden.backends.mem0 import Mem0Backend
from memwarden.backends.types import Item, RecallQuery, TagFilter

pytestmark = pytest.mark.anyio


def backend(answer: Callable[[httpx.Request], httpx.Response], seen: list[httpx.Request]) -> Mem0Backend:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Mem0Backend(client, base_url="http://mem0.test", api_key="k")


def test_an_id_mem0_cannot_hold_becomes_a_digest_and_the_real_one_stays_in_metadata() -> None:
    assert mj.entity_id("alice") == "alice"
    spaced = mj.entity_id("run book 7")
    assert spaced.startswith("run_book_7~")
    assert " " not in spaced
    assert mj.entity_id("~alice") != "~alice"  # a digest's spelling is never taken as a plain id
    body = mj.add_json("user_id", "my bank", Item(content="x", document_id="run book 7", tags=("a",)), infer=False)
    assert body["user_id"] == mj.entity_id("my bank")
    assert body["run_id"] == spaced
    assert body["metadata"][mj.DOCUMENT] == "run book 7"
    assert body["messages"] == [{"role": "user", "content": "x"}]
    assert body["infer"] is False


def test_a_system_role_is_stored_as_a_user_message_mem0_would_drop_it() -> None:
    item = Item(content="fact", metadata={"mem0_role": "system"})
    assert mj.add_json("user_id", "b", item, infer=False)["messages"][0]["role"] == "user"
    item = Item(content="fact", metadata={"mem0_role": "assistant"})
    assert mj.add_json("user_id", "b", item, infer=False)["messages"][0]["role"] == "assistant"


def _memory(text: str, document: str, tags: list[str], bank: str = "b") -> dict[str, Any]:
    return {"id": f"id-{text}", "memory": text, "user_id": bank, "metadata": {mj.DOCUMENT: document, mj.TAGS: tags}}


async def test_a_redelivered_item_already_held_is_not_written_again() -> None:
    seen: list[httpx.Request] = []
    held = {"results": [_memory("fact", "d1", ["t"])]}
    mem0 = backend(lambda r: httpx.Response(200, json=held), seen)
    receipt = await mem0.retain("b", [Item(content="fact", document_id="d1", tags=("t",))])
    assert receipt.items == 1
    assert [(r.method, r.url.path) for r in seen] == [("GET", "/memories")]
    assert seen[0].url.params["run_id"] == "d1"
    assert seen[0].headers["x-api-key"] == "k"


async def test_a_document_retained_with_other_content_is_replaced() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"results": [_memory("old", "d1", [])]})
        return httpx.Response(200, json={"results": [{"id": "new", "memory": "new", "event": "ADD"}]})

    mem0 = backend(answer, seen)
    await mem0.retain("b", [Item(content="new", document_id="d1")])
    assert [(r.method, r.url.path) for r in seen] == [
        ("GET", "/memories"),
        ("DELETE", "/memories/id-old"),
        ("POST", "/memories"),
    ]
    assert json.loads(seen[2].content)["messages"][0]["content"] == "new"


async def test_items_sharing_a_document_are_all_written_and_none_replaces_another() -> None:
    seen: list[httpx.Request] = []

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"results": []})
        return httpx.Response(200, json={"results": [{"id": "x", "memory": "m", "event": "ADD"}]})

    mem0 = backend(answer, seen)
    receipt = await mem0.retain("b", [Item(content="one", document_id="d"), Item(content="two", document_id="d")])
    assert receipt.items == 2
    assert [(r.method, r.url.path) for r in seen] == [
        ("GET", "/memories"),
        ("POST", "/memories"),
        ("POST", "/memories"),
    ]


async def test_a_bank_hindsight_would_not_create_is_refused_before_mem0_is_called() -> None:
    seen: list[httpx.Request] = []
    with pytest.raises(BackendRejected) as refused:
        await backend(lambda r: httpx.Response(200, json={}), seen).retain("_reserved", [Item(content="x")])
    assert refused.value.status == 400
    assert seen == []


async def test_mem0_failing_is_retryable_and_a_refusal_is_passed_on() -> None:
    for status in (500, 502, 503, 429):
        with pytest.raises(BackendUnavailable):
            await backend(lambda r, s=status: httpx.Response(s, json={"detail": "x"}), []).recall(  # type: ignore[misc]
                "b", RecallQuery(text="q")
            )
    with pytest.raises(BackendRejected) as refused:
        await backend(lambda r: httpx.Response(422, json={"detail": "bad"}), []).recall("b", RecallQuery(text="q"))
    assert refused.value.status == 422
    assert refused.value.body == {"detail": "bad"}

    def unreachable(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("refused", request=request)

    with pytest.raises(BackendUnavailable, match="unreachable"):
        await backend(unreachable, []).recall("b", RecallQuery(text="q"))


async def test_recall_filters_tags_here_and_keeps_to_the_budget() -> None:
    hits = {
        "results": [
            {**_memory("a" * 40, "d1", ["team:infra", "topic:infra"]), "score": 0.9},
            {**_memory("b" * 40, "d2", ["team:web"]), "score": 0.8},
            {**_memory("c" * 40, "d3", ["team:infra"]), "score": 0.7},
        ]
    }
    mem0 = backend(lambda r: httpx.Response(200, json=hits), [])
    found = await mem0.recall("b", RecallQuery(text="q", tags=TagFilter(("team:infra",), "any_strict")))
    assert [m.text[0] for m in found.memories] == ["a", "c"]
    assert found.memories[0].extra["scores"]["final"] == 0.9
    cut = await mem0.recall("b", RecallQuery(text="q", max_tokens=15))  # 60 characters: the first hit only
    assert [m.text[0] for m in cut.memories] == ["a"]


async def test_a_memory_of_another_bank_is_not_found() -> None:
    mem0 = backend(lambda r: httpx.Response(200, json=_memory("x", "d", [], bank="other")), [])
    with pytest.raises(BackendRejected) as missing:
        await mem0.get_memory("b", "id-x")
    assert missing.value.status == 404


async def test_the_shim_answers_what_mem0_lacks_with_a_precise_501_and_checks_its_input() -> None:
    seen: list[httpx.Request] = []
    mem0 = backend(lambda r: httpx.Response(200, json={"results": []}), seen)
    app = create_shim_app(mem0)
    async with httpx.AsyncClient(transport=httpx.ASGITransport(app=app), base_url="http://shim") as shim:
        r = await shim.patch("/v1/default/banks/b/config", json={"updates": {"retain_mission": "x"}})
        assert r.status_code == 501
        assert "per-bank configuration" in r.json()["detail"]
        r = await shim.put("/v1/default/banks/b", json={"name": "B", "retain_mission": "keep all"})
        assert r.status_code == 501
        assert "retain_mission" in r.json()["detail"]
        r = await shim.put("/v1/default/banks/b", json={"name": "B"})
        assert r.status_code == 200
        assert r.json()["name"] == "B"
        r = await shim.post("/v1/default/banks/b/reflect", json={"query": "q"})
        assert r.status_code == 501
        assert "/reflect" in r.json()["detail"]
        r = await shim.get("/v1/default/banks/b/memories/list", params={"limit": "many"})
        assert r.status_code == 422
        r = await shim.get("/v1/default/banks/b/memories/list", params={"tags_match": "some"})
        assert r.status_code == 422
    assert seen == []  # nothing of that reached Mem0


def platform(answer: Callable[[httpx.Request], httpx.Response], seen: list[httpx.Request], **wire: Any) -> Mem0Backend:
    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        return answer(request)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    return Mem0Backend(client, base_url="http://platform.test", api_key="k", dialect="platform", **wire)


async def test_the_platform_add_is_polled_until_its_event_succeeds() -> None:
    seen: list[httpx.Request] = []
    polls = iter(["PENDING", "RUNNING", "SUCCEEDED"])

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v3/memories/":
            return httpx.Response(200, json={"count": 0, "results": []})
        if request.url.path == "/v3/memories/add/":
            return httpx.Response(200, json={"event_id": "e1", "status": "PENDING"})
        status = next(polls)
        results = [{"id": "m1", "data": {"memory": "fact"}, "event": "ADD"}] if status == "SUCCEEDED" else []
        return httpx.Response(200, json={"id": "e1", "status": status, "results": results})

    receipt = await platform(answer, seen).retain("b", [Item(content="fact", document_id="d")])
    assert receipt.items == 1
    assert [r.url.path for r in seen].count("/v1/event/e1/") == 3
    assert seen[0].headers["authorization"] == "Token k"


async def test_a_platform_add_still_pending_is_waited_for_before_the_document_is_delivered_again() -> None:
    seen: list[httpx.Request] = []
    state = {"status": "PENDING", "held": []}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v3/memories/":
            return httpx.Response(200, json={"count": len(state["held"]), "results": state["held"]})
        if request.url.path == "/v3/memories/add/":
            return httpx.Response(200, json={"event_id": "e1", "status": "PENDING"})
        return httpx.Response(200, json={"id": "e1", "status": state["status"], "results": []})

    mem0 = platform(answer, seen, event_timeout=0.05)
    item = Item(content="fact", document_id="d")
    with pytest.raises(BackendUnavailable, match="still PENDING"):
        await mem0.retain("b", [item])
    # It landed meanwhile: the redelivery waits for the event, then finds the document and adds nothing.
    state["status"] = "SUCCEEDED"
    state["held"] = [{**_memory("fact", "d", []), "metadata": {mj.DOCUMENT: "d", mj.TAGS: [], mj.PARTS: 1}}]
    before = len(seen)
    await mem0.retain("b", [item])
    assert [r.url.path for r in seen[before:]] == ["/v1/event/e1/", "/v3/memories/"]


async def test_a_failed_platform_event_is_retried_later_not_refused() -> None:
    def answer(request: httpx.Request) -> httpx.Response:
        if request.url.path == "/v3/memories/":
            return httpx.Response(200, json={"count": 0, "results": []})
        if request.url.path == "/v3/memories/add/":
            return httpx.Response(200, json={"event_id": "e1", "status": "PENDING"})
        return httpx.Response(200, json={"id": "e1", "status": "FAILED", "error": "LLM down"})

    with pytest.raises(BackendUnavailable, match="LLM down"):
        await platform(answer, []).retain("b", [Item(content="fact", document_id="d")])


async def test_mem0_refusing_memwardens_own_key_is_not_the_clients_refusal() -> None:
    mem0 = backend(lambda r: httpx.Response(401, json={"detail": "Invalid or missing API key"}), [])
    with pytest.raises(BackendUnavailable, match="api_key"):
        await mem0.recall("b", RecallQuery(text="q"))
    limited = backend(lambda r: httpx.Response(429, headers={"retry-after": "7"}, json={}), [])
    with pytest.raises(BackendUnavailable) as waited:
        await limited.recall("b", RecallQuery(text="q"))
    assert waited.value.retry_after == 7.0


async def test_a_document_with_an_item_missing_is_not_held_and_its_redelivery_makes_it_whole() -> None:
    seen: list[httpx.Request] = []
    part = {**_memory("one", "d", []), "metadata": {mj.DOCUMENT: "d", mj.TAGS: [], mj.PARTS: 2}}

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"results": [part]})
        return httpx.Response(200, json={"results": [{"id": "x", "memory": "m", "event": "ADD"}]})

    mem0 = backend(answer, seen)
    assert await mem0.held_documents("b", ["d"]) == set()  # one of its two items: not held
    await mem0.retain("b", [Item(content="one", document_id="d"), Item(content="two", document_id="d")])
    assert [(r.method, r.url.path) for r in seen[1:]] == [
        ("GET", "/memories"),
        ("DELETE", "/memories/id-one"),
        ("POST", "/memories"),
        ("POST", "/memories"),
    ]
    assert [json.loads(r.content)["metadata"][mj.PARTS] for r in seen if r.method == "POST"] == [2, 2]


async def test_an_append_keeps_the_document_counts_it_whole_and_is_not_written_twice() -> None:
    seen: list[httpx.Request] = []
    first = {**_memory("one", "d", []), "metadata": {mj.DOCUMENT: "d", mj.TAGS: [], mj.PARTS: 1}}
    held = [first]

    def answer(request: httpx.Request) -> httpx.Response:
        if request.method == "GET":
            return httpx.Response(200, json={"results": held})
        return httpx.Response(200, json={"results": [{"id": "x", "memory": "m", "event": "ADD"}]})

    mem0 = backend(answer, seen)
    appended = Item(content="two", document_id="d", extra={"update_mode": "append"})
    await mem0.retain("b", [appended])
    assert [r.method for r in seen] == ["GET", "POST"]  # the document kept, not replaced
    [posted] = [json.loads(r.content) for r in seen if r.method == "POST"]
    assert posted["metadata"][mj.PARTS] == 2  # the document's memories after the append
    held.append({**_memory("two", "d", []), "metadata": {mj.DOCUMENT: "d", mj.TAGS: [], mj.PARTS: 2}})
    assert await mem0.held_documents("b", ["d"]) == {"d"}  # whole, by its newest count
    seen.clear()
    await mem0.retain("b", [appended])  # a redelivery of the append
    assert [r.method for r in seen] == ["GET"]
