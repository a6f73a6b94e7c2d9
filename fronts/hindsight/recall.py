"""The read path: tag filters that find both spellings, and status on the way back.

``POST .../reflect`` gets the same tag filters as a recall (its answer is passed back as given).
A recall or reflect whose body memwarden cannot read (nested too deep, not Unicode) is a ``422``,
and one with what looks like a secret in any field (the query included: the backend logs it) is a
``422`` naming the field, never forwarded.

``POST .../memories/recall``:

1. The body's ``tags``/``tag_groups`` are rewritten so that ``key:value`` and ``key=value`` both
   match, with each ``tags_match`` mode's exact semantics (``policies/tag_query.py``). An
   ``exact`` filter too wide to rewrite is a 400; a body that is not a JSON object goes to the
   backend as sent, which answers it in its own words.
2. The backend's results are checked against the ledger: a memory whose document holds only
   memories memwarden archived or superseded never comes back (a superseded memory stays in the
   backend when its document is the client's; review-held items never reached it). Documents the
   ledger does not know — written around memwarden — pass.
3. ``X-Warden-Tags: normalized`` says the filter was rewritten, ``X-Warden-Excluded: n`` how many
   results were withheld; with ``trace: true`` the trace gains a ``warden`` object saying both.
4. With ``X-Warden-Provenance: 1`` each result gains ``provenance``: who wrote it as the ledger
   recorded it (``writer``: the API key's id, ``channel``, ``written_at``; null for a memory written
   around memwarden) — for an agent told to weigh what it recalls by its source.

``GET .../memories/list`` with ``tags`` gets the same spellings: the any-modes as one query over the
union, the others fanned out (one query per choice of spellings) and merged by id.

With ``governance.mode = "off"`` for the bank, both pass through untouched.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable, Sequence
from typing import Any
from urllib.parse import urlencode

import structlog
from starlette.types import Receive, Scope, Send

from memwarden.backends.base import RAW_PASSTHROUGH, BackendRejected, BackendUnavailable
from memwarden.backends.hindsight_json import recall_query_from_json, recalled_json
from memwarden.fronts.errors import refused_for_secrets
from memwarden.fronts.hindsight.passthrough import forward, request_headers
from memwarden.fronts.query import query_pairs
from memwarden.governance import reads
from memwarden.governance.state import AppState
from memwarden.policies.tag_query import TagQueryError, list_filters, normalize_request, spellings
from memwarden.store.errors import StoreError
from memwarden.wire.asgi import (
    BodyError,
    ClientGone,
    content_type_of,
    dumps,
    is_json_type,
    loads,
    note_backend_status,
    parse_json_async,
    read_body,
    read_json,
    replay,
    send_json,
)

log = structlog.get_logger("memwarden.recall")
PASSED_HEADERS_DROPPED = (b"content-length", b"transfer-encoding", b"connection", b"content-encoding")
# GET .../memories/list fanned out: how many rows one spelling may contribute, at most.
FAN_OUT_PAGE = 1000
FAN_OUT_CONCURRENCY = 8  # a fanned-out list's backend reads in flight at once


async def _backend_json(state: AppState, scope: Scope, method: str, target: str, body: bytes | None) -> Any:
    """Send one request to the backend with the client's headers (a JSON body, or none);
    (status, headers, body bytes)."""
    headers, _ = request_headers(scope)
    dropped = ("content-length", "accept-encoding", "content-type", "content-encoding")
    headers = [(k, v) for k, v in headers if k.lower() not in dropped]
    headers.append(("accept-encoding", "identity"))
    if body is not None:
        headers.append(("content-type", "application/json"))
    upstream = await state.backend.send_raw(method, target, headers, body or b"")
    try:
        answer = b"".join([chunk async for chunk in upstream.aiter_raw()])
    finally:
        await upstream.aclose()
    passed = [(k, v) for k, v in upstream.raw_headers if k.lower() not in PASSED_HEADERS_DROPPED]
    return upstream.status_code, passed, answer


async def _send_raw(send: Send, status: int, headers: list[tuple[bytes, bytes]], body: bytes) -> None:
    await send(
        {
            "type": "http.response.start",
            "status": status,
            "headers": [*headers, (b"content-length", str(len(body)).encode())],
        }
    )
    await send({"type": "http.response.body", "body": body})


def _target(scope: Scope, query: Sequence[tuple[str, str]] | None = None) -> str:
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    if query is None:
        qs: bytes = scope.get("query_string", b"")
        return path.decode("latin-1") + (f"?{qs.decode('latin-1')}" if qs else "")
    return path.decode("latin-1") + (f"?{urlencode(query)}" if query else "")


async def _recall(
    state: AppState, scope: Scope, bank: str, body: dict[str, Any], raw: bytes | None
) -> tuple[int, list[tuple[bytes, bytes]], bytes, Any]:
    """The backend's answer to a recall: status, headers, the body as received and its JSON (None
    when it is not a 200 with a JSON body). ``raw`` is the client's body when ``body`` is it
    unchanged. A backend without the raw pass-through (the self-hosted store) is called in neutral
    types, the request checked as the store's app checks it."""
    if RAW_PASSTHROUGH not in state.memory.capabilities:
        from memwarden.store.server.app import recall_request  # the store's stack: only when it serves

        json_type = [(b"content-type", b"application/json")]
        try:
            recalled = await state.memory.recall(bank, recall_query_from_json(recall_request(body)))
            return 200, json_type, b"", recalled_json(recalled)
        except StoreError as exc:
            return exc.status, json_type, dumps({"detail": exc.detail}), None
        except BackendRejected as exc:
            return exc.status, json_type, dumps(exc.body), None
        except BackendUnavailable as exc:  # its database busy (503) or full (507): said as its app says it
            if exc.status is None:
                raise
            return exc.status, json_type, dumps({"detail": str(exc)}), None
    sent = raw if raw is not None else json.dumps(body, ensure_ascii=False).encode()
    status, headers, answer = await _backend_json(state, scope, "POST", _target(scope), sent)
    try:
        result = loads(answer) if status == 200 else None
    except ValueError:
        result = None
    return status, headers, answer, result


