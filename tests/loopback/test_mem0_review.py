"""What a review of the Mem0 front found, each through real HTTP against a running memwarden
(self-hosted): the answer a user gets, what the ledger and the audit hold after it."""

from __future__ import annotations

import asyncio
import json
import sqlite3
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests import mem0_rig as rig
from tests.conftest import running_warden


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    data = tmp_path_factory.mktemp("mem0-review")
    with running_warden(rig.local_settings(data)) as url:
        yield url, data


@pytest.fixture
def url(served: tuple[str, Path]) -> str:
    return served[0]


def _written(url: str) -> tuple[int, int]:
    return len(rig.ledger(url)), len(rig.audit(url))


def _add(url: str, text: str, user: str) -> str:
    """A memory added (``infer=False``, stored): its Mem0 id."""
    added = httpx.post(
        f"{url}/mem0/memories", json={"messages": [{"role": "user", "content": text}], "user_id": user, "infer": False}
    )
    assert added.status_code == 200, added.text
    [result] = added.json()["results"]
    assert result["event"] == "ADD", added.text
    memory_id: str = result["id"]
    return memory_id


def _versions(url: str, user: str) -> list[dict[str, Any]]:
    return [r for r in rig.ledger(url) if f"user:{user}" in (r.get("tags") or [])]


@pytest.mark.parametrize("path", ["/mem0/v3/memories/", "/mem0/v3/memories/search/", "/mem0/search"])
@pytest.mark.parametrize("bound", [1e300, -1e20, "NaN"])
def test_epoch_seconds_out_of_range_in_a_filter_is_a_400(url: str, path: str, bound: float | str) -> None:
    """A time given as epoch seconds past the calendar's range was a 500 (OverflowError)."""
    raw = f'{{"query": "x", "filters": {{"user_id": "u", "created_at": {{"gt": {bound}}}}}}}'.encode()
    before = _written(url)
    answer = httpx.post(url + path, content=raw, headers={"content-type": "application/json"})
    assert answer.status_code == 400, answer.text
    words = answer.json()["error" if "/v3/" in path else "detail"]
    assert "out of range" in words
    assert _written(url) == before


@pytest.mark.parametrize(
    ("path", "status", "key"),
    [("/mem0/v3/memories/add/", 415, "error"), ("/mem0/v1/memories/", 415, "error"), ("/mem0/memories", 422, "detail")],
)
@pytest.mark.parametrize("content_type", ["text/plain", "application/x-www-form-urlencoded"])
def test_a_body_not_sent_as_json_writes_nothing(url: str, path: str, status: int, key: str, content_type: str) -> None:
    """A page's "simple" cross-site POST (no preflight) must not be read as JSON, as on the other
    fronts: it was stored."""
    body = {
        "messages": [{"role": "user", "content": "Ivo drives a blue Volvo to work."}],
        "user_id": "ct",
        "infer": False,
    }
    before = _written(url)
    answer = httpx.post(url + path, content=json.dumps(body).encode(), headers={"content-type": content_type})
    assert answer.status_code == status, answer.text
    assert set(answer.json()) == {key}
    assert _written(url) == before


def test_an_update_is_labelled_for_its_new_text(url: str) -> None:
    """The new version was judged with the old version's topic and stage tags, which a judgement
    takes as the client's: an update about Kubernetes stayed labelled as a coffee preference."""
    new_text = "The production database runs on Kubernetes in us-east-2."
    probe = _add(url, new_text, "label-probe")
    expected = httpx.get(f"{url}/mem0/memories/{probe}").json()["categories"]
    assert httpx.delete(f"{url}/mem0/memories", params={"user_id": "label-probe"}).status_code == 200
    memory_id = _add(url, "Juno prefers dark roast coffee with oat milk.", "label")
    old = httpx.get(f"{url}/mem0/memories/{memory_id}").json()["categories"]
    assert old != expected  # the case holds: the two texts are labelled differently
    updated = httpx.put(f"{url}/mem0/v1/memories/{memory_id}/", json={"text": new_text})
    assert updated.status_code == 200, updated.text
    assert updated.json()["categories"] == expected
    assert httpx.get(f"{url}/mem0/memories/{memory_id}").json()["categories"] == expected


