"""Plans: a batch of operations on memories, previewed, then applied by typing the plan's phrase."""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.memory_reads import active_siblings, row_by_id
from memwarden.db.plans import (
    claim_plan,
    current_target_state,
    finish_plan,
    get_plan,
    insert_plan,
    target_state,
)
from memwarden.governance.archive import Archiver, shared_document
from memwarden.governance.errors import Refused
from memwarden.governance.locks import BankLocks
from memwarden.governance.review import Review
from memwarden.settings import PlanSettings

MAX_OPERATIONS = 1000


def _problem(status: int, detail: Any) -> tuple[int, dict[str, Any]]:
    return status, {"detail": detail}


def check_operations(db: Connection, bank: str, operations: Any) -> tuple[list[dict[str, Any]], list[str]]:
    """The operations with each target's expected state, and the problems (none: plannable)."""
    if not isinstance(operations, list) or not operations:
        return [], ["operations must be a non-empty list of {op, memory_id}"]
    if len(operations) > MAX_OPERATIONS:
        return [], [f"at most {MAX_OPERATIONS} operations in one plan, got {len(operations)}"]
    planned, problems, seen = [], [], set()
    archives: list[tuple[str, str, str | None]] = []  # where, memory id, document id
    for n, op in enumerate(operations):
        where = f"operations[{n}]"
        kind = op.get("op") if isinstance(op, dict) else None
        if not isinstance(kind, str) or kind not in OPS or not isinstance(op.get("memory_id"), str):  # "op": [] too
            problems.append(f"{where}: expected {{op: {'|'.join(OPS)}, memory_id: string}}")
            continue
        memory_id = op["memory_id"]
        if memory_id in seen:
            problems.append(f"{where}: memory {memory_id} appears twice")
            continue
        seen.add(memory_id)
        row = row_by_id(db, memory_id, bank=bank)
        if row is None:
            problems.append(f"{where}: no memory {memory_id} in bank '{bank}'")
            continue
        want, effect = OPS[op["op"]]
        if row.status != want:
            problems.append(f"{where}: memory {memory_id} is {row.status}; {op['op']} needs {want}")
            continue
        if op["op"] in ("archive", "restore"):
            archives.append((where, memory_id, row.document_id))
        planned.append(
            {
                "op": op["op"],
                "memory_id": memory_id,
                "content": row.content,
                "expected": target_state(row),
                "effect": effect,
            }
        )
    # The backend archives (restores) a whole document: a plan archives every active memory of it,
    # or none, and restores every archived one, or none (what the preview shows is what is applied).
    ops = {p["memory_id"]: p["op"] for p in planned}
    for where, memory_id, document_id in archives:
        op = ops[memory_id]
        together = {m for m, o in ops.items() if o == op}
        status = "active" if op == "archive" else "archived"
        siblings = active_siblings(db, bank, document_id, memory_id, besides=together, status=status)
        if siblings:
            problems.append(f"{where}: {shared_document(memory_id, document_id, siblings, op=op)}")
    # A document's operations one after another: a failure elsewhere never stops a plan between them.
    documents = {memory_id: document_id for _, memory_id, document_id in archives}
    first: dict[tuple[str, str | int], int] = {}
    keyed = []
    for n, p in enumerate(planned):
        document = documents.get(p["memory_id"])
        group: tuple[str, str | int] = ("document", document) if document else ("alone", n)
        keyed.append((first.setdefault(group, n), n, p))
    return [p for _, _, p in sorted(keyed, key=lambda k: (k[0], k[1]))], problems


# op -> the status its target must have, and what it does.
OPS: dict[str, tuple[str, str]] = {
    "archive": ("active", "out of the backend, kept in the ledger as archived"),
    "restore": ("archived", "back in the backend, active"),
    "approve": ("review", "forwarded to the backend; the memory it conflicts with is superseded"),
    "reject": ("review", "dropped, kept in the ledger as rejected"),
}


