"""Issue #33: secrets through the writes memwarden did not judge. A memory unit's curation stored
its text unscanned (in the database, and in the append-only audit's before/after, where erasure
cannot reach it); directives, mental models and recall/reflect queries reached Hindsight's
database and log. Now every such field is scanned: a secret is a ``422`` naming the field, and no
byte of it is written anywhere — memwarden's data directory or the backend's.

Both modes: self-hosted, and in front of the Hindsight stand-in (a real HTTP server over a store
of its own, which records every request it gets)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from testing.standin import Standin, running_standin
from tests.conftest import make_settings, running_warden
from tests.loopback.test_local_store import local_settings

BANK = "sec"
B = f"/v1/default/banks/{BANK}"
FACT = "The billing service runs on three nodes in eu-west-1."
# Planted secrets of several kinds; each must appear nowhere on disk after the requests.
SECRETS = (
    "sk-proj-Q9vX2mL7pR4tY8wZ3bC6dF1gH5jK0nM2",
    "ghp_4Tz9QwErTyUiOpAsDfGhJkLzXcVbNm123456",
    "AKIAZ7QW3ER5TY6UI8OP",
)


class Rig:
    def __init__(self, url: str, roots: list[Path], backend: Standin | None) -> None:
        self.url, self.roots, self.backend = url, roots, backend

    def on_disk(self, secret: str) -> list[str]:
        """The files under memwarden's and the backend's data directories holding ``secret``."""
        needle = secret.encode()
        return [str(p) for root in self.roots for p in root.rglob("*") if p.is_file() and needle in p.read_bytes()]


@pytest.fixture(params=["self-hosted", "in front of the stand-in"], scope="module")
def rig(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("secrets")
    if request.param == "self-hosted":
        with running_warden(local_settings(tmp / "data")) as url:
            yield Rig(url, [tmp], None)
        return
    with (
        running_standin(tmp / "backend") as backend,
        running_warden(make_settings(backend.url, data_dir=tmp / "data")) as url,
    ):
        yield Rig(url, [tmp], backend)


def unit_id(rig: Rig) -> str:
    r = httpx.post(f"{rig.url}{B}/memories", json={"items": [{"content": FACT}]}, timeout=60)
    assert r.status_code == 200, r.text
    listed = httpx.get(f"{rig.url}{B}/memories/list", timeout=30).json()["items"]
    return str(listed[0]["id"])


def planted(secret: str) -> list[tuple[str, str, dict[str, Any], str]]:
    """(method, path, body, the field named) — every write route memwarden passed on unscanned."""
    return [
        ("PATCH", "memories/{unit}", {"text": f"Billing deploys with key {secret}"}, "text"),
        ("PATCH", "memories/{unit}", {"context": f"token={secret}"}, "context"),
        ("PATCH", "memories/{unit}", {"state": "invalidated", "reason": f"leaked {secret}"}, "reason"),
        ("POST", "directives", {"name": "d", "content": f"Always use {secret} for billing"}, "content"),
        ("POST", "mental-models", {"name": "m", "source_query": f"what uses {secret}?"}, "source_query"),
        ("PATCH", "mental-models/m1", {"source_query": f"what uses {secret}?"}, "source_query"),
        ("POST", "memories/recall", {"query": f"where is {secret} used?"}, "query"),
        ("POST", "reflect", {"query": f"should I rotate {secret}?"}, "query"),
        ("POST", "memories/dry-run-extract", {"content": f"the key is {secret}"}, "content"),
    ]


def test_a_secret_in_any_field_of_the_writes_memwarden_passed_on_is_refused_and_stored_nowhere(rig: Rig) -> None:
    unit = unit_id(rig)
    seen = len(rig.backend.requests) if rig.backend else 0
    for secret in SECRETS:
        for method, path, body, field in planted(secret):
            r = httpx.request(method, f"{rig.url}{B}/{path.format(unit=unit)}", json=body, timeout=30)
            assert r.status_code == 422, (method, path, r.text)
            detail = r.json()["detail"]
            assert [d["loc"] for d in detail] == [["body", field]], detail
            assert secret not in r.text  # never echoed
    if rig.backend is not None:
        assert len(rig.backend.requests) == seen  # none reached the backend
    for secret in SECRETS:
        assert rig.on_disk(secret) == []
    # The memory is as it was: still recalled, its text unchanged.
    got = httpx.get(f"{rig.url}{B}/memories/{unit}", timeout=30)
    assert got.status_code == 200, got.text
    assert got.json()["text"] == FACT


def test_a_body_memwarden_cannot_read_is_refused_not_forwarded(rig: Rig) -> None:
    deep = "[" * 1000 + "]" * 1000
    seen = len(rig.backend.requests) if rig.backend else 0
    for path in ("reflect", "memories/dry-run-extract", "directives", "mental-models"):
        r = httpx.post(f"{rig.url}{B}/{path}", content=deep, headers={"content-type": "application/json"}, timeout=30)
        assert r.status_code == 422, (path, r.text)
    if rig.backend is not None:
        assert len(rig.backend.requests) == seen


def test_curating_a_memory_needs_what_memwardens_archive_needs(rig: Rig) -> None:
    """A write key could invalidate any memory through the curate route (out of recall), where
    memwarden's own archive needs admin: now the curate route needs admin too."""
    unit = unit_id(rig)
    root = httpx.post(f"{rig.url}/warden/v1/keys", json={"name": "root", "admin": ["*"]}).json()["token"]
    try:
        made = httpx.post(
            f"{rig.url}/warden/v1/keys",
            json={"name": "w", "write": [BANK]},
            headers={"authorization": f"Bearer {root}"},
        )
        writer = {"authorization": f"Bearer {made.json()['token']}"}
        r = httpx.patch(f"{rig.url}{B}/memories/{unit}", json={"state": "invalidated"}, headers=writer)
        assert r.status_code == 403, r.text
        assert "admin" in r.json()["detail"]
        admin = {"authorization": f"Bearer {root}"}
        r = httpx.patch(f"{rig.url}{B}/memories/{unit}", json={"context": "from the runbook"}, headers=admin)
        assert r.status_code == 200, r.text
        # The writer still writes memories.
        r = httpx.post(f"{rig.url}{B}/memories", json={"items": [{"content": FACT + " Today."}]}, headers=writer)
        assert r.status_code == 200, r.text
    finally:
        keys = httpx.get(f"{rig.url}/warden/v1/keys", headers={"authorization": f"Bearer {root}"}).json()
        for key in keys["items"]:  # the rig is shared by the module's tests: open it again
            httpx.delete(f"{rig.url}/warden/v1/keys/{key['id']}", headers={"authorization": f"Bearer {root}"})
