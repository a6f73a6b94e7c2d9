"""memwarden in front of Mem0: the official ``hindsight-client`` and memwarden's own API writing
through memwarden into Mem0's real ``Memory`` engine (``testing/mem0.py``: local qdrant, SQLite
history, the offline OpenAI stand-in), checked in the engine itself. The official ``mem0ai``
client's suite runs against the same engine in ``test_mem0_client.py`` (its ``mem0`` case)."""

from __future__ import annotations

import contextlib
import json
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from tests import mem0_rig
from tests.conftest import running_warden

FACT = "The deploy key for staging rotates every 90 days, decided by Priya."
OTHER = "Our Postgres primary runs on host db-3 in the Frankfurt region."
NOISE = "thanks!"
FAST_RETRIES = {"retry_initial": 0.05, "retry_max": 0.2}


def held(rig: Any, bank: str) -> list[dict[str, Any]]:
    """What Mem0's engine holds for the bank, read from the engine itself."""
    found: list[dict[str, Any]] = rig.memory.get_all(filters={"user_id": bank}, top_k=1000)["results"]
    return found


@dataclass
class Served:
    """memwarden in front of the engine: its URL, the rig, and how its banks sit in the engine."""

    url: str
    rig: Any
    platform_bank: str | None = None  # through the platform API: the second memwarden's one bank

    def stored(self, bank: str) -> list[tuple[str, dict[str, Any]]]:
        """The texts the engine holds for memwarden's ``bank``, each with the metadata memwarden
        wrote (through the platform, inside the second memwarden's own)."""
        if self.platform_bank is None:
            return [(m["memory"], m["metadata"]) for m in held(self.rig, bank)]
        out = []
        for m in held(self.rig, self.platform_bank):
            if f"user:{bank}" in m["metadata"]["mw_tags"]:
                out.append((m["memory"], json.loads(m["metadata"]["mw_metadata"]["mem0_metadata"])))
        return out

    def texts(self, bank: str) -> list[str]:
        return [text for text, _ in self.stored(bank)]


@pytest.fixture(params=["rest", "platform"])
def warden(mem0_server: tuple[str, Any], tmp_path: Path, request: pytest.FixtureRequest) -> Iterator[Served]:
    """memwarden in front of Mem0's REST server, or of its platform API (played by a second
    memwarden's Mem0 front in front of the same engine: the hosted platform is not reachable here)."""
    url, rig = mem0_server
    rig.down = False
    if request.param == "platform":
        with mem0_rig.platform_chain(url, tmp_path) as (front, bank):
            yield Served(front, rig, bank)
        return
    with running_warden(mem0_rig.mem0_settings(url, tmp_path, outbox=FAST_RETRIES)) as warden:
        yield Served(warden, rig)


@pytest.fixture
def rest(mem0_server: tuple[str, Any], tmp_path: Path) -> Iterator[tuple[str, Any]]:
    url, rig = mem0_server
    rig.down = False
    with running_warden(mem0_rig.mem0_settings(url, tmp_path, outbox=FAST_RETRIES)) as warden:
        yield warden, rig


def bank_id() -> str:
    return f"b-{uuid.uuid4().hex[:10]}"


@pytest.mark.anyio
async def test_hindsight_client_retains_into_mem0_governed(warden: Served) -> None:
    url = warden.url
    bank = bank_id()
    client = Hindsight(base_url=url, timeout=60)
    try:
        await client.acreate_bank(bank, name="ops")
        answer = await client.aretain_batch(bank, [{"content": FACT, "tags": ["team:infra"]}, {"content": NOISE}])
        assert answer.success
        stored = warden.stored(bank)
        assert [text for text, _ in stored] == [FACT]  # the noise never reached Mem0
        tags = stored[0][1]["mw_tags"]
        assert "team:infra" in tags
        assert any(t.startswith("topic:") for t in tags)
        assert any(t.startswith("stage:") for t in tags)
        assert stored[0][1]["mw_document"].startswith("mw-")

        recalled = await client.arecall(bank, "how often does the staging deploy key rotate?")
        assert [r.text for r in recalled.results] == [FACT]
        # memwarden's labels are invisible to a filter that does not name them; the client's tag works
        mine = await client.arecall(bank, "deploy key", tags=["team:infra"], tags_match="all_strict")
        assert [r.text for r in mine.results] == [FACT]
        assert (await client.arecall(bank, "deploy key", tags=["team:web"], tags_match="any_strict")).results == []

        listed = await client.alist_memories(bank)
        assert [m.text for m in listed.items] == [FACT]
    finally:
        await client.aclose()


