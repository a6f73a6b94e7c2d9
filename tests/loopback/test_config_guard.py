"""Config governance end to end: memwarden on loopback in front of the Hindsight stand-in
(``testing/standin.py``: the self-hosted store's Hindsight API) made to lose memories,
consolidate in the background and fail."""

from __future__ import annotations

import contextlib
import itertools
import json
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.db.database import Database
from testing.standin import Fault, Seen, Standin, running_standin
from tests.conftest import database_url, make_settings, running_warden

pytestmark = pytest.mark.usefixtures("engine")

FAST = {"settle_interval": 0.05, "settle_timeout": 5.0}


class Rig:
    """memwarden (``client``) in front of the stand-in (``backend``; ``direct`` reaches it past
    memwarden, to see what the backend holds)."""

    def __init__(self, backend: Standin, client: httpx.Client, data_dir: Path) -> None:
        self.backend, self.client, self.data_dir = backend, client, data_dir
        self.direct = httpx.Client(base_url=backend.url, timeout=60)

    def retain(self, bank: str, texts: list[str], *, is_async: bool = False) -> None:
        for i in range(0, len(texts), 50):
            items = [{"content": t, "tags": ["user:ops"]} for t in texts[i : i + 50]]
            r = self.client.post(f"/v1/default/banks/{bank}/memories", json={"items": items, "async": is_async})
            assert r.status_code == 200, r.text
            assert r.json()["items_count"] == len(items), r.text

    def audit(self, bank: str) -> list[dict[str, Any]]:
        r = self.client.get("/warden/v1/audit", params={"bank": bank, "limit": 1000})
        assert r.status_code == 200
        return list(r.json()["events"])

    def snapshots(self, bank: str) -> list[dict[str, Any]]:
        r = self.client.get(f"/warden/v1/banks/{bank}/snapshots")
        assert r.status_code == 200
        return list(r.json()["items"])

    def _listed(self, bank: str, what: str) -> list[dict[str, Any]]:
        r = self.direct.get(f"/v1/default/banks/{bank}/{what}", params={"limit": 100_000})
        if r.status_code == 404:  # no such bank: it holds nothing
            return []
        assert r.status_code == 200, r.text
        return list(r.json()["items"])

    def units(self, bank: str) -> list[dict[str, Any]]:
        """The memories the backend holds."""
        return self._listed(bank, "memories/list")

    def documents(self, bank: str) -> list[dict[str, Any]]:
        return self._listed(bank, "documents")

    def texts(self, bank: str) -> set[str]:
        return {u["text"] for u in self.units(bank)}

    def overrides(self, bank: str) -> dict[str, Any]:
        """The bank's config overrides in the backend."""
        r = self.direct.get(f"/v1/default/banks/{bank}/config")
        return {} if r.status_code == 404 else dict(r.json()["overrides"])

    def set_overrides(self, bank: str, **updates: Any) -> None:
        """Configure the bank in the backend directly, as if before memwarden was there."""
        assert self.direct.patch(f"/v1/default/banks/{bank}/config", json={"updates": updates}).status_code == 200

    def patches(self, bank: str) -> list[Seen]:
        """Every config PATCH of the bank the backend received."""
        return self.backend.seen("PATCH", f"^/v1/default/banks/{bank}/config$")


@pytest.fixture
def rig_factory(tmp_path: Path) -> Iterator[Any]:
    made = itertools.count()
    with contextlib.ExitStack() as stack:

        def make(*, consolidation_seconds: float = 0.0, **guard: Any) -> Rig:
            n = next(made)
            backend = stack.enter_context(
                running_standin(tmp_path / f"backend{n}", consolidation_seconds=consolidation_seconds)
            )
            cfg = {**FAST, "missions": {"mode": "off"}, **guard}
            data_dir = tmp_path / f"data{n}"
            url = stack.enter_context(running_warden(make_settings(backend.url, data_dir=data_dir, config_guard=cfg)))
            rig = Rig(backend, stack.enter_context(httpx.Client(base_url=url, timeout=60)), data_dir)
            stack.enter_context(rig.direct)
            return rig

        yield make


def facts(n: int, start: int = 0) -> list[str]:
    return [f"服务 svc-{i} 的内网端口统一设为 {9000 + i}，部署在 search 命名空间" for i in range(start, start + n)]


