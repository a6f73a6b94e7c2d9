"""``GET /warden/openapi.json``: the OpenAPI 3.1 document of every route memwarden serves.

Hindsight 1.1.0's own document (``fronts/hindsight/openapi.json``, the real server's, unchanged
on disk) gives the Hindsight paths — governed or passed through, memwarden serves them all —
and this module adds:

* memwarden's own paths: ``/warden/openapi.json``, ``/warden/health``, ``/warden/metrics`` and
  every ``/warden/v1/…`` route, with their parameters, bodies and answers, 4xx included;
* ``/mcp`` (the backend's MCP server, reached through memwarden);
* on the Hindsight operations, what memwarden adds: the API key (``Authorization: Bearer mwk_…``
  or ``X-API-Key``; 401/403), a bank id that breaks memwarden's rule (400), the backend's
  failure (502), and on the governed routes their headers (``X-Warden-Confirm`` on the
  destructive ``DELETE``\\ s, ``X-Warden-Dry-Run`` and ``X-Warden-Verbose`` on a retain) and
  refusals (409, 413).

Built once, on the first request, and served as bytes.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources
from typing import Any

from starlette.types import Receive, Scope, Send

from memwarden import __version__
from memwarden.fronts.asgi import dumps
from memwarden.governance.state import AppState

Json = dict[str, Any]
W = "/warden/v1"
WBANK = f"{W}/banks/{{bank_id}}"
HBANK = "/v1/default/banks/{bank_id}"
ERROR = {"$ref": "#/components/schemas/WardenError"}
OBJECT: Json = {"type": "object"}
# Every key-checked route may answer these (fronts/auth.py), before its body is read.
AUTH_ERRORS = {
    401: "No usable API key while keys are required (`WWW-Authenticate: Bearer`)",
    403: "The key's scopes do not reach this bank (or every bank, `*`), or a foreign `Origin`/`Host`",
}
SECURED: list[Json] = [{"memwardenBearer": []}, {"memwardenApiKey": []}, {}]  # {}: a server without keys


def _json(schema: Json, description: str) -> Json:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def _error(description: str) -> Json:
    return _json(ERROR, description)


def param(name: str, where: str, schema: Json, description: str, *, required: bool = False) -> Json:
    return {
        "name": name,
        "in": where,
        "required": required or where == "path",
        "schema": schema,
        "description": description,
    }


def path_id(name: str, what: str) -> Json:
    return param(name, "path", {"type": "string", "minLength": 1}, f"{what} (an id holding a secret is refused: 400)")


BANK = param(
    "bank_id",
    "path",
    {"type": "string", "minLength": 1, "maxLength": 192},
    "The bank (memwarden's rule: 400 otherwise)",
)
CONFIRM = param(
    "X-Warden-Confirm",
    "header",
    {"type": "string"},
    "The bank's id, confirming a destructive request (not needed with a key that may administer the bank)",
)
LIMIT = param("limit", "query", {"type": "integer", "minimum": 1, "maximum": 1000, "default": 100}, "Page size")
OFFSET = param("offset", "query", {"type": "integer", "minimum": 0, "default": 0}, "Rows to skip")


def operation(
    op_id: str,
    summary: str,
    ok: Json,
    *,
    ok_status: int = 200,
    params: tuple[Json, ...] = (),
    body: Json | None = None,
    errors: dict[int, str] | None = None,
    open_route: bool = False,
) -> Json:
    """One of memwarden's operations: ``ok`` is its success answer, ``errors`` its 4xx/5xx."""
    responses: Json = {str(ok_status): ok}
    if params and any(p["in"] == "path" for p in params):
        responses["400"] = _error("A bank id that breaks memwarden's rule, or a path id holding a secret")
    if not open_route:
        responses.update({str(k): _error(v) for k, v in AUTH_ERRORS.items()})
    if body is not None:
        responses["413"] = _error("The body is over the size limit")
        responses["422"] = _error("The body is not JSON, not sent as JSON, or not what the route takes")
    responses.update({str(k): _error(v) for k, v in (errors or {}).items()})
    out: Json = {"operationId": op_id, "summary": summary, "tags": ["memwarden"], "responses": responses}
    if params:
        out["parameters"] = list(params)
    if body is not None:
        out["requestBody"] = {"required": False, "content": {"application/json": {"schema": body}}}
    out["security"] = [] if open_route else SECURED
    return out


