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
