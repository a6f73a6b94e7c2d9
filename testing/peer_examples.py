"""What Hindsight's documentation examples do (``hindsight-docs/examples/api/*.py``: banks, retain,
recall, reflect, documents, memories, operations, directives, mental models, files, bank
templates, tags and entities), written here as scenarios of our own — their code is not ours to
copy — each through the official ``hindsight-client`` (its async API; plain HTTP where the client
has no method), on a bank of its own. ``testing/peer_suite.py`` runs every scenario against the
real Hindsight and memwarden in both modes and puts each in the compatibility table.

A scenario passes when every answer is what the documentation says a client gets; it raises
``AssertionError`` (or the client's ``ApiException``) otherwise. The facts are facts: noise is what
memwarden is meant to keep out, and a scenario is about the API, not about what gets stored.
"""

from __future__ import annotations

import asyncio
import contextlib
import shutil
import tempfile
import uuid
from collections.abc import Awaitable, Callable
from pathlib import Path

import httpx
from hindsight_client import Hindsight

Scenario = Callable[[Hindsight, httpx.AsyncClient, str], Awaitable[None]]


def check(condition: object, what: str) -> None:
    """A scenario's expectation (not ``assert``: it holds under ``python -O`` too)."""
    if not condition:
        raise AssertionError(what)


FACTS = (
    "Priya moved the payments API to Kubernetes 1.30 in March 2026.",
    "The nightly backup of the billing database runs at 02:30 UTC.",
    "Tomás owns the on-call rota for the search team.",
)


