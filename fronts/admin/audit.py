"""``/warden/v1/audit``: read, follow and verify the audit log.

* ``GET /warden/v1/audit?bank=&action=&since=&limit=`` — events in order; ``since`` is a sequence
  number (events after it) or an ISO timestamp (events at or after it); ``next`` is where to go on;
  ``tail=N`` gives the latest N instead.
* ``GET /warden/v1/audit/stream`` — server-sent events (``id:`` is the sequence number), the
  backlog first, then live; resumable with ``Last-Event-ID`` (or ``?last_event_id=``).
* ``GET /warden/v1/audit/verify`` — recompute the hash chain: intact, or which events are wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import anyio
from starlette.types import Receive, Scope, Send

from memwarden.db import checkpoints
from memwarden.db.audit import (
    EventFilter,
    event_filter,
    events_after,
    fetch_events,
    last_seq,
    latest_events,
)
from memwarden.db.common import Connection
from memwarden.fronts.query import QueryProblem, bounded_int, query_params
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import masked
from memwarden.wire.asgi import read_object, send_json

MAX_LIMIT = 1000
HEARTBEAT_SECONDS = 15.0


class QueryError(ValueError):
    pass


_SEQ = re.compile(r"[0-9]{1,18}")  # a sequence number SQLite can hold


def parse_filters(query: Mapping[str, str]) -> tuple[EventFilter, int]:
    """The audit filters (the events' ``WHERE``), and the row limit."""
    actions = None
    if query.get("action"):
        actions = [a.strip() for a in query["action"].split(",") if a.strip()]
    after_seq, since_ts = None, None
    since = query.get("since", "").strip()
    if since:
        if _SEQ.fullmatch(since):
            after_seq = int(since)
        elif since.isdigit():
            raise QueryError(f"since must be a sequence number of at most 18 digits, got {since[:40]!r}")
        else:
            from datetime import datetime

            try:
                datetime.fromisoformat(since)
            except ValueError:
                raise QueryError(f"since must be a sequence number or an ISO timestamp, got {since!r}") from None
            since_ts = since
    try:
        limit = bounded_int(query, "limit", 100, 1, MAX_LIMIT)
    except QueryProblem as exc:
        raise QueryError(f"{exc}, got {exc.value[:40]!r}") from None
    where = event_filter(bank=query.get("bank") or None, actions=actions, after_seq=after_seq, since_ts=since_ts)
    return where, limit


def _query(scope: Scope) -> Mapping[str, str]:
    return query_params(scope)


async def list_audit(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    try:
        where, limit = parse_filters(_query(scope))
    except QueryError as exc:
        await send_json(send, 422, {"detail": str(exc)})
        return
    query = _query(scope)
    try:  # blank: no tail
        tail = bounded_int(query, "tail", None, 1, MAX_LIMIT) if query.get("tail") else None
    except QueryProblem as exc:
        await send_json(send, 422, {"detail": f"{exc}, got {exc.value[:40]!r}"})
        return

    def read(db: Connection) -> tuple[list[dict[str, Any]], int]:
        last = last_seq(db)
        if tail is not None:
            return latest_events(db, where, tail), last
        return fetch_events(db, where, limit), last

    events, newest = await state.ledger.read(read)
    await send_json(send, 200, {"events": events, "next": events[-1]["seq"] if events else None, "last_seq": newest})


async def verify_audit(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """The whole chain, keyed, and against the last checkpoint (and ``?checkpoint=`` — one copied
    from the log)."""
    raw = query_params(scope).get("checkpoint")
    given = None
    if raw:
        try:
            given = checkpoints.parse(raw)
        except checkpoints.CheckpointError as exc:
            await send_json(send, 422, {"detail": f"checkpoint: {exc}"})
            return
    ledger = state.ledger
    recorded = ledger.recorded_chain_start()

    def check(db: Connection) -> tuple[int, list[dict[str, Any]]]:
        found = checkpoints.verify_all(
            db,
            installation_key=ledger.installation_key,
            folder=ledger.checkpoint_dir,
            given=given,
            recorded=recorded,
        )
        return last_seq(db), [{"seq": p.seq, "problem": p.problem} for p in found]

    count, problems = await state.ledger.read(check)
    await send_json(send, 200, {"ok": not problems, "events": count, "problems": problems})


def _page(where: EventFilter, after: int) -> Callable[[Connection], list[dict[str, Any]]]:
    return lambda db: events_after(db, where, after, 500)


def _sse(event: dict[str, Any]) -> bytes:
    data = json.dumps(event, ensure_ascii=False, sort_keys=True)
    return f"id: {event['seq']}\nevent: audit\ndata: {data}\n\n".encode()


async def stream_audit(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    query = _query(scope)
    last_id = query.get("last_event_id", "")
    for name, value in scope["headers"]:
        if name == b"last-event-id":
            last_id = value.decode("latin-1").strip()
    if last_id and not _SEQ.fullmatch(last_id):
        await send_json(send, 422, {"detail": f"Last-Event-ID must be a sequence number, got {last_id!r}"})
        return
    try:
        where, _ = parse_filters({**query, "since": last_id or query.get("since", ""), "limit": "1"})
    except QueryError as exc:
        await send_json(send, 422, {"detail": str(exc)})
        return
    bank, actions = query.get("bank"), {a for a in query.get("action", "").split(",") if a}

    def wanted(event: dict[str, Any]) -> bool:
        return (not bank or event.get("bank") == bank) and (not actions or event.get("action") in actions)

    await send(
        {
            "type": "http.response.start",
            "status": 200,
            "headers": [
                (b"content-type", b"text/event-stream; charset=utf-8"),
                (b"cache-control", b"no-cache"),
                (b"x-accel-buffering", b"no"),
            ],
        }
    )
    async with state.ledger.subscribe() as live, anyio.create_task_group() as tg:

        async def watch_disconnect() -> None:
            while (await receive())["type"] != "http.disconnect":
                pass
            tg.cancel_scope.cancel()

        tg.start_soon(watch_disconnect)
        sent = int(last_id or 0)
        while True:  # the backlog, in pages, then live
            page = await state.ledger.read(_page(where, sent))
            for event in page:
                await send({"type": "http.response.body", "body": _sse(event), "more_body": True})
                sent = event["seq"]
            if len(page) < 500:
                break
        while True:
            with anyio.move_on_after(HEARTBEAT_SECONDS) as timeout:
                event = await live.get()
            if timeout.cancelled_caught:
                await send({"type": "http.response.body", "body": b": keep-alive\n\n", "more_body": True})
                continue
            if event["seq"] > sent and wanted(event):
                await send({"type": "http.response.body", "body": _sse(event), "more_body": True})
                sent = event["seq"]


async def acknowledge_alarms(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``POST /warden/v1/audit/acknowledge`` ``{"reason": "…"}``: an operator has looked at the audit
    chain's alarms. They stay — health ``critical``, every start — until this; the acknowledgement is
    an audit event of its own (its actor the key, the reason masked)."""
    payload = await read_object(scope, receive, send)
    if payload is None:
        return
    reason = payload.get("reason")
    unknown = sorted(set(payload) - {"reason"})
    if unknown or not isinstance(reason, str) or not reason.strip() or len(reason) > 2000:
        detail = f"unknown field {unknown[0]!r}" if unknown else "reason: what was looked at, 1 to 2000 characters"
        await send_json(send, 422, {"detail": detail})
        return
    count = await state.ledger.acknowledge_async(masked(reason.strip()))
    await send_json(send, 200, {"acknowledged": count})
