"""The Mem0 front's reads, for both dialects: get, get_all, search, history, entities, events.

get and get_all read the ledger (exact, and fast: the memories memwarden accepted and holds
active, with their labels); search recalls through the backend — the self-hosted store or
Hindsight — with the filter's entity tags as the backend's tag filter, then maps each hit to its
ledger memory (``governance.reads.live_hits``, the read-path filter: a hit of a document memwarden
withholds, or one the ledger does not hold active — written around memwarden — never comes back)
and applies the whole filter exactly there.

Scores are 0..1: the backend's calibrated relevance (the self-hosted store's, or Hindsight's
cross-encoder score), else the better of the hit's semantic similarity and its keyword score as the
backend gives them (both 0..1), else by rank. The store's relevance compares across queries (a
memory a question is about scores ~0.8, an unrelated one ~0.2; docs/operations/benchmarks/held-out.md), so
Mem0's ``threshold`` means what it says.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from memwarden.backends.base import BackendRejected, BackendUnavailable
from memwarden.backends.types import Memory, RecallQuery, TagFilter
from memwarden.db import mem0 as rows
from memwarden.db.records import LedgerMemory
from memwarden.fronts.mem0.context import Call
from memwarden.fronts.mem0.filters import FilterError, Node, matches, parse, tag_sets
from memwarden.fronts.mem0.models import Mem0Error
from memwarden.fronts.mem0.shapes import entities, history_json, mem0_id, memory_json, record
from memwarden.governance.reads import live_hits
from memwarden.governance.refusals import SecretInFields, refuse_secrets
from memwarden.policies.field_secrets import field_secrets

RECALL_TOKENS = 16_384  # a search reads this much memory text from the backend before filtering
DEFAULT_THRESHOLD = 0.1


def filter_of(call: Call, filters: Any) -> Node:
    try:
        return parse(filters if filters is not None else {}, oss=call.oss)
    except FilterError as exc:
        raise Mem0Error(400, f"invalid filters: {exc}") from None


async def get(call: Call, memory_id: str) -> LedgerMemory:
    row = await call.state.ledger.read(lambda db: rows.live_row(db, call.bank, memory_id))
    if row is None:
        raise Mem0Error(404, "Memory not found")
    return row


async def listed(call: Call, node: Node) -> list[LedgerMemory]:
    """Every live memory the filter selects, newest first."""
    sets = tag_sets(node, call.state.settings.governance.tag_separator)
    found = await call.state.ledger.read(lambda db: rows.live_rows(db, call.bank, sets))
    return [r for r in found if matches(node, record(r))]


def _score(memory: Memory, rank: int) -> float:
    scores = memory.extra.get("scores") if isinstance(memory.extra, Mapping) else None
    best = None
    if isinstance(scores, Mapping):
        if isinstance(calibrated := scores.get("reranker"), int | float):
            best = calibrated  # the self-hosted store's calibrated relevance (or Hindsight's reranker)
        elif values := [v for k in ("semantic", "keyword") if isinstance(v := scores.get(k), int | float)]:
            best = max(values)
    if best is None:
        best = 1.0 / (1 + rank)
    return round(min(1.0, max(0.0, float(best))), 4)


async def search(call: Call, query: str, node: Node, *, top_k: int, threshold: float | None) -> list[dict[str, Any]]:
    """The hits, best first, each a memory with its ``score``. Raises :class:`Mem0Error` (502 when
    the backend cannot be reached)."""
    state = call.state
    found = field_secrets({"query": query})  # as recall: the backend would log it and embed it
    try:
        route = str(call.scope.get("state", {}).get("route", "mem0"))
        await refuse_secrets(state.ledger, call.bank, found, route=route, request_id=call.request_id)
    except SecretInFields:
        raise Mem0Error(422, "the query holds what looks like a secret; it is not sent on") from None
    sets = tag_sets(node, state.settings.governance.tag_separator)
    groups = [{"tags": tags, "match": "any_strict"} for tags in sets] or None
    recall = RecallQuery(text=query, max_tokens=RECALL_TOKENS, tags=TagFilter(groups=groups))
    try:
        recalled = await state.memory.recall(call.bank, recall)
    except BackendRejected as exc:
        if exc.status == 404:  # a bank the backend has never seen: nothing in it
            return []
        raise Mem0Error(502, f"the backend refused the search ({exc.status})") from None
    except BackendUnavailable as exc:
        raise Mem0Error(502, f"the backend could not be reached: {exc}") from None
    cut = DEFAULT_THRESHOLD if threshold is None else threshold
    out: list[dict[str, Any]] = []
    seen: set[str] = set()
    for hit, row in await live_hits(state.ledger, call.bank, recalled.memories):  # the read-path filter
        if mem0_id(row) in seen or not matches(node, record(row)):
            continue
        score = _score(hit, len(out))
        if score < cut:
            continue
        seen.add(mem0_id(row))
        shaped = memory_json(row, oss=call.oss)
        shaped["score"] = score
        out.append(shaped)
        if len(out) >= top_k:
            break
    return out


async def history(call: Call, memory_id: str) -> list[dict[str, Any]]:
    versions = await call.state.ledger.read(lambda db: rows.rows_of(db, call.bank, memory_id))
    # Erased versions hold no text; held and rejected ones were never delivered (a held update's text
    # would read as the memory's old version).
    versions = [v for v in versions if v.status in rows.SHOWN]
    if not versions:
        raise Mem0Error(404, "Memory not found")
    events = await call.state.ledger.read(lambda db: rows.events_of(db, [v.id for v in versions]))
    return history_json(versions, events, oss=call.oss)


async def entity_list(call: Call) -> list[dict[str, Any]]:
    """The users, agents, apps and runs of the bank's live memories, with their counts."""
    found = await call.state.ledger.read(lambda db: rows.live_rows(db, call.bank))
    counts: dict[tuple[str, str], list[Any]] = {}
    for row in found:
        for name, value in entities(row.tags).items():
            kind = name.removesuffix("_id")
            entry = counts.setdefault((kind, value), [0, row.created_at, row.updated_at])
            entry[0] += 1
            entry[1] = min(entry[1], row.created_at)
            entry[2] = max(entry[2], row.updated_at)
    return [
        {
            "id": f"{kind}:{name}",
            "name": name,
            "type": kind,
            "total_memories": count,
            "owner": None,
            "organization": None,
            "metadata": None,
            "created_at": created,
            "updated_at": updated,
        }
        for (kind, name), (count, created, updated) in sorted(counts.items())
    ]


