"""The small builders memwarden's OpenAPI paths are written with (:func:`operation`, :func:`param`
…), shared by the fronts that document their own routes (``fronts/admin/openapi.py``,
``fronts/mem0/openapi.py``, ``fronts/openapi_dashboard.py``). ``fronts/openapi.py`` puts their
paths beside Hindsight's and serves the whole.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel

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


def json_answer(schema: Json, description: str) -> Json:
    return {"description": description, "content": {"application/json": {"schema": schema}}}


def error_answer(description: str) -> Json:
    return json_answer(ERROR, description)


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
    "The bank's id, confirming a destructive request under config_guard.destructive = confirm (not needed"
    " with a key that may administer the bank, nor under the default, reversible)",
)


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
        responses["400"] = error_answer("A bank id that breaks memwarden's rule, or a path id holding a secret")
    if not open_route:
        responses.update({str(k): error_answer(v) for k, v in AUTH_ERRORS.items()})
    if body is not None:
        responses["413"] = error_answer("The body is over the size limit")
        responses["422"] = error_answer("The body is not JSON, not sent as JSON, or not what the route takes")
    responses.update({str(k): error_answer(v) for k, v in (errors or {}).items()})
    out: Json = {"operationId": op_id, "summary": summary, "tags": ["memwarden"], "responses": responses}
    if params:
        out["parameters"] = list(params)
    if body is not None:
        out["requestBody"] = {"required": False, "content": {"application/json": {"schema": body}}}
    out["security"] = [] if open_route else SECURED
    return out


def listing(item: Json, description: str, **extra: Json) -> Json:
    props = {"items": {"type": "array", "items": item}, **extra}
    return json_answer({"type": "object", "properties": props, "required": ["items"]}, description)


def body_schema(model: type[BaseModel]) -> Json:
    """A request body's schema, from the pydantic model its handler reads it with: its definitions
    inlined (the document's components are Hindsight's and memwarden's own), titles dropped (the
    operation says what it is)."""
    schema = model.model_json_schema()
    defs = schema.pop("$defs", {})

    def inline(node: Any) -> Any:
        if isinstance(node, dict):
            if isinstance(node.get("$ref"), str) and node["$ref"].startswith("#/$defs/"):
                return inline(defs[node["$ref"].rsplit("/", 1)[-1]])
            return {k: inline(v) for k, v in node.items() if k != "title" or not isinstance(v, str)}
        if isinstance(node, list):
            return [inline(v) for v in node]
        return node

    out: Json = inline(schema)
    return out