@pytest.mark.parametrize("document", ["runbook-7", "run book 7 (ops)"])  # the second no Mem0 entity id
def test_a_document_retained_again_replaces_it_and_a_redelivery_stores_nothing_twice(
    warden: Served, document: str
) -> None:
    url = warden.url
    bank = bank_id()
    body = {"items": [{"content": FACT, "document_id": document}]}
    for _ in range(2):  # the same delivery twice (its first answer lost): one memory
        assert httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=body, timeout=60).status_code == 200
    assert warden.texts(bank) == [FACT]
    body = {"items": [{"content": OTHER, "document_id": document}]}
    assert httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=body, timeout=60).status_code == 200
    assert warden.texts(bank) == [OTHER]  # the document replaced, as Hindsight does
    assert [d["id"] for d in httpx.get(f"{url}/v1/default/banks/{bank}/documents", timeout=30).json()["items"]] == [
        document
    ]


def test_a_batch_sharing_one_document_keeps_every_item_and_a_redelivery_changes_nothing(warden: Served) -> None:
    url = warden.url
    bank = bank_id()
    body = {"items": [{"content": FACT, "document_id": "handbook"}, {"content": OTHER, "document_id": "handbook"}]}
    r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=body, timeout=60)
    assert r.status_code == 200, r.text
    first = warden.stored(bank)
    assert sorted(text for text, _ in first) == sorted([FACT, OTHER])
    assert {meta["mw_document"] for _, meta in first} == {"handbook"}
    r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=body, timeout=60)
    assert r.status_code == 200, r.text
    assert sorted(warden.texts(bank)) == sorted([FACT, OTHER])  # the same document again: not doubled


def test_mem0_down_the_write_is_queued_and_delivered_once_when_it_is_back(rest: tuple[str, Any]) -> None:
    url, rig = rest
    bank = bank_id()
    rig.down = True
    try:
        r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": [{"content": FACT}]}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["async"] is True  # accepted, queued in the outbox
        assert held(rig, bank) == []
    finally:
        rig.down = False
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not held(rig, bank):
        time.sleep(0.1)
    time.sleep(0.5)  # a second delivery would land by now
    assert [m["memory"] for m in held(rig, bank)] == [FACT]
    ledger = mem0_rig.ledger(url, bank)
    assert [m["status"] for m in ledger] == ["active"]


def test_what_mem0_cannot_do_is_a_precise_error_and_changes_nothing(rest: tuple[str, Any]) -> None:
    url, rig = rest
    bank = bank_id()
    httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": [{"content": FACT}]}, timeout=60)
    before = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": "1000"}, timeout=30).json()["events"]
    for method, path, body in (
        ("PATCH", "config", {"updates": {"retain_mission": "keep everything"}}),
        ("GET", "config", None),
        ("POST", "reflect", {"query": "what do we know?"}),
        ("GET", "mental-models", None),
    ):
        r = httpx.request(method, f"{url}/v1/default/banks/{bank}/{path}", json=body, timeout=30)
        assert r.status_code == 501, (path, r.status_code, r.text)
        assert r.json()["detail"].startswith("memwarden in front of mem0: "), r.text  # names what Mem0 lacks
    after = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": "1000"}, timeout=30).json()["events"]
    assert [e["action"] for e in after] == [e["action"] for e in before]
    assert [m["memory"] for m in held(rig, bank)] == [FACT]


def test_health_names_mem0_and_what_it_cannot_do(rest: tuple[str, Any]) -> None:
    url, rig = rest
    health = httpx.get(f"{url}/warden/health", timeout=30).json()
    assert health["backend"]["kind"] == "mem0"
    assert health["backend"]["healthy"] is True
    assert "config_guard" not in health["backend"]["capabilities"]
    rig.down = True
    try:
        health = httpx.get(f"{url}/warden/health", timeout=30).json()
        assert health["status"] == "degraded"
        assert health["backend"]["healthy"] is False
    finally:
        rig.down = False


def test_a_mem0_client_delete_all_erases_the_user_from_mem0(rest: tuple[str, Any]) -> None:
    url, rig = rest
    from mem0 import MemoryClient

    client = MemoryClient(host=f"{url}/mem0", api_key="any-key-on-loopback")
    try:
        bank = client.project_id  # the Mem0 front's bank: one Mem0 user in the engine
        before = {m["memory"] for m in held(rig, bank)}
        user = f"u-{uuid.uuid4().hex[:6]}"
        added = client.add(
            [{"role": "user", "content": FACT}, {"role": "user", "content": OTHER}], user_id=user, infer=False
        )
        assert mem0_rig.event(url, added["event_id"])["status"] == "SUCCEEDED"
        assert {m["memory"] for m in held(rig, bank)} == before | {FACT, OTHER}
        assert {m["memory"] for m in client.search("Postgres primary host", filters={"user_id": user})["results"]} >= {
            OTHER
        }
        client.delete_all(user_id=user)
        assert {m["memory"] for m in held(rig, bank)} == before  # out of Mem0's vector store
    finally:
        client.client.close()