def test_updating_a_single_valued_fact_replaces_it(url: str) -> None:
    """A memory holding a single-valued topic key conflicted with itself: the update was held for
    review (409) and a review row holding the memory's id was left behind."""
    memory_id = _add(url, "The default model is gpt-4o for this project.", "single")
    new_text = "The default model is claude-sonnet-4 for this project."
    updated = httpx.put(f"{url}/mem0/v1/memories/{memory_id}/", json={"text": new_text})
    assert updated.status_code == 200, updated.text
    assert httpx.get(f"{url}/mem0/v1/memories/{memory_id}/").json()["memory"] == new_text
    assert sorted(r["status"] for r in _versions(url, "single")) == ["active", "superseded"]
    history = httpx.get(f"{url}/mem0/v1/memories/{memory_id}/history/").json()
    assert [h["event"] for h in history] == ["ADD", "UPDATE"]
    # Another memory holding the same key still conflicts: held, the memory unchanged.
    other = _add(url, "Kai prefers the night shift.", "single")
    held = httpx.put(f"{url}/mem0/v1/memories/{other}/", json={"text": "The default model is o3 for this project."})
    assert held.status_code == 409, held.text
    assert httpx.get(f"{url}/mem0/v1/memories/{memory_id}/").json()["memory"] == new_text


def _live(url: str, memory_id: str, user: str) -> list[dict[str, Any]]:
    listed = httpx.post(f"{url}/mem0/v3/memories/", json={"filters": {"user_id": user}}).json()["results"]
    return [r for r in listed if r["id"] == memory_id]


def test_concurrent_updates_of_one_memory_leave_one_version(url: str) -> None:
    """Each update read the same live version and superseded it: four updates at once left four
    live versions of one memory (get_all listed it four times, each in the backend)."""
    user = f"cc-{uuid.uuid4().hex[:6]}"
    memory_id = _add(url, "Greg runs PostgreSQL 15 on the analytics host.", user)

    async def updates() -> list[httpx.Response]:
        async with httpx.AsyncClient(timeout=60) as client:
            return await asyncio.gather(
                *[
                    client.put(
                        f"{url}/mem0/v1/memories/{memory_id}/",
                        json={"text": f"Greg runs PostgreSQL {16 + i} on the analytics host."},
                    )
                    for i in range(4)
                ]
            )

    answers = asyncio.run(updates())
    assert all(a.status_code == 200 for a in answers), [a.text for a in answers]
    [live] = _live(url, memory_id, user)
    assert sorted(r["status"] for r in _versions(url, user)) == ["active"] + ["superseded"] * 4
    found = httpx.post(
        f"{url}/mem0/v3/memories/search/", json={"query": "Greg PostgreSQL analytics", "filters": {"user_id": user}}
    ).json()["results"]
    assert [(r["id"], r["memory"]) for r in found] == [(memory_id, live["memory"])]


def test_a_batch_naming_one_memory_twice_applies_both_in_order(url: str) -> None:
    user = f"bd-{uuid.uuid4().hex[:6]}"
    memory_id = _add(url, "Hana keeps her notes in Obsidian vaults.", user)
    batch = httpx.put(
        f"{url}/mem0/v1/batch/",
        json={
            "memories": [
                {"memory_id": memory_id, "text": "Hana keeps her notes in Logseq."},
                {"memory_id": memory_id, "text": "Hana keeps her notes in Notion."},
            ]
        },
    )
    assert batch.status_code == 200, batch.text
    assert [r["status"] for r in batch.json()["results"]] == ["updated", "updated"]
    assert [r["memory"] for r in _live(url, memory_id, user)] == ["Hana keeps her notes in Notion."]
    assert sorted(r["status"] for r in _versions(url, user)) == ["active", "superseded", "superseded"]