def listing(item: Json, description: str, **extra: Json) -> Json:
    props = {"items": {"type": "array", "items": item}, **extra}
    return _json({"type": "object", "properties": props, "required": ["items"]}, description)


REASON = {"type": "object", "properties": {"reason": {"type": "string", "maxLength": 2000}}}
MEMORY_ERRORS = {
    404: "No such memory in the bank",
    409: "Not in a status the operation takes, or it shares its document with other active memories",
    502: "The backend failed midway (undone where it could be, and said exactly)",
}
KEY_PROPS: Json = {"id": {"type": "string"}, "name": {"type": "string"}, "scopes": OBJECT}
KEY: Json = {"type": "object", "properties": KEY_PROPS}
PLAN_OP = {
    "type": "object",
    "properties": {"op": {"enum": ["archive", "restore", "approve", "reject"]}, "memory_id": {"type": "string"}},
    "required": ["op", "memory_id"],
}


def warden_paths() -> dict[str, Json]:
    """memwarden's own paths (``/warden/…``, ``/mcp``), in OpenAPI's form."""
    key_id, memory_id = path_id("key_id", "The key's id (`mwk_<12 hex>`)"), path_id("memory_id", "The memory")
    snapshot_id, plan_id = path_id("snapshot_id", "The snapshot"), path_id("plan_id", "The plan")
    operation_id = path_id("operation_id", "The outbox entry's operation id")
    no_outbox = {404: "No such entry — or memwarden is self-hosted (no outbox)"}
    since = param("since", "query", {"type": "string"}, "A sequence number (events after it) or an ISO timestamp")
    audit_filters = (
        param("bank", "query", {"type": "string"}, "Only this bank's events (admin on it is enough)"),
        param("action", "query", {"type": "string"}, "Comma-separated actions"),
        since,
    )
    memory = (BANK, memory_id)
    return {
        "/warden/openapi.json": {
            "get": operation("warden_openapi", "This document", _json(OBJECT, "OpenAPI 3.1"), open_route=True)
        },
        "/warden/health": {
            "get": operation(
                "warden_health",
                "memwarden, its mode, its backend and its outbox (`status`: ok or degraded)",
                _json({"$ref": "#/components/schemas/WardenHealth"}, "Always 200 while memwarden serves"),
                open_route=True,
            )
        },
        "/warden/metrics": {
            "get": operation(
                "warden_metrics",
                "Prometheus metrics (admin on every bank)",
                {"description": "Prometheus' text format", "content": {"text/plain": {"schema": {"type": "string"}}}},
            )
        },
        f"{W}/keys": {
            "get": operation("warden_list_keys", "Every key, revoked ones too; never a secret", listing(KEY, "Keys")),
            "post": operation(
                "warden_create_key",
                "Make a key; its token is shown this once",
                _json({**KEY, "properties": {**KEY_PROPS, "token": {"type": "string"}}}, "The key"),
                ok_status=201,
                body={"$ref": "#/components/schemas/WardenKeyRequest"},
            ),
        },
        f"{W}/keys/{{key_id}}": {
            "get": operation(
                "warden_show_key", "One key", _json(KEY, "The key"), params=(key_id,), errors={404: "No such key"}
            ),
            "delete": operation(
                "warden_revoke_key",
                "Revoke a key, at once",
                _json(KEY, "The key, revoked"),
                params=(key_id, param("reason", "query", {"type": "string", "maxLength": 500}, "Audited")),
                errors={404: "No such key", 422: "A reason over 500 characters"},
            ),
        },
        f"{W}/audit": {
            "get": operation(
                "warden_list_audit",
                "Audit events in order (`tail`: the latest N)",
                _json(
                    {"type": "object", "properties": {"events": {"type": "array"}, "next": {}, "last_seq": {}}},
                    "Events",
                ),
                params=(
                    *audit_filters,
                    LIMIT,
                    param("tail", "query", {"type": "integer", "minimum": 1, "maximum": 1000}, "The latest N events"),
                ),
                errors={422: "A bad `since`, `limit` or `tail`"},
            )
        },
        f"{W}/audit/stream": {
            "get": operation(
                "warden_stream_audit",
                "Server-sent events: the backlog, then live (resumable)",
                {
                    "description": "An endless event stream",
                    "content": {"text/event-stream": {"schema": {"type": "string"}}},
                },
                params=(
                    *audit_filters,
                    param("last_event_id", "query", {"type": "string", "pattern": "^[0-9]{1,18}$"}, "Resume after it"),
                    param("Last-Event-ID", "header", {"type": "string", "pattern": "^[0-9]{1,18}$"}, "Resume after it"),
                ),
                errors={422: "A bad `since` or `Last-Event-ID`"},
            )
        },
        f"{W}/audit/verify": {
            "get": operation("warden_verify_audit", "Recompute the hash chain", _json(OBJECT, "ok, events, problems"))
        },
        f"{WBANK}/review": {
            "get": operation("warden_list_review", "The review queue", listing(OBJECT, "Held items"), params=(BANK,))
        },
        f"{WBANK}/review/{{memory_id}}/approve": {
            "post": operation(
                "warden_approve_review",
                "Deliver a held item",
                _json(OBJECT, "Approved"),
                params=memory,
                errors=MEMORY_ERRORS,
            )
        },
        f"{WBANK}/review/{{memory_id}}/reject": {
            "post": operation(
                "warden_reject_review",
                "Drop a held item",
                _json(OBJECT, "Rejected"),
                params=memory,
                errors=MEMORY_ERRORS,
            )
        },
        f"{WBANK}/snapshots": {
            "get": operation(
                "warden_list_snapshots", "A bank's config snapshots", listing(OBJECT, "Snapshots"), params=(BANK,)
            )
        },
        f"{WBANK}/snapshots/{{snapshot_id}}": {
            "get": operation(
                "warden_show_snapshot",
                "One snapshot",
                _json(OBJECT, "It"),
                params=(BANK, snapshot_id),
                errors={404: "No such snapshot"},
            )
        },
        f"{WBANK}/snapshots/{{snapshot_id}}/rollback": {
            "post": operation(
                "warden_rollback_snapshot",
                "Roll the bank's config back to a snapshot (`preview=true`: only say what it would do)",
                _json(OBJECT, "The plan, and what was done"),
                params=(BANK, snapshot_id, param("preview", "query", {"type": "boolean"}, "Change nothing")),
                errors={404: "No such snapshot", 502: "The backend failed: the rollback is incomplete (run it again)"},
            )
        },
        f"{WBANK}/reembed": {
            "post": operation(
                "warden_reembed",
                "Self-hosted: re-embed a bank with the configured embedder",
                _json(OBJECT, "What was re-embedded"),
                params=(BANK,),
                errors={409: "memwarden is not the memory server here", 502: "The embedder failed (resumable)"},
            )
        },
        f"{WBANK}/explain": {
            "post": operation(
                "warden_explain",
                "One recall, white-box: every candidate, its ranks and scores, returned or excluded and why",
                _json(OBJECT, "The account"),
                params=(BANK,),
                body={"$ref": "#/components/schemas/RecallRequest"},
                errors={400: "A tag filter too wide or too deep", 502: "The backend failed"},
            )
        },
        f"{W}/outbox": {
            "get": operation(
                "warden_list_outbox",
                "The delivery outbox's entries, newest first, with its summary",
                listing(OBJECT, "Entries", summary=OBJECT, total={"type": "integer"}),
                params=(
                    param(
                        "state", "query", {"enum": ["sending", "queued", "delivered", "dead", "given_up"]}, "Only these"
                    ),
                    param("bank", "query", {"type": "string"}, "Only this bank's"),
                    LIMIT,
                    OFFSET,
                ),
                errors={404: "Self-hosted: no outbox", 422: "A bad state, limit or offset"},
            )
        },
        f"{W}/outbox/{{operation_id}}": {
            "get": operation(
                "warden_show_outbox", "One entry", _json(OBJECT, "It"), params=(operation_id,), errors=no_outbox
            )
        },
        f"{W}/outbox/{{operation_id}}/retry": {
            "post": operation(
                "warden_retry_outbox",
                "Deliver now (a dead letter or a given-up entry is queued again)",
                _json(OBJECT, "The entry"),
                params=(operation_id,),
                errors={**no_outbox, 409: "Already delivered"},
            )
        },
        f"{W}/outbox/{{operation_id}}/give-up": {
            "post": operation(
                "warden_give_up_outbox",
                "Stop trying: its memories become failed",
                _json(OBJECT, "The entry"),
                params=(operation_id, {**CONFIRM, "description": "The entry's bank (not needed with admin on it)"}),
                errors={**no_outbox, 409: "Not confirmed, or already settled"},
            )
        },
        f"{W}/retention/run": {
            "post": operation(
                "warden_run_retention",
                "Archive what is past its retention period",
                _json(OBJECT, "What went (or would go)"),
                params=(
                    param("dry_run", "query", {"type": "boolean"}, "Only list what would go"),
                    param("bank", "query", {"type": "string"}, "Only this bank"),
                ),
                errors={422: "A bad `dry_run`"},
            )
        },
        f"{WBANK}/plans": {
            "get": operation("warden_list_plans", "A bank's plans", listing(OBJECT, "Plans"), params=(BANK,)),
            "post": operation(
                "warden_create_plan",
                "Prepare operations as a dry run; answers the plan and its confirmation phrase",
                _json(OBJECT, "The plan"),
                ok_status=201,
                params=(BANK,),
                body={"$ref": "#/components/schemas/WardenPlanRequest"},
                errors={422: "A target unknown, duplicated or not in the status its operation needs"},
            ),
        },
        f"{WBANK}/plans/{{plan_id}}": {
            "get": operation(
                "warden_show_plan",
                "One plan",
                _json(OBJECT, "It"),
                params=(BANK, plan_id),
                errors={404: "No such plan"},
            )
        },
        f"{WBANK}/plans/{{plan_id}}/apply": {
            "post": operation(
                "warden_apply_plan",
                "Apply a plan with its confirmation phrase",
                _json(OBJECT, "Applied"),
                params=(BANK, plan_id),
                body={"type": "object", "properties": {"phrase": {"type": "string"}}},
                errors={
                    403: "A wrong phrase",
                    404: "No such plan",
                    409: "Applied, being applied, or stale (its targets changed)",
                    410: "Expired",
                    502: "Partially applied: what was applied, what failed and why",
                },
            )
        },
        f"{WBANK}/reports/cleanup": {
            "get": operation(
                "warden_report_cleanup",
                "What a person would likely archive",
                _json(OBJECT, "The report"),
                params=(BANK,),
            )
        },
        f"{WBANK}/reports/health": {
            "get": operation(
                "warden_report_health",
                "The bank's health: ok, attention or critical",
                _json(OBJECT, "The report"),
                params=(
                    BANK,
                    param("days", "query", {"type": "integer", "minimum": 1, "maximum": 3650, "default": 7}, "Window"),
                ),
                errors={422: "days out of 1..3650"},
            )
        },
        f"{WBANK}/memories": {
            "get": operation(
                "warden_list_memories",
                "The ledger's memories, filtered",
                listing(OBJECT, "A page", total={"type": "integer"}),
                params=(
                    BANK,
                    param("status", "query", {"type": "string"}, "Comma-separated statuses"),
                    param("topic", "query", {"type": "string"}, "Topic label"),
                    param("stage", "query", {"type": "string"}, "Stage label"),
                    param("tag", "query", {"type": "array", "items": {"type": "string"}}, "A tag, either spelling"),
                    param("topic_key", "query", {"type": "string"}, "Topic key"),
                    param("q", "query", {"type": "string"}, "Text the content holds"),
                    LIMIT,
                    OFFSET,
                ),
                errors={422: "A bad status, limit or offset"},
            )
        },
        f"{WBANK}/memories/{{memory_id}}": {
            "get": operation(
                "warden_show_memory",
                "One memory: the row, the item as forwarded, feedback, audit timeline",
                _json(OBJECT, "It"),
                params=memory,
                errors={404: "No such memory"},
            )
        },
        **{
            f"{WBANK}/memories/{{memory_id}}/{verb}": {
                "post": operation(
                    f"warden_{verb}_memory",
                    summary,
                    _json(OBJECT, "Done"),
                    params=memory,
                    body=REASON,
                    errors=MEMORY_ERRORS,
                )
            }
            for verb, summary in (
                ("archive", "Take it out of the backend, keep it in the ledger"),
                ("restore", "Put it back"),
            )
        },
        f"{WBANK}/memories/{{memory_id}}/feedback": {
            "post": operation(
                "warden_memory_feedback",
                "A vote on a memory (self-hosted: nudges ranking)",
                _json(OBJECT, "Stored"),
                params=memory,
                body={
                    "type": "object",
                    "properties": {"score": {"enum": [1, -1]}, "reason": {"type": "string", "maxLength": 2000}},
                    "required": ["score"],
                },
                errors={404: "No such memory"},
            )
        },
        **{path: mcp_operations(path) for path in ("/mcp", "/mcp/{rest}")},
    }


