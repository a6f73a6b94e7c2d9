"""Config governance against the real Hindsight 1.1.0, driven by the real hindsight-client."""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight

from tests.conftest import make_settings, running_warden

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

# destructive = "confirm": the wipe below is refused until confirmed (the default, "reversible", lets it through).
GUARD = {"settle_interval": 0.25, "settle_timeout": 120.0, "missions": {"mode": "seed"}, "destructive": "confirm"}
FACTS = [f"服务 svc-{i} 的内网端口统一设为 {9000 + i}，部署在 search 命名空间" for i in range(50)]


@pytest.fixture(scope="module")
def warden(hindsight_url: str) -> Iterator[str]:
    with running_warden(make_settings(hindsight_url, config_guard=GUARD)) as url:
        yield url


def direct_config(hindsight_url: str, bank: str) -> dict[str, Any]:
    """What Hindsight itself holds (asked directly, not through memwarden)."""
    r = httpx.get(f"{hindsight_url}/v1/default/banks/{bank}/config", timeout=30)
    r.raise_for_status()
    return dict(r.json())


def direct_stats(hindsight_url: str, bank: str) -> dict[str, Any]:
    r = httpx.get(f"{hindsight_url}/v1/default/banks/{bank}/stats", params={"refresh": "true"}, timeout=30)
    r.raise_for_status()
    return dict(r.json())


def direct_count(hindsight_url: str, bank: str) -> int:
    return int(direct_stats(hindsight_url, bank)["nodes_by_fact_type"].get("world", 0))


def wait_seeded(hindsight_url: str, bank: str) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if "observations_mission" in direct_config(hindsight_url, bank)["overrides"]:
            return
        time.sleep(0.2)
    raise AssertionError(f"bank {bank} was not seeded")


def audit(warden: str, bank: str) -> list[dict[str, Any]]:
    r = httpx.get(f"{warden}/warden/v1/audit", params={"bank": bank, "limit": 1000}, timeout=30)
    return list(r.json()["events"])


async def test_labels_and_missions_patched_through_memwarden_cost_nothing(hindsight_url: str, warden: str) -> None:
    bank = f"cfg-{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    try:
        await client.acreate_bank(bank)
        response = await client.aretain_batch(bank, [{"content": t} for t in FACTS])
        assert response.items_count == 50
        wait_seeded(hindsight_url, bank)  # first sight: the templates went in, in the background
        world = direct_count(hindsight_url, bank)
        assert world >= 50

        labels = [
            {"key": "topic", "type": "value", "values": [{"value": "infra"}, {"value": "code"}]},
            {"key": "project", "type": "value", "values": [{"value": "atlas"}]},
        ]
        result = await client.aupdate_bank_config(
            bank,
            entity_labels=labels,
            retain_mission="Store port and namespace facts.",
            observations_mission="Group consolidation strictly by topic.",
        )
        overrides = result.get("overrides", result)
        assert overrides["retain_mission"] == "Store port and namespace facts."

        held = direct_config(hindsight_url, bank)["overrides"]
        groups = {g["key"]: g for g in held["entity_labels"]}
        assert set(groups) == {"topic", "stage", "project"}  # merged with the seeded groups
        assert groups["topic"]["tag"] is True
        assert groups["stage"]["tag"] is True
        assert {"infra", "code", "reflection"} <= {v["value"] for v in groups["topic"]["values"]}
        assert held["observations_mission"] == "Group consolidation strictly by topic."
        through = await client.aget_bank_config(bank)  # the same, read through memwarden
        assert through["overrides"]["entity_labels"] == held["entity_labels"]
        assert direct_count(hindsight_url, bank) == world  # delta 0

        events = audit(warden, bank)
        verify = [e for e in events if e["action"] == "config_verify"][-1]
        assert verify["rule"] == "config.ok"
        assert verify["after"]["counts"]["world"] == verify["before"]["counts"]["world"] == world
        assert not [e for e in events if e["action"] == "config_rollback"]
    finally:
        await client.aclose()


