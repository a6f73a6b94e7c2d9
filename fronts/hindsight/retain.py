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
from dataclasses import replace
from typing import Annotated, Any
from urllib.parse import urlencode

import structlog
from pydantic import BaseModel, ConfigDict, Field, ValidationError
from starlette.types import Receive, Scope, Send

from memwarden.backends.base import RAW_PASSTHROUGH, BackendRejected, BackendUnavailable
from memwarden.backends.hindsight_json import receipt_json
from memwarden.backends.transport import BodyBrokenError
from memwarden.backends.types import Item
from memwarden.fronts.asgi import (
    OFF_LOOP_BYTES,
    dumps,
    note_backend_status,
    read_json,
    replay,
    send_json,
    validation_detail,
)
from memwarden.fronts.hindsight.models import MAX_TAG_CHARS, MemoryItem, attachment_problem
from memwarden.fronts.hindsight.passthrough import forward, request_headers
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import query_pairs
from memwarden.governance.config_changes import seed_in_background
from memwarden.governance.locks import GateClosed
from memwarden.governance.outbox import OutboxFull
from memwarden.governance.retain import Batch, Delivered, Retained, enforce, judge, shadow
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import (
    AttachmentTextTooLong,
    FieldSecret,
    attachment_secrets,
    locations,
    retain_secrets,
)
from memwarden.policies.judgement import ACCEPTED, Judgement, extract_text

log = structlog.get_logger("memwarden.retain")
WARDEN_PARAMS = frozenset({"dry_run", "warden"})


class RetainRequest(BaseModel):
    model_config = ConfigDict(extra="allow", populate_by_name=True)
    items: list[MemoryItem]
    is_async: bool = Field(False, alias="async")
    document_tags: list[Annotated[str, Field(max_length=MAX_TAG_CHARS)]] | None = None


