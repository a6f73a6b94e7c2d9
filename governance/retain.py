"""Governed retain, the service side: judge a batch, record every verdict, deliver the survivors,
settle their rows. No ASGI: the front parses the request, says how to reach the backend (a
:mod:`~memwarden.governance.delivery`) and shapes the answer; what the service cannot do it raises
as one of :mod:`~memwarden.governance.errors` (busy, queue full), which the front maps.

judge every item (pure policies) → gather facts (the bank's active hashes and topic keys) →
resolve (dedup, conflicts) → act. Acting differs by mode: a dry run does nothing; ``shadow``
audits the verdicts (no rows); ``enforce`` records every verdict in one transaction (rows
``pending``) — in front of a backend, with the delivery's outbox entry —, delivers the survivors in
one call with the client's other fields intact, then marks them ``active``; or ``failed``, with
the reason, when the backend refused. When a backend cannot take them now, the outbox delivers
them later (:mod:`memwarden.governance.outbox`); the self-hosted store's rows become ``failed``.
"""

from __future__ import annotations

import asyncio
import contextlib
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Hashable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import structlog

from memwarden.backends.base import BackendUnavailable
from memwarden.db import outbox as outbox_rows
from memwarden.db.audit import AuditEvent, append_events, current_actor
from memwarden.db.common import Connection
from memwarden.db.database import Database
from memwarden.db.deliveries import mark_delivered, mark_failed
from memwarden.db.memories import Recorded, lookup_facts, real_id, record_verdicts
from memwarden.db.records import Provenance
from memwarden.governance.claims import RecentClaims
from memwarden.governance.deliveries import queue_event, transient
from memwarden.governance.delivery import Delivered, Delivery
from memwarden.governance.errors import Forbidden
from memwarden.governance.items import check_reserved_metadata, replaced_documents
from memwarden.governance.locks import BankGates
from memwarden.governance.refusals import refuse_instructions
from memwarden.governance.review import Review
from memwarden.governance.turns import LastTurns, Thread
from memwarden.metrics import Metrics
from memwarden.policies.defense import defend
from memwarden.policies.floods import claim_of, flood_positions
from memwarden.policies.judgement import FORWARDED, Forward, Judgement, extract_text
from memwarden.policies.pipeline import Pipeline
from memwarden.policies.resolve import resolve
from memwarden.policies.tags import canonicalize_tags, protected_tags, tag_value
from memwarden.settings import GovernanceSettings

if TYPE_CHECKING:
    from memwarden.governance.outbox import Outbox

log = structlog.get_logger("memwarden.retain")
ANSWER_CONTEXT = "a reply to: "  # a kept answer's context, when the client gave none
LARGE_TEXT = 20_000  # characters: an item this long is judged off the event loop


@dataclass(frozen=True)
class Batch:
    """One retain request, parsed: the items as the client sent them (``raw_items``) and the
    fields governance reads from each (``contents``, ``tags``); every other field of the request."""

    bank: str
    raw_items: Sequence[Mapping[str, Any]]
    contents: Sequence[Any]
    tags: Sequence[Sequence[str]]
    document_tags: Sequence[str]
    fields: Mapping[str, Any]  # the request without its items, passed on as sent
    request_id: str
    actor: str = field(default_factory=current_actor)
    previews: bool = True  # the audit events carry the first characters of each text
    source: str = "retain"  # the verdicts' audit source
    segments: Forward | None = None  # "whole" or "trim" for this batch, instead of the bank's setting
    # Rows of the front's own written in the verdicts' transaction (the ids given by position).
    also: Callable[[Connection, Mapping[int, str]], None] | None = None
    # Which stored memories an item can repeat or conflict with, by their tags (None: the whole
    # bank's). The Mem0 front's: those of the same users, agents, apps and runs.
    scope: Callable[[Sequence[str]], bool] | None = None
    # Each item's conversation within the bank (governance/turns.py: a short reply is judged after
    # the question before it); None: the items are no conversation's turns.
    threads: Sequence[Hashable | None] | None = None
    # Who writes, as the front saw it (the key, the channel), kept on every row; None: the actor
    # and ``source``.
    provenance: Provenance | None = None
    # Whether the writer may write the bank's protected tags (an admin key on the bank; any request
    # where no key is needed): the front says so; unsaid, it may not.
    admin: bool = False