def mcp_operations(path: str) -> Json:
    """The backend's MCP server (streamable HTTP), reached through memwarden (admin)."""
    params = (param("rest", "path", {"type": "string"}, "`{bank}/` for one bank's tools"),) if "{rest}" in path else ()
    suffix = "_bank" if params else ""
    rpc = {"description": "The backend's JSON-RPC answer (or memwarden's error for a refused retain)", "content": {}}
    return {
        "post": operation(
            f"warden_mcp_post{suffix}",
            "A JSON-RPC message; a retain tool call is refused in enforce mode",
            rpc,
            params=params,
            body={"type": ["object", "array"]},
            errors={400: "A body memwarden cannot read (JSON-RPC -32700)", 502: "The backend is unreachable"},
        ),
        "get": operation(f"warden_mcp_get{suffix}", "The server's event stream", rpc, params=params),
        "delete": operation(f"warden_mcp_delete{suffix}", "End an MCP session", rpc, params=params),
    }


SCHEMAS: dict[str, Json] = {
    "WardenError": {
        "description": "`detail`: a message, FastAPI's list of problems, or an RFC 9457 problem's fields",
        "type": "object",
        "properties": {"detail": {}},
    },
    "WardenHealth": {
        "type": "object",
        "properties": {
            "status": {"enum": ["ok", "degraded"]},
            "service": {"const": "memwarden"},
            "version": {"type": "string"},
            "mode": {"enum": ["self-hosted", "proxy"]},
            "backend": OBJECT,
            "outbox": {"type": ["object", "null"]},
        },
    },
    "WardenKeyRequest": {
        "type": "object",
        "properties": {
            "name": {"type": "string", "description": "What the key is for"},
            **{level: {"type": "array", "items": {"type": "string"}} for level in ("read", "write", "admin")},
            "expires_in_days": {"type": "number", "exclusiveMinimum": 0},
        },
        "required": ["name"],
        "additionalProperties": False,
    },
    "WardenPlanRequest": {
        "anyOf": [
            {
                "type": "object",
                "properties": {"operations": {"type": "array", "items": PLAN_OP}, "reason": {"type": "string"}},
                "required": ["operations"],
            },
            {
                "type": "object",
                "properties": {"from": {"const": "cleanup"}, "reason": {"type": "string"}},
                "required": ["from"],
            },
        ]
    },
}