LABELS_SIMPLE = {"entity_labels": {"topic": ["infra", "code"], "stage": ["decision", "reference"]}}


def test_the_incident_229_memories_170_dropped_is_rolled_back_and_told(rig_factory: Any) -> None:
    rig = rig_factory()
    rig.retain("ops", facts(229))
    assert len(rig.units("ops")) == 229
    before_texts = rig.texts("ops")

    rig.backend.drop_on_entity_labels = 170  # the backend that silently loses memories
    r = rig.client.patch("/v1/default/banks/ops/config", json={"updates": LABELS_SIMPLE})

    assert r.status_code == 409
    assert r.headers["content-type"] == "application/problem+json"
    body = r.json()
    # Verified by inventory: 170 of the snapshot's 229 memories (and their documents) are gone.
    assert body["dropped"]["memories"] == {"before": 229, "after": 59, "delta": -170}
    assert body["dropped"]["documents"] == {"before": 229, "after": 59, "delta": -170}
    assert body["restored"]["memories_restored"] == 170
    assert body["restored"]["overrides_restored"] == ["entity_labels"]
    assert body["restored"]["verified_counts"]["world"] == 229
    assert body["restored"]["complete"] is True
    assert body["snapshot_id"] == r.headers["x-warden-snapshot"]
    assert "170" in body["detail"]
    assert "229" in body["detail"]
    # All 229 are back, with their content, tags and document ids; the labels change is undone.
    assert rig.texts("ops") == before_texts
    assert all(sorted(u["tags"]) == ["stage:decision", "topic:infra", "user:ops"] for u in rig.units("ops"))
    assert all(d["id"].startswith("mw-") for d in rig.documents("ops"))
    assert "entity_labels" not in rig.overrides("ops")
    # The audit log tells the story, in order.
    actions = [e["action"] for e in rig.audit("ops") if e["action"].startswith(("config_", "restore"))]
    assert actions[:3] == ["config_snapshot", "config_patch", "config_verify"]
    assert actions.count("restore") == 170
    assert actions[-1] == "config_rollback"
    verify = next(e for e in rig.audit("ops") if e["action"] == "config_verify")
    assert verify["rule"] == "config.drop"
    assert "memories 229 → 59" in verify["reason"]
    snap = rig.snapshots("ops")[0]
    assert snap["outcome"] == "rolled_back"
    assert snap["counts"]["world"] == 229
    assert snap["memories"] == 229


def test_a_rollback_whose_own_patch_loses_memories_still_restores_everything(rig_factory: Any) -> None:
    rig = rig_factory()
    rig.retain("ops", facts(229))
    before_texts = rig.texts("ops")
    rig.backend.drop_on_entity_labels = 170
    rig.backend.drop_on_labels_reset = True  # restoring the old labels drops the other 59 too

    r = rig.client.patch("/v1/default/banks/ops/config", json=LABELS_SIMPLE)

    assert r.status_code == 409
    assert r.json()["restored"]["memories_restored"] == 229  # re-planned after the restoring PATCH
    assert r.json()["restored"]["verified_counts"]["world"] == 229
    assert rig.texts("ops") == before_texts


def test_a_patch_right_after_async_retains_with_consolidation_running_is_not_rolled_back(rig_factory: Any) -> None:
    rig = rig_factory(consolidation_seconds=1.0)  # and Hindsight's 60 s stats cache
    # Prime Hindsight's stats cache while the bank is empty: a reader without refresh=true would
    # now see 0 facts for a minute.
    assert rig.client.put("/v1/default/banks/busy", json={}).status_code == 200
    assert rig.client.get("/v1/default/banks/busy/stats").json()["nodes_by_fact_type"].get("world", 0) == 0
    rig.retain("busy", facts(30), is_async=True)
    assert rig.client.get("/v1/default/banks/busy/stats").json()["pending_operations"] == 0  # cached: lies

    r = rig.client.patch("/v1/default/banks/busy/config", json={"updates": LABELS_SIMPLE})

    assert r.status_code == 200, r.text
    snap = rig.snapshots("busy")[0]
    assert snap["outcome"] == "kept"
    assert snap["settled"] is True  # waited for the consolidation to finish
    assert snap["counts"]["world"] == 30  # read from the inventory once settled, not the cached 0
    fresh = rig.client.get("/v1/default/banks/busy/stats", params={"refresh": "true"}).json()
    assert fresh["nodes_by_fact_type"].get("observation", 0) > 0  # consolidation reshaped observations
    assert not [e for e in rig.audit("busy") if e["action"] == "config_rollback"]
    verify = next(e for e in rig.audit("busy") if e["action"] == "config_verify")
    assert verify["rule"] == "config.ok"
    assert verify["after"]["settled"] is True


