"""The other routes that write memory content: no bypass around the retain pipeline.

* ``POST …/files/retain`` — uploaded files are converted and split by Hindsight itself, so they
  cannot be judged item by item here: refused in ``enforce`` mode unless
  ``governance.allow_file_retain`` is on (then passed through, and logged as ungoverned).
* ``PATCH …/documents/{id}`` (re-tagging) — tags are canonicalized, ``topic``/``stage`` labels
  validated like retain's (one of each at most, aliases mapped, unknown refused), the ledger's
  rows of that document follow, and the change is audited.
* The writes memwarden does not judge field by field — a memory unit's curation (``PATCH
  …/memories/{id}``: new text, context, entities, or its state), a directive, a mental model
  (:func:`scanned_write`) — are read as memwarden reads every body (a body it cannot read is a
  ``422``, never forwarded) and refused (``422``, the field named, the value never echoed) when any
  field holds what looks like a secret: the backend would store it, and log it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import structlog
from starlette.types import Receive, Scope, Send

from memwarden.db.audit import current_actor
from memwarden.fronts.auth import writes_as_admin
from memwarden.fronts.errors import refused_for_secrets
from memwarden.fronts.hindsight.passthrough import forward
from memwarden.fronts.middleware import request_id_of
from memwarden.governance.curation import judge_new_text
from memwarden.governance.errors import Refused, ServiceError
from memwarden.governance.state import AppState
from memwarden.wire.asgi import (
    BodyError,
    ClientGone,
    content_type_of,
    hold_end,
    is_json_type,
    not_json_detail,
    parse_json_async,
    read_body,
    read_json,
    replay,
    send_json,
    set_body_length,
    starts_like_json,
)

log = structlog.get_logger("memwarden.governance")


async def files_retain(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    governance = state.settings.governance
    if governance.mode_for(bank) == "enforce" and not governance.allow_file_retain:
        await send_json(
            send,
            403,
            {
                "detail": "memwarden: /files/retain is not governed (uploaded files cannot be judged item by item). "
                f"Send the text through POST /v1/default/banks/{bank}/memories, or set "
                "governance.allow_file_retain = true to let uploads through ungoverned."
            },
        )
        return
    log.warning("ungoverned_write", route="files/retain", bank=bank)
    await forward(state.backend, scope, receive, send, retries=0)


async def _read_json(receive: Receive) -> tuple[bytes, Any]:
    """The body and its JSON. Raises :class:`BodyError` when memwarden cannot read it (not JSON,
    nested too deep, not Unicode): such a body is refused, never forwarded unjudged — the backend's
    parser might read what memwarden's did not, past the checks."""
    body = await read_body(receive)
    return body, await parse_json_async(body)


# A webhook's own credentials — the secret it signs with, the headers it sends — are given to the
# backend so that it can call the hook: those fields hold a secret by design.
_WEBHOOK = re.compile(r"/webhooks(?:/[^/]+)?$")


def _credential_field(path: str) -> Callable[[tuple[str | int, ...]], bool]:
    if not _WEBHOOK.search(path):
        return lambda loc: False
    return lambda loc: loc[:1] == ("secret",) or loc[:2] == ("http_config", "headers")


