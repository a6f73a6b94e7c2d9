"""Self-hosted mode against the real thing: the same hindsight-client script runs against the real
Hindsight 1.1.0 and against memwarden's own store, and the answers must have the same shapes; the
same data and tag queries must select the same memories."""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from memwarden.settings import load_settings
from tests.conftest import running_warden
from tests.hindsight_cases import tag_listings

pytestmark = [pytest.mark.interop, pytest.mark.anyio]

ITEMS = [
    {"content": "Alice note: Alice prefers dark roast coffee.", "tags": ["user:alice", "team:a"], "document_id": "d1"},
    {"content": "Ops note: the staging cluster has 3 nodes.", "tags": ["user:ops", "team:a"]},
    {"content": "Ops note: backups run nightly at 02:00.", "tags": ["user:ops"]},
    {"content": "General note: the office is closed on Fridays."},
]


@pytest.fixture(scope="module")
def local(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    settings = load_settings(
        environ={},
        overrides={
            "data_dir": str(tmp_path_factory.mktemp("local")),
            "local": {"embedder": "hashing"},
            "governance": {"mode": "off"},  # the store itself, on exactly the client's data
        },
    )
    with running_warden(settings) as url:
        yield url


def shape(value: Any) -> Any:
    """Keys and JSON types, recursively (lists by their first element)."""
    if isinstance(value, dict):
        return {k: shape(v) for k, v in sorted(value.items())}
    if isinstance(value, list):
        return [shape(value[0])] if value else []
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, int | float):
        return "number"
    if value is None:
        return "null"
    return type(value).__name__


# Objects that are maps (their keys are data, e.g. status → count), not records with fixed fields.
MAPS = frozenset(
    {
        "operations_by_status",
        "nodes_by_fact_type",
        "links_by_fact_type",
        "links_breakdown",
        "metadata",
        "document_metadata",
        "retain_params",
        "overrides",
    }
)


def same_shape(ours: Any, theirs: Any, where: str = "") -> list[str]:
    """Differences that matter to a client: a key Hindsight sends that memwarden lacks (or the other
    way), or a value of another JSON type (null is compatible with anything: optional fields)."""
    problems: list[str] = []
    if where.rsplit(".", 1)[-1] in MAPS:
        return (
            problems
            if isinstance(ours, dict) == isinstance(theirs, dict) or "null" in (ours, theirs)
            else [f"{where}: {ours} vs {theirs}"]
        )
    if isinstance(ours, dict) and isinstance(theirs, dict):
        for key in sorted(set(ours) | set(theirs)):
            if key not in ours:
                problems.append(f"{where}.{key}: missing in memwarden")
            elif key not in theirs:
                problems.append(f"{where}.{key}: not in Hindsight")
            else:
                problems += same_shape(ours[key], theirs[key], f"{where}.{key}")
    elif isinstance(ours, list) and isinstance(theirs, list):
        if ours and theirs:
            problems += same_shape(ours[0], theirs[0], f"{where}[0]")
    elif "null" not in (ours, theirs) and ours != theirs:
        problems.append(f"{where}: {ours} vs {theirs}")
    return problems


