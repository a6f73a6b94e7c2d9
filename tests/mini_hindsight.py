"""A small stateful stand-in for Hindsight's bank, config and memory routes, for failure injection.

It keeps banks in memory and answers in Hindsight 1.1.0's shapes: retain (one document and one
``world`` fact per item; ``async`` retains leave pending operations for a while), memory and
document lists, stats (cached for ``stats_ttl`` seconds unless ``refresh=true``, as Hindsight
does), config GET / PATCH (wrapped body only: a flat body gets Hindsight's exact 422) / DELETE,
and the destructive DELETEs. Knobs, set by the test on :class:`Faults`:

* ``drop_on_entity_labels`` — a PATCH that sets ``entity_labels`` silently deletes that many
  facts and their documents (the incident config governance exists for); with
  ``drop_on_labels_reset`` a PATCH that resets them (null, as a rollback does) drops them too;
* ``consolidation_seconds`` — after an async retain, operations stay pending and observations
  keep appearing for this long (consolidation in the background);
* ``fail_retains_after`` — retains fail with 500 after this many more succeed (a backend that
  dies in the middle of a rollback);
* ``fail_config_patch`` — every config PATCH fails with 500.
"""

from __future__ import annotations

import hashlib
import time
import uuid
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route


@dataclass
class Faults:
    drop_on_entity_labels: int = 0
    drop_on_labels_reset: bool = False
    consolidation_seconds: float = 0.0
    fail_retains_after: int | None = None
    fail_config_patch: bool = False
    stats_ttl: float = 60.0


@dataclass
class Bank:
    overrides: dict[str, Any] = field(default_factory=dict)
    units: dict[str, dict[str, Any]] = field(default_factory=dict)
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)
    observations: int = 0
    busy_until: float = 0.0
    stats_cache: tuple[float, dict[str, Any]] | None = None
    patches: list[dict[str, Any]] = field(default_factory=list)


DEFAULTS = {"retain_mission": None, "entity_labels": None, "observations_mission": None, "enable_observations": True}