async def test_flat_body_and_simple_labels_work_end_to_end(hindsight_url: str, warden: str) -> None:
    bank = f"cfg-{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(timeout=120) as http:
        flat = {"retain_mission": "Only durable facts.", "entity_labels": {"topic": ["infra"], "stage": ["decision"]}}
        direct = await http.patch(f"{hindsight_url}/v1/default/banks/{bank}/config", json=flat)
        assert direct.status_code == 422  # Hindsight itself takes only the wrapped body
        r = await http.patch(f"{warden}/v1/default/banks/{bank}/config", json=flat)
        assert r.status_code == 200, r.text
        assert r.headers["x-warden-snapshot"]
        held = direct_config(hindsight_url, bank)["overrides"]
        assert held["retain_mission"] == "Only durable facts."
        groups = {g["key"]: g for g in held["entity_labels"]}
        assert groups["topic"]["tag"] is True
        assert [v["value"] for v in groups["stage"]["values"]] == ["decision"]
        # Malformed labels are refused before anything reaches Hindsight.
        r = await http.patch(f"{warden}/v1/default/banks/{bank}/config", json={"entity_labels": ["topic"]})
        assert r.status_code == 400
        assert direct_config(hindsight_url, bank)["overrides"] == held


async def test_a_confirmed_wipe_is_snapshotted_and_rolled_back_by_hand(hindsight_url: str, warden: str) -> None:
    bank = f"cfg-{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    try:
        await client.aretain_batch(bank, [{"content": t} for t in FACTS[:8]])
        world = direct_count(hindsight_url, bank)
        async with httpx.AsyncClient(timeout=120) as http:
            r = await http.delete(f"{warden}/v1/default/banks/{bank}/memories")
            assert r.status_code == 409
            assert direct_count(hindsight_url, bank) == world
            r = await http.delete(f"{warden}/v1/default/banks/{bank}/memories", headers={"X-Warden-Confirm": bank})
            assert r.status_code == 200, r.text
            assert direct_count(hindsight_url, bank) == 0
            snaps = (await http.get(f"{warden}/warden/v1/banks/{bank}/snapshots")).json()["items"]
            wipe = next(s for s in snaps if s["reason"] == "delete_memories")
            r = await http.post(f"{warden}/warden/v1/banks/{bank}/snapshots/{wipe['id']}/rollback")
            assert r.status_code == 200, r.text
            assert r.json()["result"]["memories_restored"] == 8
        for _ in range(100):
            if direct_count(hindsight_url, bank) >= world:
                break
            await asyncio.sleep(0.2)
        assert direct_count(hindsight_url, bank) == world
    finally:
        await client.aclose()


async def test_a_patch_right_after_a_burst_of_async_retains_is_not_rolled_back(hindsight_url: str, warden: str) -> None:
    bank = f"cfg-{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    try:
        await client.acreate_bank(bank)
        for i in range(0, 40, 10):  # a burst: the server extracts and consolidates in the background
            await client.aretain_batch(bank, [{"content": t} for t in FACTS[i : i + 10]], retain_async=True)
        assert direct_stats(hindsight_url, bank)["pending_operations"] > 0  # still working when the PATCH arrives

        await client.aupdate_bank_config(bank, entity_labels=[{"key": "project", "values": [{"value": "atlas"}]}])

        events = audit(warden, bank)
        verify = [e for e in events if e["action"] == "config_verify"][-1]
        assert verify["rule"] == "config.ok"
        assert verify["after"]["settled"] is True
        assert not [e for e in events if e["action"] == "config_rollback"]
        snap = [e for e in events if e["action"] == "config_snapshot"][-1]
        assert snap["after"]["settled"] is True  # the snapshot waited for the burst to land
        assert snap["after"]["counts"]["world"] >= 40
    finally:
        await client.aclose()


