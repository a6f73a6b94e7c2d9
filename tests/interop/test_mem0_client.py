"""The official ``mem0ai`` client, unchanged, against memwarden's Mem0 front — self-hosted, and in
front of the real Hindsight — with every write governed."""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from tests import mem0_rig as rig
from tests.conftest import running_warden

from mem0 import AsyncMemoryClient, MemoryClient  # isort: skip  (after the rig set its environment)
from mem0.exceptions import MemoryNotFoundError, ValidationError

FACT = "Alice prefers dark roast coffee in the morning."
NOISE = "thanks!"


@pytest.fixture(
    scope="module",
    params=["local", "mem0", "mem0-platform", pytest.param("hindsight", marks=pytest.mark.interop)],
)
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, str]]:
    """memwarden's URL and its Mem0 bank: self-hosted, in front of Mem0's real engine (its REST
    server; or its platform API, played by a second memwarden in front of the same engine), or in
    front of the real Hindsight (a fresh bank there for each run)."""
    data = tmp_path_factory.mktemp("mem0")
    if request.param == "local":
        settings = rig.local_settings(data)
    elif request.param == "mem0":
        mem0_url, _ = request.getfixturevalue("mem0_server")
        settings = rig.mem0_settings(mem0_url, data)
    elif request.param == "mem0-platform":
        mem0_url, _ = request.getfixturevalue("mem0_server")
        with rig.platform_chain(mem0_url, data) as (url, _):
            yield url, rig.BANK
        return
    else:
        hindsight = request.getfixturevalue("hindsight_url")
        settings = rig.hindsight_settings(hindsight, data, f"mem0-{uuid.uuid4().hex[:8]}")
    with running_warden(settings) as url:
        yield url, settings.mem0.bank


_OPEN: list[MemoryClient] = []


def client(url: str) -> MemoryClient:
    """The official client (its connection pool closed after the test)."""
    made = MemoryClient(host=f"{url}/mem0", api_key="any-key-on-loopback")
    _OPEN.append(made)
    return made


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    while _OPEN:
        _OPEN.pop().client.close()


def test_ping_names_the_bank_as_the_project(served: tuple[str, str]) -> None:
    url, bank = served
    assert client(url).project_id == bank


def test_add_stores_facts_labelled_and_rejects_noise(served: tuple[str, str]) -> None:
    url, bank = served
    mem = client(url)
    user = f"u-{uuid.uuid4().hex[:6]}"
    answer = mem.add(
        [{"role": "user", "content": FACT}, {"role": "user", "content": NOISE}],
        user_id=user,
        metadata={"source": "chat", "n": 1},
        infer=False,
    )
    assert answer["status"] == "PENDING"
    polled = rig.event(url, answer["event_id"])
    assert polled["status"] == "SUCCEEDED"
    assert [r["data"]["memory"] for r in polled["results"]] == [FACT]
    verdicts = [d["verdict"] for d in polled["warden"]["decisions"]]
    assert verdicts == ["store", "reject"]
    memory_id = polled["results"][0]["id"]
    got = mem.get(memory_id)
    assert got["memory"] == FACT
    assert got["user_id"] == user
    assert got["metadata"] == {"source": "chat", "n": 1}
    held = rig.ledger(url, bank, status="active", q="dark roast")
    assert [m["content"] for m in held] == [FACT]
    assert held[0]["topic"]
    assert held[0]["stage"]
    assert f"user:{user}" in held[0]["tags"]
    assert not rig.ledger(url, bank, q=NOISE)  # the noise was not stored


def test_get_all_filters_and_pages(served: tuple[str, str]) -> None:
    url, _ = served
    mem = client(url)
    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    facts = [
        "The billing service runs on Postgres 16.",
        "The staging cluster has 3 nodes with 16 GB RAM each.",
        "Deploys go out every Tuesday at 10:00 UTC.",
    ]
    for fact in facts:
        mem.add(fact, user_id=alice, agent_id="ops", infer=False)
    mem.add("Bob is allergic to peanuts.", user_id=bob, infer=False)
    first = mem.get_all(filters={"user_id": alice}, page=1, page_size=2)
    assert first["count"] == 3
    assert len(first["results"]) == 2
    assert first["next"]
    assert first["previous"] is None
    second = mem.get_all(filters={"user_id": alice}, page=2, page_size=2)
    assert len(second["results"]) == 1
    assert second["next"] is None
    seen = {r["memory"] for r in first["results"] + second["results"]}
    assert seen == set(facts)
    both = mem.get_all(filters={"OR": [{"user_id": alice}, {"user_id": bob}]})
    assert both["count"] == 4
    not_bob = mem.get_all(filters={"AND": [{"user_id": {"in": [alice, bob]}}, {"NOT": {"user_id": bob}}]})
    assert {r["user_id"] for r in not_bob["results"]} == {alice}
    assert mem.get_all(filters={"AND": [{"user_id": alice}, {"agent_id": "nobody"}]})["count"] == 0
    with pytest.raises(ValidationError):
        mem.get_all(filters={"user_id": {"regex": "a.*"}})  # an unknown operator: 400, never widened