@pytest.mark.anyio
async def test_mcp_tools_write_through_memwarden_into_mem0_governed(rest: tuple[str, Any]) -> None:
    from tests.mcp_rig import mcp_client, value

    url, rig = rest
    bank = bank_id()
    async with mcp_client(f"{url}/mcp/{bank}/") as mcp:
        kept = value(await mcp.call_tool("sync_retain", {"content": OTHER, "context": "ops chat"}))
        assert [d["verdict"] for d in kept["warden"]["decisions"]] == ["store"]
        asked = value(await mcp.call_tool("sync_retain", {"content": "hey, can you check the staging cluster?"}))
        assert asked["status"] == "rejected"
        found = value(await mcp.call_tool("recall", {"query": "Where does the Postgres primary run?"}))
        assert [r["text"] for r in found["results"]] == [OTHER]
        listed = value(await mcp.call_tool("list_memories", {}))
        assert [m["text"] for m in listed["items"]] == [OTHER]
    assert [m["memory"] for m in held(rig, bank)] == [OTHER]  # in Mem0's engine, the question not


@pytest.mark.parametrize(
    ("answer", "parts"),
    [
        (None, 1),  # Mem0 wrote it after memwarden died: found at the start, not written again
        (503, 1),  # Mem0 failed it: delivered again at the start
        (None, 2),  # a document of two items, its first written, its second never sent: made whole
    ],
)
def test_a_write_interrupted_by_kill_9_is_settled_against_mem0_at_the_next_start(
    mem0_server: tuple[str, Any], tmp_path: Path, answer: int | None, parts: int
) -> None:
    from testing.loopback import free_port
    from tests.loopback.test_recovery import statuses, stop
    from tests.servers import spawn_memwarden, wait_memwarden

    mem0_url, rig = mem0_server
    data_dir, port = tmp_path / "data", free_port()
    bank = bank_id()
    env = {
        "MEMWARDEN_LABELS__LEARNED": "off",
        "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
        "MEMWARDEN_BACKENDS__MEM0__API_KEY": "mem0-rig-key",
    }
    args = ("serve", "--upstream", f"mem0+{mem0_url}", "--port", str(port), "--data-dir", str(data_dir))
    url = f"http://127.0.0.1:{port}"

    def post() -> None:
        with contextlib.suppress(httpx.HTTPError):  # memwarden died: the client never had its answer
            httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": items}, timeout=10)

    texts = [FACT, OTHER][:parts]
    items = [{"content": text, "document_id": "doc"} for text in texts]
    rig.slow_adds, rig.add_delay, rig.add_status = 1, 2.0, answer
    proc = spawn_memwarden(*args, cwd=tmp_path, env=env)

    def until(done: Any, what: str) -> None:  # a loaded machine: polled, not slept for a fixed time
        deadline = time.monotonic() + 30
        while not done():
            assert time.monotonic() < deadline, what
            time.sleep(0.05)

    def adds_answered() -> int:
        return sum(
            r["method"] == "POST" and isinstance(r["body"], dict) and "messages" in r["body"] for r in rig.requests
        )

    try:
        wait_memwarden(url, proc)
        answered = adds_answered()
        client = threading.Thread(target=post)
        client.start()
        until(lambda: rig.slow_adds == 0, "the first add never reached Mem0")  # it is in Mem0's hands now
        stop(proc, kill=True)
        client.join()
        assert statuses(data_dir) == ["pending"] * parts
        until(lambda: adds_answered() > answered, "Mem0 never finished the first add")  # written, or failed
        assert len(held(rig, bank)) == (1 if answer is None else 0)
        proc = spawn_memwarden(*args, cwd=tmp_path, env=env)
        wait_memwarden(url, proc)
        assert statuses(data_dir) == ["active"] * parts  # settled before serving
        assert sorted(m["memory"] for m in held(rig, bank)) == sorted(texts)  # each once, either way
        events = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank}, timeout=10).json()["events"]
        found = answer is None and parts == 1
        assert (events[-1]["source"], events[-1]["action"]) == ("recovery", "deliver" if found else "redeliver")
    finally:
        rig.slow_adds = 0
        stop(proc)


def test_an_extract_bank_lets_mem0_extract_facts_from_what_memwarden_kept_only(
    mem0_server: tuple[str, Any], tmp_path: Path
) -> None:
    mem0_url, rig = mem0_server
    bank = bank_id()
    settings = mem0_rig.mem0_settings(mem0_url, tmp_path, extract_banks=[bank])
    with running_warden(settings) as url:
        before = len(rig.llm_seen)
        items = [{"content": f"{FACT} {OTHER}"}, {"content": NOISE}]
        r = httpx.post(f"{url}/v1/default/banks/{bank}/memories?warden=verbose", json={"items": items}, timeout=60)
        assert r.status_code == 200, r.text
        assert [d["verdict"] for d in r.json()["warden"]["decisions"]] == ["store", "reject"]
        asked = rig.llm_seen[before:]
        assert len(asked) == 1  # Mem0's extraction ran once: on the kept item, never on the noise
        assert FACT in json.dumps(asked[0]["body"])
        assert NOISE not in json.dumps(asked[0]["body"])
        assert sorted(m["memory"] for m in held(rig, bank)) == sorted([FACT, OTHER])  # Mem0's facts, one a sentence
        document = {m["metadata"]["mw_document"] for m in held(rig, bank)}
        assert len(document) == 1  # both carry the item's document: found, replaced, erased together


