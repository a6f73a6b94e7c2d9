"""``/warden/v1/audit``: read, follow and verify the audit log.

* ``GET /warden/v1/audit?bank=&action=&since=&limit=`` — events in order; ``since`` is a sequence
  number (events after it) or an ISO timestamp (events at or after it); ``next`` is where to go on;
  ``tail=N`` gives the latest N instead. The parameters are ``queries.AuditQuery``.
* ``GET /warden/v1/audit/stream`` — server-sent events (``id:`` is the sequence number), the
  backlog first, then live; resumable with ``Last-Event-ID`` (or ``?last_event_id=``).
* ``GET /warden/v1/audit/verify`` — recompute the hash chain: intact, or which events are wrong.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from datetime import datetime
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
from memwarden.fronts.admin.bodies import AcknowledgeBody
from memwarden.fronts.admin.queries import AuditFilters, AuditQuery, AuditStreamQuery
from memwarden.fronts.query import QueryProblem, query_params, read_query
from memwarden.governance.state import AppState
from memwarden.policies.field_secrets import masked
from memwarden.wire.asgi import read_model, send_json

HEARTBEAT_SECONDS = 15.0


_SEQ = re.compile(r"[0-9]{1,18}")  # a sequence number SQLite can hold


def event_where(q: AuditFilters, since: str | None = None) -> EventFilter:
    """The events' ``WHERE`` for ``q`` (``since`` in place of its own). Raises :class:`QueryProblem`."""
    since = ((q.since if since is None else since) or "").strip()
    after_seq, since_ts = None, None
    if since:
        if _SEQ.fullmatch(since):
            after_seq = int(since)
        elif since.isdigit():
            raise QueryProblem("since", "since must be a sequence number of at most 18 digits", since)
        else:
            try:
                datetime.fromisoformat(since)
            except ValueError:
                raise QueryProblem("since", "since must be a sequence number or an ISO timestamp", since) from None
            since_ts = since
    return event_filter(bank=q.bank, actions=_actions(q), after_seq=after_seq, since_ts=since_ts)


def _actions(q: AuditFilters) -> list[str] | None:
    actions = [a.strip() for a in (q.action or "").split(",") if a.strip()]
    return actions or None


async def list_audit(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    try:
        q = read_query(query_params(scope), AuditQuery)
        where = event_where(q)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    limit, tail = q.limit, q.tail

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
    try:
        q = read_query(query_params(scope), AuditStreamQuery)
    except QueryProblem as exc:
        await send_json(send, 422, exc.detail())
        return
    last_id, where_from = (q.last_event_id or "").strip(), "query"
    for name, value in scope["headers"]:
        if name == b"last-event-id":
            last_id, where_from = value.decode("latin-1").strip(), "header"
    try:
        if last_id and not _SEQ.fullmatch(last_id):
            raise QueryProblem("last_event_id", "last_event_id must be a sequence number (1 to 18 digits)", last_id)
        where = event_where(q, since=last_id or None)
    except QueryProblem as exc:
        problem = exc.detail()
        if where_from == "header":  # said where it came from
            problem["detail"][0]["loc"] = ["header", "last-event-id"]
        await send_json(send, 422, problem)
        return
    bank, actions = q.bank, set(_actions(q) or ())

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
    body = await read_model(scope, receive, send, AcknowledgeBody)
    if body is None:
        return
    count = await state.ledger.acknowledge_async(masked(body.reason))
    await send_json(send, 200, {"acknowledged": count})