@dataclass
class Retained:
    """What became of a batch: every judgement, the ids given to recorded items, and the
    backend's answer (None when nothing went to it) or why it could not be reached."""

    judgements: list[Judgement]
    memory_ids: dict[int, str] = field(default_factory=dict)
    delivered: Delivered | None = None
    unreachable: str | None = None  # the self-hosted store could not be reached
    queued: outbox_rows.Entry | None = None  # handed to the outbox: answered as an accepted async retain


def _threads(batch: Batch) -> list[Thread | None] | None:
    if batch.threads is None:
        return None
    return [None if t is None else (batch.bank, t) for t in batch.threads]


def forwarded_item(raw: Mapping[str, Any], j: Judgement) -> dict[str, Any]:
    """The item as the backend gets it: labels and canonical tags, masked or trimmed text, a
    document id; a reply kept as the answer to the turn before, that question as its context."""
    item = dict(raw)
    item["tags"] = list(j.tags)
    if j.verdict == "redact" or j.trimmed:
        content = raw.get("content")
        if isinstance(content, str):
            item["content"] = j.text
        else:  # blocks: the text blocks become one text block, the others stay in place
            blocks = [b for b in content or [] if not (isinstance(b, dict) and b.get("type") == "text")]
            item["content"] = [{"type": "text", "text": j.text}, *blocks]
    if not item.get("document_id"):
        item["document_id"] = f"mw-{uuid.uuid4().hex}"
    if j.question and not item.get("context"):  # "27" means nothing to an extractor without its question
        item["context"] = f"{ANSWER_CONTEXT}{j.question}"
    return item