def test_an_update_racing_a_delete_does_not_bring_the_memory_back(url: str) -> None:
    """The update superseded a version the delete had archived: the 'deleted' memory lived on as
    the update's new version."""
    user = f"ud-{uuid.uuid4().hex[:6]}"
    memory_id = _add(url, "Ines runs the staging cluster on k3s.", user)

    async def race() -> tuple[httpx.Response, httpx.Response]:
        async with httpx.AsyncClient(timeout=60) as client:
            put = client.put(f"{url}/mem0/v1/memories/{memory_id}/", json={"text": "Ines runs staging on k0s."})
            delete = client.delete(f"{url}/mem0/v1/memories/{memory_id}/")
            done = await asyncio.gather(put, delete)
            return done[0], done[1]

    put, delete = asyncio.run(race())
    assert delete.status_code == 200, delete.text
    assert put.status_code in (200, 404), put.text
    assert httpx.get(f"{url}/mem0/v1/memories/{memory_id}/").status_code == 404
    assert _live(url, memory_id, user) == []
    assert "active" not in [r["status"] for r in _versions(url, user)]


def test_a_batch_update_with_empty_text_is_refused_whole(url: str) -> None:
    """As a single update: a 400 before anything is judged (it was judged, refused, audited)."""
    memory_id = _add(url, "Lars mirrors the apt repository nightly.", "be")
    before = _written(url)
    answer = httpx.put(f"{url}/mem0/v1/batch/", json={"memories": [{"memory_id": memory_id, "text": "  "}]})
    assert answer.status_code == 400, answer.text
    assert "text must not be empty" in answer.json()["error"]
    assert _written(url) == before


def test_an_erased_memory_leaves_no_words_in_the_store_index(served: tuple[str, Path]) -> None:
    """The store's FTS5 index kept a deleted unit's terms in its segments until they were merged
    (SQLite 3.40 here: no FTS5 secure-delete), and the write-ahead log old page images: after an
    erasure the index is rewritten and the log checkpointed — no byte of the word left in the
    database's files."""
    url, data = served
    user = f"fts-{uuid.uuid4().hex[:6]}"
    _add(url, "Zebulon schedules the xylograph review on Fridays.", user)
    assert httpx.delete(f"{url}/mem0/v1/memories/", params={"user_id": user}).status_code == 200
    db = sqlite3.connect(data / "memwarden.db")
    try:
        blobs = [bytes(r[0] or b"") for r in db.execute("SELECT block FROM store_units_fts_data")]
    finally:
        db.close()
    assert not [b for b in blobs if b"xylograph" in b]
    for path in data.glob("memwarden.db*"):  # the database, its write-ahead log
        assert b"xylograph" not in path.read_bytes(), path.name


def test_the_official_client_deletes_a_user_whose_id_holds_a_slash(url: str) -> None:
    """``delete_users`` percent-encodes the name; the decoded path's '/' matched no route: the
    user's memories could not be erased through the client (a 404 "Not Found"), nor ``reset``."""
    from mem0 import MemoryClient

    client = MemoryClient(host=f"{url}/mem0", api_key="any-key-on-loopback")
    try:
        user = f"team/{uuid.uuid4().hex[:6]}"
        client.add([{"role": "user", "content": "Mona signs the release notes."}], user_id=user, infer=False)
        assert [r["memory"] for r in client.get_all(filters={"user_id": user})["results"]] == [
            "Mona signs the release notes."
        ]
        [row] = _versions(url, user)
        assert client.delete_users(user_id=user) == {"message": "Entity deleted successfully."}
        assert client.get_all(filters={"user_id": user})["results"] == []
        assert [r["status"] for r in rig.ledger(url) if r["id"] == row["id"]] == ["erased"]
    finally:
        client.client.close()


def test_one_users_memory_is_no_duplicate_of_anothers(url: str) -> None:
    """Dedup and topic-key conflicts ran over the whole bank: a second user stating what a first
    had stated got ``event: NONE`` with the first user's memory id, and nothing of their own —
    their get_all and search came back empty."""
    first, second = f"ua-{uuid.uuid4().hex[:6]}", f"ub-{uuid.uuid4().hex[:6]}"
    text = "Prefers vegetarian food and dark mode."
    theirs = _add(url, text, first)
    mine = _add(url, text, second)
    assert mine != theirs
    listed = httpx.post(f"{url}/mem0/v3/memories/", json={"filters": {"user_id": second}}).json()["results"]
    assert [(r["id"], r["memory"], r["user_id"]) for r in listed] == [(mine, text, second)]
    found = httpx.post(
        f"{url}/mem0/v3/memories/search/", json={"query": "vegetarian food", "filters": {"user_id": second}}
    ).json()["results"]
    assert [r["id"] for r in found] == [mine]
    # The same user saying it again is still a duplicate; a single-valued fact of another user no conflict.
    again = httpx.post(
        f"{url}/mem0/memories",
        json={"messages": [{"role": "user", "content": text}], "user_id": second, "infer": False},
    ).json()
    assert [(r["id"], r["event"]) for r in again["results"]] == [(mine, "NONE")]
    _add(url, "The default model is gpt-4o for this project.", first)
    _add(url, "The default model is o3 for this project.", second)


