"""Fields that hold what looks like a secret — and writes that hold instructions a bank blocks —
refused the same way by every front: audited (where
and what kind — never the value), logged, and raised as one error the front answers in its dialect.

memwarden stores no secret outside the memory text (where the pipeline masks it): a secret in an
item's metadata, a tag, a document id, a recall's query, a directive or an attachment would reach
the backend's database, its log or its LLM. Before, five places refused it with different outcomes
(a 422 with a log line and no audit event, or a 400/422 with neither)."""

from __future__ import annotations

from collections.abc import Sequence

import structlog

from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.database import Database
from memwarden.governance.errors import Invalid
from memwarden.policies.field_secrets import FieldSecret, field_name, locations
from memwarden.policies.judgement import Judgement

log = structlog.get_logger("memwarden.secrets")
AUDITED_FIELDS = 20  # a request naming more fields is audited with the first 20 and the count


class SecretInFields(Invalid):
    """The request's fields hold what looks like a secret: nothing was stored or sent on. ``found``
    says where (the value is never kept)."""

    def __init__(self, found: Sequence[FieldSecret]) -> None:
        self.found = list(found)
        fields = locations(self.found[:AUDITED_FIELDS])
        super().__init__(f"a secret in {fields}: not stored or sent on (put secrets in no memory field)")


async def refuse_secrets(
    ledger: Database,
    bank: str | None,
    found: Sequence[FieldSecret],
    *,
    route: str,
    request_id: str | None,
    audit: bool = True,
) -> None:
    """Nothing when ``found`` is empty; else audit the refusal (``secret_refused``: the fields and
    kinds, never a value; not for a dry run, ``audit=False``, which writes nothing), log it, and
    raise :class:`SecretInFields`. The refusal stands when the audit cannot be written (logged)."""
    if not found:
        return
    fields = [field_name(f.loc) for f in found[:AUDITED_FIELDS]]
    event = AuditEvent(
        "secret_refused",
        bank=bank,
        source=route,
        rule="secret.field",
        reason=f"{len(found)} field(s) hold what looks like a secret; nothing was stored or sent on",
        after={"fields": fields, "kinds": sorted({f.kind for f in found}), "count": len(found)},
        request_id=request_id,
    )
    if audit:
        try:
            await ledger.write(lambda db: append_events(db, [event]))
        except Exception as exc:  # the client's answer does not wait on the audit: refused all the same
            log.error("secret_refusal_not_audited", bank=bank, route=route, error=f"{type(exc).__name__}: {exc}")
    log.warning("secret_in_fields", bank=bank, route=route, fields=fields)
    raise SecretInFields(found)


class InstructionsBlocked(Invalid):
    """Items of a write hold instructions aimed at the agent that the bank's policy blocks: nothing
    of the write was stored or sent on. ``blocked`` are their judgements."""

    def __init__(self, blocked: Sequence[Judgement]) -> None:
        self.blocked = list(blocked)
        said = "; ".join(
            f"item {j.position}: {j.threat.severity} ({', '.join(j.threat.rules[:3])}) in {', '.join(j.threat.fields)}"
            for j in self.blocked[:AUDITED_FIELDS]
            if j.threat is not None
        )
        super().__init__(
            f"instructions aimed at the agent, blocked by the bank's policy — {said}; nothing of this write was"
            " stored (rewrite it as a fact, or ask an operator to change governance.injection)"
        )


async def refuse_instructions(
    ledger: Database, bank: str, blocked: Sequence[Judgement], *, source: str, request_id: str, actor: str
) -> None:
    """Nothing when ``blocked`` is empty; else audit the refusal (``injection_blocked``: each item's
    position, severity, rules, fields and content hash — never its text), log it and raise
    :class:`InstructionsBlocked`. The refusal stands when the audit cannot be written (logged)."""
    if not blocked:
        return
    items = [
        {
            "index": j.position,
            "severity": j.threat.severity,
            "rules": list(j.threat.rules),
            "fields": list(j.threat.fields),
            "content_hash": j.content_hash or None,
        }
        for j in blocked[:AUDITED_FIELDS]
        if j.threat is not None
    ]
    event = AuditEvent(
        "injection_blocked",
        bank=bank,
        actor=actor,
        source=source,
        rule=blocked[0].rule,
        reason=f"{len(blocked)} item(s) hold instructions aimed at the agent; the write was refused",
        after={"items": items, "count": len(blocked)},
        request_id=request_id,
    )
    try:
        await ledger.write(lambda db: append_events(db, [event]))
    except Exception as exc:  # the client's answer does not wait on the audit: refused all the same
        log.error("injection_refusal_not_audited", bank=bank, error=f"{type(exc).__name__}: {exc}")
    log.warning("injection_blocked", bank=bank, items=[i["index"] for i in items], rules=blocked[0].rule)
    raise InstructionsBlocked(blocked)