def test_flat_body_and_simple_entity_labels_reach_the_backend_in_its_format(rig_factory: Any) -> None:
    rig = rig_factory()
    r = rig.client.patch("/v1/default/banks/b/config", json={"retain_mission": "Store facts.", **LABELS_SIMPLE})
    assert r.status_code == 200, r.text
    sent = rig.patches("b")[-1].body["updates"]
    assert sent["retain_mission"] == "Store facts."
    groups = {g["key"]: g for g in sent["entity_labels"]}
    assert groups["topic"]["tag"] is True
    assert groups["stage"]["tag"] is True
    assert [v["value"] for v in groups["topic"]["values"]] == ["infra", "code"]
    assert r.json()["overrides"]["retain_mission"] == "Store facts."
    # Env-style keys are accepted too (Hindsight normalises them the same way).
    r = rig.client.patch("/v1/default/banks/b/config", json={"updates": {"HINDSIGHT_API_RETAIN_CHUNK_SIZE": 2000}})
    assert r.status_code == 200
    assert rig.overrides("b")["retain_chunk_size"] == 2000


def test_container_fields_are_merged_not_replaced(rig_factory: Any) -> None:
    rig = rig_factory()
    project = [{"key": "project", "type": "value", "values": [{"value": "atlas"}]}]
    assert (
        rig.client.patch("/v1/default/banks/b/config", json={"updates": {"entity_labels": project}}).status_code == 200
    )
    r = rig.client.patch("/v1/default/banks/b/config", json={"updates": {"retain_strategies": {"fast": {"a": 1}}}})
    assert r.status_code == 200
    # A client re-sending only its own group (the #3927 pattern) keeps everyone else's.
    r = rig.client.patch("/v1/default/banks/b/config", json=LABELS_SIMPLE)
    assert r.status_code == 200
    r = rig.client.patch("/v1/default/banks/b/config", json={"retain_strategies": {"slow": {"b": 2}}})
    overrides = rig.overrides("b")
    assert {g["key"] for g in overrides["entity_labels"]} == {"project", "topic", "stage"}
    assert overrides["retain_strategies"] == {"fast": {"a": 1}, "slow": {"b": 2}}
    # New values of a known group are added to it; X-Warden-Replace replaces on purpose.
    r = rig.client.patch("/v1/default/banks/b/config", json={"entity_labels": {"topic": ["research"]}})
    topic = next(g for g in rig.overrides("b")["entity_labels"] if g["key"] == "topic")
    assert [v["value"] for v in topic["values"]] == ["infra", "code", "research"]
    r = rig.client.patch(
        "/v1/default/banks/b/config",
        json={"entity_labels": {"topic": ["research"]}},
        headers={"X-Warden-Replace": "entity_labels"},
    )
    assert [g["key"] for g in rig.overrides("b")["entity_labels"]] == ["topic"]


def test_missions_enforce_overrides_client_values_and_says_which(rig_factory: Any) -> None:
    rig = rig_factory(missions={"mode": "enforce", "retain_mission": "THE MISSION"})
    r = rig.client.patch(
        "/v1/default/banks/b/config", json={"updates": {"retain_mission": "mine", "retain_chunk_size": 900}}
    )
    assert r.status_code == 200, r.text
    assert r.headers["x-warden-overridden"] == "retain_mission"
    overrides = rig.overrides("b")
    assert overrides["retain_mission"] == "THE MISSION"
    assert overrides["retain_chunk_size"] == 900
    assert overrides["observations_mission"].startswith("Group consolidation strictly by topic")
    assert {g["key"] for g in overrides["entity_labels"]} == {"topic", "stage"}
    # A client's own label group survives; the template groups are put back in.
    r = rig.client.patch(
        "/v1/default/banks/b/config",
        json={"updates": {"entity_labels": [{"key": "topic", "values": ["only-this"]}]}},
        headers={"X-Warden-Replace": "entity_labels"},
    )
    assert r.headers["x-warden-overridden"] == "entity_labels"
    topic = next(g for g in rig.overrides("b")["entity_labels"] if g["key"] == "topic")
    assert {"infra", "reflection"} <= {v["value"] for v in topic["values"]}


