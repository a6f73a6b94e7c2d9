"""Entities: the names a retain gives its items (``items[].entities``), listed as Hindsight lists a
bank's entities.

Hindsight resolves the entities its LLM extracts, and the ones a retain names, into the bank's
entity registry. The store extracts nothing: a memory's entities are the ones its retain named
(or a memory ``PATCH`` set), kept with the memory (``store_units.entities``: a JSON object of the
names by their key). Two names are one entity when they are equal once whitespace is collapsed
and case is folded (Hindsight merges "zed  q" and "ZED q"); the first spelling the bank holds is
the canonical name. An entity's id is a UUID derived from the bank and the key, the same on every
read. Its mention count and first and last sightings are counted over the bank's valid memories
that name it, when they are asked for (the memories a tag filter lets through when there is one,
as Hindsight counts under a filter); an entity no valid memory names is not listed (Hindsight
drops it when its last memory is deleted or archived).
"""

from __future__ import annotations

import json
import sqlite3
import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from memwarden.db.database import Database
from memwarden.policies import tagfilter
from memwarden.store.banks import require_bank
from memwarden.store.errors import StoreError
from memwarden.store.shapes import loads

# The namespace of the store's entity ids (uuid5 of the bank and the entity's key).
NAMESPACE = uuid.UUID("6f1c3d0e-5b1a-4c47-9a55-8e2f0d4b7a21")


def key_of(name: str) -> str:
    """The key two spellings of one entity share ('' for a blank name)."""
    return " ".join(name.split()).casefold()


def names(given: Iterable[str]) -> dict[str, str]:
    """The entities of one memory: the first spelling of each, by key (blank names dropped)."""
    out: dict[str, str] = {}
    for name in given:
        key = key_of(name)
        if key and key not in out:
            out[key] = " ".join(name.split())
    return out


def encode(given: Iterable[str]) -> str:
    """A memory's ``entities`` column."""
    return json.dumps(names(given), ensure_ascii=False)


def entity_id(bank: str, key: str) -> str:
    return str(uuid.uuid5(NAMESPACE, f"{bank}\n{key}"))


@dataclass
class Entity:
    id: str
    canonical_name: str
    mention_count: int = 0
    first_seen: str | None = None
    last_seen: str | None = None

    def item(self) -> dict[str, Any]:
        """Hindsight's ``EntityListItem``."""
        return {
            "id": self.id,
            "canonical_name": self.canonical_name,
            "mention_count": self.mention_count,
            "first_seen": self.first_seen,
            "last_seen": self.last_seen,
            "metadata": {},
        }


def _filter(params: Mapping[str, Any]) -> tagfilter.Predicate | None:
    try:
        return tagfilter.build(params.get("tags") or None, params.get("tags_match") or "any", params.get("tag_groups"))
    except tagfilter.TagFilterError as exc:
        raise StoreError(400, f"Invalid tag_groups: {exc}") from None


async def _entities(ledger: Database, bank: str, predicate: tagfilter.Predicate | None) -> list[Entity]:
    """Every entity a valid memory of ``bank`` (that ``predicate`` lets through) names, counted,
    in Hindsight's order: most mentioned first, then the latest seen, then the id."""

    def read(db: sqlite3.Connection) -> list[sqlite3.Row]:
        return db.execute(
            "SELECT entities, tags, state, COALESCE(occurred_start, mentioned_at, created_at) AS seen"
            " FROM store_units WHERE bank_id = ? AND entities != '{}' ORDER BY seq",
            (bank,),
        ).fetchall()

    found: dict[str, Entity] = {}
    for row in await ledger.read(read):
        held: dict[str, str] = loads(row["entities"], {})
        counted = row["state"] == "valid" and (predicate is None or predicate(frozenset(loads(row["tags"], []))))
        for key, name in held.items():
            entity = found.get(key)
            if entity is None:  # the first spelling the bank holds names it, counted or not
                entity = found[key] = Entity(entity_id(bank, key), name)
            if counted:
                entity.mention_count += 1
                seen = row["seen"]
                entity.first_seen = min(entity.first_seen or seen, seen)
                entity.last_seen = max(entity.last_seen or seen, seen)
    listed = [e for e in found.values() if e.mention_count]
    listed.sort(key=lambda e: e.id)
    listed.sort(key=lambda e: e.last_seen or "", reverse=True)
    listed.sort(key=lambda e: e.mention_count, reverse=True)
    return listed


async def list_entities(ledger: Database, bank: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``GET …/entities``: a page of the bank's entities (``limit``, ``offset``, tag filters)."""
    await require_bank(ledger, bank)
    limit, offset = int(params.get("limit", 100)), int(params.get("offset", 0))
    listed = await _entities(ledger, bank, _filter(params))
    return {
        "items": [e.item() for e in listed[offset : offset + limit]],
        "total": len(listed),
        "limit": limit,
        "offset": offset,
    }


async def get_entity(ledger: Database, bank: str, entity: str, params: Mapping[str, Any]) -> dict[str, Any]:
    """``GET …/entities/{entity_id}``: as Hindsight answers it, a ``400`` for an id that is not a
    UUID and a ``404`` for one no valid memory (under the tag filter) names, the bank not looked
    up. The store keeps no entity observations: ``observations`` is empty."""
    try:
        wanted = str(uuid.UUID(entity))
    except ValueError:
        raise StoreError(400, f"Invalid entity_id: '{entity}' is not a valid UUID") from None
    predicate = _filter(params)
    found = next((e for e in await _entities(ledger, bank, predicate) if e.id == wanted), None)
    if found is None:
        raise StoreError(404, f"Entity {entity} not found")
    return {**found.item(), "observations": []}