async def banks(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.acreate_bank(bank, name="Platform team", mission="Remember the platform team's decisions.")
    listed = (await http.get("/v1/default/banks")).json()["banks"]
    check(any(b["bank_id"] == bank for b in listed), "the new bank is not listed")
    await client.aupdate_bank_config(bank, reflect_mission="Answer as the platform team's runbook.")
    config = await client.aget_bank_config(bank)
    check(config["overrides"].get("reflect_mission") == "Answer as the platform team's runbook.", f"config: {config}")
    await client.areset_bank_config(bank)
    check("reflect_mission" not in (await client.aget_bank_config(bank))["overrides"], "the reset kept the mission")
    check((await client.adelete_bank(bank)).success is True, "deleting the bank did not succeed")


async def retain(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    one = await client.aretain(bank, FACTS[0], context="platform standup", timestamp="2026-03-14T10:00:00Z")
    check(one.success and one.items_count == 1, f"single retain: {one}")
    batch = await client.aretain_batch(
        bank, [{"content": FACTS[1], "tags": ["team:billing"]}, {"content": FACTS[2]}], document_tags=["source:wiki"]
    )
    check(batch.success and batch.items_count == 2, f"batch retain: {batch}")
    queued = await client.aretain_batch(bank, [{"content": "The search cluster runs 6 nodes."}], retain_async=True)
    check(queued.success and queued.var_async is True, f"async retain: {queued}")


async def recall(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.aretain_batch(bank, [{"content": f, "tags": ["team:platform"]} for f in FACTS])
    found = await client.arecall(bank, "When does the billing backup run?", budget="mid", max_tokens=1024)
    check(any("02:30" in r.text for r in found.results), "the backup fact is not recalled")
    tagged = await client.arecall(bank, "Who owns on-call?", tags=["team:platform"], tags_match="any_strict")
    check(any("Tomás" in r.text for r in tagged.results), "the tag-filtered recall misses the fact")
    typed = await client.arecall(bank, "payments API", types=["world"], trace=True)
    check(typed.results, "a recall of world facts found nothing")


async def reflect(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.aretain_batch(bank, [{"content": f} for f in FACTS])
    answer = await client.areflect(bank, "What do we know about the payments API?", budget="low")
    check(isinstance(answer.text, str) and answer.text.strip(), "reflect answered no text")


async def documents(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.aretain(bank, FACTS[1], document_id="runbook-backups")
    p = f"/v1/default/banks/{bank}/documents"
    listed = (await http.get(p)).json()
    check(any(d["id"] == "runbook-backups" for d in listed["items"]), "the document is not listed")
    got = (await http.get(f"{p}/runbook-backups")).json()
    check("02:30" in got["original_text"], f"the document reads back as {got.get('original_text')!r}")
    chunks = (await http.get(f"{p}/runbook-backups/chunks")).json()
    check(chunks["items"] and "02:30" in chunks["items"][0]["chunk_text"], "the document's chunk is missing")
    r = await http.patch(f"{p}/runbook-backups", json={"tags": ["team:billing"]})
    check(r.status_code == 200, f"re-tagging answered {r.status_code}: {r.text}")
    r = await http.delete(f"{p}/runbook-backups")
    check(r.status_code == 200 and r.json()["success"] is True, f"delete answered {r.status_code}")
    check((await http.get(f"{p}/runbook-backups")).status_code == 404, "the deleted document is still there")


async def memories(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.aretain_batch(bank, [{"content": f} for f in FACTS])
    listed = await client.alist_memories(bank, limit=10)
    check(listed.total >= 3 and listed.items, "the memories are not listed")
    one = (await http.get(f"/v1/default/banks/{bank}/memories/{listed.items[0].id}")).json()
    check(one["text"], "the memory read back has no text")
    found = await client.alist_memories(bank, search_query="backup")
    check(any("02:30" in (m.text or "") for m in found.items), "a search of the listing misses the fact")
    r = await http.delete(f"/v1/default/banks/{bank}/memories")
    check(r.status_code == 200 and r.json()["success"] is True, f"clearing answered {r.status_code}")
    check((await client.alist_memories(bank)).items == [], "memories remain after clearing")


async def operations(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    queued = await client.aretain_batch(bank, [{"content": FACTS[0]}], retain_async=True)
    operation = queued.operation_id
    check(operation, "an async retain gave no operation id")
    for _ in range(120):
        status = (await http.get(f"/v1/default/banks/{bank}/operations/{operation}")).json()
        if status["status"] in ("completed", "failed"):
            break
        await asyncio.sleep(0.25)
    check(status["status"] == "completed", f"the operation ended {status['status']}")
    listed = (await http.get(f"/v1/default/banks/{bank}/operations")).json()
    check(any(o["id"] == operation for o in listed["operations"]), "the operation is not listed")


async def directives(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.acreate_bank(bank, mission="Remember the platform team's decisions.")
    made = await client.acreate_directive(bank, name="units", content="Always give times in UTC.", priority=1)
    listed = await client.alist_directives(bank)
    check(any(d.id == made.id for d in listed.items), "the directive is not listed")
    await client.aupdate_directive(bank, made.id, content="Always give times in UTC, with the offset.")
    check("offset" in (await client.aget_directive(bank, made.id)).content, "the directive was not updated")
    await client.adelete_directive(bank, made.id)


async def mental_models(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.aretain_batch(bank, [{"content": f} for f in FACTS])
    made = await client.acreate_mental_model(bank, name="Ownership", source_query="Who owns what on the platform?")
    model_id = str(getattr(made, "mental_model_id", None) or getattr(made, "id", None) or "")
    check(model_id, f"creating a mental model gave no id: {made}")
    for _ in range(120):  # its first content is written in the background
        model = await client.aget_mental_model(bank, model_id)
        if getattr(model, "content", None):
            break
        await asyncio.sleep(0.25)
    check(getattr(model, "content", None), "the mental model has no content")
    listed = await client.alist_mental_models(bank)
    check(any(m.id == model_id for m in listed.items), "the mental model is not listed")
    await client.adelete_mental_model(bank, model_id)


async def files(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.acreate_bank(bank, mission="Remember the platform team's incidents.")
    note = Path(tempfile.mkdtemp(prefix="memwarden-example-")) / "incident.txt"
    note.write_text("Incident 2026-04-02: the billing database failed over to the Frankfurt replica.\n")
    try:
        answer = await client.aretain_files(bank, [note], context="incident notes")
    finally:
        shutil.rmtree(note.parent, ignore_errors=True)
    check(answer.operation_ids, f"file retain gave no operation: {answer}")


async def bank_templates(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    r = await http.get("/v1/bank-template-schema")
    check(r.status_code == 200, f"the template schema answered {r.status_code}: {r.text[:200]}")
    await client.acreate_bank(bank, mission="Remember the platform team's decisions.")
    r = await http.get(f"/v1/default/banks/{bank}/export")
    check(r.status_code == 200, f"exporting a template answered {r.status_code}: {r.text[:200]}")
    target = f"{bank}-copy"
    r = await http.post(f"/v1/default/banks/{target}/import", json=r.json())
    check(r.status_code == 200, f"importing it answered {r.status_code}: {r.text[:200]}")
    await http.delete(f"/v1/default/banks/{target}")


async def tags_and_entities(client: Hindsight, http: httpx.AsyncClient, bank: str) -> None:
    await client.aretain_batch(bank, [{"content": FACTS[2], "tags": ["team:search"], "entities": [{"text": "Tomás"}]}])
    tags = (await http.get(f"/v1/default/banks/{bank}/tags")).json()
    check(any(t["tag"] == "team:search" for t in tags["items"]), "the client's tag is not listed")
    entities = (await http.get(f"/v1/default/banks/{bank}/entities")).json()
    named = [e for e in entities["items"] if e["canonical_name"] == "Tomás"]
    check(named, "the named entity is not listed")
    one = await http.get(f"/v1/default/banks/{bank}/entities/{named[0]['id']}")
    check(one.status_code == 200, f"the entity answered {one.status_code}")


SCENARIOS: dict[str, Scenario] = {
    "banks": banks,
    "retain": retain,
    "recall": recall,
    "reflect": reflect,
    "documents": documents,
    "memories": memories,
    "operations": operations,
    "directives": directives,
    "mental-models": mental_models,
    "files": files,
    "bank-templates": bank_templates,
    "tags-and-entities": tags_and_entities,
}


async def run_all(url: str) -> dict[str, tuple[str, str]]:
    """Each scenario against ``url``: ``passed`` or ``failed`` and the first line of why."""
    out: dict[str, tuple[str, str]] = {}
    async with httpx.AsyncClient(base_url=url, timeout=120) as http:
        for name, scenario in SCENARIOS.items():
            bank = f"example-{name}-{uuid.uuid4().hex[:8]}"
            client = Hindsight(base_url=url)
            try:
                await scenario(client, http, bank)
                out[name] = ("passed", "")
            except Exception as exc:  # a scenario's failure, whatever raised it, is its result
                first = (str(exc).strip().splitlines() or [type(exc).__name__])[0]
                out[name] = ("failed", f"{type(exc).__name__}: {first}"[:160])
            finally:
                await client.aclose()  # type: ignore[no-untyped-call]
                with contextlib.suppress(httpx.HTTPError):  # a cleanup's failure is not the scenario's
                    await http.delete(f"/v1/default/banks/{bank}")
    return out


def run(url: str) -> dict[str, tuple[str, str]]:
    return asyncio.run(run_all(url))