def test_missions_seed_fills_what_is_absent_on_first_sight(rig_factory: Any) -> None:
    rig = rig_factory(missions={"mode": "seed"})
    rig.set_overrides("old", retain_mission="the team's own")
    rig.retain("old", facts(3))  # first sight: seeding runs in the background
    deadline = time.monotonic() + 10
    while "observations_mission" not in rig.overrides("old") and time.monotonic() < deadline:
        time.sleep(0.05)
    overrides = rig.overrides("old")
    assert overrides["retain_mission"] == "the team's own"  # seed never replaces
    assert overrides["observations_mission"].startswith("Group consolidation strictly by topic")
    assert {g["key"] for g in overrides["entity_labels"]} == {"topic", "stage"}
    assert rig.snapshots("old")[0]["reason"] == "seed"
    patches = len(rig.patches("old"))
    rig.retain("old", facts(2, start=10))
    time.sleep(0.3)
    assert len(rig.patches("old")) == patches  # seeded once


def test_destructive_routes_need_confirmation_and_are_snapshotted(rig_factory: Any) -> None:
    rig = rig_factory(destructive="confirm")
    rig.retain("team", facts(12))
    for method, path in (
        ("DELETE", "/v1/default/banks/team/memories"),
        ("DELETE", "/v1/default/banks/team"),
        ("DELETE", "/v1/default/banks/team/config"),
        ("DELETE", f"/v1/default/banks/team/documents/{rig.documents('team')[0]['id']}"),
    ):
        r = rig.client.request(method, path)
        assert r.status_code == 409, path
        assert r.json()["type"].endswith("confirmation-required")
        assert "X-Warden-Confirm: team" in r.json()["detail"]
        r = rig.client.request(method, path, headers={"X-Warden-Confirm": "other-bank"})
        assert r.status_code == 409, path
    assert len(rig.units("team")) == 12  # nothing reached the backend
    assert rig.snapshots("team") == []

    r = rig.client.delete("/v1/default/banks/team/memories", headers={"X-Warden-Confirm": "team"})
    assert r.status_code == 200
    assert r.json()["deleted_count"] == 12
    assert rig.units("team") == []
    snap = rig.snapshots("team")[0]
    assert (snap["reason"], snap["memories"], snap["outcome"]) == ("delete_memories", 12, "applied")
    # The ledger's copies are archived, not active: the same fact sent again is stored again.
    archived = [e for e in rig.audit("team") if e["action"] == "archive"]
    assert len(archived) == 12
    # ... and the snapshot brings everything back, preview first.
    r = rig.client.post(f"/warden/v1/banks/team/snapshots/{snap['id']}/rollback", params={"preview": "true"})
    assert r.status_code == 200
    assert r.json()["plan"]["memories_to_restore"] == 12
    assert rig.units("team") == []  # a preview changes nothing
    typo = rig.client.post(f"/warden/v1/banks/team/snapshots/{snap['id']}/rollback", params={"preview": "ture"})
    assert (typo.status_code, typo.json()["detail"][0]["loc"]) == (422, ["query", "preview"])
    assert rig.units("team") == []  # a mistyped preview is no order to roll back
    r = rig.client.post(f"/warden/v1/banks/team/snapshots/{snap['id']}/rollback")
    assert r.status_code == 200
    assert r.json()["result"]["memories_restored"] == 12
    assert len(rig.units("team")) == 12
    assert len([e for e in rig.audit("team") if e["action"] == "restore"]) == 12


@pytest.mark.parametrize(("policy", "header", "status"), [("block", "b", 409), ("allow", None, 200)])
def test_destructive_policy_block_and_allow(rig_factory: Any, policy: str, header: str | None, status: int) -> None:
    rig = rig_factory(destructive=policy)
    rig.retain("b", facts(2))
    headers = {"X-Warden-Confirm": header} if header else {}
    r = rig.client.delete("/v1/default/banks/b/memories", headers=headers)
    assert r.status_code == status
    assert len(rig.units("b")) == (2 if status == 409 else 0)