@dataclass(frozen=True)
class Plans:
    """Plans: the ledger, the banks' locks, the plans' settings, and the services a plan's
    operations act through."""

    ledger: Database
    bank_locks: BankLocks
    settings: PlanSettings
    archiver: Archiver
    review: Review

    async def create_plan(
        self, bank: str, operations: Any, *, reason: str | None, request_id: str
    ) -> tuple[int, dict[str, Any]]:
        plan_id = uuid.uuid4().hex[:12]
        phrase = self.settings.phrase.replace("{plan_id}", plan_id)
        created = datetime.now(UTC)
        expires = created + timedelta(seconds=self.settings.ttl)

        def write(db: Connection) -> tuple[list[dict[str, Any]], list[str]]:
            planned, problems = check_operations(db, bank, operations)
            if problems:
                return planned, problems
            insert_plan(
                db,
                plan_id=plan_id,
                bank=bank,
                phrase=phrase,
                reason=reason,
                operations=planned,
                created_at=created.isoformat(),
                expires_at=expires.isoformat(),
            )
            append_events(
                db,
                [
                    AuditEvent(
                        action="plan_create",
                        bank=bank,
                        source="plan",
                        reason=reason,
                        after={
                            "plan_id": plan_id,
                            "operations": [{"op": p["op"], "memory_id": p["memory_id"]} for p in planned],
                        },
                        request_id=request_id,
                    )
                ],
            )
            return planned, []

        _, problems = await self.ledger.write(write)
        if problems:
            return _problem(422, problems)
        return 201, await self.show(bank, plan_id) or {}

    async def show(self, bank: str, plan_id: str) -> dict[str, Any] | None:
        return await self.ledger.read(lambda db: get_plan(db, bank, plan_id))

    async def apply_plan(self, bank: str, plan_id: str, phrase: Any, *, request_id: str) -> tuple[int, dict[str, Any]]:
        plan = await self.show(bank, plan_id)
        if plan is None:
            return _problem(404, f"no plan {plan_id} in bank '{bank}'")
        if not isinstance(phrase, str):
            return _problem(
                422,
                [{"type": "missing", "loc": ["body", "phrase"], "msg": "the plan's confirmation phrase is required"}],
            )
        if phrase != plan["phrase"]:
            hint = (
                " (it matches once spaces are trimmed: type it exactly)"
                if " ".join(phrase.split()) == plan["phrase"]
                else ""
            )
            return _problem(403, f"the confirmation phrase does not match{hint}; expected exactly: {plan['phrase']}")
        if plan["status"] != "planned":
            when = f" at {plan['applied_at']}" if plan["applied_at"] else ""
            return _problem(409, f"plan {plan_id} is {plan['status']}{when}; a plan is applied once")
        if datetime.now(UTC) > datetime.fromisoformat(plan["expires_at"]):
            return _problem(410, f"plan {plan_id} expired at {plan['expires_at']}; make a new one")
        claimed = await self.ledger.write(lambda db: claim_plan(db, plan_id))
        if not claimed:
            return _problem(409, f"plan {plan_id} is already being applied")

        operations: list[dict[str, Any]] = plan["operations"]
        async with self.bank_locks(bank):

            def changed_targets(db: Connection) -> list[dict[str, Any]]:
                out = []
                for op in operations:
                    now_state = current_target_state(db, op["memory_id"])
                    if now_state != op["expected"]:
                        out.append({"memory_id": op["memory_id"], "expected": op["expected"], "now": now_state})
                return out

            changed = await self.ledger.read(changed_targets)
            if changed:
                await self._finish(bank, plan_id, "stale", {"changed": changed}, request_id)
                return _problem(
                    409, {"message": f"plan {plan_id} is stale: targets changed since it was made", "changed": changed}
                )
            applied: list[dict[str, Any]] = []
            failed: dict[str, Any] | None = None
            rest: list[dict[str, Any]] = []
            reason = f"plan {plan_id}" + (f": {plan['reason']}" if plan.get("reason") else "")
            for n, op in enumerate(operations):
                together = frozenset(o["memory_id"] for o in operations if o["op"] == op["op"])
                try:
                    outcome = await self._run(op["op"], bank, op["memory_id"], request_id, reason, together)
                except Exception as exc:  # Refused, or anything else: never leave the plan "applying"
                    status_, detail = (
                        (exc.status, exc.detail) if isinstance(exc, Refused) else (500, f"internal error: {exc!r}")
                    )
                    failed = {"op": op["op"], "memory_id": op["memory_id"], "status": status_, "detail": detail}
                    rest = [{"op": o["op"], "memory_id": o["memory_id"]} for o in operations[n + 1 :]]
                    if not isinstance(exc, Refused):
                        await self._finish(
                            bank,
                            plan_id,
                            "partially_applied",
                            {"applied": applied, "failed": failed, "not_attempted": rest},
                            request_id,
                        )
                        raise
                    break
                applied.append(
                    {"op": op["op"], "memory_id": op["memory_id"], "backend": outcome.get("backend", outcome)}
                )
        result = {"applied": applied, "failed": failed, "not_attempted": rest}
        status = "applied" if failed is None else "partially_applied"
        await self._finish(bank, plan_id, status, result, request_id)
        plan = await self.show(bank, plan_id) or {}
        return (200 if failed is None else 502), plan

    async def _finish(self, bank: str, plan_id: str, status: str, result: dict[str, Any], request_id: str) -> None:
        def write(db: Connection) -> None:
            finish_plan(db, plan_id, status, result)
            append_events(
                db,
                [
                    AuditEvent(
                        action="plan_apply",
                        bank=bank,
                        source="plan",
                        reason=status,
                        after={"plan_id": plan_id, "status": status, **result},
                        request_id=request_id,
                    )
                ],
            )

        await self.ledger.write(write)

    async def _run(
        self, op: str, bank: str, memory_id: str, request_id: str, reason: str, together: frozenset[str]
    ) -> dict[str, Any]:
        """One operation of a plan, under the bank's lock (held by :meth:`apply_plan`); ``together``:
        the plan's archives (they may share a document)."""
        if op == "archive":
            return await self.archiver.archive(
                bank, memory_id, reason=reason, request_id=request_id, source="plan", locked=True, together=together
            )
        if op == "restore":
            return await self.archiver.restore(
                bank, memory_id, reason=reason, request_id=request_id, locked=True, together=together
            )
        if op == "approve":
            return await self.review.approve(bank, memory_id, request_id=request_id)
        if op == "reject":
            return await self.review.reject(bank, memory_id, request_id=request_id)
        raise ValueError(f"no such operation: {op}")  # check_operations admits only those of OPS
