"""The HTTP side of config governance.

* ``PATCH …/config`` — wrapped or flat body, adapted, missions applied, then the guarded change of
  :mod:`memwarden.governance.config_guard`; ``409`` with a problem body when it had to be rolled back.
* ``DELETE …/config``, ``DELETE …/memories``, ``DELETE`` a bank or a document — destructive, made
  reversible: snapshotted first, then done as the client asked, what went archived in the ledger
  (restorable for ``config_guard.restore_days``; ``memwarden restore``). ``confirm`` refuses them
  with ``409`` unless confirmed (``X-Warden-Confirm: <bank id>``), ``block`` always. A config reset is
  then verified like a PATCH.
* ``PUT``/``PATCH`` a bank (its flat profile/config subset) — snapshotted and verified.
* ``GET /warden/v1/banks/{bank}/snapshots[/{id}]``, ``POST …/snapshots/{id}/rollback[?preview=true]``.

Config changes and destructive operations on one bank are serialized (one lock per bank).
"""

from __future__ import annotations

import json
from collections.abc import Awaitable, Callable
from typing import Any

import structlog
from starlette.types import Message, Receive, Scope, Send

from memwarden.backends.base import BackendError
from memwarden.backends.hindsight_json import config_json
from memwarden.db.snapshots import Snapshot
from memwarden.fronts.auth import key_allows
from memwarden.fronts.errors import backend_failed, problem
from memwarden.fronts.hindsight.passthrough import forward
from memwarden.fronts.middleware import request_id_of
from memwarden.fronts.query import query_params
from memwarden.governance.config_changes import (
    ChangeFailed,
    Repair,
)
from memwarden.governance.config_guard import (
    set_outcome,
    take_snapshot,
)
from memwarden.governance.locks import BankLock
from memwarden.governance.state import AppState
from memwarden.policies.bank_config import (
    ConfigInputError,
    check_fields,
    check_sizes,
    parse_updates,
    validate_containers,
)
from memwarden.policies.field_secrets import redact_config
from memwarden.wire.asgi import (
    BodyError,
    ClientGone,
    content_type_of,
    header,
    is_json_type,
    not_json_detail,
    note_backend_status,
    parse_json_async,
    read_body,
    replay,
    send_json,
    set_body_length,
    with_headers,
)

log = structlog.get_logger("memwarden.config")


def before_end(send: Send, hook: Callable[[int], Awaitable[None]]) -> Send:
    """``send`` that runs ``hook(status)`` just before the response's last body message goes out."""
    status = 0

    async def wrapped(message: Message) -> None:
        nonlocal status
        if message["type"] == "http.response.start":
            status = int(message["status"])
        elif message["type"] == "http.response.body" and not message.get("more_body", False):
            await hook(status)
        await send(message)

    return wrapped


async def snapshot_or_fail(
    state: AppState, scope: Scope, send: Send, bank: str, reason: str, nothing: str
) -> Snapshot | None:
    """The snapshot before a change; None when the bank could not be read (the client was told,
    and ``nothing`` says what did not happen)."""
    try:
        return await take_snapshot(
            memory=state.memory,
            ledger=state.ledger,
            cfg=state.settings.config_guard,
            bank=bank,
            reason=reason,
            request_id=request_id_of(scope),
        )
    except BackendError as exc:
        await backend_failed(send, scope, exc, f"taking the snapshot ({nothing})")
        return None


# -- PATCH / DELETE …/config ----------------------------------------------------------------------