@pytest.mark.parametrize(
    ("body", "status", "fragment"),
    [
        ({"updates": {"entity_labels": ["topic", "stage"]}}, 400, "Invalid entity_labels format"),
        ({"entity_labels": {"topic": "infra"}}, 400, "must be a list of values"),
        ({"entity_labels": [{"key": "topic", "type": "colour", "values": []}]}, 400, "is not one of"),
        ({"entity_labels": [{"key": "topic", "values": [{"value": ""}]}]}, 400, "non-empty string"),
        ({"updates": {"retain_missoin": "typo"}}, 400, "Unknown configuration fields: ['retain_missoin']"),
        ({"updates": "everything"}, 422, "Input should be a valid dictionary"),  # Hindsight's model refuses it
        ({"updates": {}, "extra": 1}, 400, "next to 'updates'"),
        ([1, 2], 400, "must be a JSON object"),
    ],
)
def test_bad_config_input_is_refused_and_changes_nothing(
    rig_factory: Any, body: Any, status: int, fragment: str
) -> None:
    rig = rig_factory()
    rig.set_overrides("b", retain_mission="kept")
    patches = len(rig.patches("b"))
    r = rig.client.patch("/v1/default/banks/b/config", json=body)
    assert r.status_code == status, r.text
    assert fragment in r.text
    assert len(rig.patches("b")) == patches  # nothing reached the backend
    assert rig.overrides("b") == {"retain_mission": "kept"}
    assert rig.snapshots("b") == []  # refused before anything was read or recorded


def test_malformed_json_gets_hindsights_422(rig_factory: Any) -> None:
    rig = rig_factory()
    r = rig.client.patch(
        "/v1/default/banks/b/config", content=b'{"updates": {', headers={"content-type": "application/json"}
    )
    assert r.status_code == 422
    assert r.json()["detail"][0]["type"] == "json_invalid"
    assert rig.patches("b") == []


def test_a_backend_failing_mid_rollback_is_reported_truthfully_and_the_rollback_resumes(rig_factory: Any) -> None:
    rig = rig_factory()
    rig.retain("ops", facts(150))
    before = rig.texts("ops")
    rig.backend.drop_on_entity_labels = 120
    # The first restore batch (50) gets through, then retains fail.
    rig.backend.faults.append(Fault("POST", "/memories$", 500, "database exploded", after=1))

    r = rig.client.patch("/v1/default/banks/ops/config", json=LABELS_SIMPLE)

    assert r.status_code == 502
    body = r.json()
    assert body["type"].endswith("config-rollback-incomplete")
    assert body["restored"]["complete"] is False
    assert body["restored"]["memories_restored"] == 50
    assert f"memwarden config rollback ops {body['snapshot_id']}" in body["detail"]
    assert len(rig.units("ops")) == 30 + 50
    assert rig.snapshots("ops")[0]["outcome"] == "rollback_incomplete"

    rig.backend.faults.clear()  # the backend recovers; resume by hand
    sid = body["snapshot_id"]
    preview = rig.client.post(f"/warden/v1/banks/ops/snapshots/{sid}/rollback", params={"preview": "true"}).json()
    assert preview["plan"]["memories_to_restore"] == 70
    assert preview["plan"]["restore_overrides"] == {}  # already restored the first time
    r = rig.client.post(f"/warden/v1/banks/ops/snapshots/{sid}/rollback")
    assert r.status_code == 200
    assert r.json()["result"]["complete"] is True
    assert rig.texts("ops") == before
    assert rig.snapshots("ops")[0]["outcome"] == "rolled_back"


def test_concurrent_patches_on_one_bank_are_serialized(rig_factory: Any) -> None:
    rig = rig_factory(consolidation_seconds=0.4)
    rig.retain("b", facts(5), is_async=True)  # keeps the first change settling for a while
    results: dict[str, int] = {}

    def patch(key: str, value: Any) -> None:
        results[key] = rig.client.patch("/v1/default/banks/b/config", json={key: value}).status_code

    threads = [
        threading.Thread(target=patch, args=("retain_mission", "one")),
        threading.Thread(target=patch, args=("retain_chunk_size", 1234)),
    ]
    for t in threads:
        t.start()
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert results == {"retain_mission": 200, "retain_chunk_size": 200}
    first, second = sorted(rig.snapshots("b"), key=lambda s: s["created_at"])
    # The second change was snapshotted only after the first was applied and verified.
    assert first["override_keys"] == []
    assert second["override_keys"] == ["retain_mission"]
    events = [e["action"] for e in rig.audit("b") if e["action"].startswith("config_")]
    assert events == ["config_snapshot", "config_patch", "config_verify"] * 2