def test_search_with_filters(served: tuple[str, str]) -> None:
    url, _ = served
    mem = client(url)
    alice, bob = f"alice-{uuid.uuid4().hex[:6]}", f"bob-{uuid.uuid4().hex[:6]}"
    mem.add("Alice drinks green tea every afternoon.", user_id=alice, infer=False, metadata={"kind": "drink"})
    mem.add("Bob drinks green tea with honey.", user_id=bob, infer=False, metadata={"kind": "drink"})
    found = mem.search("green tea", filters={"user_id": alice}, top_k=5, threshold=0.0)["results"]
    assert [r["user_id"] for r in found] == [alice]
    assert 0.0 <= found[0]["score"] <= 1.0
    both = mem.search(
        "green tea", filters={"user_id": {"in": [alice, bob]}, "metadata": {"kind": "drink"}}, threshold=0
    )
    assert {r["user_id"] for r in both["results"]} == {alice, bob}
    none = mem.search("green tea", filters={"user_id": alice, "metadata": {"kind": "food"}}, threshold=0)
    assert none["results"] == []
    with pytest.raises(ValueError, match="Top-level entity"):  # the client itself refuses top-level ids
        mem.search("tea", user_id=alice)
    r = httpx.post(f"{url}/mem0/v3/memories/search/", json={"query": "tea", "filters": {}, "user_id": alice})
    assert r.status_code == 400
    assert "error" in r.json()


def test_update_history_delete(served: tuple[str, str]) -> None:
    url, bank = served
    mem = client(url)
    user = f"u-{uuid.uuid4().hex[:6]}"
    added = mem.add("The office wifi network is called Bluebird.", user_id=user, infer=False)
    memory_id = rig.event(url, added["event_id"])["results"][0]["id"]
    updated = mem.update(memory_id, text="The office wifi network is called Greenfinch.")
    assert updated["id"] == memory_id
    assert updated["memory"].endswith("Greenfinch.")
    assert mem.get(memory_id)["memory"].endswith("Greenfinch.")
    with pytest.raises(ValidationError):  # noise as the new text: refused, the old version kept
        mem.update(memory_id, text="ok thanks")
    assert mem.get(memory_id)["memory"].endswith("Greenfinch.")
    history = mem.history(memory_id)
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    assert history[1]["old_memory"].endswith("Bluebird.")
    assert history[1]["new_memory"].endswith("Greenfinch.")
    statuses = {m["content"]: m["status"] for m in rig.ledger(url, bank, q="office wifi")}
    assert statuses == {
        "The office wifi network is called Bluebird.": "superseded",
        "The office wifi network is called Greenfinch.": "active",
    }
    mem.delete(memory_id)
    with pytest.raises(MemoryNotFoundError):
        mem.get(memory_id)
    assert [h["event"] for h in mem.history(memory_id)] == ["ADD", "UPDATE", "DELETE"]
    assert "archived" in {m["status"] for m in rig.ledger(url, bank, q="Greenfinch")}  # restorable


def test_delete_all_erases_a_user_and_leaves_only_hashes(served: tuple[str, str]) -> None:
    url, bank = served
    mem = client(url)
    gone, kept = f"gone-{uuid.uuid4().hex[:6]}", f"kept-{uuid.uuid4().hex[:6]}"
    secret_text = f"Zanzibar-{uuid.uuid4().hex[:6]} is the codename of the Q3 launch."
    added = mem.add(secret_text, user_id=gone, infer=False)
    memory_id = rig.event(url, added["event_id"])["results"][0]["id"]
    mem.update(memory_id, text=secret_text.replace("Q3", "Q4"))
    mem.add("The Q3 launch review is on Friday.", user_id=kept, infer=False)
    assert {e["name"] for e in mem.users()["results"]} >= {gone, kept}
    mem.delete_all(user_id=gone)
    assert mem.get_all(filters={"user_id": gone})["count"] == 0
    assert not list(mem.search("Zanzibar codename", filters={"user_id": gone}, threshold=0)["results"])
    assert gone not in {e["name"] for e in mem.users()["results"]}
    assert mem.get_all(filters={"user_id": kept})["count"] == 1
    marker = secret_text.split(" ")[0]
    assert marker not in json.dumps(rig.ledger(url, bank))  # no version keeps its text
    trail = json.dumps(rig.audit(url, bank))
    assert marker not in trail  # the audit names hashes, not the text
    erased = [e for e in rig.audit(url, bank) if e["action"] == "erase"]
    assert len(erased) == 2
    assert all(e["after"]["content_hash"] for e in erased)
    with pytest.raises(MemoryNotFoundError):
        mem.history(memory_id)