def decisions_header(judgements: Sequence[Judgement]) -> bytes:
    counts: dict[str, int] = {}
    for j in judgements:
        counts[j.verdict] = counts.get(j.verdict, 0) + 1
    return json.dumps(counts, separators=(",", ":")).encode()


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
    # Counts first, from the bare JSON (no item read one by one): a request past the limits costs
    # nothing more (700,000 items were scanned and validated on the event loop before their 413).
    refused = shape_problem(payload, governance.max_items, governance.max_tags)
    if refused is not None:
        await send_json(send, *refused)
        return
    limit = governance.max_request_chars
    big = len(raw_body) > OFF_LOOP_BYTES
    checked = await asyncio.to_thread(_checked, payload, limit) if big else _checked(payload, limit)
    if isinstance(checked, AttachmentTextTooLong):
        detail = f"{checked}: split the request (max_request_chars)"
        await send_json(send, 413, {"detail": detail})
        return
    if isinstance(checked, list):  # before the request model: its 422 would quote the value
        log.warning("secret_in_fields", bank=bank, fields=locations(checked))
        await send_json(send, 422, {"detail": [f.detail() for f in checked]})
        return
    if isinstance(checked, ValidationError):
        await send_json(send, 422, {"detail": validation_detail(checked)})
        return
    request = checked
    if (bad := attachment_problem(request.items)) is not None:
        await send_json(send, 400, {"detail": bad})
        return
    total = 0
    for i, item in enumerate(request.items):
        size = len(extract_text(item.content)[0])
        if size > governance.max_length:
            await send_json(send, 413, {"detail": f"Item {i} is {size} characters long, limit {governance.max_length}"})
            return
        total += size
        if total > governance.max_request_chars:
            limit = governance.max_request_chars
            detail = f"The items' text is more than {limit} characters in all: split the request (max_request_chars)"
            await send_json(send, 413, {"detail": detail})
            return
    batch = Batch(
        bank=bank,
        raw_items=payload["items"],
        contents=[item.content for item in request.items],
        tags=[item.tags or [] for item in request.items],
        document_tags=request.document_tags or [],
        fields={k: v for k, v in payload.items() if k != "items"},
        request_id=request_id_of(scope),
        # A conversation retained turn by turn: its turns follow one another within the bank and,
        # when the client names one, the document.
        threads=[item.document_id or "" for item in request.items],
    )

    # -- service --------------------------------------------------------------------------
    if not dry_run:
        seed_in_background(state, bank)
    judgements = await judge(state, batch)
    if dry_run:
        await _respond(send, bank, request.is_async, Retained(judgements), mode, None, dry_run=True, verbose=True)
        return
    if mode == "shadow":
        try:
            async with state.gates.writing(bank, governance_wait(state)):
                await shadow(state, batch, judgements)
                await forward(state.backend, scope, replay(raw_body, receive), send, retries=0)
        except GateClosed as exc:
            await _gate_closed(send, exc)
        return

    async def deliver(body: dict[str, Any], vectors: list[Any]) -> Delivered:
        if RAW_PASSTHROUGH not in state.memory.capabilities:  # a backend of another dialect: neutral items
            json_type = [(b"content-type", b"application/json")]
            items = []
            for raw, vector in zip(body["items"], vectors, strict=True):
                item = Item.from_json(raw)
                # The pipeline embedded the text as judged (stripped): the same text, the same vector.
                same = (
                    vector is not None
                    and isinstance(raw.get("content"), str)
                    and raw["content"] == item.content.strip()
                )
                items.append(replace(item, vector=vector) if same else item)
            try:
                receipt = await state.memory.retain(
                    bank, items, document_tags=body.get("document_tags") or (), wait=not request.is_async
                )
            except BackendRejected as exc:
                return Delivered(exc.status, dumps(exc.body), json_type)
            except BackendUnavailable as exc:  # a store's database busy (503) or full (507): said as its app says it
                if exc.status is None:
                    raise
                return Delivered(exc.status, dumps({"detail": str(exc)}), json_type)
            return Delivered(200, b"", json_type, answer=receipt_json(bank, receipt))
        headers, _ = request_headers(scope)
        headers = [(k, v) for k, v in headers if k.lower() not in ("content-length", "accept-encoding")]
        headers.append(("accept-encoding", "identity"))
        encoded = json.dumps(body, ensure_ascii=False).encode()
        upstream = await state.backend.send_raw("POST", _backend_target(scope), headers, encoded)
        try:
            answer = b"".join([chunk async for chunk in upstream.aiter_raw()])
        except BodyBrokenError as exc:  # cut mid-answer: the backend may or may not have it
            raise BackendUnavailable(f"the backend's answer was cut: {exc}") from exc
        finally:
            await upstream.aclose()
        return Delivered(upstream.status_code, answer, list(upstream.raw_headers))

    try:
        async with state.gates.writing(bank, governance_wait(state)):
            retained = await enforce(state, batch, judgements, deliver)
    except GateClosed as exc:  # nothing was recorded, nothing delivered
        await _gate_closed(send, exc)
        return
    except OutboxFull as exc:  # nothing was recorded
        await send_json(
            send,
            503,
            {"detail": f"memwarden: {exc}; nothing was written, retry later"},
            headers=[(b"retry-after", b"30")],
        )
        return

    # -- shape ----------------------------------------------------------------------------
    decisions = (b"x-warden-decisions", decisions_header(judgements))
    if retained.queued is not None:  # accepted; the outbox delivers it: Hindsight's async answer
        note_backend_status(scope, "queued")
        queued = {"async": True, "operation_id": retained.queued.operation_id, "usage": None}
        await _respond(
            send,
            bank,
            True,
            retained,
            mode,
            None,
            verbose=verbose,
            extra_headers=[(b"x-warden-outbox", b"queued")],
            answer=queued,
        )
        return
    if retained.unreachable is not None:
        note_backend_status(scope, "unreachable")
        await send_json(send, 502, {"detail": f"Backend unavailable: {retained.unreachable}"}, headers=[decisions])
        return
    delivered = retained.delivered
    if delivered is None:  # nothing went to the backend
        await _respond(send, bank, request.is_async, retained, mode, None, verbose=verbose)
        return
    note_backend_status(scope, delivered.status)
    if delivered.status != 200:  # the backend's own answer, as it gave it
        passed = [
            (k, v)
            for k, v in delivered.headers
            if k.lower() not in (b"content-length", b"transfer-encoding", b"connection")
        ]
        headers = [*passed, (b"content-length", str(len(delivered.body)).encode()), decisions]
        await send({"type": "http.response.start", "status": delivered.status, "headers": headers})
        await send({"type": "http.response.body", "body": delivered.body})
        return
    backend_json = delivered.answer
    if backend_json is None:
        try:
            backend_json = json.loads(delivered.body)
        except ValueError:
            backend_json = None
    await _respond(
        send,
        bank,
        request.is_async,
        retained,
        mode,
        backend_json,
        verbose=verbose,
        extra_headers=[(k, v) for k, v in delivered.headers if k.lower() == b"x-ignored-params"],
    )


def governance_wait(state: AppState) -> float:
    return state.settings.config_guard.write_wait


async def _gate_closed(send: Send, exc: GateClosed) -> None:
    """A write that waited its bound for a guarded config change: 503, try again shortly."""
    await send_json(
        send,
        503,
        {"detail": f"memwarden: {exc}; nothing was written, retry shortly"},
        headers=[(b"retry-after", b"5")],
    )


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
    await send_json(
        send, 200, body, headers=[(b"x-warden-decisions", decisions_header(retained.judgements)), *extra_headers]
    )