def test_snapshots_are_listed_by_the_cli(rig_factory: Any) -> None:
    from click.testing import CliRunner

    from memwarden.proxy.cli import main

    rig = rig_factory()
    rig.retain("b", facts(3))
    assert rig.client.patch("/v1/default/banks/b/config", json={"retain_mission": "x"}).status_code == 200
    out = CliRunner().invoke(main, ["config", "snapshots", "b", "--url", str(rig.client.base_url)])
    assert out.exit_code == 0, out.output
    assert "config_patch" in out.output
    assert "kept" in out.output
    assert "world=3" in out.output
    out = CliRunner().invoke(main, ["config", "snapshots", "b", "--url", str(rig.client.base_url), "--json"])
    lines = [line for line in out.output.splitlines() if line.startswith("{")]  # the server logs here too
    assert json.loads(lines[0])["reason"] == "config_patch"


def test_snapshots_survive_in_the_ledger(rig_factory: Any) -> None:
    rig = rig_factory()
    rig.retain("b", facts(2))
    assert rig.client.patch("/v1/default/banks/b/config", json={"retain_mission": "x"}).status_code == 200
    ledger = Database.open(rig.data_dir, mirror=False, url=database_url())
    try:
        rows = ledger.read_sync(
            lambda db: db.execute("SELECT bank, reason, inventory FROM config_snapshots").fetchall()
        )
    finally:
        ledger.close()
    assert [(r["bank"], r["reason"]) for r in rows] == [("b", "config_patch")]
    inventory = json.loads(rows[0]["inventory"])
    assert len(inventory["memories"]) == 2
    assert all(len(m["content_hash"]) == 64 for m in inventory["memories"])


def test_cli_rollback_previews_asks_and_restores(rig_factory: Any) -> None:
    from click.testing import CliRunner

    from memwarden.proxy.cli import main

    rig = rig_factory()
    rig.retain("b", facts(6))
    assert rig.client.delete("/v1/default/banks/b/memories", headers={"X-Warden-Confirm": "b"}).status_code == 200
    sid = rig.snapshots("b")[0]["id"]
    url = str(rig.client.base_url)
    out = CliRunner().invoke(main, ["config", "rollback", "b", sid, "--url", url], input="n\n")
    assert out.exit_code == 1
    assert "memories to re-create:       6 in 6 documents" in out.output
    assert rig.units("b") == []  # declined: nothing done
    out = CliRunner().invoke(main, ["config", "rollback", "b", sid, "--url", url], input="y\n")
    assert out.exit_code == 0, out.output
    assert "Restored 6 memories in 6 documents" in out.output
    assert len(rig.units("b")) == 6
    out = CliRunner().invoke(main, ["config", "rollback", "b", sid, "--url", url])
    assert "Nothing to do" in out.output
    out = CliRunner().invoke(main, ["config", "rollback", "b", "nope", "--url", url])
    assert out.exit_code == 1
    assert "no snapshot nope" in out.output


def test_a_confirmed_config_reset_is_snapshotted_and_verified(rig_factory: Any) -> None:
    rig = rig_factory()
    rig.retain("b", facts(4))
    assert rig.client.patch("/v1/default/banks/b/config", json={"retain_mission": "x"}).status_code == 200
    r = rig.client.delete("/v1/default/banks/b/config", headers={"X-Warden-Confirm": "b"})
    assert r.status_code == 200
    assert r.json()["overrides"] == {}
    assert rig.overrides("b") == {}
    snap = rig.snapshots("b")[0]
    assert (snap["reason"], snap["outcome"], snap["override_keys"]) == ("config_delete", "kept", ["retain_mission"])
    # ... and the snapshot can put the overrides back.
    r = rig.client.post(f"/warden/v1/banks/b/snapshots/{snap['id']}/rollback")
    assert r.status_code == 200
    assert r.json()["result"]["overrides_restored"] == ["retain_mission"]
    assert rig.overrides("b") == {"retain_mission": "x"}


