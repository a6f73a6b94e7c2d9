"""Deletes are reversible by default (issue #34): an unchanged Hindsight client deletes a document,
a bank's memories, a whole bank and its config, and hears what Hindsight would answer; one
``memwarden restore`` brings each back. Self-hosted and in front of the real Hindsight 1.1.0.
Past ``config_guard.restore_days``, retention erases what a deletion removed."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from click.testing import CliRunner
from hindsight_client import Hindsight

from memwarden.proxy.cli import main
from memwarden.settings import load_settings
from tests.conftest import make_settings, running_warden

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

FACTS = {
    "d1": "Maria moved the staging database to eu-west-2 last Tuesday.",
    "d2": "The payments service is owned by Kenji's team in Osaka.",
    "d3": "Nightly backups of the billing cluster run at 02:30 UTC.",
}


def _local(data_dir: str, **extra: Any) -> Any:
    """memwarden self-hosted with its default settings, but the hashing embedder (no model load)
    and no scheduled retention (the tests run it when they choose)."""
    return load_settings(
        environ={},
        overrides={"data_dir": data_dir, "local": {"embedder": "hashing"}, "retention": {"enabled": False}, **extra},
    )


@pytest.fixture(params=["self-hosted", "in-front-of-hindsight"], scope="module")
def warden(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data_dir = str(tmp_path_factory.mktemp("reversible"))
    if request.param == "self-hosted":
        settings = _local(data_dir)
    else:
        hindsight_url = request.getfixturevalue("hindsight_url")
        settings = make_settings(hindsight_url, data_dir=data_dir, config_guard={})  # the defaults
    assert settings.config_guard.destructive == "reversible"
    with running_warden(settings) as url:
        yield url


def restore(url: str, bank: str, *snapshot: str) -> str:
    result = CliRunner().invoke(main, ["restore", bank, *snapshot, "--url", url, "--yes"])
    assert result.exit_code == 0, result.output
    return result.output


def texts(url: str, bank: str) -> str:
    r = httpx.get(f"{url}/v1/default/banks/{bank}/memories/list", params={"limit": 100}, timeout=30)
    assert r.status_code == 200, r.text
    return " ".join(m["text"] for m in r.json()["items"])


async def ahas(http: httpx.AsyncClient, bank: str, *keys: str) -> list[bool]:
    r = await http.get(f"/v1/default/banks/{bank}/memories/list", params={"limit": 100})
    assert r.status_code == 200, r.text
    held = " ".join(m["text"] for m in r.json()["items"])
    return [k in held for k in keys]


def has(url: str, bank: str, *keys: str) -> list[bool]:
    held = texts(url, bank)
    return [k in held for k in keys]


async def test_the_unchanged_client_deletes_and_one_command_restores(warden: str) -> None:
    bank = f"rev_{uuid.uuid4().hex[:8]}"
    client = Hindsight(base_url=warden)
    http = httpx.AsyncClient(base_url=warden)
    try:
        await client.acreate_bank(bank, mission="Keep the platform team's operational facts.")
        for doc, fact in FACTS.items():
            await client.aretain(bank, fact, document_id=doc)
        assert await ahas(http, bank, "eu-west-2", "Kenji", "02:30") == [True, True, True]

        # A document: Hindsight's answer, and the snapshot that undoes it named in a header.
        r = await http.delete(f"/v1/default/banks/{bank}/documents/d1")
        assert r.status_code == 200, r.text
        assert (r.json()["success"], r.json()["document_id"]) == (True, "d1")
        doc_snapshot = r.headers["x-warden-snapshot"]
        assert await ahas(http, bank, "eu-west-2", "Kenji") == [False, True]

        # The whole bank, through the client's own method: gone, as the client expects.
        answer = await client.adelete_bank(bank)
        assert answer.success is True
        r = await http.get(f"/v1/default/banks/{bank}/memories/list")
        assert r.status_code == 404 or r.json()["items"] == []

        # One command: the latest deletion (the bank) undone, its config overrides with it.
        out = restore(warden, bank)
        assert "delete_bank" in out
        assert "Restored" in out
        assert await ahas(http, bank, "eu-west-2", "Kenji", "02:30") == [False, True, True]
        # Then the document deleted before it, by the id the delete's answer named.
        restore(warden, bank, doc_snapshot)
        assert await ahas(http, bank, "eu-west-2") == [True]

        # Every memory at once, and the config: both answered as Hindsight answers, both undone.
        overrides = (await http.get(f"/v1/default/banks/{bank}/config")).json()["overrides"]
        assert "entity_labels" in overrides  # seeded by the missions: something a reset loses
        r = await http.delete(f"/v1/default/banks/{bank}/memories")
        assert r.status_code == 200, r.text
        assert r.json()["success"] is True
        assert await ahas(http, bank, "Kenji") == [False]
        restore(warden, bank)
        assert await ahas(http, bank, "eu-west-2", "Kenji", "02:30") == [True, True, True]
        r = await http.delete(f"/v1/default/banks/{bank}/config")
        assert r.status_code == 200, r.text
        restore(warden, bank)
        assert (await http.get(f"/v1/default/banks/{bank}/config")).json()["overrides"] == overrides

        # Nothing left to undo: said, not guessed.
        result = CliRunner().invoke(main, ["restore", bank, "--url", warden, "--yes"])
        assert result.exit_code != 0
        assert "no deletion of bank" in result.output
    finally:
        await client.aclose()
        await http.aclose()


def test_confirm_remains_a_setting(tmp_path: Any) -> None:
    with running_warden(_local(str(tmp_path), config_guard={"destructive": "confirm"})) as url:
        httpx.post(
            f"{url}/v1/default/banks/c/memories", json={"items": [{"content": FACTS["d2"]}]}, timeout=60
        ).raise_for_status()
        r = httpx.delete(f"{url}/v1/default/banks/c", timeout=30)
        assert r.status_code == 409
        assert "X-Warden-Confirm: c" in r.json()["detail"]
        assert has(url, "c", "Kenji") == [True]


def test_past_the_window_retention_erases_what_a_deletion_removed(tmp_path: Any) -> None:
    settings = _local(str(tmp_path), config_guard={"restore_days": 1e-9})  # a window already over
    with running_warden(settings) as url:
        httpx.post(
            f"{url}/v1/default/banks/w/memories",
            json={"items": [{"content": FACTS["d3"], "document_id": "d3"}, {"content": FACTS["d2"]}]},
            timeout=60,
        ).raise_for_status()
        r = httpx.delete(f"{url}/v1/default/banks/w/documents/d3", timeout=60)
        assert r.status_code == 200
        snapshot = r.headers["x-warden-snapshot"]

        dry = httpx.post(f"{url}/warden/v1/retention/run", params={"dry_run": "true"}, timeout=60).json()
        assert dry["expired"] == [{"snapshot_id": snapshot, "bank": "w", "memories": 1}]
        result = CliRunner().invoke(main, ["retention", "run", "--url", url])
        assert result.exit_code == 0
        assert f"expired: deletion {snapshot} of bank w" in result.output

        # The undo window is closed: the text is out of the ledger, a hash in the audit.
        audit = httpx.get(f"{url}/warden/v1/audit", params={"bank": "w", "action": "erase"}, timeout=30).json()
        (event,) = audit["events"]
        assert event["source"] == "retention"
        assert "content_hash" in event["after"]
        assert "02:30" not in str(event)
        result = CliRunner().invoke(main, ["restore", "w", "--url", url, "--yes"])
        assert result.exit_code != 0
        assert "no deletion of bank w" in result.output
        assert has(url, "w", "Kenji", "02:30") == [True, False]  # the rest of the bank untouched


async def test_a_document_governance_kept_out_is_deleted_as_the_client_asks(warden: str) -> None:
    """The client sent it, memwarden did not store it (noise): the client's delete of it succeeds as
    Hindsight's would have, and a document nobody sent is still Hindsight's 404."""
    bank = f"kept_{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=warden, timeout=60) as http:
        r = await http.post(
            f"/v1/default/banks/{bank}/memories",
            json={"items": [{"content": "What was the deploy command again?", "document_id": "noise-doc"}]},
        )
        assert r.json()["items_count"] == 0  # governance kept it out
        r = await http.delete(f"/v1/default/banks/{bank}/documents/noise-doc")
        assert r.status_code == 200, r.text
        assert r.json() == {
            "success": True,
            "message": "Document 'noise-doc' and 0 associated memory units deleted successfully",
            "document_id": "noise-doc",
            "memory_units_deleted": 0,
        }
        r = await http.delete(f"/v1/default/banks/{bank}/documents/never-sent")
        assert r.status_code == 404


def test_what_memwarden_never_wrote_comes_back_too(hindsight_url: str, tmp_path: Any) -> None:
    """A document written to Hindsight before memwarden stood in front of it: the ledger has no copy,
    so memwarden reads it from Hindsight before the bank's delete and keeps it (its secret masked:
    memwarden stores none); the restore brings it back."""
    bank = f"pre_{uuid.uuid4().hex[:8]}"
    before = "The billing cluster was moved to Frankfurt; the db password is Tr0ub4dor&3xyz, rotate it in May."
    httpx.post(
        f"{hindsight_url}/v1/default/banks/{bank}/memories",
        json={"items": [{"content": before, "document_id": "legacy", "tags": ["team:billing"]}]},
        timeout=120,
    ).raise_for_status()
    settings = make_settings(hindsight_url, data_dir=tmp_path / "data", config_guard={})
    with running_warden(settings) as url:
        r = httpx.delete(f"{url}/v1/default/banks/{bank}", timeout=120)
        assert r.status_code == 200, r.text
        assert httpx.get(f"{hindsight_url}/v1/default/banks/{bank}/documents/legacy", timeout=30).status_code == 404
        # The kept copy withholds nothing: the same id written again around memwarden reads through it.
        again = {"items": [{"content": "The billing cluster moved back to Dublin.", "document_id": "legacy"}]}
        httpx.post(f"{hindsight_url}/v1/default/banks/{bank}/memories", json=again, timeout=120).raise_for_status()
        assert has(url, bank, "Dublin") == [True]
        httpx.delete(f"{hindsight_url}/v1/default/banks/{bank}/documents/legacy", timeout=60).raise_for_status()
        out = restore(url, bank)
        assert "Restored 1 memories in 1 documents" in out
        document = httpx.get(f"{hindsight_url}/v1/default/banks/{bank}/documents/legacy", timeout=30).json()
        assert "moved to Frankfurt" in document["original_text"]
        assert "Tr0ub4dor" not in document["original_text"]  # masked, never kept in clear
        assert "team:billing" in document["tags"]
        httpx.delete(f"{url}/v1/default/banks/{bank}", timeout=60)
    held = b"".join(p.read_bytes() for p in (tmp_path / "data").rglob("*") if p.is_file())
    assert b"moved to Frankfurt" in held  # the kept copy is there …
    assert b"Tr0ub4dor" not in held  # … and its secret is not, in any file of memwarden's


async def test_a_wipe_of_one_kind_archives_only_what_it_took(warden: str) -> None:
    """``DELETE …/memories?type=observation`` takes no fact: every fact stays found (the ledger keeps
    no observations, and archiving its facts would hide them). ``?type=world`` takes the facts: they
    are gone, and one restore brings them back."""
    bank = f"typed_{uuid.uuid4().hex[:8]}"
    async with httpx.AsyncClient(base_url=warden, timeout=60) as http:
        for doc, fact in FACTS.items():
            r = await http.post(
                f"/v1/default/banks/{bank}/memories", json={"items": [{"content": fact, "document_id": doc}]}
            )
            r.raise_for_status()
        r = await http.delete(f"/v1/default/banks/{bank}/memories", params={"type": "observation"})
        assert r.status_code == 200, r.text
        assert await ahas(http, bank, "eu-west-2", "Kenji", "02:30") == [True, True, True]
        recalled = await http.post(f"/v1/default/banks/{bank}/memories/recall", json={"query": "Who owns payments?"})
        assert any("Kenji" in x["text"] for x in recalled.json()["results"])
        r = await http.delete(f"/v1/default/banks/{bank}/memories", params={"type": "world"})
        assert r.status_code == 200, r.text
        assert await ahas(http, bank, "eu-west-2", "Kenji", "02:30") == [False, False, False]
        out = restore(warden, bank)
        assert "delete_memories" in out
        assert await ahas(http, bank, "eu-west-2", "Kenji", "02:30") == [True, True, True]


def test_the_restore_window_erases_only_its_own_deletions(tmp_path: Any) -> None:
    """Two deletions sent with the same request id (a client picks it) and a memory a deletion
    archived, restored, then archived again by an operator: expiring a deletion erases what that
    deletion archived and is archived by it still — nothing else."""
    settings = _local(str(tmp_path), config_guard={"restore_days": 1e-9})
    with running_warden(settings) as url:
        items = [{"content": fact, "document_id": doc} for doc, fact in FACTS.items()]
        httpx.post(f"{url}/v1/default/banks/w/memories", json={"items": items}, timeout=60).raise_for_status()
        same = {"X-Request-Id": "one-request-id-for-both"}
        first = httpx.delete(f"{url}/v1/default/banks/w/documents/d1", headers=same, timeout=60)
        second = httpx.delete(f"{url}/v1/default/banks/w/documents/d2", headers=same, timeout=60)
        assert (first.status_code, second.status_code) == (200, 200)
        # d2's memory: restored by its deletion's snapshot, then archived by hand (no window of its own).
        restore(url, "w", second.headers["x-warden-snapshot"])
        (row,) = [
            m
            for m in httpx.get(f"{url}/warden/v1/banks/w/memories", params={"status": "active"}, timeout=30).json()[
                "items"
            ]
            if "Kenji" in m["content"]
        ]
        httpx.post(f"{url}/warden/v1/banks/w/memories/{row['id']}/archive", json={"reason": "by hand"}, timeout=30)

        dry = httpx.post(f"{url}/warden/v1/retention/run", params={"dry_run": "true"}, timeout=60).json()
        assert {e["snapshot_id"]: e["memories"] for e in dry["expired"]} == {first.headers["x-warden-snapshot"]: 1}
        httpx.post(f"{url}/warden/v1/retention/run", timeout=60).raise_for_status()
        kept = httpx.get(f"{url}/warden/v1/banks/w/memories/{row['id']}", timeout=30).json()
        assert kept["status"] == "archived"  # the hand's archive keeps its text: restorable as ever
        assert "Kenji" in kept["content"]
        r = httpx.post(f"{url}/warden/v1/banks/w/snapshots/{first.headers['x-warden-snapshot']}/rollback", timeout=60)
        assert r.status_code == 409
        assert "past its restore window" in r.json()["detail"]
