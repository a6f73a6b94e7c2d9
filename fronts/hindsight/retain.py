"""The governed retain route: ``POST /v1/default/banks/{bank}/memories``.

request → parse (Hindsight's request model; its 422 shape on failure) → judge every item (pure
policies) → gather facts (ledger: active hashes and topic keys) → resolve (dedup, conflicts) →
act → respond in Hindsight's shape, plus ``X-Warden-Decisions`` and, when asked, a ``warden`` object.

"Act" is the only thing that differs between modes:

* dry run (``?dry_run=true`` / ``X-Warden-Dry-Run: 1``): nothing — no ledger row, no event, no backend call;
* ``enforce``: one transaction records every verdict (rows pending), the survivors go to the
  backend in one call with the client's other fields intact, then they become active (or failed);
* ``shadow``: the verdicts are audited (``source: shadow``) and the request is forwarded unchanged;
* ``off``: plain pass-through (decided by the router before this module is reached).
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlencode

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.types import Receive, Scope, Send

from memwarden.backends.base import BackendError, BackendUnavailable
from memwarden.db.memories import lookup_facts, mark_delivered, mark_failed, real_id, record_verdicts
from memwarden.db.memory_reads import row_by_id
from memwarden.fronts.asgi import (
    note_backend_status,
    read_json,
    replay,
    send_json,
    validation_detail,
)
from memwarden.fronts.hindsight.models import MemoryItem
from memwarden.fronts.hindsight.passthrough import forward, request_headers
from memwarden.fronts.middleware import request_id_of
from memwarden.governance.config_changes import seed_in_background
from memwarden.governance.review import supersede_in_backend
from memwarden.governance.state import AppState
from memwarden.policies.pipeline import ACCEPTED, FORWARDED, Judgement, resolve
from memwarden.policies.tags import canonicalize_tags, tag_value

log = structlog.get_logger("memwarden.retain")
WARDEN_PARAMS = frozenset({"dry_run", "warden"})


class RetainRequest(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    items: list[MemoryItem]
    is_async: bool = Field(False, alias="async")
    document_tags: list[str] | None = None


@dataclass
class Outcome:
    """Everything the response needs."""

    judgements: list[Judgement]
    memory_ids: dict[int, str]
    dry_run: bool
    mode: str


def decisions_header(judgements: Sequence[Judgement]) -> bytes:
    counts: dict[str, int] = {}
    for j in judgements:
        counts[j.verdict] = counts.get(j.verdict, 0) + 1
    return json.dumps(counts, separators=(",", ":")).encode()


def warden_object(outcome: Outcome) -> dict[str, Any]:
    decisions = []
    for j in outcome.judgements:
        summary = j.summary()
        duplicate_of = j.existing_id if j.verdict == "duplicate" else None
        summary["memory_id"] = outcome.memory_ids.get(j.position) or duplicate_of
        decisions.append(summary)
    return {"mode": outcome.mode, "dry_run": outcome.dry_run, "decisions": decisions}


def _query(scope: Scope) -> list[tuple[str, str]]:
    return parse_qsl(scope.get("query_string", b"").decode("latin-1"), keep_blank_values=True)


def _flag(scope: Scope, param: str, header: bytes, on: tuple[str, ...]) -> bool:
    if any(k == param and v.lower() in on for k, v in _query(scope)):
        return True
    return any(
        name == header and value.decode("latin-1").strip().lower() in ("1", "true", "yes")
        for name, value in scope["headers"]
    )


def _forwarded_item(raw: dict[str, Any], j: Judgement) -> dict[str, Any]:
    """The item as the backend gets it: labels and canonical tags, masked text, a document id."""
    item = dict(raw)
    item["tags"] = list(j.tags)
    if j.verdict == "redact":
        content = raw.get("content")
        if isinstance(content, str):
            item["content"] = j.text
        else:  # blocks: the text blocks become one masked text block, the others stay in place
            blocks = [b for b in content or [] if not (isinstance(b, dict) and b.get("type") == "text")]
            item["content"] = [{"type": "text", "text": j.text}, *blocks]
    if not item.get("document_id"):
        item["document_id"] = f"mw-{uuid.uuid4().hex}"
    return item


async def governed_retain(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    governance = state.settings.governance
    mode = governance.mode_for(bank)
    dry_run = _flag(scope, "dry_run", b"x-warden-dry-run", ("1", "true", "yes"))
    if mode == "off" and not dry_run:
        await forward(state.backend, scope, receive, send, retries=0)
        return
    verbose = dry_run or _flag(scope, "warden", b"x-warden-verbose", ("verbose",))

    # -- parse ----------------------------------------------------------------------------
    got = await read_json(scope, receive, send)
    if got is None:
        return
    raw_body, payload = got
    try:
        request = RetainRequest.model_validate(payload)
    except ValidationError as exc:
        await send_json(send, 422, {"detail": validation_detail(exc)})
        return
    if len(request.items) > governance.max_items:
        await send_json(
            send, 413, {"detail": f"Too many items in one request: {len(request.items)}, limit {governance.max_items}"}
        )
        return
    for i, item in enumerate(request.items):
        if item.tags is not None and len(item.tags) > governance.max_tags:
            too_many: list[dict[str, Any]] = [
                {
                    "type": "too_long",
                    "loc": ["body", "items", i, "tags"],
                    "msg": f"At most {governance.max_tags} tags per item",
                    "input": len(item.tags),
                }
            ]
            await send_json(send, 422, {"detail": too_many})
            return

    if not dry_run:
        seed_in_background(state, bank)

    # -- judge, gather facts, resolve -----------------------------------------------------
    doc_tags = request.document_tags or []
    secrets = governance.secrets_for(bank)
    judged = [
        state.pipeline.judge(i, item.content, [*(item.tags or []), *doc_tags], secrets=secrets)
        for i, item in enumerate(request.items)
    ]
    hashes = [j.content_hash for j in judged if j.verdict in FORWARDED]
    keys = [j.topic_key for j in judged if j.verdict in FORWARDED and j.topic_key]
    facts = await state.ledger.read(lambda db: lookup_facts(db, bank, hashes, keys)) if hashes else None
    final = resolve(
        judged, active_hashes=facts.active_hashes if facts else {}, key_holders=facts.key_holders if facts else {}
    )

    raw_items: list[dict[str, Any]] = payload["items"]
    forwarded_items = [
        _forwarded_item(raw_items[j.position], j) if j.verdict in (*FORWARDED, "review") else raw_items[j.position]
        for j in final
    ]
    outcome = Outcome(final, {}, dry_run, mode)
    request_id = request_id_of(scope)
    actor = "anonymous"

    if dry_run:
        await _respond(send, bank, request.is_async, outcome, None, verbose=True)
        return

    if mode == "shadow":
        await state.ledger.write(
            lambda db: record_verdicts(
                db,
                bank=bank,
                judgements=final,
                items=raw_items,
                request_id=request_id,
                actor=actor,
                source="shadow",
                record_rows=False,
            )
        )
        await forward(state.backend, scope, replay(raw_body), send, retries=0)
        return

    # -- enforce --------------------------------------------------------------------------
    recorded = await state.ledger.write(
        lambda db: record_verdicts(
            db, bank=bank, judgements=final, items=forwarded_items, request_id=request_id, actor=actor, source="retain"
        )
    )
    outcome.memory_ids = recorded.memory_ids
    survivors = [j for j in final if j.verdict in FORWARDED]
    if not survivors:
        await _respond(send, bank, request.is_async, outcome, None, verbose=verbose)
        return

    body = {k: v for k, v in payload.items() if k != "items"}
    body["items"] = [forwarded_items[j.position] for j in survivors]
    if doc_tags:
        sep = state.settings.governance.tag_separator
        body["document_tags"] = [
            t
            for t in canonicalize_tags(doc_tags, separator=sep)
            if tag_value([t], "topic") is None and tag_value([t], "stage") is None
        ]
    survivor_ids = [recorded.memory_ids[j.position] for j in survivors]
    headers, _ = request_headers(scope)
    headers = [(k, v) for k, v in headers if k.lower() not in ("content-length", "accept-encoding")]
    headers.append(("accept-encoding", "identity"))
    target = _backend_target(scope)
    try:
        upstream = await state.backend.send_raw("POST", target, headers, json.dumps(body, ensure_ascii=False).encode())
    except BackendUnavailable as exc:
        reason = f"backend unavailable: {exc}"
        await state.ledger.write(
            lambda db: mark_failed(
                db, bank=bank, memory_ids=survivor_ids, reason=reason, request_id=request_id, actor=actor
            )
        )
        note_backend_status(scope, "unreachable")
        await send_json(
            send,
            502,
            {"detail": f"Backend unavailable: {exc}"},
            headers=[(b"x-warden-decisions", decisions_header(final))],
        )
        return
    note_backend_status(scope, upstream.status_code)
    try:
        answer = b"".join([chunk async for chunk in upstream.aiter_raw()])
    finally:
        await upstream.aclose()
    if upstream.status_code != 200:
        reason = f"backend answered {upstream.status_code}"
        await state.ledger.write(
            lambda db: mark_failed(
                db, bank=bank, memory_ids=survivor_ids, reason=reason, request_id=request_id, actor=actor
            )
        )
        passed = [
            (k, v)
            for k, v in upstream.raw_headers
            if k.lower() not in (b"content-length", b"transfer-encoding", b"connection")
        ]
        await send(
            {
                "type": "http.response.start",
                "status": upstream.status_code,
                "headers": [
                    *passed,
                    (b"content-length", str(len(answer)).encode()),
                    (b"x-warden-decisions", decisions_header(final)),
                ],
            }
        )
        await send({"type": "http.response.body", "body": answer})
        return
    supersede = [
        (recorded.memory_ids[j.position], old)
        for j in survivors
        if (old := real_id(j.supersedes, recorded.memory_ids)) is not None
    ]
    await state.ledger.write(
        lambda db: mark_delivered(
            db, bank=bank, memory_ids=survivor_ids, supersede=supersede, request_id=request_id, actor=actor
        )
    )
    for _, old_id in supersede:
        await _retire(state, bank, old_id)
    try:
        backend_json = json.loads(answer)
    except ValueError:
        backend_json = None
    await _respond(
        send,
        bank,
        request.is_async,
        outcome,
        backend_json,
        verbose=verbose,
        extra_headers=[(k, v) for k, v in upstream.raw_headers if k.lower() == b"x-ignored-params"],
    )


async def _retire(state: AppState, bank: str, memory_id: str) -> None:
    """Take a superseded memory out of the backend where that is safe (the ledger keeps it)."""
    row = await state.ledger.read(lambda db: row_by_id(db, memory_id))
    if row is None:
        return
    try:
        outcome = await supersede_in_backend(state, bank, row)
    except BackendError as exc:
        outcome = f"still in the backend: {exc}"
    log.info("superseded", bank=bank, memory_id=memory_id, backend=outcome)


def _backend_target(scope: Scope) -> str:
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    query = [(k, v) for k, v in _query(scope) if k not in WARDEN_PARAMS]
    return path.decode("latin-1") + (f"?{urlencode(query)}" if query else "")


async def _respond(
    send: Send,
    bank: str,
    is_async: bool,
    outcome: Outcome,
    backend_json: Any,
    *,
    verbose: bool,
    extra_headers: Sequence[tuple[bytes, bytes]] = (),
) -> None:
    accepted = sum(1 for j in outcome.judgements if j.verdict in ACCEPTED)
    if isinstance(backend_json, dict):
        body = dict(backend_json)
        body["items_count"] = accepted
    else:
        body = {
            "success": True,
            "bank_id": bank,
            "items_count": accepted,
            "async": is_async,
            "operation_id": None,
            "operation_ids": None,
            "usage": None
            if is_async
            else {"input_tokens": 0, "output_tokens": 0, "total_tokens": 0, "cached_tokens": 0, "thoughts_tokens": 0},
        }
    if verbose:
        body["warden"] = warden_object(outcome)
    await send_json(
        send, 200, body, headers=[(b"x-warden-decisions", decisions_header(outcome.judgements)), *extra_headers]
    )