def test_a_backend_that_cannot_be_read_gets_502_and_nothing_changes(tmp_path: Path) -> None:
    from testing.loopback import free_port

    settings = make_settings(
        f"http://127.0.0.1:{free_port()}", data_dir=tmp_path, read_retries=0, config_guard={**FAST}
    )
    with running_warden(settings) as url, httpx.Client(base_url=url, timeout=30) as client:
        r = client.patch("/v1/default/banks/b/config", json={"retain_mission": "x"})
        assert r.status_code == 502
        assert "taking the snapshot (nothing was changed)" in r.json()["detail"]
        r = client.delete("/v1/default/banks/b/memories", headers={"X-Warden-Confirm": "b"})
        assert r.status_code == 502
        assert client.get("/warden/v1/banks/b/snapshots").json()["items"] == []
        assert client.get("/warden/health").status_code == 200  # still serving


def test_a_bank_whose_seeding_fails_is_not_retried_on_every_retain(rig_factory: Any) -> None:
    rig = rig_factory(missions={"mode": "seed"})
    rig.backend.faults.append(Fault("PATCH", "/config$", 500, "config store unavailable"))
    for i in range(4):
        rig.retain("b", facts(1, start=i))
        time.sleep(0.2)  # let the background attempt run
    # One attempt, then a pause (config_api.SEED_RETRY_SECONDS): retains are not taxed by retries.
    assert [p.status for p in rig.patches("b")] == [500]  # one attempt
    assert len(rig.units("b")) == 4  # and the retains themselves went through


def _writers(
    rig: Rig, bank: str, writers: int, per_writer: int, start: int
) -> tuple[list[threading.Thread], list[str], list[int]]:
    """``writers`` threads, each retaining ``per_writer`` facts one request at a time; the texts
    memwarden acknowledged (200) and every status seen."""
    acknowledged: list[str] = []
    statuses: list[int] = []
    lock = threading.Lock()

    def run(w: int) -> None:
        with httpx.Client(base_url=str(rig.client.base_url), timeout=120) as http:
            for text in facts(per_writer, start + w * per_writer):
                r = http.post(f"/v1/default/banks/{bank}/memories", json={"items": [{"content": text}]})
                with lock:
                    statuses.append(r.status_code)
                    if r.status_code == 200 and r.json()["items_count"] == 1:
                        acknowledged.append(text)

    threads = [threading.Thread(target=run, args=(w,)) for w in range(writers)]
    return threads, acknowledged, statuses


def test_the_seed_racing_a_burst_of_writes_loses_nothing(rig_factory: Any) -> None:
    """The incident replayed: 229 decisions into a new bank in five batches of 50, back to back;
    memwarden's own first-sight seeding (missions "seed") sets entity_labels, which this backend
    answers by silently deleting memories. The seed waits until the bank is quiet, writes wait for
    its verification, and what its PATCH lost is re-created."""
    rig = rig_factory(missions={"mode": "seed"})
    rig.backend.drop_on_entity_labels = 41
    texts = facts(229)
    rig.retain("burst", texts)  # five requests; the first reveals the bank and starts the seed
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline and not [s for s in rig.snapshots("burst") if s["outcome"]]:
        time.sleep(0.1)
    seed = rig.snapshots("burst")[0]
    assert seed["reason"] == "seed"
    assert rig.patches("burst"), "the seed reached the backend"
    assert rig.texts("burst") == set(texts)  # nothing lost
    if seed["outcome"] == "rolled_back":  # the PATCH cost memories: re-created, audited
        assert [e for e in rig.audit("burst") if e["action"] == "config_rollback"]
    else:
        assert seed["outcome"] == "kept"  # it ran before any memory was there to lose


def test_eight_writers_during_client_patches_lose_nothing(rig_factory: Any) -> None:
    rig = rig_factory()
    rig.retain("busy", facts(40))
    rig.backend.drop_on_entity_labels = 15
    threads, acknowledged, statuses = _writers(rig, "busy", 8, 15, start=1000)
    for t in threads:
        t.start()
    answers = []
    for _ in range(3):
        answers.append(rig.client.patch("/v1/default/banks/busy/config", json=LABELS_SIMPLE).status_code)
        time.sleep(0.05)
    for t in threads:
        t.join()
    assert all(code in (200, 409) for code in answers), answers
    assert 409 in answers  # the backend did lose memories, and the client was told
    assert set(statuses) == {200}  # every writer waited at most its bound: none refused
    assert len(acknowledged) == 120
    assert set(acknowledged) | set(facts(40)) <= rig.texts("busy")  # every acknowledged write is there