class MiniHindsight:
    def __init__(self, faults: Faults | None = None) -> None:
        self.faults = faults or Faults()
        self.banks: dict[str, Bank] = {}

    def bank(self, bank_id: str) -> Bank:
        return self.banks.setdefault(bank_id, Bank())

    # -- state ----------------------------------------------------------------------------------

    def _consolidate(self, bank: Bank) -> None:
        """Background work that finished by now: observations grow while the bank is busy."""
        if bank.busy_until and time.monotonic() < bank.busy_until:
            bank.observations += 1

    def _stats(self, bank_id: str, bank: Bank) -> dict[str, Any]:
        self._consolidate(bank)
        pending = 1 if time.monotonic() < bank.busy_until else 0
        world = sum(1 for u in bank.units.values() if u["fact_type"] == "world")
        return {
            "bank_id": bank_id,
            "total_nodes": world + bank.observations,
            "total_links": 0,
            "total_documents": len(bank.documents),
            "nodes_by_fact_type": {"world": world, "experience": 0, "observation": bank.observations},
            "links_by_link_type": {},
            "links_by_fact_type": {},
            "links_breakdown": {},
            "pending_operations": pending,
            "failed_operations": 0,
            "pending_consolidation": pending,
            "total_observations": bank.observations,
        }

    def retain(self, bank_id: str, items: list[dict[str, Any]], is_async: bool) -> None:
        bank = self.bank(bank_id)
        for item in items:
            doc = item.get("document_id") or f"doc-{uuid.uuid4().hex[:8]}"
            for uid in [u for u, unit in bank.units.items() if unit["document_id"] == doc]:
                del bank.units[uid]  # re-retaining a document replaces its facts, as Hindsight does
            text = item["content"] if isinstance(item["content"], str) else str(item["content"])
            bank.documents[doc] = {
                "id": doc,
                "bank_id": bank_id,
                "content_hash": hashlib.sha256(text.encode()).hexdigest(),
                "tags": list(item.get("tags") or []),
                "created_at": item.get("timestamp") or "2026-11-29T00:00:00+00:00",
                "updated_at": "2026-11-29T00:00:00+00:00",
                "text_length": len(text),
                "memory_unit_count": 1,
            }
            uid = uuid.uuid4().hex
            bank.units[uid] = {
                "id": uid,
                "text": text,
                "fact_type": "world",
                "document_id": doc,
                "tags": list(item.get("tags") or []),
                "date": item.get("timestamp") or "2026-11-29T00:00:00+00:00",
                "context": item.get("context") or "",
            }
        if is_async and self.faults.consolidation_seconds:
            bank.busy_until = time.monotonic() + self.faults.consolidation_seconds

    def drop(self, bank: Bank, n: int) -> None:
        for uid in list(bank.units)[:n]:
            unit = bank.units.pop(uid)
            bank.documents.pop(unit["document_id"], None)

    # -- app ------------------------------------------------------------------------------------

    def app(self) -> Starlette:
        async def retain(request: Request) -> Response:
            bank_id = request.path_params["bank"]
            body = await request.json()
            if self.faults.fail_retains_after is not None:
                if self.faults.fail_retains_after <= 0:
                    return JSONResponse({"detail": "database exploded"}, status_code=500)
                self.faults.fail_retains_after -= 1
            items = body.get("items") or []
            self.retain(bank_id, items, bool(body.get("async")))
            return JSONResponse(
                {"success": True, "bank_id": bank_id, "items_count": len(items), "async": bool(body.get("async"))}
            )

        async def wipe(request: Request) -> Response:
            bank = self.bank(request.path_params["bank"])
            n = len(bank.units)
            bank.units.clear()
            bank.documents.clear()
            return JSONResponse({"success": True, "message": "deleted", "deleted_count": n})

        def page(request: Request, rows: list[dict[str, Any]]) -> Response:
            limit = int(request.query_params.get("limit", 100))
            offset = int(request.query_params.get("offset", 0))
            return JSONResponse(
                {"items": rows[offset : offset + limit], "total": len(rows), "limit": limit, "offset": offset}
            )

        async def list_memories(request: Request) -> Response:
            return page(request, list(self.bank(request.path_params["bank"]).units.values()))

        async def list_documents(request: Request) -> Response:
            return page(request, list(self.bank(request.path_params["bank"]).documents.values()))

        async def document(request: Request) -> Response:
            bank = self.bank(request.path_params["bank"])
            doc = request.path_params["doc"]
            if doc not in bank.documents:
                return JSONResponse({"detail": f"Document '{doc}' not found"}, status_code=404)
            del bank.documents[doc]
            gone = [u for u, unit in bank.units.items() if unit["document_id"] == doc]
            for u in gone:
                del bank.units[u]
            return JSONResponse(
                {"success": True, "message": "deleted", "document_id": doc, "memory_units_deleted": len(gone)}
            )

        async def stats(request: Request) -> Response:
            bank_id = request.path_params["bank"]
            bank = self.bank(bank_id)
            now = time.monotonic()
            fresh = request.query_params.get("refresh") == "true"
            if fresh or bank.stats_cache is None or now - bank.stats_cache[0] > self.faults.stats_ttl:
                bank.stats_cache = (now, self._stats(bank_id, bank))
            return JSONResponse(bank.stats_cache[1])

        def config_body(bank_id: str, bank: Bank) -> dict[str, Any]:
            return {"bank_id": bank_id, "config": {**DEFAULTS, **bank.overrides}, "overrides": dict(bank.overrides)}

        async def config(request: Request) -> Response:
            bank_id = request.path_params["bank"]
            bank = self.bank(bank_id)
            if request.method == "GET":
                return JSONResponse(config_body(bank_id, bank))
            if request.method == "DELETE":
                bank.overrides.clear()
                return JSONResponse(config_body(bank_id, bank))
            body = await request.json()
            if self.faults.fail_config_patch:
                bank.patches.append({"failed": True})
                return JSONResponse({"detail": "config store unavailable"}, status_code=500)
            if not isinstance(body, dict) or not isinstance(body.get("updates"), dict):
                detail = [{"type": "missing", "loc": ["body", "updates"], "msg": "Field required", "input": body}]
                return JSONResponse({"detail": detail}, status_code=422)
            updates = body["updates"]
            labels = updates.get("entity_labels")
            if labels is not None and not (isinstance(labels, list) and all(isinstance(g, dict) for g in labels)):
                return JSONResponse({"detail": "Invalid entity_labels format: expected a list"}, status_code=400)
            bank.patches.append(updates)
            for key, value in updates.items():
                if value is None:
                    bank.overrides.pop(key, None)
                else:
                    bank.overrides[key] = value
            touched = "entity_labels" in updates and (labels is not None or self.faults.drop_on_labels_reset)
            if touched and self.faults.drop_on_entity_labels:
                self.drop(bank, self.faults.drop_on_entity_labels)
            return JSONResponse(config_body(bank_id, bank))

        async def delete_bank(request: Request) -> Response:
            self.banks.pop(request.path_params["bank"], None)
            return JSONResponse({"success": True, "message": "deleted", "deleted_count": None})

        base = "/v1/default/banks/{bank}"
        return Starlette(
            routes=[
                Route(f"{base}/memories", retain, methods=["POST"]),
                Route(f"{base}/memories", wipe, methods=["DELETE"]),
                Route(f"{base}/memories/list", list_memories, methods=["GET"]),
                Route(f"{base}/documents", list_documents, methods=["GET"]),
                Route(f"{base}/documents/{{doc:path}}", document, methods=["DELETE"]),
                Route(f"{base}/stats", stats, methods=["GET"]),
                Route(f"{base}/config", config, methods=["GET", "PATCH", "DELETE"]),
                Route(base, delete_bank, methods=["DELETE"]),
            ]
        )