def scenario(base: str, bank: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    with httpx.Client(base_url=base, timeout=120) as http:
        p = f"/v1/default/banks/{bank}"
        out["create"] = http.put(p, json={"name": "Shapes"}).json()
        out["retain"] = http.post(f"{p}/memories", json={"items": ITEMS}).json()
        out["banks"] = http.get("/v1/default/banks", params={"q": bank}).json()
        out["recall"] = http.post(
            f"{p}/memories/recall", json={"query": "note", "types": ["world"], "budget": "high"}
        ).json()
        listed = http.get(f"{p}/memories/list", params={"type": "world"}).json()
        out["list"] = listed
        memory_id = listed["items"][0]["id"]
        out["memory"] = http.get(f"{p}/memories/{memory_id}").json()
        out["documents"] = http.get(f"{p}/documents").json()
        out["document"] = http.get(f"{p}/documents/d1").json()
        out["tags"] = http.get(f"{p}/tags").json()
        out["stats"] = http.get(f"{p}/stats").json()
        out["config"] = http.get(f"{p}/config").json()
        out["config_patch"] = http.patch(f"{p}/config", json={"updates": {"retain_mission": "x"}}).json()
        out["version"] = http.get("/version").json()
        out["missing_bank"] = http.get(f"/v1/default/banks/nope-{bank}/stats").json()
        out["missing_memory"] = http.get(f"{p}/memories/{uuid.uuid4()}").json()
        out["bad_recall"] = http.post(f"{p}/memories/recall", json={"tags_match": "x"}).json()
        out["invalidate"] = http.patch(f"{p}/memories/{memory_id}", json={"state": "invalidated", "reason": "r"}).json()
        out["archived_memory"] = http.get(f"{p}/memories/{memory_id}").json()
        out["retag_document"] = http.patch(f"{p}/documents/d1", json={"tags": ["team:b"]}).json()
        out["missing_operation"] = http.get(f"{p}/operations/{uuid.uuid4()}").json()
        out.update(reads(http, p))
        out["delete_document"] = http.delete(f"{p}/documents/d1").json()
        out["delete_bank"] = http.delete(p).json()
    return out


def _completed(http: httpx.Client, p: str, operation_id: str) -> None:
    for _ in range(600):
        if http.get(f"{p}/operations/{operation_id}").json()["status"] == "completed":
            return
        time.sleep(0.1)
    raise AssertionError(f"operation {operation_id} did not complete")


ENTITY_ITEMS = [
    # lowercase text: the stand-in LLM behind the real Hindsight names no entities of its own
    {
        "content": "carol runs the ops team.",
        "tags": ["team:a"],
        "document_id": "team/ops",
        "entities": [{"text": "Carol"}],
    },
    {
        "content": "carol and dave share the pager.",
        "document_id": "team/ops",
        "entities": [{"text": "carol"}, {"text": "Dave"}],
    },
]


def reads(http: httpx.Client, p: str) -> dict[str, Any]:
    """The routes beyond retain and recall: operations, chunks, history, entities, the router."""
    out: dict[str, Any] = {}
    http.post(f"{p}/memories", json={"items": ENTITY_ITEMS}).raise_for_status()
    queued = http.post(
        f"{p}/memories", json={"async": True, "items": [{"content": "dave joined in may.", "document_id": "team/dave"}]}
    ).json()
    _completed(http, p, queued["operation_id"])
    out["operations"] = http.get(f"{p}/operations").json()
    out["operations_page"] = http.get(f"{p}/operations", params={"status": "completed", "limit": 1}).json()
    out["chunks"] = http.get(f"{p}/documents/team/ops/chunks").json()
    out["chunk"] = http.get(f"/v1/default/chunks/{out['chunks']['items'][0]['chunk_id']}").json()
    out["history"] = http.get(f"{p}/documents/team/dave/history").json()
    out["entities"] = http.get(f"{p}/entities").json()
    out["entities_tagged"] = http.get(f"{p}/entities", params={"tags": "team:a", "tags_match": "any_strict"}).json()
    out["entity"] = http.get(f"{p}/entities/{out['entities']['items'][0]['id']}").json()
    out["profile"] = http.get(f"{p}/profile").json()
    out["unknown_path"] = http.get(f"{p}/nope").json()
    out["wrong_method"] = http.post(f"{p}/stats").json()
    return out


def membership(base: str, bank: str) -> dict[str, set[str]]:
    """Which items each tag query selects (world facts, a query every item matches by keyword)."""
    queries: dict[str, dict[str, Any]] = {
        f"{mode}:{','.join(tags)}": {"tags": tags, "tags_match": mode}
        for mode in ("any", "all", "any_strict", "all_strict", "exact")
        for tags in (["user:ops"], ["user:ops", "team:a"], [])
    }
    queries["groups"] = {"tag_groups": [{"or": [{"tags": ["user:alice"]}, {"not": {"tags": ["team:a"]}}]}]}
    out = {}
    with httpx.Client(base_url=base, timeout=120) as http:
        p = f"/v1/default/banks/{bank}"
        http.post(f"{p}/memories", json={"items": ITEMS}).raise_for_status()
        for name, filters in queries.items():
            body = {"query": "note", "types": ["world"], "budget": "high", **filters}
            r = http.post(f"{p}/memories/recall", json=body)
            r.raise_for_status()
            out[name] = {x["text"].split(":")[0] for x in r.json()["results"]}
        http.delete(p)
    return out


def test_the_same_script_gets_the_same_shapes(hindsight_url: str, local: str) -> None:
    bank = f"shape-{uuid.uuid4().hex[:8]}"
    theirs = scenario(hindsight_url, bank)
    ours = scenario(local, bank)
    problems = []
    for step in theirs:
        problems += same_shape(shape(ours[step]), shape(theirs[step]), step)
    assert problems == []


def test_tag_queries_select_the_same_memories(hindsight_url: str, local: str) -> None:
    bank = f"tags-{uuid.uuid4().hex[:8]}"
    assert membership(local, bank) == membership(hindsight_url, bank)


def test_tag_listings_list_the_same_tags(hindsight_url: str, local: str) -> None:
    listings = []
    for base in (hindsight_url, local):
        with httpx.Client(base_url=base, timeout=120) as http:
            listings.append(tag_listings(http, f"tl-{uuid.uuid4().hex[:8]}"))
    assert listings[1] == listings[0]


def test_entities_and_chunks_are_the_same(hindsight_url: str, local: str) -> None:
    """The entities a retain names, merged by spelling as Hindsight merges them, and a document's
    chunks (one an item), on both."""
    found = []
    for base in (hindsight_url, local):
        bank = f"ent-{uuid.uuid4().hex[:8]}"
        with httpx.Client(base_url=base, timeout=120) as http:
            p = f"/v1/default/banks/{bank}"
            http.post(f"{p}/memories", json={"items": ENTITY_ITEMS}).raise_for_status()
            entities = http.get(f"{p}/entities").json()["items"]
            chunks = http.get(f"{p}/documents/team/ops/chunks").json()["items"]
            deleted = http.delete(p).json()
        found.append(
            (
                # Which spelling names a merged entity depends on the order Hindsight processes a
                # batch's items in (seen both ways on the real server): compared without case.
                sorted((e["canonical_name"].casefold(), e["mention_count"]) for e in entities),
                [(c["chunk_id"].replace(bank, "<bank>"), c["chunk_index"], c["chunk_text"]) for c in chunks],
                deleted["deleted_count"] > 0,
            )
        )
    assert found[0] == ([("carol", 2), ("dave", 1)], found[0][1], True)
    assert found[1] == found[0]


def test_recall_chunks_are_answered_alike(hindsight_url: str, local: str) -> None:
    """#34: ``include.chunks`` on both: every result's chunk in the map under its ``chunk_id``
    (``<bank>_<document>_<index>``), with the chunk's text, index, ``truncated`` and
    ``attachments``; a budget too small cuts the first chunk on both (where it cuts differs: the
    real server counts tokens with its tokenizer, memwarden estimates them); none asked, null."""
    items = [
        {"content": "Carol moved the billing database to Postgres 16 in March.", "document_id": "notes"},
        {"content": "Dave runs the on-call rota for the payments team.", "document_id": "notes"},
    ]
    found = []
    for base in (hindsight_url, local):
        bank = f"chk-{uuid.uuid4().hex[:8]}"
        with httpx.Client(base_url=base, timeout=120) as http:
            p = f"/v1/default/banks/{bank}"
            http.post(f"{p}/memories", json={"items": items}).raise_for_status()
            query = {"query": "Which database does billing use?"}
            full = http.post(f"{p}/memories/recall", json={**query, "include": {"chunks": {}}}).json()
            cut = http.post(f"{p}/memories/recall", json={**query, "include": {"chunks": {"max_tokens": 4}}}).json()
            none = http.post(f"{p}/memories/recall", json=query).json()
            http.delete(p)
        assert {r["chunk_id"] for r in full["results"]} <= set(full["chunks"])
        top = full["chunks"][full["results"][0]["chunk_id"]]
        first = cut["chunks"][cut["results"][0]["chunk_id"]]
        assert items[0]["content"].startswith(first["text"])
        found.append(
            (
                top["id"].replace(bank, "<bank>"),
                sorted(top),
                top["text"],
                top["truncated"],
                top["attachments"],
                first["truncated"],
                0 < len(first["text"]) < len(top["text"]),
                none["chunks"],
            )
        )
    assert found[0] == ("<bank>_notes_0", found[0][1], items[0]["content"], False, None, True, True, None)
    assert found[1] == found[0]


def test_recall_entities_and_source_facts_are_answered_alike(hindsight_url: str, local: str) -> None:
    """#34: ``include.entities`` (on by default) maps each named entity of the results to
    ``{entity_id, canonical_name, observations}``; ``include.source_facts`` maps the facts the
    observation results cite (``source_fact_ids``) and says ``source_facts_truncated`` — null with
    no observation among the results (the store keeps none; Hindsight has none until it has
    consolidated); each null when not asked. The entities a retain names are on both (the real
    server also adds those its LLM finds)."""
    items = [
        {
            "content": "Erin leads the Lisbon data team since 2024.",
            "document_id": "team",
            "entities": [{"text": "Erin"}, {"text": "Lisbon"}],
        }
    ]
    found = []
    for base in (hindsight_url, local):
        bank = f"ent-{uuid.uuid4().hex[:8]}"
        with httpx.Client(base_url=base, timeout=120) as http:
            p = f"/v1/default/banks/{bank}"
            http.post(f"{p}/memories", json={"items": items}).raise_for_status()
            query = {"query": "Who leads the Lisbon data team?"}
            default = http.post(f"{p}/memories/recall", json=query).json()
            asked = http.post(f"{p}/memories/recall", json={**query, "include": {"source_facts": {}, "entities": None}})
            asked.raise_for_status()
            http.delete(p)
        entities, answer = default["entities"], asked.json()
        cited = {i for r in answer["results"] for i in r.get("source_fact_ids") or ()}
        found.append(
            (
                {"Erin", "Lisbon"} <= set(entities),
                {tuple(sorted(v)) for v in entities.values()},
                entities["Erin"]["canonical_name"],
                default["source_facts"],
                answer["entities"],
                answer["source_facts_truncated"],
                set(answer["source_facts"] or ()) == cited,
            )
        )
    assert found[0] == (True, {("canonical_name", "entity_id", "observations")}, "Erin", None, None, False, True)
    assert found[1] == found[0]
