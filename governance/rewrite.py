"""A governed re-write of one memory (a Mem0 update): the new text is judged like any retain,
recorded and delivered as a new version, and the old version is superseded — taken out of the
backend, kept in the ledger — only once the new one is in. A new text the rules reject (or hold
for review, or find a duplicate of another memory) changes nothing: the old version stays. The
old version's own text and topic key are no conflict: it is the one being replaced.
"""

from __future__ import annotations

from dataclasses import dataclass

from memwarden.db.common import Connection
from memwarden.db.memories import Change, mark_replaces, move
from memwarden.governance.delivery import Delivery
from memwarden.governance.retain import Batch, Retained, Retainer
from memwarden.policies.judgement import FORWARDED


@dataclass(frozen=True)
class Rewritten:
    """What became of the new version: its retain's account, and its ledger id when it took the
    old one's place (None: refused, held, or not delivered — the old version stays)."""

    retained: Retained
    new_id: str | None


async def rewrite(retain: Retainer, batch: Batch, old_id: str, deliver: Delivery) -> Rewritten:
    """Judge ``batch`` (one item: the new version) and, if it is kept, supersede ``old_id``, under
    the bank's write gate. Raises :class:`~memwarden.governance.errors.Busy` or
    :class:`~memwarden.governance.errors.QueueFull` with nothing written."""
    async with retain.writing(batch.bank):
        return await _rewrite(retain, batch, old_id, deliver)


async def _rewrite(retain: Retainer, batch: Batch, old_id: str, deliver: Delivery) -> Rewritten:
    judged = await retain.judge(batch)
    first = judged[0]
    if first.verdict == "duplicate" and first.existing_id == old_id:
        # The same text again with other metadata: a version of its own, not a repeat of the old one.
        judged[0] = first._replace(verdict="store", existing_id=None, reason="a new version of the memory it repeats")
    elif first.verdict == "review" and first.existing_id == old_id:
        # The single-valued fact the old version holds, given a new value: the update replaces it,
        # it does not conflict with the version it replaces (other memories holding it still do).
        judged[0] = first._replace(
            verdict="store", rule="update", existing_id=None, reason=f"a new value of {first.topic_key}"
        )
    retained = await retain.enforce(batch, judged, deliver)
    new_id = retained.memory_ids.get(0)
    if new_id is not None and judged[0].verdict == "review":
        # Held (it conflicts with another memory): its approval is to replace the old version too.
        held = new_id
        await retain.ledger.write(lambda db: mark_replaces(db, held, old_id))
    delivered = retained.delivered is not None and retained.delivered.status == 200
    if new_id is None or judged[0].verdict not in FORWARDED or not (delivered or retained.queued is not None):
        return Rewritten(retained, None)
    change = Change(
        "active",
        "superseded",
        "supersede",
        batch.source,
        batch.request_id,
        batch.actor,
        rule="update",
        reason=f"updated: superseded by {new_id}",
        by=new_id,
    )

    def supersede(db: Connection) -> None:
        move(db, batch.bank, [old_id], change)

    await retain.ledger.write(supersede)
    await retain.review.retire(batch.bank, old_id)
    return Rewritten(retained, new_id)