def test_a_write_mem0_stored_but_whose_answer_was_lost_is_redelivered_and_stored_once(rest: tuple[str, Any]) -> None:
    url, rig = rest
    bank = bank_id()
    rig.slow_adds, rig.add_delay, rig.add_status, rig.write_then_fail = 1, 0.0, 503, True
    try:
        r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": [{"content": FACT}]}, timeout=60)
        assert r.status_code == 200, r.text
        assert r.json()["async"] is True  # Mem0 answered 503: queued, though Mem0 has it
        first = [m["id"] for m in held(rig, bank)]
        assert len(first) == 1
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and [m["status"] for m in mem0_rig.ledger(url, bank)] != ["active"]:
            time.sleep(0.1)
        assert [m["status"] for m in mem0_rig.ledger(url, bank)] == ["active"]  # the outbox delivered it again
        assert [m["memory"] for m in held(rig, bank)] == [FACT]  # found there: not stored a second time
        assert [m["id"] for m in held(rig, bank)] == first  # nor replaced: the same memory, untouched
    finally:
        rig.slow_adds, rig.write_then_fail = 0, False


def test_deletes_through_the_hindsight_front_are_governed_and_reach_mem0(rest: tuple[str, Any]) -> None:
    url, rig = rest
    bank = bank_id()
    items = [{"content": FACT, "document_id": "d1"}, {"content": OTHER, "document_id": "d2"}]
    assert httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": items}, timeout=60).status_code == 200
    r = httpx.delete(f"{url}/v1/default/banks/{bank}/documents/d1", timeout=60)
    assert r.status_code == 200, r.text
    assert [m["memory"] for m in held(rig, bank)] == [OTHER]
    statuses = {m["content"]: m["status"] for m in mem0_rig.ledger(url, bank)}
    assert statuses[FACT] != "active"  # the ledger follows: the fact is no longer held
    assert statuses[OTHER] == "active"
    again = httpx.post(f"{url}/v1/default/banks/{bank}/memories?warden=verbose", json={"items": [items[0]]}, timeout=60)
    assert [d["verdict"] for d in again.json()["warden"]["decisions"]] == ["store"]  # not a duplicate of a deleted one
    assert sorted(m["memory"] for m in held(rig, bank)) == sorted([FACT, OTHER])
    r = httpx.delete(f"{url}/v1/default/banks/{bank}/memories", params={"type": "experience"}, timeout=60)
    assert r.status_code == 200, r.text
    assert len(held(rig, bank)) == 2  # no experience memories in Mem0: nothing deleted
    r = httpx.delete(f"{url}/v1/default/banks/{bank}", timeout=60)
    assert r.status_code == 200, r.text
    assert held(rig, bank) == []
    assert all(m["status"] != "active" for m in mem0_rig.ledger(url, bank))
    events = httpx.get(f"{url}/warden/v1/audit", params={"bank": bank, "limit": "1000"}, timeout=30).json()["events"]
    assert "config_snapshot" in {
        e["action"] for e in events
    }  # a snapshot before each deletion, as in front of Hindsight


def test_a_bank_in_shadow_mode_writes_and_reads_mem0_ungoverned(mem0_server: tuple[str, Any], tmp_path: Path) -> None:
    mem0_url, rig = mem0_server
    bank = bank_id()
    settings = mem0_rig.mem0_settings(mem0_url, tmp_path)
    settings = settings.model_copy(
        update={"governance": settings.governance.model_validate({"banks": {bank: {"mode": "shadow"}}})}
    )
    with running_warden(settings) as url:
        items = [{"content": FACT}, {"content": NOISE}]
        r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": items}, timeout=60)
        assert r.status_code == 200, r.text
        assert sorted(m["memory"] for m in held(rig, bank)) == sorted([FACT, NOISE])  # forwarded as sent
        r = httpx.post(
            f"{url}/v1/default/banks/{bank}/memories/recall", json={"query": "staging deploy key"}, timeout=60
        )
        assert r.status_code == 200, r.text
        assert FACT in [m["text"] for m in r.json()["results"]]
        r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json={"items": [{"content": "  "}]}, timeout=60)
        assert r.status_code == 422  # Hindsight's refusal of a blank item, as the shim checks it
