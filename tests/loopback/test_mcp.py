"""memwarden's MCP server on loopback (self-hosted), driven by the official ``mcp`` client unchanged:
every tool governed as its HTTP twin — writes judged and audited, keys and scopes per tool and
bank, the Origin check, hostile arguments refused with nothing written — over both protocol
generations, and over stdio through ``memwarden mcp``."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import pytest
from mcp import Client, StdioServerParameters

from memwarden.settings import load_settings
from testing.keys import make_key
from tests.conftest import running_warden
from tests.loopback.test_hostile import counts
from tests.loopback.test_local_store import local_settings
from tests.mcp_rig import error, mcp_client, value
from tests.servers import MAIN

pytestmark = pytest.mark.anyio

FACT = "The staging cluster has 3 nodes with 16 GB RAM each."


@pytest.fixture(scope="module")
def rig(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("mcp") / "data"
    with running_warden(local_settings(data)) as url:
        yield url, data


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path, dict[str, str]]]:
    data = tmp_path_factory.mktemp("mcp-keys") / "data"
    data.mkdir()
    keys = {
        "admin": make_key(data, name="admin", scopes=("--admin", "*")),
        "writer": make_key(data, name="writer", scopes=("--write", "team-a")),
        "reader": make_key(data, name="reader", scopes=("--read", "team-a")),
    }
    with running_warden(local_settings(data)) as url:
        yield url, data, keys


async def http(method: str, url: str, **kwargs: Any) -> httpx.Response:
    async with httpx.AsyncClient(timeout=60) as client:
        return await client.request(method, url, **kwargs)


def audit(data: Path) -> list[tuple[str, str | None, str | None]]:
    db = sqlite3.connect(data / "memwarden.db")
    try:
        return db.execute("SELECT action, source, rule FROM audit_events ORDER BY seq").fetchall()
    finally:
        db.close()


@pytest.mark.parametrize("mode", ["auto", "legacy"])
async def test_a_session_retains_recalls_updates_and_changes_the_mission(rig: tuple[str, Path], mode: str) -> None:
    url, data = rig
    bank = f"session-{mode}"
    async with mcp_client(f"{url}/mcp/{bank}/", mode=mode) as mcp:
        tools = {t.name for t in (await mcp.list_tools()).tools}
        assert {"retain", "sync_retain", "recall", "update_memory", "update_bank"} <= tools
        assert "list_banks" not in tools  # one bank's endpoint: no tool that names another
        kept = value(await mcp.call_tool("sync_retain", {"content": FACT, "context": "ops chat"}))
        assert kept["status"] == "completed"
        assert len(kept["memory_ids"]) == 1
        assert [d["verdict"] for d in kept["warden"]["decisions"]] == ["store"]
        asked = value(await mcp.call_tool("sync_retain", {"content": "hey, can you check the staging cluster?"}))
        assert asked["status"] == "rejected"
        assert "did not keep" in asked["message"]
        assert asked["warden"]["decisions"][0]["verdict"] == "reject"
        found = value(await mcp.call_tool("recall", {"query": "How many nodes does staging have?"}))
        assert [r["text"] for r in found["results"]] == [FACT]
        assert "fact_type" in found["results"][0]
        assert "type" not in found["results"][0]
        memory = kept["memory_ids"][0]
        changed = value(
            await mcp.call_tool("update_memory", {"memory_id": memory, "text": "The staging cluster has 4 nodes."})
        )
        assert changed["text"] == "The staging cluster has 4 nodes."
        profile = value(await mcp.call_tool("update_bank", {"mission": "Remember the ops team's infrastructure."}))
        assert profile["bank_id"] == bank
        config = (await http("GET", f"{url}/v1/default/banks/{bank}/config")).json()
        assert config["overrides"]["reflect_mission"] == "Remember the ops team's infrastructure."
        listed = value(await mcp.call_tool("list_memories", {}))
        assert [m["text"] for m in listed["items"]] == ["The staging cluster has 4 nodes."]
    actions = audit(data)
    assert ("reject", "retain", asked["warden"]["decisions"][0]["rule"]) in actions
    assert {"config_snapshot", "config_patch"} <= {a for a, _, _ in actions}  # the guarded change: snapshot first


async def test_the_every_bank_endpoint_takes_the_bank_as_an_argument_or_a_header(rig: tuple[str, Path]) -> None:
    url, _ = rig
    async with mcp_client(f"{url}/mcp", headers={"X-Bank-Id": "from-header"}) as mcp:
        assert len((await mcp.list_tools()).tools) == 39
        value(await mcp.call_tool("sync_retain", {"content": FACT}))
        value(await mcp.call_tool("sync_retain", {"content": "Backups run nightly at 02:00.", "bank_id": "by-arg"}))
        result = await mcp.call_tool("list_tags", {})
        assert isinstance(result.structured_content["result"], str)  # JSON text, as Hindsight's /mcp answers
        made = value(await mcp.call_tool("create_bank", {"bank_id": "made", "name": "Made here"}))
        assert (made["bank_id"], made["name"]) == ("made", "Made here")
        banks = {b["bank_id"] for b in value(await mcp.call_tool("list_banks", {}))["banks"]}
        assert {"from-header", "by-arg", "made"} <= banks
        stats = value(await mcp.call_tool("get_bank_stats", {"bank_id": "by-arg"}))
        assert stats["bank_id"] == "by-arg"
        assert "node_counts" in stats
    assert (await http("GET", f"{url}/v1/default/banks/by-arg/memories/list")).json()["total"] == 1


async def test_a_tool_call_without_a_usable_key_is_refused_at_the_door(keyed: tuple[str, Path, dict[str, str]]) -> None:
    url, data, _ = keyed
    before = counts(data)
    for token in (None, "mw_notakey_0000"):
        headers = {"Authorization": f"Bearer {token}"} if token else {}
        r = await http(
            "POST", f"{url}/mcp/team-a/", json={"jsonrpc": "2.0", "id": 1, "method": "tools/list"}, headers=headers
        )
        assert r.status_code == 401
        assert r.headers["www-authenticate"] == "Bearer"
    assert (await http("GET", f"{url}/mcp/team-a/")).status_code == 401  # the probe too, without a key
    assert counts(data) == before


async def test_each_tool_needs_the_scope_its_http_twin_needs(keyed: tuple[str, Path, dict[str, str]]) -> None:
    url, _, keys = keyed
    async with mcp_client(f"{url}/mcp/team-a/", key=keys["writer"]) as mcp:
        assert value(await mcp.call_tool("sync_retain", {"content": FACT}))["status"] == "completed"
        refused = error(await mcp.call_tool("delete_bank", {}))
        assert refused["status"] == 403
        assert "may not admin bank 'team-a'" in refused["error"]
    async with mcp_client(f"{url}/mcp/team-a/", key=keys["reader"]) as mcp:
        assert len(value(await mcp.call_tool("list_memories", {}))["items"]) == 1
        assert value(await mcp.call_tool("get_bank", {}))["bank_id"] == "team-a"  # no read on '*' needed
        refused = error(await mcp.call_tool("retain", {"content": "Backups run nightly at 02:00."}))
        assert refused["status"] == 403
        assert "may not write bank 'team-a'" in refused["error"]
    async with mcp_client(f"{url}/mcp/team-b/", key=keys["writer"]) as mcp:  # another bank: no scope there
        refused = error(await mcp.call_tool("recall", {"query": "staging"}))
        assert refused["status"] == 403
        # One bank's endpoint has no bank_id argument: one sent is dropped, never obeyed.
        refused = error(await mcp.call_tool("list_memories", {"bank_id": "team-a"}))
        assert refused["status"] == 403
        assert "team-b" in refused["error"]
    async with mcp_client(f"{url}/mcp", key=keys["writer"]) as mcp:
        refused = error(await mcp.call_tool("recall", {"query": "staging", "bank_id": "team-b"}))
        assert refused["status"] == 403
    async with mcp_client(f"{url}/mcp/team-a/", key=keys["admin"]) as mcp:
        assert value(await mcp.call_tool("clear_memories", {}))["status"] == "cleared"
    assert (await http("GET", f"{url}/v1/default/banks/team-a/memories/list", headers=_bearer(keys["admin"]))).json()[
        "total"
    ] == 0


def _bearer(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def test_a_web_page_cannot_call_a_tool(rig: tuple[str, Path]) -> None:
    url, data = rig
    before = counts(data)
    call = {
        "jsonrpc": "2.0",
        "id": 1,
        "method": "tools/call",
        "params": {"name": "retain", "arguments": {"content": FACT}},
    }
    headers = {"Origin": "http://evil.example", "Accept": "application/json, text/event-stream"}
    r = await http("POST", f"{url}/mcp/page/", json=call, headers=headers)
    assert r.status_code == 403
    assert "Origin 'http://evil.example' is not allowed" in r.json()["detail"]
    assert counts(data) == before


HOSTILE: list[tuple[str, str, dict[str, Any]]] = [
    ("a wrong type", "recall", {"query": 5}),
    ("a list for a string", "retain", {"content": ["a", "b"]}),
    ("a missing argument", "get_memory", {}),
    ("an unknown tool", "drop_everything", {"content": FACT}),
    ("a limit past its bound", "list_operations", {"limit": 10_000}),
    ("a secret in the metadata", "retain", {"content": FACT, "metadata": {"token": "ghp_" + "a1B2" * 9}}),
    ("a secret in a tag", "sync_retain", {"content": FACT, "tags": ["ghp_" + "Zq9X" * 9]}),
    (
        "a secret as the document id",
        "retain",
        {"content": FACT, "document_id": "sk-ant-api03-" + "Ab3dE6gH9jK2mN5p" * 6},
    ),
    ("a secret as the memory id", "get_memory", {"memory_id": "ghp_" + "a1B2" * 9}),
    ("a secret in a recall query", "recall", {"query": "sk_live_" + "4eC39HqLyjWDarjtT1zdp7dc"}),
    ("a secret in a directive", "create_directive", {"name": "d", "content": "use ghp_" + "a1B2" * 9}),
    ("a bank id with a slash", "list_tags", {"bank_id": "a/b"}),
    ("a bank id with dot segments", "list_tags", {"bank_id": "a/../b"}),
    ("an integer past 64 bits", "recall", {"query": "staging", "max_tokens": 10**20}),
    ("5,000 digits for an integer", "list_tags", {"limit": "9" * 5000}),
]


@pytest.mark.parametrize(("case", "tool", "arguments"), HOSTILE, ids=[c for c, _, _ in HOSTILE])
async def test_hostile_arguments_get_an_mcp_error_and_change_nothing(
    rig: tuple[str, Path], case: str, tool: str, arguments: dict[str, Any]
) -> None:
    url, data = rig
    before = counts(data)
    refused_before = sum(1 for a, _, _ in audit(data) if a == "secret_refused")
    async with mcp_client(f"{url}/mcp", headers={"X-Bank-Id": "hostile"}) as mcp:
        result = await mcp.call_tool(tool, arguments)
    assert result.is_error, result
    text = result.content[0].text
    assert not [sent for sent in _strings(arguments) if len(sent) >= 12 and sent in text]  # never echoed
    memories, events = counts(data)
    assert memories == before[0]
    added = sum(1 for a, _, _ in audit(data) if a == "secret_refused") - refused_before
    assert events - before[1] == added  # nothing but the refusal itself
    # A secret in a field is refused and audited (where and what kind, never the value); one in a
    # path segment (the memory id) is refused before anything reads it.
    assert added == (1 if "secret" in case and tool != "get_memory" else 0)
    assert (await http("GET", f"{url}/warden/health")).status_code == 200


def _strings(arguments: Any) -> list[str]:
    if isinstance(arguments, str):
        return [arguments]
    if isinstance(arguments, dict):
        return [s for v in arguments.values() for s in _strings(v)]
    if isinstance(arguments, list):
        return [s for v in arguments for s in _strings(v)]
    return []


async def test_a_huge_argument_is_refused_with_the_http_twins_status(rig: tuple[str, Path]) -> None:
    url, data = rig
    before = counts(data)
    async with mcp_client(f"{url}/mcp/hostile/") as mcp:
        refused = error(await mcp.call_tool("retain", {"content": "x" * (3 << 20)}))
    assert refused["status"] == 413  # past the retain's length limit, as over HTTP
    assert counts(data) == before


async def test_a_body_nested_too_deep_is_a_json_rpc_parse_error(rig: tuple[str, Path]) -> None:
    url, data = rig
    before = counts(data)
    pad: Any = "x"
    for _ in range(70):
        pad = [pad]
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call"}
    call["params"] = {"name": "retain", "arguments": {"content": FACT}, "_meta": {"pad": pad}}
    r = await http("POST", f"{url}/mcp/deep/", content=json.dumps(call), headers={"content-type": "application/json"})
    assert r.status_code == 400
    assert r.json()["error"]["code"] == -32700
    assert counts(data) == before


async def test_the_get_probe_and_a_missing_accept_are_served_as_hindsight_serves_them(rig: tuple[str, Path]) -> None:
    url, _ = rig
    assert (await http("GET", f"{url}/mcp/probe/")).json() == {}
    listed = {"jsonrpc": "2.0", "id": 3, "method": "tools/list", "params": {}}
    headers = {"content-type": "application/json", "mcp-protocol-version": "2025-06-18"}
    r = await http("POST", f"{url}/mcp/probe/", json=listed, headers=headers)  # no Accept at all
    assert r.status_code == 200, r.text
    assert len(r.json()["result"]["tools"]) == 36


async def test_stdio_bridge_serves_the_tools_with_the_key_from_the_environment(
    keyed: tuple[str, Path, dict[str, str]],
) -> None:
    url, _, keys = keyed
    command = StdioServerParameters(
        command=_python(),
        args=["-c", MAIN, "mcp", "--url", url, "--bank", "team-a"],
        env={"MEMWARDEN_API_KEY": keys["writer"], "PATH": "/usr/bin:/bin"},
    )
    with anyio.fail_after(120):
        async with Client(command) as mcp:
            assert len((await mcp.list_tools()).tools) == 36
            kept = value(await mcp.call_tool("sync_retain", {"content": "The VPN gateway lives in Frankfurt."}))
            assert kept["status"] == "completed"
            refused = error(await mcp.call_tool("delete_bank", {}))
            assert refused["status"] == 403
    listed = (await http("GET", f"{url}/v1/default/banks/team-a/memories/list", headers=_bearer(keys["admin"]))).json()
    assert "The VPN gateway lives in Frankfurt." in [m["text"] for m in listed["items"]]


def _python() -> str:
    import sys

    return sys.executable


async def test_a_new_text_the_rules_reject_leaves_the_memory_as_it_was(rig: tuple[str, Path]) -> None:
    """update_memory goes through the retain's judgement (as ``PATCH …/memories/{id}`` does): a
    question, chatter or progress note in place of a fact is refused, audited, and changes nothing."""
    url, data = rig
    async with mcp_client(f"{url}/mcp/curated/") as mcp:
        kept = value(await mcp.call_tool("sync_retain", {"content": FACT}))
        memory = kept["memory_ids"][0]
        refused = error(await mcp.call_tool("update_memory", {"memory_id": memory, "text": "did the deploy finish?"}))
        assert refused["status"] == 422
        assert "did not take the new text" in refused["error"]
        assert value(await mcp.call_tool("get_memory", {"memory_id": memory}))["text"] == FACT
        changed = value(
            await mcp.call_tool("update_memory", {"memory_id": memory, "text": "The staging cluster has 5 nodes."})
        )
        assert changed["text"] == "The staging cluster has 5 nodes."
    assert [a for a, _, _ in audit(data)].count("curation_refused") == 1


async def test_a_new_value_for_a_single_valued_key_is_a_correction_not_a_conflict(rig: tuple[str, Path]) -> None:
    """The memory being edited holds its topic key (``config.default_model``): its new value is
    what an edit is for, not a conflict with itself."""
    url, _ = rig
    async with mcp_client(f"{url}/mcp/corrected/") as mcp:
        kept = value(await mcp.call_tool("sync_retain", {"content": "The default model is gpt-4o."}))
        memory = kept["memory_ids"][0]
        changed = value(
            await mcp.call_tool("update_memory", {"memory_id": memory, "text": "The default model is claude-sonnet-4."})
        )
        assert changed["text"] == "The default model is claude-sonnet-4."


async def test_a_stream_or_a_session_end_is_refused_and_a_probe_answered(rig: tuple[str, Path]) -> None:
    url, _ = rig
    assert (await http("GET", f"{url}/mcp/probe/")).json() == {}
    streamed = await http("GET", f"{url}/mcp/probe/", headers={"mcp-session-id": "abc", "accept": "text/event-stream"})
    assert streamed.status_code == 405
    assert streamed.headers["allow"] == "POST"
    assert (await http("DELETE", f"{url}/mcp/probe/", headers={"mcp-session-id": "abc"})).status_code == 405


async def test_a_percent_encoded_slash_is_no_bank_and_a_path_segment(rig: tuple[str, Path]) -> None:
    """``/mcp/a%2Fb/`` is not bank ``a``: refused, as a bank id holding ``/`` is anywhere."""
    url, data = rig
    before = counts(data)
    listed = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    headers = {"mcp-protocol-version": "2025-06-18"}
    r = await http("POST", f"{url}/mcp/a%2Fb/", json=listed, headers=headers)
    assert r.status_code == 400
    assert "'/'" in r.json()["detail"]
    r = await http("POST", f"{url}/mcp", json=listed, headers={**headers, "X-Bank-Id": "a/b"})
    assert r.status_code == 400  # the session's bank, by the header: refused at the door as well
    assert counts(data) == before


async def test_document_ids_holding_slashes_and_query_characters_reach_their_document(rig: tuple[str, Path]) -> None:
    url, _ = rig
    document = "notes/2026 plan?draft#2"
    async with mcp_client(f"{url}/mcp/docs/") as mcp:
        kept = value(await mcp.call_tool("sync_retain", {"content": FACT, "document_id": document}))
        assert kept["status"] == "completed"
        assert value(await mcp.call_tool("get_document", {"document_id": document}))["id"] == document
        done = value(await mcp.call_tool("delete_document", {"document_id": document}))
        assert (done["document_deleted"], done["document_id"]) == (1, document)
        assert value(await mcp.call_tool("list_memories", {}))["items"] == []


async def test_creating_a_bank_needs_admin_on_the_bank_it_creates(keyed: tuple[str, Path, dict[str, str]]) -> None:
    url, _, keys = keyed
    async with mcp_client(f"{url}/mcp", key=keys["writer"]) as mcp:
        refused = error(await mcp.call_tool("create_bank", {"bank_id": "team-z"}))
    assert refused["status"] == 403
    async with mcp_client(f"{url}/mcp", key=keys["admin"]) as mcp:
        assert value(await mcp.call_tool("create_bank", {"bank_id": "team-z"}))["bank_id"] == "team-z"


@pytest.fixture(scope="module")
def confirming(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Self-hosted, no keys, destructive changes to be confirmed (``config_guard.destructive``)."""
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path_factory.mktemp("mcp-confirm") / "data"),
            "local": {"embedder": "hashing"},
            "config_guard": {"destructive": "confirm", "missions": {"mode": "off"}},
        },
    )
    with running_warden(settings) as url:
        yield url