def test_entities_and_their_delete(served: tuple[str, str]) -> None:
    url, _ = served
    mem = client(url)
    agent = f"agent-{uuid.uuid4().hex[:6]}"
    mem.add("The nightly backup runs at 02:00 UTC.", agent_id=agent, infer=False)
    mem.add("Backups are kept for 30 days.", agent_id=agent, infer=False)
    listed = {(e["type"], e["name"]): e["total_memories"] for e in mem.users()["results"]}
    assert listed[("agent", agent)] == 2
    assert mem.delete_users(agent_id=agent) == {"message": "Entity deleted successfully."}
    assert ("agent", agent) not in {(e["type"], e["name"]) for e in mem.users()["results"]}
    with pytest.raises(MemoryNotFoundError):
        mem.delete_users(agent_id=agent)  # nothing left of it: Mem0's 404


def test_batch_update_and_delete(served: tuple[str, str]) -> None:
    url, _ = served
    mem = client(url)
    user = f"u-{uuid.uuid4().hex[:6]}"
    ids = []
    for text in ("The VPN gateway is vpn1.example.net.", "The build server is build3.example.net."):
        ids.append(rig.event(url, mem.add(text, user_id=user, infer=False)["event_id"])["results"][0]["id"])
    answer = mem.batch_update([{"memory_id": ids[0], "text": "The VPN gateway is vpn2.example.net."}])
    assert answer["results"] == [{"memory_id": ids[0], "status": "updated"}]
    assert mem.get(ids[0])["memory"] == "The VPN gateway is vpn2.example.net."
    deleted = mem.batch_delete([{"memory_id": i} for i in ids])
    assert [r["status"] for r in deleted["results"]] == ["deleted", "deleted"], deleted
    assert mem.get_all(filters={"user_id": user})["count"] == 0
    with pytest.raises(MemoryNotFoundError):  # an unknown id: nothing done
        mem.batch_delete([{"memory_id": uuid.uuid4().hex}])


@pytest.mark.anyio
async def test_the_async_client(served: tuple[str, str]) -> None:
    url, _ = served
    mem = AsyncMemoryClient(host=f"{url}/mem0", api_key="any-key-on-loopback")
    try:
        user = f"u-{uuid.uuid4().hex[:6]}"
        added = await mem.add("Carol drives a red Tesla to the office.", user_id=user, infer=False)
        assert rig.event(url, added["event_id"])["status"] == "SUCCEEDED"
        listed = await mem.get_all(filters={"user_id": user})
        assert [r["memory"] for r in listed["results"]] == ["Carol drives a red Tesla to the office."]
        found = await mem.search("red Tesla", filters={"user_id": user}, threshold=0)
        assert found["results"][0]["user_id"] == user
    finally:
        await mem.async_client.aclose()


def test_infer_without_an_llm_stores_a_memory_a_fact_message_as_mem0_does(tmp_path: Path) -> None:
    """#34: without ``[llm]`` Mem0 stores a memory a message; memwarden judges each (the message
    before it known), so the greeting, the thanks and the question go, each fact is a memory of its
    own, and an update of one leaves the other as it was (one memory for the whole chat made it
    replace both)."""
    with running_warden(rig.local_settings(tmp_path)) as url:
        mem = client(url)
        messages = [
            {"role": "user", "content": "Hi! Can you help me with something?"},
            {"role": "user", "content": "We moved the billing database to Postgres 16 last week."},
            {"role": "assistant", "content": "Got it, thanks!"},
            {"role": "user", "content": "The staging cluster runs five nodes in Frankfurt."},
            {"role": "user", "content": "ok thanks"},
            {"role": "user", "content": "Which of the two is cheaper to run?"},
        ]
        polled = rig.event(url, mem.add(messages, user_id="dana")["event_id"])
        stored = {r["data"]["memory"]: r["id"] for r in polled["results"]}
        assert set(stored) == {
            "We moved the billing database to Postgres 16 last week.",
            "The staging cluster runs five nodes in Frankfurt.",
        }
        verdicts = [d["verdict"] for d in polled["warden"]["decisions"]]
        assert verdicts.count("store") == 2
        assert len(verdicts) == 6  # every message judged on its own
        mem.update(
            stored["The staging cluster runs five nodes in Frankfurt."],
            text="The staging cluster runs six nodes in Frankfurt.",
        )
        now = {m["memory"] for m in mem.get_all(filters={"user_id": "dana"})["results"]}
        assert now == {
            "We moved the billing database to Postgres 16 last week.",
            "The staging cluster runs six nodes in Frankfurt.",
        }


