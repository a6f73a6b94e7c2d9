"""Write governance against the real Hindsight 1.1.0, driven by the real hindsight-client."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator

import httpx
import pytest
from hindsight_client import Hindsight

from testing.switch import Switch
from tests.conftest import make_settings, running_warden

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

NOISE = [
    "这个功能有没有必要？",
    "P1-2 已完成，下一步准备跑测试",
    "https://example.com/some/page",
    "still broken",
    "please restart the worker",
    "已配置 API_KEY",
    "6/1 试了 SSH 密钥被拒",
    "好的",
]
FACTS = [
    "决定用激活码订阅模式",
    "Docker 容器 restart policy 统一设为 unless-stopped",
    "The staging cluster has 3 nodes with 16 GB RAM each.",
    "项目测试使用 pytest",
]


@pytest.fixture(scope="module")
def warden(hindsight_url: str) -> Iterator[str]:
    with running_warden(make_settings(hindsight_url)) as url:
        yield url


def hindsight_texts(hindsight_url: str, bank: str, fact_type: str | None = None) -> list[str]:
    """What Hindsight itself holds for the bank (asked directly, not through memwarden)."""
    params: dict[str, str | int] = {"limit": 500}
    if fact_type:
        params["type"] = fact_type
    r = httpx.get(f"{hindsight_url}/v1/default/banks/{bank}/memories/list", params=params, timeout=30)
    r.raise_for_status()
    return [m["text"] for m in r.json()["items"]]


async def test_noise_never_reaches_hindsight_and_facts_come_back_labelled(hindsight_url: str, warden: str) -> None:
    bank = f"gov-{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    try:
        await client.acreate_bank(bank)
        response = await client.aretain_batch(bank, [{"content": t} for t in [*NOISE, *FACTS]])
        assert response.items_count == len(FACTS)
        texts = hindsight_texts(hindsight_url, bank)
        for noise in NOISE:
            assert not any(noise in t for t in texts), f"{noise!r} reached Hindsight"
        for fact in FACTS:
            assert any(fact.rstrip(".") in t for t in texts), f"{fact!r} missing from Hindsight"

        recall = await client.arecall(
            bank,
            "Docker restart policy unless-stopped staging cluster nodes",
            types=["world"],
            tags=["topic:infra"],
            tags_match="any_strict",
        )
        assert recall.results, "nothing recalled"
        for result in recall.results:
            tags = set(result.tags or [])
            assert "topic:infra" in tags
            assert any(t.startswith("stage:") for t in tags)
    finally:
        await client.aclose()


async def test_a_duplicate_is_stored_once(hindsight_url: str, warden: str) -> None:
    bank = f"gov-dup-{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    try:
        await client.acreate_bank(bank)
        await client.aretain(bank, "用户偏好：输出简洁准确")
        again = await client.aretain(bank, " 用户偏好：输出简洁准确。 ")
        assert again.items_count == 1  # accepted, as a duplicate
        async with httpx.AsyncClient(timeout=30) as http:
            documents = (await http.get(f"{hindsight_url}/v1/default/banks/{bank}/documents")).json()
        assert documents["total"] == 1
        # One fact (Hindsight's consolidation may add an observation of it in the background).
        assert len(hindsight_texts(hindsight_url, bank, "world")) == 1
    finally:
        await client.aclose()


async def test_a_held_conflict_appears_only_when_approved(hindsight_url: str, warden: str) -> None:
    bank = f"gov-conf-{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    try:
        await client.acreate_bank(bank)
        await client.aretain(bank, "默认模型：deepseek/deepseek-v4-flash")
        held = await client.aretain(bank, "默认模型：gpt-4.1")
        assert held.items_count == 0
        assert not any("gpt-4.1" in t for t in hindsight_texts(hindsight_url, bank))

        async with httpx.AsyncClient(base_url=warden, timeout=60) as http:
            (entry,) = (await http.get(f"/warden/v1/banks/{bank}/review")).json()["items"]
            approved = await http.post(f"/warden/v1/banks/{bank}/review/{entry['held']['id']}/approve")
            assert approved.status_code == 200, approved.text
        texts = hindsight_texts(hindsight_url, bank)
        assert any("gpt-4.1" in t for t in texts)
        assert not any("deepseek" in t for t in texts), "the superseded value is still in Hindsight"
    finally:
        await client.aclose()


async def test_dry_run_leaves_hindsight_untouched(hindsight_url: str, warden: str) -> None:
    bank = f"gov-dry-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(timeout=60) as http:
        await http.put(f"{hindsight_url}/v1/default/banks/{bank}", json={})
        r = await http.post(
            f"{warden}/v1/default/banks/{bank}/memories?dry_run=true", json={"items": [{"content": f} for f in FACTS]}
        )
        assert [d["verdict"] for d in r.json()["warden"]["decisions"]] == ["store"] * len(FACTS)
    assert hindsight_texts(hindsight_url, bank) == []


async def test_an_outage_of_the_real_hindsight_is_ridden_out_by_the_outbox(hindsight_url: str) -> None:
    """The real Hindsight behind a switch: down while the hindsight-client retains through memwarden
    (accepted as an async retain), back up: the outbox delivers, Hindsight holds each document once,
    the operation id answers Hindsight's own status, and recall through memwarden finds the facts."""
    bank = f"outage-{uuid.uuid4().hex[:8]}"
    outbox = {"retry_initial": 0.1, "retry_max": 1.0}
    with Switch(hindsight_url) as switch, running_warden(make_settings(switch.url, outbox=outbox)) as url:
        client = Hindsight(base_url=url)
        http = httpx.AsyncClient(timeout=30)
        try:
            await client.acreate_bank(bank)
            switch.down()
            response = await client.aretain_batch(bank, [{"content": t} for t in FACTS])
            assert (response.items_count, response.var_async) == (len(FACTS), True)
            operation = response.operation_id
            status = (await http.get(f"{url}/v1/default/banks/{bank}/operations/{operation}")).json()
            assert status["status"] == "pending"
            switch.up()
            deadline = time.monotonic() + 120
            while status["status"] != "completed" and time.monotonic() < deadline:
                await asyncio.sleep(0.5)
                status = (await http.get(f"{url}/v1/default/banks/{bank}/operations/{operation}")).json()
            assert (status["status"], status["operation_id"]) == ("completed", operation)  # Hindsight's, our id
            documents = (await http.get(f"{hindsight_url}/v1/default/banks/{bank}/documents")).json()["items"]
            assert len(documents) == len(FACTS)  # each once
            texts = hindsight_texts(hindsight_url, bank)
            for fact in FACTS:
                assert any(fact.rstrip(".") in t for t in texts), f"{fact!r} missing from Hindsight"
            recalled = await client.arecall(bank, "Docker restart policy unless-stopped staging cluster nodes")
            assert recalled.results, "nothing recalled through memwarden"
        finally:
            await client.aclose()
            await http.delete(f"{hindsight_url}/v1/default/banks/{bank}")
            await http.aclose()
