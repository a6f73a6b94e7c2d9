"""The governed retain route: ``POST /v1/default/banks/{bank}/memories``.

parse (Hindsight's request model; its 422 shape on failure) → the service
(:mod:`memwarden.governance.retain`: judge, record, deliver, settle) → shape the answer in
Hindsight's form, plus ``X-Warden-Decisions`` and, when asked, a ``warden`` object.

Modes: a dry run (``?dry_run=true`` / ``X-Warden-Dry-Run: 1``) writes nothing and calls no backend;
``enforce`` delivers the survivors with the client's other fields intact, through the client's own
request (its headers; the backend's answer relayed when it refuses); ``shadow`` audits the verdicts
and forwards the request unchanged; ``off`` is a plain pass-through.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Sequence
from typing import Annotated, Any
from urllib.parse import urlencode

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.types import Receive, Scope, Send

from memwarden.backends.hindsight_json import receipt_json
from memwarden.backends.hindsight_models import MAX_TAG_CHARS, MemoryItem, attachment_problem
from memwarden.fronts.auth import provenance_of, writes_as_admin
from memwarden.fronts.decisions import decisions_header
from memwarden.fronts.errors import refused_for_secrets, send_service_error
from memwarden.fronts.hindsight.passthrough import forward, request_headers
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import query_pairs
from memwarden.governance.delivery import delivery_for
from memwarden.governance.errors import ServiceError
from memwarden.governance.retain import Batch, Retained
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import (
    AttachmentTextTooLong,
    FieldSecret,
    attachment_secrets,
    retain_secrets,
)
from memwarden.policies.judgement import ACCEPTED, extract_text
from memwarden.wire.asgi import (
    OFF_LOOP_BYTES,
    note_backend_status,
    read_json,
    replay,
    send_json,
    validation_detail,
)

WARDEN_PARAMS = frozenset({"dry_run", "warden"})


class RetainRequest(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    items: list[MemoryItem]
    is_async: bool = Field(False, alias="async")
    document_tags: list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]] | None = None


def warden_object(retained: Retained, mode: str, dry_run: bool) -> dict[str, Any]:
    decisions = []
    for j in retained.judgements:
        summary = j.summary()
        duplicate_of = j.existing_id if j.verdict == "duplicate" else None
        summary["memory_id"] = retained.memory_ids.get(j.position) or duplicate_of
        decisions.append(summary)
    return {"mode": mode, "dry_run": dry_run, "decisions": decisions}


def shape_problem(payload: Any, max_items: int, max_tags: int) -> tuple[int, dict[str, Any]] | None:
    """The status and answer for a retain whose counts are past the limits — items in the request,
    tags on an item or on the request — read from the bare JSON, before any item is scanned or
    validated; None when they are within them."""
    if not isinstance(payload, dict):
        return None
    items = payload.get("items")
    if isinstance(items, list) and len(items) > max_items:
        return 413, {"detail": f"Too many items in one request: {len(items)}, limit {max_items}"}
    places: list[tuple[list[str | int], Any]] = [(["body", "document_tags"], payload.get("document_tags"))]
    if isinstance(items, list):
        places += [
            (["body", "items", i, "tags"], item.get("tags")) for i, item in enumerate(items) if isinstance(item, dict)
        ]
    for loc, tags in places:
        if isinstance(tags, list) and len(tags) > max_tags:
            where = "per item" if loc[1] == "items" else "on a request"
            msg = f"At most {max_tags} tags {where}"
            return 422, {"detail": [{"type": "too_long", "loc": loc, "msg": msg, "input": len(tags)}]}
    return None


def _checked(payload: Any, limit: int) -> list[FieldSecret] | ValidationError | AttachmentTextTooLong | RetainRequest:
    """The request's secrets outside the memory text (refused first: the model's 422 would quote
    them) — its attachments' within ``limit`` characters of text — else its validation error, else
    the request."""
    try:
        found = (
            [*retain_secrets(payload), *attachment_secrets(payload, limit=limit)] if isinstance(payload, dict) else []
        )
    except AttachmentTextTooLong as exc:
        return exc
    if found:
        return found
    try:
        return RetainRequest.model_validate(payload)
    except ValidationError as exc:
        return exc


def _query(scope: Scope) -> list[tuple[str, str]]:
    return query_pairs(scope)


def _flag(scope: Scope, param: str, header: bytes, on: tuple[str, ...]) -> bool:
    if any(k == param and v.lower() in on for k, v in _query(scope)):
        return True
    return any(
        name == header and value.decode("latin-1").strip().lower() in ("1", "true", "yes")
        for name, value in scope["headers"]
    )


async def governed_retain(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    mode = state.settings.governance.mode_for(bank)
    dry_run = _flag(scope, "dry_run", b"x-warden-dry-run", ("1", "true", "yes"))
    if mode == "off" and not dry_run:
        await forward(state.backend, scope, receive, send, retries=0)
        return
    verbose = dry_run or _flag(scope, "warden", b"x-warden-verbose", ("verbose",))
    parsed = await _parse(state, scope, receive, send, dry_run=dry_run)  # answered when None
    if parsed is None:
        return
    raw_body, request, batch = parsed
    if not dry_run:
        state.config.seed_in_background(bank)
    judgements = await state.retain.judge(batch)
    if dry_run:
        await _respond(send, bank, request.is_async, Retained(judgements), mode, None, dry_run=True, verbose=True)
        return
    try:
        if mode == "shadow":
            await state.retain.shadowed(
                batch,
                judgements,
                lambda: forward(state.backend, scope, replay(raw_body, receive), send, retries=0),
            )
            return
        headers, _ = request_headers(scope)
        target = _backend_target(scope)
        deliver = delivery_for(
            state.memory, state.backend, bank, wait=not request.is_async, target=target, headers=headers
        )
        retained = await state.retain.write(batch, judgements, deliver)
    except ServiceError as exc:  # busy, queue full, blocked, a protected tag: nothing recorded but a refusal's audit
        await send_service_error(send, exc)
        return
    await _shape(scope, send, bank, request.is_async, retained, mode, verbose=verbose)


async def _parse(
    state: AppState, scope: Scope, receive: Receive, send: Send, *, dry_run: bool
) -> tuple[bytes, RetainRequest, Batch] | None:
    """The request read, checked and made a batch; None when it was answered (refused)."""
    governance = state.settings.governance
    got = await read_json(scope, receive, send)
    if got is None:
        return None
    raw_body, payload = got
    # Counts first, from the bare JSON (no item read one by one): a request past the limits costs
    # nothing more (700,000 items were scanned and validated on the event loop before their 413).
    refused = shape_problem(payload, governance.max_items, governance.max_tags)
    if refused is not None:
        await send_json(send, *refused)
        return None
    limit = governance.max_request_chars
    big = len(raw_body) > OFF_LOOP_BYTES
    checked = await asyncio.to_thread(_checked, payload, limit) if big else _checked(payload, limit)
    if isinstance(checked, AttachmentTextTooLong):
        await send_json(send, 413, {"detail": f"{checked}: split the request (max_request_chars)"})
        return None
    if isinstance(checked, list):  # before the request model: its 422 would quote the value
        await refused_for_secrets(state, scope, send, payload, found=checked, audit=not dry_run)
        return None
    if isinstance(checked, ValidationError):
        await send_json(send, 422, {"detail": validation_detail(checked)})
        return None
    request = checked
    problem = attachment_problem(request.items)
    if problem is not None:
        await send_json(send, 400, {"detail": problem})
        return None
    too_long = _length_problem(request, governance.max_length, governance.max_request_chars)
    if too_long is not None:
        await send_json(send, 413, {"detail": too_long})
        return None
    batch = Batch(
        bank=scope["path_params"]["bank_id"],
        raw_items=payload["items"],
        contents=[item.content for item in request.items],
        tags=[item.tags or [] for item in request.items],
        document_tags=request.document_tags or [],
        fields={k: v for k, v in payload.items() if k != "items"},
        request_id=request_id_of(scope),
        # A conversation retained turn by turn: its turns follow one another within the bank and,
        # when the client names one, the document.
        threads=[item.document_id or "" for item in request.items],
        provenance=provenance_of(scope, "hindsight"),
        admin=writes_as_admin(scope, scope["path_params"]["bank_id"]),
    )
    return raw_body, request, batch


def _length_problem(request: RetainRequest, max_length: int, max_request_chars: int) -> str | None:
    """Why the items' text is too long (an item past ``max_length``, all of them past
    ``max_request_chars``); None when it is not."""
    total = 0
    for i, item in enumerate(request.items):
        size = len(extract_text(item.content)[0])
        if size > max_length:
            return f"Item {i} is {size} characters long, limit {max_length}"
        total += size
        if total > max_request_chars:
            return (
                f"The items' text is more than {max_request_chars} characters in all:"
                " split the request (max_request_chars)"
            )
    return None


async def _shape(
    scope: Scope, send: Send, bank: str, is_async: bool, retained: Retained, mode: str, *, verbose: bool
) -> None:
    """The answer to a written batch: Hindsight's, queued (the outbox delivers it), unreachable
    (502), the backend's own refusal as it gave it, or its success with memwarden's count."""
    if retained.queued is not None:  # accepted; the outbox delivers it: Hindsight's async answer
        note_backend_status(scope, "queued")
        queued = {"async": True, "operation_id": retained.queued.operation_id, "usage": None}
        outbox = [(b"x-warden-outbox", b"queued")]
        await _respond(send, bank, True, retained, mode, None, verbose=verbose, extra_headers=outbox, answer=queued)
        return
    decisions = decisions_header(retained.judgements)
    if retained.unreachable is not None:
        note_backend_status(scope, "unreachable")
        await send_json(send, 502, {"detail": f"Backend unavailable: {retained.unreachable}"}, headers=[decisions])
        return
    delivered = retained.delivered
    if delivered is None:  # nothing went to the backend
        await _respond(send, bank, is_async, retained, mode, None, verbose=verbose)
        return
    note_backend_status(scope, delivered.status)
    if delivered.status != 200:  # the backend's own answer, as it gave it
        hop = (b"content-length", b"transfer-encoding", b"connection")
        passed = [(k, v) for k, v in delivered.headers if k.lower() not in hop]
        headers = [*passed, (b"content-length", str(len(delivered.body)).encode()), decisions]
        await send({"type": "http.response.start", "status": delivered.status, "headers": headers})
        await send({"type": "http.response.body", "body": delivered.body})
        return
    backend_json: Any = None
    if delivered.receipt is not None:
        backend_json = receipt_json(bank, delivered.receipt)
    else:
        try:
            backend_json = json.loads(delivered.body)
        except ValueError:
            backend_json = None
    ignored = [(k, v) for k, v in delivered.headers if k.lower() == b"x-ignored-params"]
    await _respond(send, bank, is_async, retained, mode, backend_json, verbose=verbose, extra_headers=ignored)


def _backend_target(scope: Scope) -> str:
    path: bytes = scope.get("raw_path") or scope["path"].encode()
    query = [(k, v) for k, v in _query(scope) if k not in WARDEN_PARAMS]
    return path.decode("latin-1") + (f"?{urlencode(query)}" if query else "")


async def _respond(
    send: Send,
    bank: str,
    is_async: bool,
    retained: Retained,
    mode: str,
    backend_json: Any,
    *,
    verbose: bool,
    dry_run: bool = False,
    extra_headers: Sequence[tuple[bytes, bytes]] = (),
    answer: dict[str, Any] | None = None,
) -> None:
    accepted = sum(1 for j in retained.judgements if j.verdict in ACCEPTED)
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
            **(answer or {}),
        }
    if verbose:
        body["warden"] = warden_object(retained, mode, dry_run)
    await send_json(send, 200, body, headers=[decisions_header(retained.judgements), *extra_headers])