def test_approving_a_held_update_leaves_one_version(url: str) -> None:
    """An update held for review (its new value conflicts with another memory) names the version it
    is to replace: approving it supersedes both that version and the memory it conflicted with;
    one live version is left, holding the new text. Approving one whose memory changed since it
    was held is a 409, nothing changed."""
    user = f"ap-{uuid.uuid4().hex[:6]}"
    _add(url, "The default model is gpt-4o for this project.", user)
    memory_id = _add(url, "Kai prefers the night shift.", user)
    held = httpx.put(f"{url}/mem0/v1/memories/{memory_id}/", json={"text": "The default model is o3 for this project."})
    assert held.status_code == 409, held.text
    [row] = [r for r in _versions(url, user) if r["status"] == "review"]
    approved = httpx.post(f"{url}/warden/v1/banks/{rig.BANK}/review/{row['id']}/approve", json={})
    assert approved.status_code == 200, approved.text
    assert len(_live(url, memory_id, user)) == 1
    got = httpx.get(f"{url}/mem0/v1/memories/{memory_id}/").json()
    assert got["memory"] == "The default model is o3 for this project."
    statuses = {r["content"]: r["status"] for r in _versions(url, user)}
    assert statuses == {
        "The default model is gpt-4o for this project.": "superseded",  # the conflict, settled
        "Kai prefers the night shift.": "superseded",  # the version it replaced
        "The default model is o3 for this project.": "active",
    }


def test_a_held_update_whose_memory_changed_since_is_not_approved(url: str) -> None:
    user = f"ch-{uuid.uuid4().hex[:6]}"
    _add(url, "The default model is gpt-4o for this project.", user)
    memory_id = _add(url, "Kai prefers the night shift.", user)
    put = httpx.put(f"{url}/mem0/v1/memories/{memory_id}/", json={"text": "The default model is o3 for this project."})
    assert put.status_code == 409, put.text
    [row] = [r for r in _versions(url, user) if r["status"] == "review"]
    changed = httpx.put(f"{url}/mem0/v1/memories/{memory_id}/", json={"text": "Kai prefers the early shift."})
    assert changed.status_code == 200, changed.text
    before = _written(url)
    refused = httpx.post(f"{url}/warden/v1/banks/{rig.BANK}/review/{row['id']}/approve", json={})
    assert refused.status_code == 409, refused.text
    assert "changed since" in refused.text
    assert _written(url) == before
    assert [v["memory"] for v in _live(url, memory_id, user)] == ["Kai prefers the early shift."]


@pytest.mark.parametrize(
    "body",
    [
        {"query": "where does she live"},
        {"query": "where does she live", "filters": {}},
        {"query": "where does she live", "filters": {"topic": "personal"}},
        {"query": "where does she live", "filters": {"user_id": None}},
    ],
)
def test_a_search_naming_no_one_is_refused_and_shows_no_ones_memories(url: str, body: dict[str, Any]) -> None:
    """#34: the open-source dialect's search with no user, agent or run id answered every user's
    memories; Mem0's server refuses it with a 400."""
    user = f"dana-{uuid.uuid4().hex[:8]}"
    _add(url, f"Dana lives in Porto and works night shifts at the harbour ({user}).", user)
    before = _written(url)
    answer = httpx.post(f"{url}/mem0/search", json=body)
    assert answer.status_code == 400, answer.text
    assert "user_id" in answer.text
    assert "Porto" not in answer.text
    assert _written(url) == before
    named = httpx.post(f"{url}/mem0/search", json={"query": "where does she live", "filters": {"user_id": user}})
    assert named.status_code == 200
    assert "Porto" in named.text
    top_level = httpx.post(f"{url}/mem0/search", json={"query": "where does she live", "user_id": user})
    assert top_level.status_code == 200
    assert "Porto" in top_level.text