async def test_a_deletion_is_never_confirmed_by_the_connection(confirming: str) -> None:
    """An MCP client sends its headers with every call: ``X-Warden-Confirm`` there would confirm
    every deletion the model picks. The MCP front does not carry it; the deletion waits."""
    url = confirming
    async with mcp_client(f"{url}/mcp/keep/", headers={"X-Warden-Confirm": "keep"}) as mcp:
        value(await mcp.call_tool("sync_retain", {"content": FACT}))
        refused = error(await mcp.call_tool("delete_bank", {}))
        assert refused["status"] == 409
        assert "X-Warden-Confirm" in refused["error"]
        refused = error(await mcp.call_tool("clear_memories", {}))
        assert refused["status"] == 409
        assert [m["text"] for m in value(await mcp.call_tool("list_memories", {}))["items"]] == [FACT]


async def test_a_long_answer_streamed_by_the_pass_through_reaches_the_tool_whole(rig: tuple[str, Path]) -> None:
    """A document past the pass-through's small-body size, through a real server, whole. (The race
    it could lose — the in-process client saying it left before the answer was whole — is proved
    deterministically in tests/unit/test_mcp_dispatch.py; here the local store answers too fast to
    lose it.)"""
    url, _ = rig
    facts = [f"Server {i} in rack {i % 40} runs kernel 6.{i % 9} with {i % 64 + 1} GB of RAM." for i in range(2000)]
    text = " ".join(facts)
    assert len(text) > 96 * 1024  # past fronts/hindsight/passthrough.SMALL_BODY
    async with mcp_client(f"{url}/mcp/long/") as mcp:
        kept = value(await mcp.call_tool("sync_retain", {"content": text, "document_id": "inventory"}))
        assert kept["status"] == "completed"
        document = value(await mcp.call_tool("get_document", {"document_id": "inventory"}))
    assert isinstance(document, dict)
    assert document["original_text"] == text