async def bank_config(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    bank: str = scope["path_params"]["bank_id"]
    method = scope["method"]
    if method == "GET" or not state.config.config_governed(bank):
        await forward(state.backend, scope, receive, send, retries=state.read_retries if method == "GET" else 0)
        return
    try:
        raw = await read_body(receive)
    except ClientGone:
        return
    if method == "DELETE":
        if not await _destructive_allowed(state, scope, send, bank, "reset the bank's config"):
            return
        await guarded_change(state, scope, send, bank, reason="config_delete", updates=None)
        return
    if not is_json_type(content_type_of(scope)):  # as Hindsight: a text/plain PATCH is not JSON
        await send_json(send, 422, {"detail": not_json_detail(raw)})
        return
    try:
        payload = await parse_json_async(raw)
    except BodyError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    try:
        updates, _ = parse_updates(payload)
        check_fields(updates, state.settings.config_guard.extra_fields)
        validate_containers(updates)  # before the snapshot: bad input leaves no trace but the 400
    except ConfigInputError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    updates, redacted = redact_config(updates)  # before it is snapshotted, forwarded or audited
    replace = [k.strip() for k in (header(scope, b"x-warden-replace") or "").split(",") if k.strip()]
    await guarded_change(
        state, scope, send, bank, reason="config_patch", updates=updates, replace=replace, redacted=redacted
    )


async def guarded_change(
    state: AppState,
    scope: Scope,
    send: Send,
    bank: str,
    *,
    reason: str,
    updates: dict[str, Any] | None,
    replace: list[str] | None = None,
    redacted: list[str] | None = None,
) -> None:
    """The service's guarded change (:func:`~memwarden.governance.config_changes.change_config`),
    answered: the backend's answer with the snapshot's id, or why the change was refused, failed
    or rolled back."""
    try:
        changed = await state.config.change_config(
            bank, reason=reason, updates=updates, request_id=request_id_of(scope), replace=replace or ()
        )
    except ConfigInputError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    except ChangeFailed as exc:
        what = {
            "snapshot": "taking the snapshot (nothing was changed)",
            "apply": "applying the change (the snapshot was taken; nothing changed)",
        }[exc.stage]
        await backend_failed(send, scope, exc.error, what)
        return
    note_backend_status(scope, 200)
    snap, repair = changed.snapshot, changed.repair
    answer = config_json(bank, changed.answer)
    headers = [(b"x-warden-snapshot", snap.id.encode())]
    if redacted:
        headers.append((b"x-warden-redacted", ",".join(redacted).encode()))
    if changed.overridden:
        headers.append((b"x-warden-overridden", ",".join(changed.overridden).encode()))
    if repair.outcome == "unverified":
        # The change is in; whether it cost memories is unknown. Say so, keep the snapshot.
        await send_json(send, 200, answer, headers=[*headers, (b"x-warden-verify", b"failed: backend unavailable")])
        return
    if repair.outcome == "kept":
        await send_json(send, 200, answer, headers=headers)
        return
    await _answer_repair(send, snap, repair, headers)


async def _answer_repair(send: Send, snap: Snapshot, repair: Repair, headers: list[tuple[bytes, bytes]]) -> None:
    """The client's answer to a change that lost memories: 409 once rolled back, 502 otherwise."""
    dropped, plan, result = repair.dropped, repair.plan, repair.result
    what = ", ".join(f"{k} {v['before']} → {v['after']} ({v['delta']:+d})" for k, v in dropped.items())

    async def incomplete(title: str, why: str, restored: dict[str, Any] | None) -> None:
        await problem(
            send,
            502,
            "config-rollback-incomplete",
            title,
            f"The change dropped {what}. {why}. Resume with: memwarden config rollback {snap.bank} {snap.id}",
            headers=headers,
            snapshot_id=snap.id,
            bank=snap.bank,
            dropped=dropped,
            restored=restored,
        )

    if plan is None or result is None:
        await incomplete(
            "Config change lost memories; rollback could not start",
            f"The backend failed before the rollback could be planned: {repair.error}",
            None,
        )
        return
    if not result.complete:
        await incomplete(
            "Config change lost memories; rollback incomplete",
            f"The rollback stopped: {result.error}",
            result.as_dict(),
        )
        return
    restored = result.as_dict()
    await problem(
        send,
        409,
        "config-rolled-back",
        "Config change rolled back: it lost memories",
        f"The change dropped {what}. memwarden restored the previous config overrides "
        f"({', '.join(sorted(plan.restore_overrides)) or 'unchanged'}) and re-created "
        f"{result.memories_restored} memories in {len(result.documents_restored)} documents from its ledger"
        + (f"; {len(plan.unrestorable)} could not be restored (not in the ledger)" if plan.unrestorable else "")
        + (f"; still short: {result.still_dropped}" if result.still_dropped else "")
        + ".",
        headers=headers,
        snapshot_id=snap.id,
        bank=snap.bank,
        dropped=dropped,
        restored=restored,
    )


# -- missions on first sight ----------------------------------------------------------------------


# -- destructive routes ---------------------------------------------------------------------------


async def _destructive_allowed(state: AppState, scope: Scope, send: Send, bank: str, what: str) -> bool:
    policy = state.settings.config_guard.destructive
    if policy in ("reversible", "allow"):  # snapshotted first, restorable for restore_days
        return True
    if policy == "block":
        await problem(
            send,
            409,
            "destructive-blocked",
            "Destructive operation blocked",
            f'memwarden refuses to {what} (config_guard.destructive = "block").',
            bank=bank,
        )
        return False
    if header(scope, b"x-warden-confirm") == bank or key_allows(scope, "admin", bank):
        return True  # confirmed, or asked with a key that may administer the bank
    await problem(
        send,
        409,
        "confirmation-required",
        "Confirmation required",
        f"This request would {what} of bank '{bank}'. Repeat it with the header X-Warden-Confirm: {bank} "
        "to confirm; memwarden snapshots the bank first.",
        bank=bank,
    )
    return False


async def _kept_out(state: AppState, scope: Scope, send: Send, bank: str, document_id: str) -> bool:
    """A document whose content governance kept out (noise, held for review) is deleted as the
    client asked: answered as Hindsight answers a delete that found nothing left to remove."""
    try:
        if not await state.deletions.forget_kept_out(bank, document_id, request_id_of(scope)):
            return False
    except BackendError as exc:
        await backend_failed(send, scope, exc, "asking whether it holds the document (nothing was deleted)")
        return True
    message = f"Document '{document_id}' and 0 associated memory units deleted successfully"
    answer = {"success": True, "message": message, "document_id": document_id, "memory_units_deleted": 0}
    await send_json(send, 200, answer)
    return True


async def destructive(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """``DELETE`` a bank, its memories, or one document."""
    bank: str = scope["path_params"]["bank_id"]
    if not state.config.governed(bank):
        await forward(state.backend, scope, receive, send, retries=0)
        return
    document_id: str | None = scope["path_params"].get("document_id")
    path: str = scope["path"]
    kind: str | None = None
    if document_id is not None:
        what, reason = f"delete document '{document_id}'", "delete_document"
    elif path.rstrip("/").endswith("/memories"):
        query = query_params(scope)
        kind = query.get("type")
        what, reason = (f"delete every {kind} memory" if kind else "delete every memory"), "delete_memories"
    else:
        what, reason = "delete the bank with all its memories", "delete_bank"
    try:
        body = await read_body(receive)
    except ClientGone:
        return
    if not await _destructive_allowed(state, scope, send, bank, what):
        return
    if state.outbox is not None and state.outbox.busy(bank):  # they would bring back what is deleted
        await send_json(
            send,
            409,
            {
                "detail": f"memwarden: writes to bank '{bank}' wait in the delivery outbox; they would bring back"
                f" what this request deletes. Let them be delivered, or give them up first"
                f" (memwarden outbox list --bank {bank}); nothing was deleted"
            },
        )
        return
    request_id = request_id_of(scope)
    async with state.bank_locks(bank):
        if document_id is not None and await _kept_out(state, scope, send, bank, document_id):
            return
        snap = await snapshot_or_fail(state, scope, send, bank, reason, "nothing was deleted")
        if snap is None:
            return
        try:  # what the ledger could not re-create, read while the backend still holds it
            kept = await state.deletions.unledgered(snap, reason=reason, document_id=document_id, kind=kind)
        except BackendError as exc:
            await set_outcome(state.ledger, snap, "failed", {"error": f"{type(exc).__name__}: {exc}"})
            await backend_failed(send, scope, exc, "reading what the delete removes (nothing was deleted)")
            return

        async def record(status: int) -> None:
            await state.deletions.finished(
                snap,
                status=status,
                reason=reason,
                document_id=document_id,
                kind=kind,
                kept=kept,
                request_id=request_id,
            )

        # The ledger follows the backend before the client hears back: whoever reads next sees both.
        # X-Warden-Snapshot names what `memwarden restore` brings back.
        told = with_headers(send, [(b"x-warden-snapshot", snap.id.encode())])
        await forward(state.backend, scope, replay(body, receive), before_end(told, record), retries=0)


# -- bank profile (PUT/PATCH a bank) --------------------------------------------------------------


async def bank_profile(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    """Bank create/update carries a flat subset of config fields: snapshotted and verified."""
    bank: str = scope["path_params"]["bank_id"]
    if not state.config.config_governed(bank):
        await forward(state.backend, scope, receive, send, retries=0)
        return
    try:
        body = await read_body(receive)
    except ClientGone:
        return
    # Refused before the snapshot: a body not sent as JSON (as Hindsight), one memwarden cannot read
    # (never forwarded unjudged), an oversized profile (a 5 MiB mission).
    if body and not is_json_type(content_type_of(scope)):
        await send_json(send, 422, {"detail": not_json_detail(body)})
        return
    try:
        profile = await parse_json_async(body) if body.strip() else {}
        redacted: list[str] = []
        if isinstance(profile, dict):
            check_sizes(profile)
            profile, redacted = redact_config(profile)  # a secret in a mission or a name: masked
            if redacted:
                body = json.dumps(profile, ensure_ascii=False).encode()
                set_body_length(scope, len(body))
    except BodyError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    except ConfigInputError as exc:
        await send_json(send, exc.status, {"detail": exc.detail})
        return
    request_id = request_id_of(scope)
    # The bank's lock is held from the snapshot to the end of the verification, which runs in the
    # background and releases it: taken again there, a config change waiting for the lock could get
    # it first and then wait for this change's gate, which only that verification ends (a deadlock).
    lock = state.bank_locks(bank)
    await lock.acquire()
    verifying = False
    try:
        # Governed writes to the bank wait from here to the verification (which ends the change).
        await state.gates.begin_change(bank)
        try:
            snap = await snapshot_or_fail(state, scope, send, bank, "bank_profile", "nothing was changed")
            if snap is None:
                return
            told = [(b"x-warden-redacted", ",".join(redacted).encode())] if redacted else []
            await forward(state.backend, scope, replay(body, receive), with_headers(send, told), retries=0)
            status = scope.get("state", {}).get("backend_status")
            if not (isinstance(status, int) and 200 <= status < 300):
                await set_outcome(state.ledger, snap, "failed", {"backend_status": status})
                return
            # The client has its answer; verification (and a rollback, should one be needed) runs
            # in the background, still under the bank's lock, and the audit log tells its outcome.
            state.background.spawn(_verify_profile_change(state, snap, request_id, lock))
            verifying = True
        finally:
            if not verifying:
                await state.gates.end_change(bank)
    finally:
        if not verifying:
            await lock.release()


async def _verify_profile_change(state: AppState, snap: Snapshot, request_id: str, lock: BankLock) -> None:
    """The background half of a bank profile change: ``lock`` (the bank's, taken by the request)
    is released here, with the change's gate."""
    try:
        repair = await state.config.verify_and_repair(snap, request_id)
    finally:
        try:
            await state.gates.end_change(snap.bank)
        finally:
            await lock.release()
    if repair.outcome in ("unverified", "rollback_incomplete"):
        log.warning("profile_change_unverified", bank=snap.bank, outcome=repair.outcome, error=repair.error)


# -- /warden/v1 snapshots -------------------------------------------------------------------------