# The Hindsight routes memwarden governs: what each adds to Hindsight's operation.
DRY_RUN = param("X-Warden-Dry-Run", "header", {"enum": ["1", "true", "yes"]}, "Judge only: nothing written or sent")
GOVERNED: dict[tuple[str, str], tuple[tuple[Json, ...], dict[int, str]]] = {
    (f"{HBANK}/memories", "post"): (
        (
            DRY_RUN,
            param("dry_run", "query", {"type": "boolean"}, "As `X-Warden-Dry-Run`"),
            param("X-Warden-Verbose", "header", {"enum": ["1", "true", "yes"]}, "Add the `warden` object"),
            param("warden", "query", {"const": "verbose"}, "As `X-Warden-Verbose`"),
        ),
        {
            413: "Too many items, or an item too long",
            409: "The bank is being re-embedded (self-hosted)",
        },
    ),
    (f"{HBANK}/memories/recall", "post"): ((), {400: "A tag filter too wide or too deep"}),
    (f"{HBANK}/config", "patch"): ((), {400: "A field or value memwarden refuses", 409: "Rolled back"}),
    (HBANK, "put"): ((), {400: "A string over the size limit"}),
    (HBANK, "patch"): ((), {400: "A string over the size limit"}),
    (f"{HBANK}/files/retain", "post"): ((), {403: "Ungoverned file retains are off (enforce mode)"}),
    **{
        (path, "delete"): ((CONFIRM,), {409: "Not confirmed with X-Warden-Confirm (or blocked)"})
        for path in (HBANK, f"{HBANK}/config", f"{HBANK}/memories", f"{HBANK}/documents/{{document_id}}")
    },
}