async def event(call: Call, event_id: str) -> dict[str, Any]:
    """An add's event as Mem0's ``GET /v1/event/{id}/`` answers it, its results read from the
    ledger now (an erased memory's text is gone from it too); ``warden``: every verdict."""
    found = await call.state.ledger.read(lambda db: rows.event(db, call.bank, event_id))
    if found is None:
        raise Mem0Error(404, "Event not found")
    summaries = found.results
    ids = [s["ledger_id"] for s in summaries if s.get("ledger_id")]
    by_id: Mapping[str, LedgerMemory] = await call.state.ledger.read(lambda db: rows.rows_by_ids(db, ids))
    results, statuses = [], []
    for s in summaries:
        row = by_id.get(s.get("ledger_id") or "")
        if row is None:
            continue
        statuses.append(row.status)
        kind = "ADD" if s["verdict"] in ("store", "redact") else "NONE"
        text = row.content if row.status in rows.SHOWN else None  # a held item's text is not delivered
        results.append({"id": mem0_id(row), "data": {"memory": text}, "event": kind})
    status = "SUCCEEDED"
    if "pending" in statuses:
        status = "RUNNING"
    elif "failed" in statuses:
        status = "FAILED"
    return {
        "id": found.id,
        "event_type": found.kind.upper(),
        "status": status,
        "payload": None,
        "results": results,
        "error": "the backend did not take every memory" if status == "FAILED" else None,
        "created_at": found.created_at,
        "updated_at": found.created_at,
        "warden": {"decisions": [_public(s) for s in summaries]},
    }


def _public(summary: Mapping[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in summary.items() if k != "ledger_id"}


def page_of(found: Sequence[LedgerMemory], page: int, size: int) -> Sequence[LedgerMemory]:
    return found[(page - 1) * size : page * size]
