"""``GET /warden/openapi.json``: the OpenAPI 3.1 document of every route memwarden serves.

Hindsight 1.1.0's own document (``backends/hindsight_openapi.json``, the real server's, unchanged
on disk) gives the Hindsight paths — governed or passed through, memwarden serves them all —
and this module adds:

* memwarden's own paths (``fronts/openapi_paths.py``): ``/warden/openapi.json``,
  ``/warden/health``, ``/warden/metrics`` and every ``/warden/v1/…`` route;
* ``/mcp`` (the backend's MCP server, reached through memwarden);
* on the Hindsight operations, what memwarden adds: the API key (``Authorization: Bearer mwk_…``
  or ``X-API-Key``; 401/403), a bank id that breaks memwarden's rule (400), the backend's
  failure (502), and on the governed routes their headers (``X-Warden-Confirm`` on the
  destructive ``DELETE``\\ s, ``X-Warden-Dry-Run`` and ``X-Warden-Verbose`` on a retain) and
  refusals (409, 413); self-hosted, the answers of reflect, directives and mental models without an
  LLM (501) or with one that timed out (504).

Built once, on the first request, and served as bytes.
"""

from __future__ import annotations

import copy
import functools
import json
from importlib import resources

from starlette.types import Receive, Scope, Send

from memwarden import __version__
from memwarden.fronts.admin.openapi import warden_paths
from memwarden.fronts.openapi_paths import (
    AUTH_ERRORS,
    CONFIRM,
    HBANK,
    OBJECT,
    SECURED,
    Json,
    error_answer,
    json_answer,
    param,
)
from memwarden.governance.state import AppState
from memwarden.wire.asgi import dumps

SCHEMAS: dict[str, Json] = {
    "WardenError": {
        "description": "`detail`: a message, FastAPI's list of problems, or an RFC 9457 problem's fields",
        "type": "object",
        "properties": {"detail": {}},
    },
    "WardenHealth": {
        "type": "object",
        "properties": {
            "status": {"enum": ["ok", "degraded", "critical"]},
            "service": {"const": "memwarden"},
            "version": {"type": "string"},
            "mode": {"enum": ["self-hosted", "proxy"]},
            "instance": {
                "type": "object",
                "description": "The instance that answered: its id among those sharing the database, its process,"
                " the engine of its state (sqlite | postgresql)",
                "properties": {
                    "id": {"type": "string"},
                    "pid": {"type": "integer"},
                    "database": {"enum": ["sqlite", "postgresql"]},
                },
            },
            "backend": OBJECT,
            "outbox": {"type": ["object", "null"]},
        },
    },
}

# The Hindsight routes memwarden governs: what each adds to Hindsight's operation.
DRY_RUN = param("X-Warden-Dry-Run", "header", {"enum": ["1", "true", "yes"]}, "Judge only: nothing written or sent")
# What the self-hosted store refuses in an archive, at once and with nothing written (store/archive.py).
ARCHIVE_REFUSALS = {
    400: "An archive memwarden refuses: not a complete .zip (truncated), another format version, an entry edited,"
    " missing or added (checksums), a field out of shape, or a secret in it",
    409: "The bank holds vectors of another embedder (self-hosted)",
}
# Self-hosted, the store answers reflect, directives and mental models with its [llm].
LLM_ERRORS = {
    501: "Self-hosted without [llm]: configure an LLM to serve this route",
    504: "Self-hosted: the LLM did not answer within llm.timeout (nothing written); its failure is a 502",
}
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
    **{(f"{HBANK}/{path}", "post"): ((), ARCHIVE_REFUSALS) for path in ("transfer/import", "document-transfer")},
    (f"{HBANK}/reflect", "post"): (
        (),
        {400: "A tag filter too wide or too deep", 404: "The bank does not exist (self-hosted)", **LLM_ERRORS},
    ),
    (f"{HBANK}/mental-models", "post"): ((), {409: "A mental model of that id exists", **LLM_ERRORS}),
    (f"{HBANK}/mental-models/{{mental_model_id}}/refresh", "post"): ((), LLM_ERRORS),
    **{
        (path, method): ((), {501: LLM_ERRORS[501]})
        for path, methods in (
            (f"{HBANK}/directives", ("get", "post")),
            (f"{HBANK}/directives/{{directive_id}}", ("get", "patch", "delete")),
            (f"{HBANK}/mental-models", ("get",)),
            (f"{HBANK}/mental-models/{{mental_model_id}}", ("get", "patch", "delete")),
            (f"{HBANK}/mental-models/{{mental_model_id}}/history", ("get",)),
            (f"{HBANK}/mental-models/{{mental_model_id}}/clear", ("post",)),
        )
        for method in methods
    },
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
            open_route = path in ("/health", "/health/ready", "/health/live")
            op["security"] = [] if open_route else SECURED
            if not open_route:
                responses.update({str(k): error_answer(v) for k, v in AUTH_ERRORS.items() if str(k) not in responses})
            if path.startswith(HBANK):
                responses.setdefault(
                    "400", error_answer("A bank id that breaks memwarden's rule, or a path id holding a secret")
                )
            responses.setdefault("502", error_answer("The backend is unreachable or failed"))
            extra_params, extra_errors = GOVERNED.get((path, method), ((), {}))
            op["parameters"] = [*op.get("parameters", []), *extra_params]
            for status, description in extra_errors.items():
                responses.setdefault(str(status), error_answer(description))
    paths["/health"]["get"]["responses"]["503"] = json_answer(OBJECT, "The backend is unreachable")


@functools.cache
def document() -> bytes:
    """The whole document, as served."""
    text = resources.files("memwarden.backends").joinpath("hindsight_openapi.json").read_text(encoding="utf-8")
    doc: Json = json.loads(text)
    paths: dict[str, Json] = copy.deepcopy(doc["paths"])
    _govern(paths)
    from memwarden.fronts.mem0.openapi import mem0_paths
    from memwarden.fronts.openapi_dashboard import dashboard_paths

    ours = {**warden_paths(), **dashboard_paths(), **mem0_paths()}
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
    doc["tags"] = [
        {"name": "memwarden", "description": "memwarden's own API"},
        {"name": "mem0", "description": "Mem0's platform and server APIs, governed (/mem0)"},
    ]
    return dumps(doc)


async def openapi_document(state: AppState, scope: Scope, receive: Receive, send: Send) -> None:
    body = document()
    headers = [(b"content-type", b"application/json"), (b"content-length", str(len(body)).encode())]
    await send({"type": "http.response.start", "status": 200, "headers": headers})
    await send({"type": "http.response.body", "body": body})