def _chunk_document(chunk_id: str, bank: str) -> str | None:
    """The document of a chunk id (Hindsight's ``<bank>_<document>_<index>``)."""
    head, _, index = chunk_id.rpartition("_")
    if not index.isdigit() or not head.startswith(f"{bank}_"):
        return None
    return head[len(bank) + 1 :]


def _included_documents(result: dict[str, Any], bank: str) -> list[str]:
    """The documents of what a recall includes beside its results: the chunks (Hindsight sends
    those of more candidates than it returns) and the source facts (those observations cite)."""
    found: list[str] = []
    chunks = result.get("chunks")
    if isinstance(chunks, dict):
        found += [d for k in chunks if isinstance(k, str) and (d := _chunk_document(k, bank))]
    facts = result.get("source_facts")
    if isinstance(facts, dict):
        found += [
            v["document_id"] for v in facts.values() if isinstance(v, dict) and isinstance(v.get("document_id"), str)
        ]
    return found


def _prune_includes(result: dict[str, Any], bank: str, withheld: set[str]) -> None:
    """What a recall includes beside its results (``chunks``, ``source_facts``, ``entities``) only
    of documents it does not withhold: a withheld memory's chunk text or source fact must not come
    back by that side door (the candidates Hindsight took chunks from are more than it returns)."""
    kept = [r for r in result["results"] if isinstance(r, dict)]
    chunks = result.get("chunks")
    if isinstance(chunks, dict):
        result["chunks"] = {k: v for k, v in chunks.items() if _chunk_document(k, bank) not in withheld}
    facts = result.get("source_facts")
    if isinstance(facts, dict):
        result["source_facts"] = {
            k: v for k, v in facts.items() if not (isinstance(v, dict) and v.get("document_id") in withheld)
        }
    entities = result.get("entities")
    if isinstance(entities, dict):
        named = {n for r in kept if isinstance(r.get("entities"), list) for n in r["entities"]}
        result["entities"] = {k: v for k, v in entities.items() if k in named} or None


def _wants_provenance(scope: Scope) -> bool:
    """``X-Warden-Provenance: 1`` (or true, yes): each result says who wrote it."""
    return any(
        name == b"x-warden-provenance" and value.decode("latin-1").strip().lower() in ("1", "true", "yes")
        for name, value in scope["headers"]
    )