def _govern(paths: dict[str, Json]) -> None:
    """memwarden's keys, bank rule and backend failure on every Hindsight operation; the governed
    ones' headers and refusals."""
    for path, item in paths.items():
        for method, op in item.items():
            if method not in ("get", "put", "post", "patch", "delete"):
                continue
            responses = op.setdefault("responses", {})
            open_route = path == "/health"
            op["security"] = [] if open_route else SECURED
            if not open_route:
                responses.update({str(k): _error(v) for k, v in AUTH_ERRORS.items() if str(k) not in responses})
            if path.startswith(HBANK):
                responses.setdefault(
                    "400", _error("A bank id that breaks memwarden's rule, or a path id holding a secret")
                )
            responses.setdefault("502", _error("The backend is unreachable or failed"))
            extra_params, extra_errors = GOVERNED.get((path, method), ((), {}))
            op["parameters"] = [*op.get("parameters", []), *extra_params]
            for status, description in extra_errors.items():
                responses.setdefault(str(status), _error(description))
    paths["/health"]["get"]["responses"]["503"] = _json(OBJECT, "The backend is unreachable")


@functools.cache
def document() -> bytes:
    """The whole document, as served."""
    text = resources.files("memwarden.fronts.hindsight").joinpath("openapi.json").read_text(encoding="utf-8")
    doc: Json = json.loads(text)
    paths: dict[str, Json] = copy.deepcopy(doc["paths"])
    _govern(paths)
    ours = warden_paths()
    clash = set(ours) & set(paths) or set(SCHEMAS) & set(doc["components"]["schemas"])
    if clash:
        raise RuntimeError(f"memwarden's OpenAPI paths or schemas clash with Hindsight's: {sorted(clash)}")
    doc["info"] = {
        **doc["info"],
        "title": "memwarden",
        "version": __version__,
        "description": "memwarden: Hindsight 1.1.0's HTTP API (governed or passed through) and memwarden's own under "
        f"/warden. Hindsight's paths are from its {doc['info']['version']} document.",
    }
    doc["paths"] = {**paths, **ours}
    doc["components"] = {
        **doc["components"],
        "schemas": {**doc["components"]["schemas"], **SCHEMAS},
        "securitySchemes": {
            "memwardenBearer": {
                "type": "http",
                "scheme": "bearer",
                "bearerFormat": "mwk_<12 hex>_<secret>",
                "description": "A memwarden API key; required once any key exists (else loopback only, open)",
            },
            "memwardenApiKey": {"type": "apiKey", "in": "header", "name": "X-API-Key"},
        },
    }
    doc["tags"] = [{"name": "memwarden", "description": "memwarden's own API"}]
    return dumps(doc)


async def openapi_document(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    body = document()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
