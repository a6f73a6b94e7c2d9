"""memwarden's MCP server against the real Hindsight 1.1.0's, with the official ``mcp`` client
unchanged: the same tools listed, tool by tool; and one agent session — a transcript retained, a
recall, a memory updated, the bank's mission changed — run against Hindsight's own MCP server and
through memwarden's, giving the same results except what governance rejected."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memwarden.fronts.mcp import catalog
from testing.switch import Switch
from tests.conftest import make_settings, running_warden
from tests.loopback.test_local_store import local_settings
from tests.mcp_rig import mcp_client, value

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

TRANSCRIPT = [
    "The staging cluster has 3 nodes with 16 GB RAM each.",
    "ok thanks!",
    "We decided to run the nightly backups at 02:00 UTC.",
    "can you check whether the deploy finished?",
    "Alice prefers dark roast coffee.",
]
NOISE = {"ok thanks!", "can you check whether the deploy finished?"}
LISTED_FIELDS = {"name", "description", "input_schema", "output_schema", "annotations"}


@pytest.fixture(scope="module")
def warden(hindsight_url: str) -> Iterator[str]:
    with running_warden(make_settings(hindsight_url)) as url:
        yield url


@pytest.fixture(scope="module")
def self_hosted(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    with running_warden(local_settings(tmp_path_factory.mktemp("mcp-local") / "data")) as url:
        yield url


def listed(tools: Any) -> dict[str, dict[str, Any]]:
    return {t.name: t.model_dump(mode="json", by_alias=True, include=LISTED_FIELDS) for t in tools.tools}


@pytest.mark.parametrize("path", ["/mcp/", "/mcp/listing/"])
async def test_the_tools_are_hindsights_tool_by_tool(
    hindsight_url: str, warden: str, self_hosted: str, path: str
) -> None:
    async with mcp_client(hindsight_url + path) as real:
        theirs = listed(await real.list_tools())
    assert len(theirs) == (39 if path == "/mcp/" else 36)
    for url in (warden, self_hosted):
        async with mcp_client(url + path) as mcp:
            ours = listed(await mcp.list_tools())
        assert list(ours) == list(theirs)  # the same tools, in the same order
        for name, tool in theirs.items():
            assert ours[name] == tool, name


def test_the_captured_definitions_are_the_running_servers() -> None:
    """Each tool of the file memwarden lists from has a twin (the test above compares what
    memwarden lists with what the real server lists, live)."""
    from memwarden.fronts.mcp.twins import TWINS

    for single in (False, True):
        assert {t["name"] for t in catalog.tools(single_bank=single)} <= set(TWINS)


async def _session(url: str, bank: str) -> dict[str, Any]:
    """The agent's session; every result by step."""
    out: dict[str, Any] = {}
    async with mcp_client(f"{url}/mcp/{bank}/") as mcp:
        out["retained"] = [
            value(await mcp.call_tool("sync_retain", {"content": line, "context": "team chat"})) for line in TRANSCRIPT
        ]
        out["recall"] = value(await mcp.call_tool("recall", {"query": "How many nodes does the staging cluster have?"}))
        out["listed"] = value(await mcp.call_tool("list_memories", {"limit": 50}))
        first = _item(out["listed"], TRANSCRIPT[0])
        out["updated"] = value(
            await mcp.call_tool("update_memory", {"memory_id": first["id"], "text": "The staging cluster has 4 nodes."})
        )
        out["got"] = value(await mcp.call_tool("get_memory", {"memory_id": first["id"]}))
        out["mission"] = value(await mcp.call_tool("update_bank", {"mission": "Remember the team's infrastructure."}))
        out["bank"] = value(await mcp.call_tool("get_bank", {}))
        out["after"] = value(await mcp.call_tool("list_memories", {"limit": 50}))
    return out


def _texts(listing: dict[str, Any]) -> set[str]:
    return {m["text"] for m in listing["items"]}


def _item(listing: dict[str, Any], text: str) -> dict[str, Any]:
    """The world fact of that text (an observation consolidated from it may read the same)."""
    found: dict[str, Any] = next(m for m in listing["items"] if m["text"] == text and m["fact_type"] == "world")
    return found


def _same_shape(ours: Any, theirs: Any) -> None:
    """The same keys; governance's own additions aside: the ``warden`` account of a
    write, and the topic × stage labels among a memory's tags (Hindsight's own are empty here)."""
    if isinstance(ours, dict):
        labels = ours.get("tags") or []
        assert all(t.startswith(("topic:", "stage:")) for t in labels), labels
        ours = {k: v for k, v in ours.items() if k != "warden"} | ({"tags": []} if "tags" in ours else {})
    assert keys(ours) == keys(theirs)