def test_infer_with_an_llm_stores_the_facts_it_finds_judged(tmp_path: Path) -> None:
    """With ``[llm]``: the model is asked for the conversation's facts, and each fact it proposes is
    judged like any other item — the thanks it returns as a "fact" is rejected as noise. A model
    that fails or stalls writes nothing (502, 504)."""
    from tests.fake_openai import serve_fake_llm

    messages = [
        {"role": "user", "content": "The staging cluster runs five nodes in Frankfurt."},
        {"role": "assistant", "content": "thanks!"},
    ]
    with serve_fake_llm() as (llm_url, fake):
        settings = rig.local_settings(tmp_path)
        llm = settings.llm.model_copy(update={"base_url": llm_url, "model": "fake-llm", "timeout": 2.0})
        with running_warden(settings.model_copy(update={"llm": llm})) as url:
            mem = client(url)
            polled = rig.event(url, mem.add(messages, user_id="erin")["event_id"])
            assert len(fake.seen) == 1  # one call for the whole conversation
            asked = json.dumps(fake.seen[0]["body"]["messages"])
            assert "staging cluster runs five nodes" in asked
            stored = [r["data"]["memory"] for r in polled["results"]]
            assert stored == ["The staging cluster runs five nodes in Frankfurt."]
            decisions = {d["verdict"] for d in polled["warden"]["decisions"]}
            assert decisions == {"store", "reject"}  # "thanks!" proposed as a fact, rejected
            before = rig.ledger(url), rig.audit(url)
            for fail, stall, status in ((500, 0.0, 502), (0, 5.0, 504)):
                fake.fail, fake.stall = fail, stall
                r = httpx.post(
                    f"{url}/mem0/v3/memories/add/",
                    json={"messages": [{"role": "user", "content": "Bob owns the billing migration."}], "user_id": "x"},
                    headers={"Authorization": "Token k"},
                    timeout=30,
                )
                assert r.status_code == status, r.text
                assert "nothing was written" in r.json()["error"]
                assert (rig.ledger(url), rig.audit(url)) == before


def test_a_memory_queued_for_a_backend_that_is_down_is_not_erased_behind_its_delivery(tmp_path: Path) -> None:
    """With the backend down, an add is accepted and queued (its event RUNNING); erasing its user then
    is refused (409) with nothing changed — the queued delivery would write it back afterwards."""
    settings = rig.hindsight_settings("http://127.0.0.1:9", tmp_path, "mem0")  # nothing listens there
    with running_warden(settings) as url:
        mem = client(url)
        answer = mem.add([{"role": "user", "content": FACT}], user_id="queued", infer=False)
        assert rig.event(url, answer["event_id"])["status"] == "RUNNING"
        before = rig.ledger(url), rig.audit(url)
        assert [m["status"] for m in before[0]] == ["pending"]
        r = httpx.delete(f"{url}/mem0/v1/memories/", params={"user_id": "queued"}, timeout=30)
        assert r.status_code == 409, r.text
        assert "waiting for delivery" in r.json()["error"]
        assert (rig.ledger(url), rig.audit(url)) == before


def test_a_short_reply_is_read_after_the_message_before_it(tmp_path: Path) -> None:
    """Judged message by message, a reply is read with its question: "Lisbon" after "Where do you
    live?" is a fact, "lol" after it is not."""
    with running_warden(rig.local_settings(tmp_path)) as url:
        mem = client(url)
        messages = [
            {"role": "assistant", "content": "Where do you live these days?"},
            {"role": "user", "content": "Lisbon"},
            {"role": "assistant", "content": "Nice! How is the weather?"},
            {"role": "user", "content": "lol"},
        ]
        polled = rig.event(url, mem.add(messages, user_id="rui")["event_id"])
        assert [r["data"]["memory"] for r in polled["results"]] == ["Lisbon"]
