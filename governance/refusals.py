"""Fields that hold what looks like a secret, refused the same way by every front: audited (where
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
