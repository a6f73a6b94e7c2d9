"""The admin front's paths in memwarden's OpenAPI document: ``/warden/openapi.json``,
``/warden/health``, ``/warden/metrics``, every ``/warden/v1/…`` route and the MCP pass-through,
with their parameters (the query models of ``fronts/admin/queries.py`` where a route has one),
bodies and answers (4xx included)."""

from __future__ import annotations

from memwarden.fronts.admin.bodies import (
    AcknowledgeBody,
    ApplyBody,
    FeedbackBody,
    KeyBody,
    PlanBody,
    ReasonBody,
    RetentionBody,
)
from memwarden.fronts.admin.queries import (
    AuditQuery,
    AuditStreamQuery,
    HealthQuery,
    LedgerListing,
    OutboxQuery,
    Page,
    RetentionQuery,
    RevokeQuery,
    RollbackQuery,
)
from memwarden.fronts.openapi_paths import (
    BANK,
    CONFIRM,
    OBJECT,
    WBANK,
    Json,
    W,
    body_schema,
    json_answer,
    listing,
    operation,
    param,
    path_id,
)
from memwarden.fronts.query import openapi_parameters

MEMORY_ERRORS = {
    404: "No such memory in the bank",
    409: "Not in a status the operation takes, or it shares its document with other active memories",
    502: "The backend failed midway (undone where it could be, and said exactly)",
}
KEY_PROPS: Json = {"id": {"type": "string"}, "name": {"type": "string"}, "scopes": OBJECT}
KEY: Json = {"type": "object", "properties": KEY_PROPS}