def keys(value: Any) -> Any:
    """The keys, recursively (a value's own type left out: a time set or not yet, an empty list or
    not, depend on when the backend consolidated)."""
    if isinstance(value, dict):
        return {k: keys(v) for k, v in sorted(value.items())}
    if isinstance(value, list) and value and isinstance(value[0], dict):
        return [keys(value[0])]
    return None


async def test_one_session_directly_and_through_memwarden_differs_only_by_what_governance_rejected(
    hindsight_url: str, warden: str
) -> None:
    run = uuid.uuid4().hex[:8]
    theirs = await _session(hindsight_url, f"mcp-direct-{run}")
    ours = await _session(warden, f"mcp-governed-{run}")

    rejected = set()
    for line, mine, real in zip(TRANSCRIPT, ours["retained"], theirs["retained"], strict=True):
        assert real["status"] == "completed"
        verdicts = [d["verdict"] for d in mine["warden"]["decisions"]]
        if mine["status"] == "rejected":
            rejected.add(line)
            assert verdicts == ["reject"]
        else:
            assert mine["status"] == "completed"
            assert len(mine["memory_ids"]) == len(real["memory_ids"])
            _same_shape(mine, real)
    assert rejected == NOISE  # the questions and the chatter; every fact kept

    assert _texts(ours["listed"]) == _texts(theirs["listed"]) - rejected
    _same_shape(_item(ours["listed"], TRANSCRIPT[-1]), _item(theirs["listed"], TRANSCRIPT[-1]))
    staging = {"items": ours["recall"]["results"]}, {"items": theirs["recall"]["results"]}
    _same_shape(_item(staging[0], TRANSCRIPT[0]), _item(staging[1], TRANSCRIPT[0]))  # found by both
    for step in ("updated", "got"):
        assert ours[step]["text"] == theirs[step]["text"] == "The staging cluster has 4 nodes."
        _same_shape(ours[step], theirs[step])
    for step in ("mission", "bank"):
        assert ours[step]["mission"] == theirs[step]["mission"] == "Remember the team's infrastructure."
        assert set(ours[step]) == set(theirs[step])
    assert _texts(ours["after"]) == _texts(theirs["after"]) - rejected


async def test_the_session_runs_self_hosted(self_hosted: str) -> None:
    ours = await _session(self_hosted, "mcp-local")
    assert {r["status"] for r in ours["retained"]} == {"completed", "rejected"}
    assert "The staging cluster has 4 nodes." in _texts(ours["after"])
    assert not NOISE & _texts(ours["after"])
    assert ours["mission"]["bank_id"] == "mcp-local"


async def test_a_retain_while_hindsight_is_down_is_queued_and_delivered(hindsight_url: str) -> None:
    """The real Hindsight behind a switch, down while an agent retains over MCP: the call is
    accepted (``outbox: queued``), and once Hindsight is back the outbox delivers it."""
    bank = f"mcp-outage-{uuid.uuid4().hex[:8]}"
    fact = "The on-call rotation changes every Monday at 09:00."
    outbox = {"retry_initial": 0.1, "retry_max": 1.0}
    with Switch(hindsight_url) as switch, running_warden(make_settings(switch.url, outbox=outbox)) as url:
        async with mcp_client(f"{url}/mcp/{bank}/") as mcp:
            first = value(await mcp.call_tool("sync_retain", {"content": "Deploys happen on Tuesdays."}))
            assert first["status"] == "completed"  # delivered before the outage
            switch.down()
            queued = value(await mcp.call_tool("sync_retain", {"content": fact}))
            assert queued["status"] == "accepted"
            assert queued["warden"]["outbox"] == "queued"
            switch.up()
            deadline = time.monotonic() + 120
            texts: set[str] = set()
            while fact not in texts and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                async with httpx.AsyncClient(timeout=30) as http:
                    listed = (await http.get(f"{hindsight_url}/v1/default/banks/{bank}/memories/list")).json()
                texts = {m["text"] for m in listed.get("items", [])}
            assert fact in texts  # delivered to Hindsight itself


async def test_the_every_bank_endpoint_gives_hindsights_results(hindsight_url: str, warden: str) -> None:
    """``/mcp`` with the bank as an argument, against both: the JSON text results (``{"result":
    text}``), the same memories and the same bank."""
    run = uuid.uuid4().hex[:8]
    found = []
    for url, bank in ((hindsight_url, f"mcp-every-direct-{run}"), (warden, f"mcp-every-governed-{run}")):
        async with mcp_client(f"{url}/mcp") as mcp:
            for line in TRANSCRIPT:
                value(await mcp.call_tool("sync_retain", {"content": line, "bank_id": bank}))
            listed = await mcp.call_tool("list_memories", {"bank_id": bank})
            assert isinstance(listed.structured_content["result"], str)
            found.append((_texts(value(listed)), value(await mcp.call_tool("get_bank", {"bank_id": bank}))))
    (theirs, their_bank), (ours, our_bank) = found
    assert ours == theirs - NOISE
    assert set(our_bank) == set(their_bank)
