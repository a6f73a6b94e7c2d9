"""Banks: created on first write, their profile, listing and deletion, and each bank's config
(Hindsight's defaults under the bank's overrides)."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Mapping
from functools import lru_cache
from importlib import resources
from types import MappingProxyType
from typing import Any

from memwarden.backends.types import BankConfig
from memwarden.db.common import now, on_postgres
from memwarden.db.database import Database
from memwarden.policies.bank_config import unknown_fields_message
from memwarden.store import attachments, rules
from memwarden.store.errors import StoreError, bank_not_found, obey
from memwarden.store.shapes import loads

DEFAULT_DISPOSITION = {"skepticism": 3, "literalism": 3, "empathy": 3}


@lru_cache(maxsize=1)
def hindsight_defaults() -> Mapping[str, Any]:
    """Hindsight 1.1.0's resolved per-bank config with no overrides (captured from the server);
    read once, read-only."""
    text = resources.files("memwarden.store").joinpath("hindsight_defaults.json").read_text(encoding="utf-8")
    return MappingProxyType(json.loads(text))


def ensure_bank(db: sqlite3.Connection, bank: str, ts: str) -> None:
    """Create ``bank`` on first use (any write creates it, as in Hindsight), if its id may be a
    new bank's; inside the caller's transaction, so a refused id writes nothing."""
    if db.execute("SELECT 1 FROM store_banks WHERE bank_id = ?", (bank,)).fetchone() is not None:
        return
    obey(rules.check_new_bank_id, bank)
    db.execute("INSERT INTO store_banks (bank_id, created_at, updated_at) VALUES (?, ?, ?)", (bank, ts, ts))


async def bank_row(ledger: Database, bank: str) -> sqlite3.Row | None:
    row: sqlite3.Row | None = await ledger.read(
        lambda db: db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
    )
    return row


async def require_bank(ledger: Database, bank: str) -> sqlite3.Row:
    row = await bank_row(ledger, bank)
    if row is None:
        raise bank_not_found(bank)
    return row


def profile(row: sqlite3.Row) -> dict[str, Any]:
    return {
        "bank_id": row["bank_id"],
        "name": row["name"] or row["bank_id"],
        "disposition": loads(row["disposition"], DEFAULT_DISPOSITION),
        "mission": row["mission"],
        "background": row["background"],
    }


async def put_bank(ledger: Database, bank: str, fields: Mapping[str, Any]) -> dict[str, Any]:
    """Create or update a bank (``PUT``/``PATCH`` a bank): profile fields, and the flat config subset."""
    known = hindsight_defaults()
    config_keys = {k: v for k, v in fields.items() if k in known and v is not None}
    mission = fields.get("mission") or fields.get("reflect_mission")

    def write(db: sqlite3.Connection) -> sqlite3.Row:
        ts = now()
        ensure_bank(db, bank, ts)
        row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        disposition = loads(row["disposition"], DEFAULT_DISPOSITION)
        if isinstance(fields.get("disposition"), dict):
            disposition.update({k: v for k, v in fields["disposition"].items() if k in DEFAULT_DISPOSITION})
        for trait in DEFAULT_DISPOSITION:
            if fields.get(f"disposition_{trait}") is not None:
                disposition[trait] = fields[f"disposition_{trait}"]
        overrides = loads(row["overrides"], {})
        obey(rules.check_config_updates, config_keys, {**known, **overrides})  # against the bank's config
        overrides.update(config_keys)
        db.execute(
            "UPDATE store_banks SET name = COALESCE(?, name), mission = COALESCE(?, mission),"
            " background = COALESCE(?, background), disposition = ?, overrides = ?, updated_at = ? WHERE bank_id = ?",
            (
                fields.get("name"),
                mission,
                fields.get("background"),
                json.dumps(disposition),
                json.dumps(overrides, ensure_ascii=False),
                ts,
                bank,
            ),
        )
        result: sqlite3.Row = db.execute("SELECT * FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        return result

    return profile(await ledger.write(write))


async def list_banks(ledger: Database, q: str | None, limit: int, offset: int) -> dict[str, Any]:
    def read(db: sqlite3.Connection) -> tuple[list[sqlite3.Row], int, dict[str, int]]:
        where, params = "1 = 1", []
        if q:
            # (lower(): LIKE is case-sensitive on PostgreSQL)
            where, params = "lower(bank_id) LIKE lower(?) OR lower(name) LIKE lower(?)", [f"%{q}%", f"%{q}%"]
        total = db.execute(f"SELECT COUNT(*) FROM store_banks WHERE {where}", params).fetchone()[0]  # noqa: S608
        rows = db.execute(
            f"SELECT * FROM store_banks WHERE {where} ORDER BY created_at DESC LIMIT ? OFFSET ?",  # noqa: S608
            (*params, limit, offset),
        ).fetchall()
        counts = {
            r[0]: r[1]
            for r in db.execute(
                "SELECT bank_id, COUNT(*) FROM store_units WHERE state = 'valid' GROUP BY bank_id"
            ).fetchall()
        }
        return rows, total, counts

    rows, total, counts = await ledger.read(read)
    banks = [
        {
            "bank_id": r["bank_id"],
            "name": r["name"] or r["bank_id"],
            "disposition": loads(r["disposition"], DEFAULT_DISPOSITION),
            "mission": r["mission"],
            "created_at": r["created_at"],
            "updated_at": r["updated_at"],
            "fact_count": counts.get(r["bank_id"], 0),
            "last_document_at": r["last_document_at"],
            "last_write_at": r["last_write_at"],
            "display_alias": None,
            "matched_aliases": [],
        }
        for r in rows
    ]
    return {"banks": banks, "total": total, "limit": limit, "offset": offset}


async def delete_bank(ledger: Database, bank: str) -> dict[str, Any]:
    """Delete the bank and everything in it. ``deleted_count`` is Hindsight's: memories, entities and
    documents deleted; a bank that does not exist is deleted as a no-op that reports 0, as there."""

    def write(db: sqlite3.Connection) -> int:
        entities = db.execute(
            "SELECT COUNT(DISTINCT e) FROM store_units u, jsonb_object_keys(u.entities::jsonb) e WHERE u.bank_id = ?"
            if on_postgres(db)
            else "SELECT COUNT(DISTINCT e.key) FROM store_units u, json_each(u.entities) e WHERE u.bank_id = ?",
            (bank,),
        ).fetchone()[0]
        units = db.execute("DELETE FROM store_units WHERE bank_id = ?", (bank,)).rowcount
        documents = db.execute("DELETE FROM store_documents WHERE bank_id = ?", (bank,)).rowcount
        db.execute("DELETE FROM store_chunks WHERE bank_id = ?", (bank,))
        attachments.delete(db, bank)
        db.execute("DELETE FROM store_operations WHERE bank_id = ?", (bank,))
        db.execute("DELETE FROM store_banks WHERE bank_id = ?", (bank,))
        return int(units) + int(entities) + int(documents)

    deleted = await ledger.write(write)
    return {
        "success": True,
        "message": f"Bank '{bank}' and all associated data deleted successfully",
        "deleted_count": deleted,
    }


def bank_fields(row: Mapping[str, Any]) -> dict[str, Any]:
    """A transfer archive's bank row (``banks.json``) as the store keeps a bank; checked: a config
    Hindsight's API would refuse is refused here too."""

    def decoded(value: Any, default: Any) -> Any:
        if value is None:
            return default
        return json.loads(value) if isinstance(value, str) else value

    try:
        disposition = decoded(row.get("disposition"), dict(DEFAULT_DISPOSITION))
        overrides = decoded(row.get("config"), {})
    except ValueError as exc:
        raise StoreError(400, f"banks.json: the bank's row is not valid JSON where JSON is expected ({exc})") from None
    if not isinstance(disposition, dict) or any(
        not isinstance(disposition.get(k), int) or not 1 <= disposition[k] <= 5 for k in DEFAULT_DISPOSITION
    ):
        raise StoreError(400, "banks.json: the bank's disposition must give skepticism, literalism, empathy (1-5)")
    if not isinstance(overrides, dict):
        raise StoreError(400, "banks.json: the bank's config is not an object")
    unknown = sorted(k for k in overrides if k not in hindsight_defaults())
    if unknown:
        raise StoreError(400, f"banks.json: the bank's config has fields memwarden does not know: {unknown}")
    obey(rules.check_config_updates, overrides, {**hindsight_defaults(), **overrides})
    return {
        "name": row.get("name") if isinstance(row.get("name"), str) else None,
        "mission": row.get("mission") if isinstance(row.get("mission"), str) else "",
        "background": row.get("background") if isinstance(row.get("background"), str) else "",
        "disposition": {k: disposition[k] for k in DEFAULT_DISPOSITION},
        "overrides": overrides,
    }