def warden_paths() -> dict[str, Json]:
    """memwarden's own paths (``/warden/…``, ``/mcp``), in OpenAPI's form."""
    key_id, memory_id = path_id("key_id", "The key's id (`mwk_<12 hex>`)"), path_id("memory_id", "The memory")
    snapshot_id, plan_id = path_id("snapshot_id", "The snapshot"), path_id("plan_id", "The plan")
    operation_id = path_id("operation_id", "The outbox entry's operation id")
    no_outbox = {404: "No such entry — or memwarden is self-hosted (no outbox)"}
    memory = (BANK, memory_id)
    return {
        "/warden/openapi.json": {
            "get": operation("warden_openapi", "This document", json_answer(OBJECT, "OpenAPI 3.1"), open_route=True)
        },
        "/warden/health": {
            "get": operation(
                "warden_health",
                "memwarden, its mode, its backend and its outbox (`status`: ok or degraded)",
                json_answer({"$ref": "#/components/schemas/WardenHealth"}, "Always 200 while memwarden serves"),
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
                json_answer({**KEY, "properties": {**KEY_PROPS, "token": {"type": "string"}}}, "The key"),
                ok_status=201,
                body=body_schema(KeyBody),
            ),
        },
        f"{W}/keys/{{key_id}}": {
            "get": operation(
                "warden_show_key", "One key", json_answer(KEY, "The key"), params=(key_id,), errors={404: "No such key"}
            ),
            "delete": operation(
                "warden_revoke_key",
                "Revoke a key, at once",
                json_answer(KEY, "The key, revoked"),
                params=(key_id, *openapi_parameters(RevokeQuery)),
                errors={404: "No such key", 422: "A reason over 500 characters"},
            ),
        },
        f"{W}/audit": {
            "get": operation(
                "warden_list_audit",
                "Audit events in order (`tail`: the latest N)",
                json_answer(
                    {"type": "object", "properties": {"events": {"type": "array"}, "next": {}, "last_seq": {}}},
                    "Events",
                ),
                params=tuple(openapi_parameters(AuditQuery)),
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
                    *openapi_parameters(AuditStreamQuery),
                    param("Last-Event-ID", "header", {"type": "string", "pattern": "^[0-9]{1,18}$"}, "Resume after it"),
                ),
                errors={422: "A bad `since` or `Last-Event-ID`"},
            )
        },
        f"{W}/audit/verify": {
            "get": operation(
                "warden_verify_audit", "Recompute the hash chain", json_answer(OBJECT, "ok, events, problems")
            )
        },
        f"{W}/audit/acknowledge": {
            "post": operation(
                "warden_acknowledge_audit",
                "End the audit chain's alarms, once looked at (audited)",
                json_answer(OBJECT, "acknowledged: how many alarms"),
                body=body_schema(AcknowledgeBody),
                errors={422: "No reason, or another field"},
            )
        },
        f"{WBANK}/review": {
            "get": operation(
                "warden_list_review",
                "The review queue, oldest first, a page at a time",
                listing(OBJECT, "Held items", total={"type": "integer"}),
                params=(BANK, *openapi_parameters(Page)),
                errors={422: "A bad limit or offset"},
            )
        },
        f"{WBANK}/review/{{memory_id}}/approve": {
            "post": operation(
                "warden_approve_review",
                "Deliver a held item",
                json_answer(OBJECT, "Approved"),
                params=memory,
                errors=MEMORY_ERRORS,
            )
        },
        f"{WBANK}/review/{{memory_id}}/reject": {
            "post": operation(
                "warden_reject_review",
                "Drop a held item",
                json_answer(OBJECT, "Rejected"),
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
                json_answer(OBJECT, "It"),
                params=(BANK, snapshot_id),
                errors={404: "No such snapshot"},
            )
        },
        f"{WBANK}/snapshots/{{snapshot_id}}/rollback": {
            "post": operation(
                "warden_rollback_snapshot",
                "Roll the bank's config back to a snapshot (`preview=true`: only say what it would do)",
                json_answer(OBJECT, "The plan, and what was done"),
                params=(BANK, snapshot_id, *openapi_parameters(RollbackQuery)),
                errors={
                    404: "No such snapshot",
                    409: "The snapshot is past its restore window: what it would re-create was erased",
                    502: "The backend failed: the rollback is incomplete (run it again)",
                },
            )
        },
        f"{WBANK}/reembed": {
            "post": operation(
                "warden_reembed",
                "Self-hosted: re-embed a bank with the configured embedder",
                json_answer(OBJECT, "What was re-embedded"),
                params=(BANK,),
                errors={409: "memwarden is not the memory server here", 502: "The embedder failed (resumable)"},
            )
        },
        f"{WBANK}/explain": {
            "post": operation(
                "warden_explain",
                "One recall, white-box: every candidate, its ranks and scores, returned or excluded and why",
                json_answer(OBJECT, "The account"),
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
                params=tuple(openapi_parameters(OutboxQuery)),
                errors={404: "Self-hosted: no outbox", 422: "A bad state, limit or offset"},
            )
        },
        f"{W}/outbox/{{operation_id}}": {
            "get": operation(
                "warden_show_outbox", "One entry", json_answer(OBJECT, "It"), params=(operation_id,), errors=no_outbox
            )
        },
        f"{W}/outbox/{{operation_id}}/retry": {
            "post": operation(
                "warden_retry_outbox",
                "Deliver now (a dead letter or a given-up entry is queued again)",
                json_answer(OBJECT, "The entry"),
                params=(operation_id,),
                errors={**no_outbox, 409: "Already delivered"},
            )
        },
        f"{W}/outbox/{{operation_id}}/give-up": {
            "post": operation(
                "warden_give_up_outbox",
                "Stop trying: its memories become failed",
                json_answer(OBJECT, "The entry"),
                params=(operation_id, {**CONFIRM, "description": "The entry's bank (not needed with admin on it)"}),
                errors={**no_outbox, 409: "Not confirmed, or already settled"},
            )
        },
        f"{W}/retention/run": {
            "post": operation(
                "warden_run_retention",
                "Archive what is past its retention period",
                json_answer(OBJECT, "What went (or would go)"),
                params=tuple(openapi_parameters(RetentionQuery)),
                body=body_schema(RetentionBody),
                errors={422: "A bad `dry_run`, a body that is not JSON or names another bank"},
            )
        },
        f"{WBANK}/plans": {
            "get": operation("warden_list_plans", "A bank's plans", listing(OBJECT, "Plans"), params=(BANK,)),
            "post": operation(
                "warden_create_plan",
                "Prepare operations as a dry run; answers the plan and its confirmation phrase",
                json_answer(OBJECT, "The plan"),
                ok_status=201,
                params=(BANK,),
                body=body_schema(PlanBody),
                errors={422: "A target unknown, duplicated or not in the status its operation needs"},
            ),
        },
        f"{WBANK}/plans/{{plan_id}}": {
            "get": operation(
                "warden_show_plan",
                "One plan",
                json_answer(OBJECT, "It"),
                params=(BANK, plan_id),
                errors={404: "No such plan"},
            )
        },
        f"{WBANK}/plans/{{plan_id}}/apply": {
            "post": operation(
                "warden_apply_plan",
                "Apply a plan with its confirmation phrase",
                json_answer(OBJECT, "Applied"),
                params=(BANK, plan_id),
                body=body_schema(ApplyBody),
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
                json_answer(OBJECT, "The report"),
                params=(BANK,),
            )
        },
        f"{WBANK}/reports/health": {
            "get": operation(
                "warden_report_health",
                "The bank's health: ok, attention or critical",
                json_answer(OBJECT, "The report"),
                params=(BANK, *openapi_parameters(HealthQuery)),
                errors={422: "days out of 1..3650"},
            )
        },
        f"{WBANK}/memories": {
            "get": operation(
                "warden_list_memories",
                "The ledger's memories, filtered",
                listing(
                    OBJECT,
                    "A page, newest first",
                    total={"type": "integer"},
                    next={
                        "type": ["string", "null"],
                        "description": "The next page's cursor (`after`); null: the last",
                    },
                ),
                params=(BANK, *openapi_parameters(LedgerListing)),
                errors={422: "A bad status, limit, offset or cursor (`after`), or a cursor with an offset"},
            )
        },
        f"{WBANK}/memories/{{memory_id}}": {
            "get": operation(
                "warden_show_memory",
                "One memory: the row, the item as forwarded, feedback, audit timeline",
                json_answer(OBJECT, "It"),
                params=memory,
                errors={404: "No such memory"},
            )
        },
        **{
            f"{WBANK}/memories/{{memory_id}}/{verb}": {
                "post": operation(
                    f"warden_{verb}_memory",
                    summary,
                    json_answer(OBJECT, "Done"),
                    params=memory,
                    body=body_schema(ReasonBody),
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
                json_answer(OBJECT, "Stored"),
                params=memory,
                body=body_schema(FeedbackBody),
                errors={404: "No such memory"},
            )
        },
        **{path: mcp_operations(path) for path in ("/mcp", "/mcp/{rest}")},
    }


def mcp_operations(path: str) -> Json:
    """memwarden's MCP server (streamable HTTP, stateless JSON): Hindsight's tools, each call
    governed as its HTTP twin (``fronts/mcp``); any usable key may list the tools, each call needs
    its twin's scope."""
    params = (param("rest", "path", {"type": "string"}, "`{bank}/` for one bank's tools"),) if "{rest}" in path else ()
    suffix = "_bank" if params else ""
    rpc = {"description": "The JSON-RPC answer (a tool's refusal is its result, with isError)", "content": {}}
    return {
        "post": operation(
            f"warden_mcp_post{suffix}",
            "A JSON-RPC message: tools/list, tools/call (each call governed as its HTTP twin)",
            rpc,
            params=params,
            body={"type": ["object", "array"]},
            errors={400: "A body memwarden cannot read (JSON-RPC -32700), or a bank id it refuses"},
        ),
        "get": operation(
            f"warden_mcp_get{suffix}", "A client's probe: {} (no event stream: stateless)", rpc, params=params
        ),
        "delete": operation(
            f"warden_mcp_delete{suffix}", "End an MCP session (stateless: none to end)", rpc, params=params
        ),
    }