@dataclass(frozen=True)
class Retainer:
    """The retain service: what a governed write needs, given when the app is composed — the
    ledger, the policies, the governance settings, the banks' write gates (and how long a write
    waits at one), the review service (to retire superseded memories), the outbox (in front of a
    backend; None for the self-hosted store), the metrics and the conversations' last turns."""

    ledger: Database
    pipeline: Pipeline
    governance: GovernanceSettings
    gates: BankGates
    write_wait: float
    review: Review
    outbox: Outbox | None
    metrics: Metrics
    turns: LastTurns
    claims: RecentClaims = field(default_factory=RecentClaims)  # each writer's recent claims (floods)

    async def judge(self, batch: Batch) -> list[Judgement]:
        """Every item's verdict against what the bank already holds. Reads, writes nothing.

        The pipeline judges each item; the bank's defence acts on it (instructions aimed at the
        agent in its text or fields: tagged, held, blocked) before dedup and topic-key conflicts are
        resolved, so that a held or blocked item neither takes a topic key nor supersedes one; then
        the writer's corroboration floods, among what would be stored, and — when one is found —
        the defence and the resolution again with it."""
        secrets = self.governance.secrets_for(batch.bank)
        forward = batch.segments or self.governance.segments_for(batch.bank)
        actions = self.governance.injection_for(batch.bank)
        sep = self.governance.tag_separator

        threads = _threads(batch)
        before = None if threads is None else self.turns.before(threads, [extract_text(c)[0] for c in batch.contents])

        def judge_all() -> tuple[list[Judgement], list[Judgement]]:
            entries = [
                (content, [*tags, *batch.document_tags])
                for content, tags in zip(batch.contents, batch.tags, strict=True)
            ]
            judged = self.pipeline.judge_many(entries, secrets=secrets, forward=forward, before=before)
            return judged, [defend(j, batch.raw_items[j.position], actions, sep) for j in judged]

        # The rules take microseconds an item: on the loop. The learned layer embeds: off the loop.
        # A long text (a document, a long transcript) takes a while to cut: off the loop as well.
        large = any(len(c) > LARGE_TEXT for c in batch.contents if isinstance(c, str)) or len(batch.contents) > 100
        offload = self.pipeline.learned is not None or large
        judged, defended = await asyncio.to_thread(judge_all) if offload else judge_all()
        hashes = [j.content_hash for j in defended if j.verdict in FORWARDED]
        keys = [j.topic_key for j in defended if j.verdict in FORWARDED and j.topic_key]
        replacing = replaced_documents(batch.raw_items)
        facts = (
            await self.ledger.read(lambda db: lookup_facts(db, batch.bank, hashes, keys, batch.scope, replacing))
            if hashes
            else None
        )
        held = facts.active_hashes if facts else {}
        holders = facts.key_holders if facts else {}
        resolved = resolve(defended, active_hashes=held, key_holders=holders)
        recent = self.claims.recent(batch.bank, self._writer(batch))
        floods = (
            await asyncio.to_thread(flood_positions, resolved, recent) if offload else flood_positions(resolved, recent)
        )
        if not floods:
            return resolved
        again = [
            defend(j, batch.raw_items[j.position], actions, sep, floods[j.position]) if j.position in floods else d
            for j, d in zip(judged, defended, strict=True)
        ]
        return resolve(again, active_hashes=held, key_holders=holders)

    @staticmethod
    def _writer(batch: Batch) -> str:
        return batch.provenance.writer if batch.provenance is not None else batch.actor

    def follow_claims(self, batch: Batch, judgements: Sequence[Judgement]) -> None:
        """A batch was written (or shadowed): its kept and held items are its writer's claims now."""
        kept = [claim_of(j) for j in judgements if j.verdict in (*FORWARDED, "review")]
        self.claims.follow(batch.bank, self._writer(batch), kept)

    async def check_protected(
        self, bank: str, tags: Sequence[str], *, admin: bool, source: str, request_id: str, actor: str
    ) -> None:
        """Nothing when the writer is an admin of ``bank`` or sends no tag the bank protects; else
        the refusal audited (``protected_tag_refused``: the tags) and raised as
        :class:`~memwarden.governance.errors.Forbidden` (403), nothing written."""
        protected = self.governance.protected_tags_for(bank)
        if admin or not protected:
            return
        found = list(dict.fromkeys(protected_tags(tags, protected, separator=self.governance.tag_separator)))
        if not found:
            return
        shown = [t[:64] for t in found[:20]]
        event = AuditEvent(
            "protected_tag_refused",
            bank=bank,
            actor=actor,
            source=source,
            rule="tags.protected",
            reason=f"{len(found)} tag(s) reserved to admin keys; nothing was written",
            after={"tags": shown},
            request_id=request_id,
        )
        await self.ledger.write(lambda db: append_events(db, [event]))
        raise Forbidden(
            f"tags reserved to admin keys in bank '{bank}' ({', '.join(shown[:5])}): nothing was written"
            " (governance.protected_tags)"
        )

    def follow_turns(self, batch: Batch, judgements: Sequence[Judgement]) -> None:
        """A batch was written (or shadowed): each conversation's latest turn is its last item — its
        text as sent, or as masked when it held a secret."""
        threads = _threads(batch)
        if threads is None:
            return
        for j in sorted(judgements, key=lambda j: j.position):
            thread = threads[j.position]
            if thread is not None:
                self.turns.follow(thread, j.text if j.secrets else extract_text(batch.contents[j.position])[0])

    def count_verdicts(self, judgements: Sequence[Judgement]) -> None:
        for j in judgements:
            self.metrics.verdicts.labels(j.verdict, j.rule).inc()

    async def shadow(self, batch: Batch, judgements: list[Judgement]) -> None:
        """Audit the verdicts (``source: shadow``) without a row: the request goes on unchanged."""
        self.count_verdicts(judgements)
        await self.ledger.write(
            lambda db: record_verdicts(
                db,
                bank=batch.bank,
                judgements=judgements,
                items=[dict(i) for i in batch.raw_items],
                request_id=batch.request_id,
                actor=batch.actor,
                source="shadow",
                record_rows=False,
                previews=batch.previews,
            )
        )
        self.follow_turns(batch, judgements)
        self.follow_claims(batch, judgements)

    @contextlib.asynccontextmanager
    async def writing(self, bank: str) -> AsyncIterator[None]:
        """Hold ``bank``'s write gate for one governed write; :class:`~memwarden.governance.locks.GateClosed`
        (a :class:`~memwarden.governance.errors.Busy`) when a guarded change holds it past
        ``config_guard.write_wait``."""
        async with self.gates.writing(bank, self.write_wait):
            yield

    async def write(self, batch: Batch, judgements: list[Judgement], deliver: Delivery) -> Retained:
        """A judged batch written: the bank's gate taken, then :meth:`enforce`. Raises
        :class:`~memwarden.governance.errors.Busy` or :class:`~memwarden.governance.errors.QueueFull`
        with nothing written."""
        async with self.writing(batch.bank):
            return await self.enforce(batch, judgements, deliver)

    async def shadowed(self, batch: Batch, judgements: list[Judgement], forward: Callable[[], Awaitable[None]]) -> None:
        """``shadow`` mode: the verdicts audited and the request sent on unchanged (``forward``), under
        the bank's gate. Raises :class:`~memwarden.governance.errors.Busy` with nothing done."""
        async with self.writing(batch.bank):
            await self.shadow(batch, judgements)
            await forward()

    async def enforce(self, batch: Batch, judgements: list[Judgement], deliver: Delivery) -> Retained:
        """Record every verdict, deliver the survivors, settle their rows (see the module). In front of
        a backend the delivery is recorded in the outbox with the verdicts, and handed to it when the
        backend cannot take it now (``Retained.queued``). Raises
        :class:`~memwarden.governance.errors.Forbidden` for a tag the bank reserves to admin keys
        (nothing written but the refusal's audit event), :class:`OutboxFull` (nothing written),
        or :class:`~memwarden.governance.refusals.InstructionsBlocked` when the bank's policy blocks
        an item (nothing written but the refusal's audit event)."""
        bank, request_id, actor = batch.bank, batch.request_id, batch.actor
        if batch.source != "mem0":
            check_reserved_metadata(batch.raw_items)
        sent = [*batch.document_tags, *(t for tags in batch.tags for t in tags)]
        await self.check_protected(
            bank, sent, admin=batch.admin, source=batch.source, request_id=request_id, actor=actor
        )
        blocked = [j for j in judgements if j.verdict == "reject" and j.threat and j.threat.action == "block"]
        await refuse_instructions(self.ledger, bank, blocked, source=batch.source, request_id=request_id, actor=actor)
        outbox = self.outbox
        if outbox is not None:
            outbox.check_room(bank)
        items = [
            forwarded_item(batch.raw_items[j.position], j)
            if j.verdict in (*FORWARDED, "review")
            else dict(batch.raw_items[j.position])
            for j in judgements
        ]
        survivors = [j for j in judgements if j.verdict in FORWARDED]
        body = dict(batch.fields)
        body["items"] = [items[j.position] for j in survivors]
        if batch.document_tags:
            sep = self.governance.tag_separator
            body["document_tags"] = [
                t
                for t in canonicalize_tags(batch.document_tags, separator=sep)
                if tag_value([t], "topic") is None and tag_value([t], "stage") is None
            ]
        behind = outbox is not None and outbox.busy(bank)  # entries of this bank wait: go behind them
        owner = self.ledger.instance_id

        def record(db: Connection) -> tuple[Recorded, outbox_rows.Entry | None]:
            nonlocal behind
            recorded = record_verdicts(
                db,
                bank=bank,
                judgements=judgements,
                items=items,
                request_id=request_id,
                actor=actor,
                source=batch.source,
                previews=batch.previews,
                provenance=batch.provenance,
                instance=self.ledger.instance_id,
            )
            if batch.also is not None:
                batch.also(db, recorded.memory_ids)
            if outbox is None or not survivors:
                return recorded, None
            ids = recorded.memory_ids
            # Another instance's queue for the bank counts too (one database): looked at under the write lock.
            behind = behind or outbox_rows.has_queued(db, bank)
            entry = outbox_rows.enqueue(
                db,
                bank=bank,
                body=body,
                memory_ids=[ids[j.position] for j in survivors],
                supersede=[
                    (ids[j.position], old) for j in survivors if (old := real_id(j.supersedes, ids)) is not None
                ],
                request_id=request_id,
                actor=actor,
                state="queued" if behind else "sending",
                owner=owner,
            )
            if behind:
                append_events(
                    db, [queue_event(entry, "earlier writes to the bank wait for the backend; queued behind them")]
                )
                outbox.tell_queued(db, bank)  # a request delivering an earlier one tells when it is settled
            return recorded, entry

        recorded, entry = await self.ledger.write(record)
        self.follow_turns(batch, judgements)  # recorded: the conversation moved on (not before)
        self.follow_claims(batch, judgements)
        self.count_verdicts(judgements)
        result = Retained(judgements, recorded.memory_ids)
        if not survivors:
            return result
        survivor_ids = [recorded.memory_ids[j.position] for j in survivors]
        if entry is not None and behind:
            assert outbox is not None
            outbox.queued(entry)
            result.queued = entry
            return result
        # However it ends — delivered, refused, handed to the worker, a failed ledger write, a cancel —
        # the bank's writes queued behind this one meanwhile go on (outbox_rows.claim_first waits for it).
        try:
            try:
                vectors = [j.vector if j.verdict == "store" else None for j in survivors]
                result.delivered = await deliver(body, vectors)
            except BackendUnavailable as exc:
                if entry is not None:
                    result.queued = await self._hand_over(entry, str(exc))
                    return result
                result.unreachable = str(exc)
                await self._failed(bank, survivor_ids, f"backend unavailable: {exc}", request_id, actor)
                return result
            except Exception as exc:  # whatever became of the delivery, the worker makes sure of it
                if entry is not None:
                    await self._hand_over(entry, f"{type(exc).__name__}: {exc}")
                raise
            except asyncio.CancelledError:  # the request went away mid-delivery: so does the entry, to the worker
                if entry is not None:  # (a ``sending`` entry of a live instance holds its bank's queue back)
                    why = "the request was cancelled before the backend answered"
                    await asyncio.shield(self._hand_over(entry, why))
                raise
            status = result.delivered.status
            if status != 200:
                if entry is not None and transient(status):
                    result.delivered = None
                    result.queued = await self._hand_over(entry, f"the backend answered {status}")
                    return result
                await self._failed(bank, survivor_ids, f"backend answered {status}", request_id, actor, entry)
                return result
            supersede = [
                (recorded.memory_ids[j.position], old)
                for j in survivors
                if (old := real_id(j.supersedes, recorded.memory_ids)) is not None
            ]

            def delivered(db: Connection) -> None:
                mark_delivered(
                    db, bank=bank, memory_ids=survivor_ids, supersede=supersede, request_id=request_id, actor=actor
                )
                if entry is not None:
                    outbox_rows.delivered(db, entry.seq, keep=False)
                    if self.outbox is not None:
                        self.outbox.tell_settled(db, bank)

            await self.ledger.write(delivered)
            for _, old_id in supersede:
                await self.review.retire(bank, old_id)
            return result
        finally:
            self._let_queue_go(bank, entry)

    async def _hand_over(self, entry: outbox_rows.Entry, error: str) -> outbox_rows.Entry:
        """The request could not deliver: its outbox entry goes to the worker (audited once)."""
        assert self.outbox is not None
        outbox = self.outbox
        event = queue_event(entry, f"the backend could not take it now ({error}); queued for delivery")

        def hand_over(db: Connection) -> None:
            if outbox_rows.hand_over(db, entry.seq, error):
                append_events(db, [event])
                outbox.tell_queued(db, entry.bank)  # the workers' now, on any instance

        await self.ledger.write(hand_over)
        self.outbox.queued(entry)
        log.warning("retain_queued", bank=entry.bank, operation_id=entry.operation_id, error=error)
        return entry

    async def _failed(
        self,
        bank: str,
        memory_ids: list[str],
        reason: str,
        request_id: str,
        actor: str,
        entry: outbox_rows.Entry | None = None,
    ) -> None:
        def failed(db: Connection) -> None:
            mark_failed(db, bank=bank, memory_ids=memory_ids, reason=reason, request_id=request_id, actor=actor)
            if entry is not None:  # the backend refused: the client has its answer, nothing to deliver
                outbox_rows.discard(db, entry.seq)
                if self.outbox is not None:
                    self.outbox.tell_settled(db, bank)

        await self.ledger.write(failed)

    def _let_queue_go(self, bank: str, entry: outbox_rows.Entry | None) -> None:
        """The request's own entry is settled: entries queued behind it meanwhile waited for it
        (``outbox_rows.claim_first``), their worker goes on."""
        if entry is not None and self.outbox is not None and self.outbox.busy(bank):
            self.outbox.wake(bank)
