"""Explain: the white-box account of one recall (``POST /warden/v1/banks/{bank}/explain``)."""

from __future__ import annotations

import sqlite3
from collections.abc import Mapping
from typing import Any

from memwarden.db.database import Database
from memwarden.store.embedder import Vector
from memwarden.store.shapes import loads


async def explain_recall(
    ledger: Database,
    embedder: str,
    vector: Vector | None,
    fts: str | None,
    semantic: list[tuple[str, float]],
    lexical: list[tuple[str, float]],
    fused: Mapping[str, float],
    returned: list[str],
    excluded: Mapping[str, str],
    max_tokens: int,
    used: int,
    votes: Mapping[str, int],
    fusion: str,
) -> dict[str, Any]:
    """The white-box account of one recall: every candidate either retriever produced, with its
    ranks, scores and feedback votes, returned or excluded and why, in the order the candidates
    ranked. ``embedder`` is the name of the model that embedded the query."""
    head = [round(float(x), 5) for x in vector[:8]] if vector is not None else None
    sem_rank = {i: n for n, (i, _) in enumerate(semantic, 1)}
    lex_rank = {i: n for n, (i, _) in enumerate(lexical, 1)}
    sem, lex = dict(semantic), dict(lexical)
    ids = list(dict.fromkeys([*sem, *lex]))
    shown = set(returned)

    def read(db: sqlite3.Connection) -> dict[str, sqlite3.Row]:
        out: dict[str, sqlite3.Row] = {}
        for i in range(0, len(ids), 500):
            chunk = ids[i : i + 500]
            marks = ",".join("?" * len(chunk))
            sql = f"SELECT id, text, document_id, tags, fact_type FROM store_units WHERE id IN ({marks})"  # noqa: S608
            out.update({r["id"]: r for r in db.execute(sql, chunk)})
        return out

    rows = await ledger.read(read)
    order = sorted(ids, key=lambda i: (-fused.get(i, -1.0), sem_rank.get(i, 10**9), lex_rank.get(i, 10**9)))
    candidates = []
    for memory_id in order:
        r = rows.get(memory_id)
        if memory_id in shown:
            outcome, reason = "returned", None
        elif memory_id in excluded:
            outcome, reason = "excluded", excluded[memory_id]
        elif r is None:
            outcome, reason = "excluded", "deleted since it was ranked"
        else:
            outcome, reason = "excluded", f"cut by the max_tokens budget ({used} of {max_tokens} tokens used)"
        candidates.append(
            {
                "id": memory_id,
                "text": r["text"] if r is not None else None,
                "document_id": r["document_id"] if r is not None else None,
                "tags": loads(r["tags"], []) if r is not None else None,
                "type": r["fact_type"] if r is not None else None,
                "semantic": {"rank": sem_rank[memory_id], "score": sem[memory_id]} if memory_id in sem else None,
                "keyword": {"rank": lex_rank[memory_id], "score": lex[memory_id]} if memory_id in lex else None,
                "fused": fused.get(memory_id),
                "feedback": votes.get(memory_id, 0),
                "outcome": outcome,
                "reason": reason,
            }
        )
    return {
        "embedder": embedder,
        "query_vector_head": head,
        "fts_query": fts,
        "arms": {"semantic": len(semantic), "keyword": len(lexical)},
        "fusion": fusion,
        "max_tokens": max_tokens,
        "tokens_used": used,
        "candidates": candidates,
    }
