"""Curation that follows a client's or an operator's hand: a document re-tagged, feedback on a
memory. Each checks what it is given, changes the ledger only after the backend has, and audits."""

from __future__ import annotations

import asyncio
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from memwarden.backends.base import BackendError, MemoryBackend, self_hosted
from memwarden.db.audit import AuditEvent, append_events
from memwarden.db.database import Database
from memwarden.db.memories import Change, move, retag_document
from memwarden.db.memory_reads import document_memory_ids, row_by_id
from memwarden.governance.archive import document_units
from memwarden.governance.errors import Refused
from memwarden.governance.locks import BankLocks
from memwarden.governance.retain import LARGE_TEXT, Retainer
from memwarden.policies.defense import defend
from memwarden.policies.judgement import Judgement
from memwarden.policies.labelling import names_a_label
from memwarden.policies.labels import LabelClassifier, LabelError
from memwarden.policies.tags import canonicalize_tags, split_tag, tag_value

log = structlog.get_logger("memwarden.governance")


async def judge_new_text(
    retain: Retainer,
    bank: str,
    text: str | None,
    *,
    route: str,
    request_id: str,
    fields: Mapping[str, Any] | None = None,
) -> None:
    """A memory's new text (a curation: ``update_memory``, ``PATCH …/memories/{id}``) judged by the
    rules a retain's item meets — the rules, the learned layer, the secret detectors — but not
    against the rest of the bank: the memory being edited holds its own topic key, and correcting
    a value is what an edit is for. A text the rules reject, would hold for review, or would mask
    (a secret: curation sends the text as given, never a masked copy) changes nothing: audited
    (``curation_refused``: rule, reason, labels; never the text) and raised as :class:`Refused`
    (422) naming the rule. So does a new text — or a ``context`` among ``fields``, the request's
    others — holding instructions aimed at the agent that the bank quarantines or blocks (an edit
    cannot wait in the review queue); one the bank would tag or allow goes through, as given (an
    edit carries no tags). ``text`` None: an edit of the other fields alone, screened the same way."""
    governance = retain.governance

    def judge() -> Judgement:
        if text is None:  # the other fields alone: what the defence reads of them
            judged = Judgement(0, "store", "curation.fields", "the fields of an edit")
        else:
            entries: list[tuple[str, list[str]]] = [(text, [])]
            judged = retain.pipeline.judge_many(
                entries, secrets=governance.secrets_for(bank), forward=governance.segments_for(bank), before=None
            )[0]
        item = {**(fields or {}), "content": text or ""}
        return defend(judged, item, governance.injection_for(bank), governance.tag_separator)

    large = len(text or "") > LARGE_TEXT or retain.pipeline.learned is not None
    judged = await asyncio.to_thread(judge) if large else judge()
    if judged.verdict == "store":  # (tagged or allowed instructions too: the edit's text goes as given)
        return
    event = AuditEvent(
        "curation_refused",
        bank=bank,
        source=route,
        rule=judged.rule,
        reason=judged.reason,
        after={"verdict": judged.verdict, "topic": judged.topic, "stage": judged.stage},
        request_id=request_id,
    )
    await retain.ledger.write(lambda db: append_events(db, [event]))
    raise Refused(422, f"memwarden did not take the new text ({judged.rule}: {judged.reason}); the memory is unchanged")


@dataclass(frozen=True)
class Curator:
    """Curation that follows a client's or an operator's hand: the ledger, the backend, the banks'
    locks, the label vocabulary and the tag separator in force."""

    ledger: Database
    memory: MemoryBackend
    bank_locks: BankLocks
    labels: LabelClassifier
    tag_separator: str

    def document_tags(self, tags: Sequence[str]) -> tuple[list[str], dict[str, str]]:
        """A document's new tags as the backend should get them: canonical, its ``topic`` and
        ``stage`` labels (one of each at most, aliases mapped) first; and those labels. A ``topic:`` or
        ``stage:`` tag whose value the vocabulary does not know is the client's own tag, kept as sent
        (as retain keeps it). Raises :class:`Refused` (422) for two labels of a key."""
        sep = self.tag_separator
        canonical = canonicalize_tags(tags, separator=sep)
        labels: dict[str, str] = {}
        named: set[str] = set()
        for key in ("topic", "stage"):
            # The same reading as retain's (policies/labelling.py): only a value the vocabulary knows
            # (or an alias of one) is a label; any other is the client's tag.
            known = [t for t in canonical if (split_tag(t) or ("",))[0] == key and names_a_label(self.labels, t)]
            if len(known) > 1:
                raise Refused(422, f"memwarden: a document carries one {key} label, got {known}")
            if known:
                resolved = self.labels.resolve(key, tag_value(known, key) or "")
                assert not isinstance(resolved, LabelError)  # names_a_label said it resolves
                named.add(known[0])
                labels[key] = resolved[0]
        rest = [t for t in canonical if t not in named]
        return [*(f"{k}{sep}{v}" for k, v in labels.items()), *rest], labels

    async def document_retagged(
        self, bank: str, document_id: str, tags: list[str], labels: dict[str, str], request_id: str
    ) -> None:
        """The backend re-tagged the document: its ledger rows follow, audited."""
        await self.ledger.write(lambda db: retag_document(db, bank, document_id, tags, labels, request_id))

    async def fact_curated(self, bank: str, memory_id: str, *, reason: str | None, request_id: str) -> None:
        """The backend invalidated or put back one of its facts (a client's ``PATCH …/memories/{id}``
        with a ``state``): the ledger's memories of the fact's document follow — archived once none of
        the document's facts is valid, active again once one is — audited as ``archive``/``restore``
        from ``curate``. A backend that cannot say (unreachable, the fact gone) leaves the ledger as it
        was, logged."""
        async with self.bank_locks(bank):  # not beside memwarden's own archive or restore of the bank
            try:
                fact = await self.memory.get_memory(bank, memory_id)
                document_id = fact.document_id
                valid = await document_units(self.memory, bank, document_id, "valid") if document_id else []
            except BackendError as exc:
                log.warning("curate_not_followed", bank=bank, memory_id=memory_id, error=str(exc))
                return
            if not document_id:
                return
            frm, to, action = ("archived", "active", "restore") if valid else ("active", "archived", "archive")
            note = reason or f"fact {memory_id} {'put back' if valid else 'invalidated'} by curation"
            change = Change(frm, to, action, "curate", request_id, reason=note)
            try:
                await self.ledger.write(
                    lambda db: move(db, bank, document_memory_ids(db, bank, document_id, frm), change)
                )
            except Exception as exc:  # the backend's change stands: said in the log, the ledger left as it was
                log.error("curate_not_followed", bank=bank, memory_id=memory_id, error=type(exc).__name__)

    async def feedback(
        self, bank: str, memory_id: str, *, score: int, reason: str | None, request_id: str
    ) -> list[str] | None:
        """An operator's vote on a memory, audited; the self-hosted store also ranks by it (the ids
        it nudged; None in front of a backend that does not). Raises :class:`Refused` (404)."""
        row = await self.ledger.read(lambda db: row_by_id(db, memory_id, bank=bank))
        if row is None:
            raise Refused(404, f"Memory '{memory_id}' not found in bank '{bank}'")
        event = AuditEvent(
            action="feedback",
            bank=bank,
            memory_id=memory_id,
            source="operator",
            reason=reason,
            after={"score": score, "reason": reason},
            request_id=request_id,
        )
        await self.ledger.write(lambda db: append_events(db, [event]))
        own = self_hosted(self.memory)
        if own is not None and row.document_id:
            return await own.add_feedback(bank, row.document_id, score)
        return None