# -- config --------------------------------------------------------------------------------------


async def get_config(ledger: Database, bank: str) -> BankConfig:
    """Every value in force for ``bank`` (Hindsight's defaults under its overrides) and its overrides."""
    row = await require_bank(ledger, bank)
    overrides = loads(row["overrides"], {})
    return BankConfig({**hindsight_defaults(), **overrides}, overrides)


async def patch_config(ledger: Database, bank: str, updates: Mapping[str, Any]) -> BankConfig:
    known = hindsight_defaults()
    unknown = sorted(k for k in updates if k not in known)
    if unknown:
        raise StoreError(400, unknown_fields_message(unknown))
    labels = updates.get("entity_labels")
    if labels is not None and not (isinstance(labels, list) and all(isinstance(g, dict) for g in labels)):
        raise StoreError(400, "Invalid entity_labels format: expected a list of label groups")

    def write(db: sqlite3.Connection) -> None:
        ts = now()
        ensure_bank(db, bank, ts)
        row = db.execute("SELECT overrides FROM store_banks WHERE bank_id = ?", (bank,)).fetchone()
        overrides = loads(row["overrides"], {})
        obey(rules.check_config_updates, updates, {**known, **overrides})  # against the bank's config
        for key, value in updates.items():
            if value is None:
                overrides.pop(key, None)
            else:
                overrides[key] = value
        db.execute(
            "UPDATE store_banks SET overrides = ?, updated_at = ? WHERE bank_id = ?",
            (json.dumps(overrides, ensure_ascii=False), ts, bank),
        )

    await ledger.write(write)
    return await get_config(ledger, bank)


async def reset_config(ledger: Database, bank: str) -> BankConfig:
    await require_bank(ledger, bank)
    await ledger.write(
        lambda db: db.execute(
            "UPDATE store_banks SET overrides = '{}', updated_at = ? WHERE bank_id = ?", (now(), bank)
        )
    )
    return await get_config(ledger, bank)