async def governed_recall(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    if state.settings.governance.mode_for(bank) == "off":
        await forward(state.backend, scope, receive, send, retries=state.read_retries)
        return
    got = await read_json(scope, receive, send)
    if got is None:
        return
    raw, payload = got
    if await refused_for_secrets(state, scope, send, payload):  # the backend logs a query, and may keep it
        return
    if not isinstance(payload, dict):
        await forward(state.backend, scope, replay(raw, receive), send, retries=state.read_retries)
        return
    try:
        body, normalized = normalize_request(payload, state.label_space)
    except TagQueryError as exc:
        await send_json(send, 400, {"detail": str(exc)})
        return
    try:
        status, headers, answer, result = await _recall(state, scope, bank, body, raw if not normalized else None)
    except BackendUnavailable as exc:
        note_backend_status(scope, "unreachable")
        await send_json(send, 502, {"detail": f"Backend unavailable: {exc}"})
        return
    note_backend_status(scope, status)
    if not isinstance(result, dict) or not isinstance(result.get("results"), list):
        await _send_raw(send, status, headers, answer)
        return
    results: list[Any] = result["results"]
    documents = [r["document_id"] for r in results if isinstance(r, dict) and isinstance(r.get("document_id"), str)]
    withheld = await reads.withheld(state.ledger, bank, [*documents, *_included_documents(result, bank)])
    if withheld:
        result["results"] = [r for r in results if not (isinstance(r, dict) and r.get("document_id") in withheld)]
        _prune_includes(result, bank, withheld)
    if _wants_provenance(scope):  # opt-in: the answer's shape is otherwise Hindsight's
        hits = [r for r in result["results"] if isinstance(r, dict)]
        written = await reads.provenance(
            state.ledger, bank, [r["document_id"] for r in hits if isinstance(r.get("document_id"), str)]
        )
        for r in hits:
            document = r.get("document_id")
            r["provenance"] = written.get(document) if isinstance(document, str) else None
    excluded = len(results) - len(result["results"])
    if isinstance(result.get("trace"), dict):
        result["trace"]["warden"] = {
            "tags_normalized": normalized,
            "sent_tag_filter": {k: body[k] for k in ("tags", "tags_match", "tag_groups") if k in body},
            "excluded_by_status": excluded,
        }
    extra = [(b"x-warden-excluded", str(excluded).encode())]
    if normalized:
        extra.append((b"x-warden-tags", b"normalized"))
    kept = [(k, v) for k, v in headers if k.lower() != b"content-type"]
    await send_json(send, 200, result, headers=[*kept, *extra])


async def governed_reflect(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST .../reflect``: its tag filters (which scope the memories it reads and the directives
    it applies) get a recall's both spellings; the rest goes as sent, the answer comes back as given."""
    bank: str = scope["path_params"]["bank_id"]
    if state.settings.governance.mode_for(bank) == "off":
        await forward(state.backend, scope, receive, send, retries=state.read_retries)
        return
    try:
        raw = await read_body(receive)
    except ClientGone:
        note_backend_status(scope, "client_gone")
        return
    payload = None
    if is_json_type(content_type_of(scope)):
        try:
            payload = await parse_json_async(raw)
        except BodyError as exc:  # what memwarden cannot read is never forwarded unjudged
            await send_json(send, exc.status, {"detail": exc.detail})
            return
    if await refused_for_secrets(
        state, scope, send, payload
    ):  # the backend logs a reflect's query and sends it to its LLM
        return
    try:
        body, normalized = normalize_request(payload, state.label_space) if isinstance(payload, dict) else ({}, False)
    except TagQueryError as exc:
        await send_json(send, 400, {"detail": str(exc)})
        return
    if not normalized:  # as sent (a body that is no JSON object included: the backend's 422)
        await forward(state.backend, scope, replay(raw, receive), send, retries=state.read_retries)
        return
    sent = json.dumps(body, ensure_ascii=False).encode()
    await _relay(state, scope, send, _target(scope), [(b"x-warden-tags", b"normalized")], sent)


async def governed_list(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``GET .../memories/list``: tag filters in both spellings (fanned out where needed)."""
    bank: str = scope["path_params"]["bank_id"]
    query = query_pairs(scope)
    tags = [v for k, v in query if k == "tags"]
    mode = next((v for k, v in query if k == "tags_match"), "any")
    if state.settings.governance.mode_for(bank) == "off" or not tags:
        await forward(state.backend, scope, receive, send, retries=state.read_retries)
        return
    try:
        filters = list_filters(tags, mode, state.label_space)
    except TagQueryError as exc:
        await send_json(send, 400, {"detail": str(exc)})
        return
    rest = [(k, v) for k, v in query if k not in ("tags", "tags_match", "limit", "offset")]
    if len(filters) == 1:
        only_tags, only_mode = filters[0]
        if only_tags == tags:
            await forward(state.backend, scope, receive, send, retries=state.read_retries)
            return
        fixed = [*rest, *(("tags", t) for t in only_tags), ("tags_match", only_mode)]
        fixed += [(k, v) for k, v in query if k in ("limit", "offset")]
        await _relay(state, scope, send, _target(scope, fixed), [(b"x-warden-tags", b"normalized")])
        return
    if len(filters) > 2 and state.label_space is not None:
        # The label alternatives (one exact query per topic × stage × separator): only those whose
        # labels the bank holds can match anything; its label tags are two reads of its tag list.
        held = await _label_tags_held(state, scope)
        if held is not None:
            filters = [(t, m) for t, m in filters if m != "exact" or all(_held(tag, held) for tag in t)]
    # Fan out: each spelling choice read whole (up to FAN_OUT_PAGE rows), merged by id, then paged.
    subqueries = [[*rest, *(("tags", t) for t in ftags), ("tags_match", fmode)] for ftags, fmode in filters]
    await _fan_out(
        state,
        scope,
        receive,
        send,
        query,
        subqueries,
        key="id",
        order=lambda items: sorted(
            items, key=lambda m: str(m.get("date") or m.get("mentioned_at") or ""), reverse=True
        ),
    )


async def governed_entities(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``GET .../entities`` (and an entity, and the entity graph) with ``tags``: counted over the
    memories the filter selects in both spellings, memwarden's labels invisible to a filter that
    does not name them — rewritten into the ``tag_groups`` query parameter Hindsight takes here
    (a JSON list, the shape a recall body's takes): one backend read, no fan-out."""
    bank: str = scope["path_params"]["bank_id"]
    query = query_pairs(scope)
    tags = [v for k, v in query if k == "tags"]
    mode = next((v for k, v in query if k == "tags_match"), "any")
    if state.settings.governance.mode_for(bank) == "off" or not tags or any(k == "tag_groups" for k, _ in query):
        await forward(state.backend, scope, receive, send, retries=state.read_retries)  # the backend's rules
        return
    try:
        body, normalized = normalize_request({"tags": tags, "tags_match": mode}, state.label_space)
    except TagQueryError as exc:
        await send_json(send, 400, {"detail": str(exc)})
        return
    if not normalized:
        await forward(state.backend, scope, receive, send, retries=state.read_retries)
        return
    fixed = [(k, v) for k, v in query if k not in ("tags", "tags_match")]
    fixed += [("tags", t) for t in body.get("tags") or ()]
    if "tags_match" in body:
        fixed.append(("tags_match", str(body["tags_match"])))
    if "tag_groups" in body:
        fixed.append(("tag_groups", json.dumps(body["tag_groups"], ensure_ascii=False)))
    await _relay(state, scope, send, _target(scope, fixed), [(b"x-warden-tags", b"normalized")])


def _held(tag: str, held: set[str]) -> bool:
    """Whether ``tag`` may be in the bank: a label tag only when the bank's tag list has it."""
    key = tag.split(":", 1)[0].split("=", 1)[0].strip().casefold()
    return key not in ("topic", "stage") or tag in held


async def _label_tags_held(state: AppState, scope: Scope) -> set[str] | None:
    """The ``topic…``/``stage…`` tags the bank holds (both separators), from its tag list; None
    when that cannot be read completely (then nothing is pruned)."""
    path: str = (scope.get("raw_path") or scope["path"].encode()).decode("latin-1")
    base = path.rsplit("/memories/list", 1)[0]
    held: set[str] = set()
    for pattern in ("topic*", "stage*"):
        target = f"{base}/tags?{urlencode([('q', pattern), ('limit', str(FAN_OUT_PAGE))])}"
        try:
            status, _, answer = await _backend_json(state, scope, "GET", target, None)
            page = loads(answer) if status == 200 else None
            if not isinstance(page, dict) or not isinstance(page.get("items"), list):
                return None
            items = page["items"]
            if int(page.get("total") or 0) > len(items):
                return None
            held.update(str(i.get("tag")) for i in items if isinstance(i, dict))
        except (BackendUnavailable, ValueError, AttributeError, TypeError):
            return None
    return held


async def _fan_out(
    state: AppState,
    scope: Scope,
    receive: Receive,
    send: Send,
    query: list[tuple[str, str]],
    subqueries: list[list[tuple[str, str]]],
    *,
    key: str,
    order: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
) -> None:
    """GET each of ``subqueries`` (up to FAN_OUT_PAGE rows each), merge the pages' ``items`` by
    ``key``, order them and answer the client's ``limit``/``offset`` page of the union."""
    try:
        limit = int(next((v for k, v in query if k == "limit"), "100"))
        offset = int(next((v for k, v in query if k == "offset"), "0"))
    except ValueError:
        await forward(state.backend, scope, receive, send, retries=state.read_retries)  # the backend's 422
        return
    merged: dict[str, Any] = {}
    truncated = False
    gate = asyncio.Semaphore(FAN_OUT_CONCURRENCY)

    async def read(sub: list[tuple[str, str]]) -> Any:
        async with gate:
            return await _backend_json(state, scope, "GET", _target(scope, [*sub, ("limit", str(FAN_OUT_PAGE))]), None)

    try:
        # Concurrently, at most FAN_OUT_CONCURRENCY at once; merged in the queries' order.
        answers = await asyncio.gather(*(read(sub) for sub in subqueries))
        for status, headers, answer in answers:
            if status != 200:
                await _send_raw(send, status, headers, answer)
                return
            page = loads(answer)
            truncated |= int(page.get("total") or 0) > FAN_OUT_PAGE
            for item in page.get("items") or []:
                merged.setdefault(str(item.get(key)), item)
    except BackendUnavailable as exc:
        await send_json(send, 502, {"detail": f"Backend unavailable: {exc}"})
        return
    except (ValueError, AttributeError):
        await send_json(send, 502, {"detail": "Backend answered a list that is not the expected JSON"})
        return
    items = order(list(merged.values()))
    extra = [(b"x-warden-tags", b"normalized; fanned-out")]
    if truncated:
        extra.append((b"x-warden-truncated", str(FAN_OUT_PAGE).encode()))
    body = {"items": items[offset : offset + limit], "total": len(items), "limit": limit, "offset": offset}
    await send_json(send, 200, body, headers=extra)


async def _relay(
    state: AppState, scope: Scope, send: Send, target: str, extra: list[tuple[bytes, bytes]], body: bytes | None = None
) -> None:
    try:
        status, headers, answer = await _backend_json(state, scope, scope["method"], target, body)
    except BackendUnavailable as exc:
        await send_json(send, 502, {"detail": f"Backend unavailable: {exc}"})
        return
    note_backend_status(scope, status)
    await _send_raw(send, status, [*headers, *extra], answer)


async def governed_tags(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``GET .../tags?q=``: a ``key:value`` pattern also finds ``key=value`` tags (and back);
    both spellings are listed as stored, merged and paged here."""
    bank: str = scope["path_params"]["bank_id"]
    query = query_pairs(scope)
    q = next((v for k, v in query if k == "q"), "")
    patterns = spellings(q) if q else [q]
    if state.settings.governance.mode_for(bank) == "off" or len(patterns) == 1:
        await forward(state.backend, scope, receive, send, retries=state.read_retries)
        return
    rest = [(k, v) for k, v in query if k not in ("q", "limit", "offset")]
    subqueries = [[*rest, ("q", pattern)] for pattern in patterns]
    await _fan_out(
        state,
        scope,
        receive,
        send,
        query,
        subqueries,
        key="tag",
        order=lambda items: sorted(items, key=lambda t: (-int(t.get("count") or 0), str(t.get("tag")))),
    )


# -- explain ------------------------------------------------------------------------------------
