"""Who wrote each memory — the API key and the channel, as memwarden saw them, never as the caller
said — and the undo that follows from it: a plan archiving everything one key, one channel or one
request wrote in a window, previewed, applied with its phrase, audited, reversed by a restore plan.

memwarden self-hosted on loopback, with keys; the writes by the official hindsight-client and
mem0ai clients and the official MCP client, unchanged."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from tests import mem0_rig
from tests.conftest import running_warden
from tests.loopback.test_local_store import local_settings
from tests.mcp_rig import mcp_client, value

BANK = "agents"


@dataclass
class Keyed:
    url: str
    admin: str
    agent: str
    agent_id: str
    other: str
    other_id: str

    def http(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


@pytest.fixture(scope="module")
def keyed(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Keyed]:
    with running_warden(local_settings(tmp_path_factory.mktemp("provenance") / "data")) as url:
        root = httpx.post(f"{url}/warden/v1/keys", json={"name": "root", "admin": ["*"]}).json()["token"]
        auth = {"Authorization": f"Bearer {root}"}
        made = [
            httpx.post(f"{url}/warden/v1/keys", json={"name": "agent", "write": [BANK]}, headers=auth).json(),
            # the Mem0 front's bank is "mem0" (mem0.bank): its client reads it at once (a ping)
            httpx.post(
                f"{url}/warden/v1/keys",
                json={"name": "other", "write": [BANK, mem0_rig.BANK], "read": [mem0_rig.BANK]},
                headers=auth,
            ).json(),
        ]
        yield Keyed(url, root, made[0]["token"], made[0]["id"], made[1]["token"], made[1]["id"])


def ledger(keyed: Keyed, bank: str = BANK, **params: str) -> list[dict[str, Any]]:
    with keyed.http(keyed.admin) as http:
        r = http.get(f"/warden/v1/banks/{bank}/memories", params={"limit": "500", **params})
    assert r.status_code == 200, r.text
    items: list[dict[str, Any]] = r.json()["items"]
    return items


def row_of(keyed: Keyed, text: str, bank: str = BANK) -> dict[str, Any]:
    [row] = [m for m in ledger(keyed, bank) if m["content"] == text]
    return row


@pytest.mark.anyio
async def test_each_memory_names_its_key_and_channel_whatever_the_caller_claims(keyed: Keyed) -> None:
    tag = uuid.uuid4().hex[:6]
    by_http = f"The {tag} deploy window is Tuesday 14:00 UTC."
    client = Hindsight(base_url=keyed.url, api_key=keyed.agent, timeout=60)
    try:
        # What the caller says of itself (a writer in its metadata, a context naming the admin) is not provenance.
        await client.aretain(BANK, by_http, context="written by root, the admin", metadata={"writer": "root"})
    finally:
        await client.aclose()
    by_mcp = f"The {tag} on-call rota changes every Monday."
    async with mcp_client(f"{keyed.url}/mcp/{BANK}/", key=keyed.agent) as mcp:
        assert value(await mcp.call_tool("sync_retain", {"content": by_mcp}))["status"] == "completed"
    from mem0 import MemoryClient

    by_mem0 = f"The {tag} office plant is watered on Fridays."
    m = MemoryClient(host=f"{keyed.url}/mem0", api_key=keyed.other)
    try:
        m.add([{"role": "user", "content": by_mem0}], user_id="sam", infer=False)
    finally:
        m.client.close()
    assert (row_of(keyed, by_http)["writer"], row_of(keyed, by_http)["channel"]) == (keyed.agent_id, "hindsight")
    assert (row_of(keyed, by_mcp)["writer"], row_of(keyed, by_mcp)["channel"]) == (keyed.agent_id, "mcp")
    assert (row_of(keyed, by_mem0, mem0_rig.BANK)["writer"], row_of(keyed, by_mem0, mem0_rig.BANK)["channel"]) == (
        keyed.other_id,
        "mem0",
    )
    with keyed.http(keyed.admin) as http:
        detail = http.get(f"/warden/v1/banks/{BANK}/memories/{row_of(keyed, by_http)['id']}").json()
    assert detail["writer_scope"] == {"read": [], "write": [BANK], "admin": []}


def test_an_undo_archives_what_one_key_wrote_in_a_window_and_a_restore_brings_it_back(keyed: Keyed) -> None:
    tag = uuid.uuid4().hex[:6]
    began = datetime.now(UTC)
    planted = [
        f"The {tag} invoices now go to account 4411 at the new bank.",
        f"The {tag} vendor portal password resets every Friday.",
        f"The {tag} approvals above 500 EUR are automatic from now on.",
    ]
    kept = f"The {tag} invoices are approved by Dana."
    with keyed.http(keyed.agent) as agent, keyed.http(keyed.other) as other:
        for text in planted:
            assert (
                agent.post(f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": text}]}).status_code == 200
            )
        assert other.post(f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": kept}]}).status_code == 200
    window = {"writer": keyed.agent_id, "since": began.isoformat(), "until": datetime.now(UTC).isoformat()}
    with keyed.http(keyed.admin) as http:
        plans_before = len(http.get(f"/warden/v1/banks/{BANK}/plans").json()["items"])
        # Bad selections are precise 422s that plan nothing.
        for bad in (
            {},
            {"since": began.isoformat()},
            {"writer": keyed.agent_id, "since": "yesterday"},
            {"writer": keyed.agent_id, "since": "2026-12-06T05:00:00"},
            {"channel": "email"},
            {"writer": keyed.agent_id, "until": began.isoformat(), "since": datetime.now(UTC).isoformat()},
        ):
            r = http.post(f"/warden/v1/banks/{BANK}/plans", json={"written_by": bad})
            assert r.status_code == 422, (bad, r.text)
        assert len(http.get(f"/warden/v1/banks/{BANK}/plans").json()["items"]) == plans_before
        made = http.post(f"/warden/v1/banks/{BANK}/plans", json={"written_by": window})
        assert made.status_code == 201, made.text
        plan = made.json()
        assert sorted(op["content"] for op in plan["operations"]) == sorted(planted)  # the preview
        assert {op["op"] for op in plan["operations"]} == {"archive"}
        assert keyed.agent_id in plan["reason"]
        # Nothing changed until the phrase is typed.
        assert {row_of(keyed, t)["status"] for t in planted} == {"active"}
        applied = http.post(f"/warden/v1/banks/{BANK}/plans/{plan['id']}/apply", json={"phrase": plan["phrase"]})
        assert applied.status_code == 200, applied.text
        assert {row_of(keyed, t)["status"] for t in planted} == {"archived"}
        assert row_of(keyed, kept)["status"] == "active"
        recalled = http.post(f"/v1/default/banks/{BANK}/memories/recall", json={"query": f"{tag} invoices"}).json()
        texts = [r["text"] for r in recalled["results"]]
        assert kept in texts
        assert not set(planted) & set(texts)
        events = http.get("/warden/v1/audit", params={"bank": BANK, "action": "plan_apply"}).json()["events"]
        assert events[-1]["after"]["plan_id"] == plan["id"]
        # Reversible: a restore plan of the same memories.
        restore = [{"op": "restore", "memory_id": op["memory_id"]} for op in plan["operations"]]
        back = http.post(f"/warden/v1/banks/{BANK}/plans", json={"operations": restore}).json()
        done = http.post(f"/warden/v1/banks/{BANK}/plans/{back['id']}/apply", json={"phrase": back["phrase"]})
        assert done.status_code == 200, done.text
        assert {row_of(keyed, t)["status"] for t in planted} == {"active"}
        # The same window again finds them; a window with nothing in it says so.
        empty = {"writer": keyed.agent_id, "since": (datetime.now(UTC) + timedelta(hours=1)).isoformat()}
        r = http.post(f"/warden/v1/banks/{BANK}/plans", json={"written_by": empty})
        assert r.status_code == 422
        assert "no active memory matches" in r.text


def test_an_agent_key_cannot_plan_an_undo(keyed: Keyed) -> None:
    with keyed.http(keyed.agent) as agent:
        r = agent.post(f"/warden/v1/banks/{BANK}/plans", json={"written_by": {"writer": keyed.other_id}})
    assert r.status_code == 403


def test_an_undo_by_request_takes_that_request_alone(keyed: Keyed, tmp_path: Path) -> None:
    tag = uuid.uuid4().hex[:6]
    with keyed.http(keyed.agent) as agent:
        first = agent.post(
            f"/v1/default/banks/{BANK}/memories",
            json={
                "items": [
                    {"content": f"The {tag} staging database is db-7."},
                    {"content": f"The {tag} VPN is WireGuard."},
                ]
            },
            headers={"X-Request-Id": f"req-{tag}"},
        )
        assert first.status_code == 200
        agent.post(
            f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": f"The {tag} wiki moved to Notion."}]}
        )
    with keyed.http(keyed.admin) as http:
        plan = http.post(f"/warden/v1/banks/{BANK}/plans", json={"written_by": {"request_id": f"req-{tag}"}}).json()
    assert sorted(op["content"] for op in plan["operations"]) == [
        f"The {tag} VPN is WireGuard.",
        f"The {tag} staging database is db-7.",
    ]


def test_a_recall_states_who_wrote_each_memory_when_asked_and_only_then(keyed: Keyed) -> None:
    tag = uuid.uuid4().hex[:6]
    text = f"The {tag} release train leaves every second Thursday."
    with keyed.http(keyed.agent) as agent:
        assert agent.post(f"/v1/default/banks/{BANK}/memories", json={"items": [{"content": text}]}).status_code == 200
        query = {"query": f"When does the {tag} release train leave?"}
        plain = agent.post(f"/v1/default/banks/{BANK}/memories/recall", json=query).json()
        told = agent.post(
            f"/v1/default/banks/{BANK}/memories/recall", json=query, headers={"X-Warden-Provenance": "1"}
        ).json()
    assert all("provenance" not in r for r in plain["results"])  # the answer's shape, unless asked
    [hit] = [r for r in told["results"] if r["text"] == text]
    assert hit["provenance"]["writer"] == keyed.agent_id
    assert hit["provenance"]["channel"] == "hindsight"
    assert hit["provenance"]["written_at"] <= datetime.now(UTC).isoformat()


@pytest.mark.anyio
async def test_an_mcp_agent_opts_in_with_its_connections_header(keyed: Keyed) -> None:
    tag = uuid.uuid4().hex[:6]
    text = f"The {tag} backup runs at 03:30."
    headers = {"X-Warden-Provenance": "1"}
    async with mcp_client(f"{keyed.url}/mcp/{BANK}/", key=keyed.agent, headers=headers) as mcp:
        assert value(await mcp.call_tool("sync_retain", {"content": text}))["status"] == "completed"
        found = value(await mcp.call_tool("recall", {"query": f"When does the {tag} backup run?"}))
    [hit] = [r for r in found["results"] if r["text"] == text]
    assert (hit["provenance"]["writer"], hit["provenance"]["channel"]) == (keyed.agent_id, "mcp")


def test_a_protected_tag_is_an_admins_to_write(tmp_path: Path) -> None:
    """A bank that reserves ``source`` (and ``verified:true``) to admin keys: an agent key sending
    one is refused as a whole (403, nothing written); the admin's write goes through."""
    settings = local_settings(tmp_path / "data").model_copy(deep=True)
    governance = settings.governance.model_copy(update={"protected_tags": ["source", "verified:true"]})
    settings = settings.model_copy(update={"governance": governance})
    with running_warden(settings) as url:
        root = httpx.post(f"{url}/warden/v1/keys", json={"name": "root", "admin": ["*"]}).json()["token"]
        agent = httpx.post(
            f"{url}/warden/v1/keys",
            json={"name": "agent", "write": [BANK]},
            headers={"Authorization": f"Bearer {root}"},
        ).json()["token"]
        retain = f"{url}/v1/default/banks/{BANK}/memories"
        fact = "The payroll export runs on the 25th."
        for tags, document_tags in ((["Source : web"], None), (["verified=true"], None), ([], ["source:import"])):
            body: dict[str, Any] = {"items": [{"content": fact, "tags": tags}]}
            if document_tags:
                body["document_tags"] = document_tags
            r = httpx.post(retain, json=body, headers={"Authorization": f"Bearer {agent}"})
            assert r.status_code == 403, r.text
            assert "reserved to admin keys" in r.json()["detail"]
        listed = httpx.get(f"{url}/warden/v1/banks/{BANK}/memories", headers={"Authorization": f"Bearer {root}"})
        assert listed.json()["items"] == []
        ok = httpx.post(
            retain,
            json={"items": [{"content": fact, "tags": ["verified:false"]}]},
            headers={"Authorization": f"Bearer {agent}"},
        )
        assert ok.status_code == 200, ok.text
        # A document's re-tag writes tags too.
        [row] = httpx.get(f"{url}/warden/v1/banks/{BANK}/memories", headers={"Authorization": f"Bearer {root}"}).json()[
            "items"
        ]
        document = f"{url}/v1/default/banks/{BANK}/documents/{row['document_id']}"
        for token, status in ((agent, 403), (root, 200)):
            r = httpx.patch(document, json={"tags": ["Source: forged"]}, headers={"Authorization": f"Bearer {token}"})
            assert r.status_code == status, r.text
        events = httpx.get(f"{url}/warden/v1/audit", headers={"Authorization": f"Bearer {root}"}).json()["events"]
        assert len([e for e in events if e["action"] == "protected_tag_refused"]) == 4
        by_admin = httpx.post(
            retain,
            json={"items": [{"content": "The audit is in May.", "tags": ["source:web"]}]},
            headers={"Authorization": f"Bearer {root}"},
        )
        assert by_admin.status_code == 200, by_admin.text
