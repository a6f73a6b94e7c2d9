"""Dedup and topic-key conflicts: a request's judgements against what the bank already holds (and
against each other): duplicate, held for review, supersede. Pure."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from memwarden.policies.judgement import FORWARDED, Judgement


@dataclass(frozen=True)
class KeyHolder:
    """The active memory holding a topic key."""

    memory_id: str
    content_hash: str


def resolve(
    judgements: Sequence[Judgement],
    *,
    active_hashes: Mapping[str, str],
    key_holders: Mapping[str, KeyHolder],
) -> list[Judgement]:
    """Dedup and topic-key conflicts against the bank (and within the request itself).

    ``active_hashes`` maps content hash → id of the active memory with it; ``key_holders`` maps
    topic key → the active memory holding it. Returns the final judgements, same order.
    """
    seen_hashes = dict(active_hashes)
    holders = dict(key_holders)
    out: list[Judgement] = []
    for j in judgements:
        if j.verdict not in FORWARDED or not j.content_hash:
            out.append(j)
            continue
        pending = f"request-item-{j.position}"
        existing = seen_hashes.get(j.content_hash)
        if existing is not None:
            out.append(
                j._replace(
                    verdict="duplicate",
                    rule="dedup.exact",
                    reason="same content already stored",
                    existing_id=existing,
                )
            )
            continue
        holder = holders.get(j.topic_key) if j.topic_key else None
        if holder is not None and j.cardinality == "single":
            out.append(
                j._replace(
                    verdict="review",
                    rule="topic_key.conflict",
                    reason=f"conflicts with the memory holding {j.topic_key}",
                    existing_id=holder.memory_id,
                )
            )
            continue
        if holder is not None and j.cardinality == "replace":
            j = j._replace(supersedes=holder.memory_id, reason=f"{j.reason}; supersedes the previous {j.topic_key}")
        seen_hashes[j.content_hash] = pending
        if j.topic_key and j.cardinality in ("single", "replace"):
            holders[j.topic_key] = KeyHolder(pending, j.content_hash)
        out.append(j)
    return out