def test_twenty_guarded_patches_under_concurrent_writes_roll_nothing_back(hindsight_url: str, warden: str) -> None:
    """Against the real Hindsight: four writers retain through memwarden while a client sends 20
    config PATCHes to the same bank. Each change waits for the writes in flight, writes wait for
    its verification, and no write is mistaken for a loss: no rollback, every write there."""
    import threading

    bank = f"busy-{uuid.uuid4().hex[:8]}"
    acknowledged: list[str] = []
    statuses: list[int] = []
    lock = threading.Lock()

    def writer(w: int) -> None:
        with httpx.Client(base_url=warden, timeout=120) as http:
            for i in range(8):
                text = f"Service svc-{w}-{i} listens on port {7000 + w * 100 + i} in the search namespace."
                r = http.post(f"/v1/default/banks/{bank}/memories", json={"items": [{"content": text}]})
                with lock:
                    statuses.append(r.status_code)
                    if r.status_code == 200 and r.json()["items_count"] == 1:
                        acknowledged.append(text)

    with httpx.Client(base_url=warden, timeout=300) as http:
        assert (
            http.post(f"/v1/default/banks/{bank}/memories", json={"items": [{"content": FACTS[0]}]}).status_code == 200
        )
        wait_seeded(hindsight_url, bank)
        threads = [threading.Thread(target=writer, args=(w,)) for w in range(4)]
        for t in threads:
            t.start()
        answers = []
        for n in range(20):
            r = http.patch(
                f"/v1/default/banks/{bank}/config", json={"updates": {"retain_mission": f"Keep facts ({n})."}}
            )
            answers.append(r.status_code)
        for t in threads:
            t.join()
    assert answers == [200] * 20, answers
    assert set(statuses) == {200}
    assert len(acknowledged) == 32
    assert not [e for e in audit(warden, bank) if e["action"] == "config_rollback"]
    verifies = [e for e in audit(warden, bank) if e["action"] == "config_verify"]
    assert len(verifies) >= 21
    assert all(e["rule"] == "config.ok" for e in verifies)
    r = httpx.get(f"{hindsight_url}/v1/default/banks/{bank}/memories/list", params={"limit": 1000}, timeout=60)
    held = " ".join(u["text"] for u in r.json()["items"])
    assert all(f"svc-{t.split('svc-')[1].split(' ')[0]}" in held for t in acknowledged)
    httpx.delete(f"{hindsight_url}/v1/default/banks/{bank}", timeout=60)


async def test_hindsight_memory_defense_passes_through_the_guard_untouched(hindsight_url: str, warden: str) -> None:
    """Hindsight's own ``memory_defense`` policy (its detectors: the open-source build runs
    ``sensitive_data``) is the bank's to set: memwarden's guard snapshots the change and sends it on
    as written, and an invalid one gets Hindsight's own 422."""
    bank = f"def-{uuid.uuid4().hex[:8]}"
    policy = {
        "enabled": True,
        "rules": [{"on": "sensitive_data", "action": "redact"}, {"on": "prompt_injection", "action": "block"}],
    }
    client = Hindsight(base_url=warden, timeout=120)
    try:
        await client.aretain(bank, "The staging cluster runs in eu-west-1.")
        async with httpx.AsyncClient(timeout=120) as http:
            r = await http.patch(
                f"{warden}/v1/default/banks/{bank}/config", json={"updates": {"memory_defense": policy}}
            )
            assert r.status_code == 200, r.text
            assert r.headers["x-warden-snapshot"]
            assert direct_config(hindsight_url, bank)["overrides"]["memory_defense"] == policy
            bad = {"updates": {"memory_defense": {"enabled": True, "rules": [{"on": "sensitive_data", "action": "x"}]}}}
            refused = await http.patch(f"{warden}/v1/default/banks/{bank}/config", json=bad)
            direct = await http.patch(f"{hindsight_url}/v1/default/banks/{bank}/config", json=bad)
        assert (refused.status_code, direct.status_code) == (422, 422)
        assert direct_config(hindsight_url, bank)["overrides"]["memory_defense"] == policy
    finally:
        await client.aclose()