async def scanned_write(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """A write memwarden passes on once no field of its JSON body holds a secret (a read, a delete,
    an empty body or an upload: as sent). Every route memwarden does not govern otherwise comes
    here for its writes: the backend would store them, log them or send them on."""
    bank = scope.get("path_params", {}).get("bank_id")
    if (
        scope["method"] in ("GET", "HEAD", "DELETE", "OPTIONS")
        or not is_json_type(content_type_of(scope))
        or (isinstance(bank, str) and state.settings.governance.mode_for(bank) == "off")
    ):
        await forward(state.backend, scope, receive, send, retries=0)
        return
    try:
        if content_type_of(scope) is None:  # JSON to the backend if it parses: looked at, not trusted
            json_like, receive = await starts_like_json(receive)
            if not json_like:  # an upload sent bare: streamed through as it comes
                await forward(state.backend, scope, receive, send, retries=0)
                return
        body = await read_body(receive)
    except ClientGone:
        return
    if body.strip():
        try:
            payload = await parse_json_async(body)
        except BodyError as exc:  # what memwarden cannot read is never forwarded unjudged
            await send_json(send, exc.status, {"detail": exc.detail})
            return
        if await refused_for_secrets(state, scope, send, payload, skip=_credential_field(scope["path"])):
            return
    await forward(state.backend, scope, replay(body, receive), send, retries=0)


_NOT_SCREENED = frozenset({"text", "reason", "state"})


async def curate_memory(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """A fact's curation (:func:`scanned_write`); when it moved the fact's ``state`` and the backend
    took it, the ledger's memories of its document follow (:func:`~memwarden.governance.curation.fact_curated`)."""
    bank: str = scope["path_params"]["bank_id"]
    if state.settings.governance.mode_for(bank) == "off":
        await forward(state.backend, scope, receive, send, retries=0)
        return
    got = await read_json(scope, receive, send)
    if got is None:
        return
    body, payload = got
    if await refused_for_secrets(state, scope, send, payload):
        return
    text = payload.get("text") if isinstance(payload, dict) else None
    new_text = text if isinstance(text, str) and text.strip() else None
    # The fields an agent later reads with the memory (its context …); not the operator's reason or
    # the state a curation moves it to.
    others = {k: v for k, v in payload.items() if k not in _NOT_SCREENED} if isinstance(payload, dict) else {}
    if (new_text is not None or others) and state.settings.governance.mode_for(bank) == "enforce":
        try:  # a new text is judged as a retain's item is: one the rules reject changes nothing
            await judge_new_text(
                state.retain, bank, new_text, route="curate_memory", request_id=request_id_of(scope), fields=others
            )
        except Refused as exc:
            await send_json(send, exc.status, {"detail": exc.detail})
            return
    holding, release = hold_end(send)
    await forward(state.backend, scope, replay(body, receive), holding, retries=0)
    status = scope.get("state", {}).get("backend_status")
    moved = isinstance(payload, dict) and payload.get("state") in ("valid", "invalidated")
    try:
        if moved and isinstance(status, int) and 200 <= status < 300:
            reason = payload.get("reason")
            await state.curator.fact_curated(
                bank,
                scope["path_params"]["memory_id"],
                reason=reason[:500] if isinstance(reason, str) else None,
                request_id=request_id_of(scope),
            )
    finally:
        await release()


async def document_patch(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    document_id: str = scope["path_params"]["document_id"]
    if state.settings.governance.mode_for(bank) == "off":
        await forward(state.backend, scope, receive, send, retries=0)
        return
    if not is_json_type(content_type_of(scope)):
        try:
            raw = await read_body(receive)
        except ClientGone:
            return
        await send_json(send, 422, {"detail": not_json_detail(raw)})
        return
    try:
        body, payload = await _read_json(receive)
    except ClientGone:
        return
    except BodyError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    if await refused_for_secrets(state, scope, send, payload):  # a document's tags and other fields: no secrets
        return
    if not isinstance(payload, dict) or not isinstance(payload.get("tags"), list):
        await forward(state.backend, scope, replay(body, receive), send, retries=0)  # not a re-tag: Hindsight judges it
        return
    tags = payload["tags"]
    if not all(isinstance(t, str) for t in tags):
        detail = [
            {"type": "string_type", "loc": ["body", "tags"], "msg": "Input should be a valid string", "input": tags}
        ]
        await send_json(send, 422, {"detail": detail})
        return
    try:
        canonical, labels = state.curator.document_tags(tags)
        await state.retain.check_protected(  # a re-tag writes tags as a retain does
            bank,
            tags,
            admin=writes_as_admin(scope, bank),
            source="document_tags",
            request_id=request_id_of(scope),
            actor=current_actor(),
        )
    except ServiceError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    new_body = json.dumps({**payload, "tags": canonical}, ensure_ascii=False).encode()
    set_body_length(scope, len(new_body))
    holding, release = hold_end(send)
    await forward(state.backend, scope, replay(new_body, receive), holding, retries=0)
    status = scope.get("state", {}).get("backend_status")
    try:
        if isinstance(status, int) and 200 <= status < 300:  # the ledger follows only what the backend did
            await state.curator.document_retagged(bank, document_id, canonical, labels, request_id_of(scope))
    finally:
        await release()
