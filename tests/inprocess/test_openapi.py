"""``GET /warden/openapi.json``: every route memwarden serves is in it, with its methods, and the
document is OpenAPI 3.1 in its structure (checked by hand: no validator package is installed)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import httpx
import pytest
from starlette.routing import Route

from memwarden.fronts.mcp.server import McpFront
from memwarden.fronts.openapi import document
from memwarden.proxy.app import create_app
from memwarden.proxy.routes import build_routes
from memwarden.settings import load_settings

METHODS = {"get", "put", "post", "delete", "options", "head", "patch", "trace"}
STATUS = re.compile(r"^(?:[1-5][0-9]{2}|[1-5]XX|default)$")


def _doc() -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(document())
    return doc


def _template(path: str) -> str:
    """A starlette path as an OpenAPI template: ``{document_id:path}`` → ``{document_id}``."""
    return re.sub(r"\{(\w+):\w+\}", r"{\1}", path)


def test_every_route_is_in_the_document_with_its_methods() -> None:
    paths = _doc()["paths"]
    routes = [r for r in build_routes(McpFront()) if isinstance(r, Route) and r.name != "pass_through"]
    assert len(routes) > 40
    for route in routes:
        template = _template(route.path)
        assert template in paths, f"{route.path} ({route.name}) is not in the document"
        documented = {m for m in paths[template] if m in METHODS}
        if route.methods is None:  # any method (MCP): at least one documented
            assert documented, template
            continue
        wanted = {m.lower() for m in route.methods} - {"head"}  # starlette adds HEAD to every GET
        assert wanted <= documented, f"{template}: {sorted(wanted - documented)} not documented"


def test_hindsight_paths_are_all_there_and_memwardens_own_are_documented_in_full() -> None:
    doc = _doc()
    hindsight = json.loads((Path(__file__).parents[2] / "backends/hindsight_openapi.json").read_text())
    for path, item in hindsight["paths"].items():
        assert {m for m in item if m in METHODS} <= set(doc["paths"][path]), path
    ours = {p: item for p, item in doc["paths"].items() if p.startswith("/warden/")}
    assert len(ours) >= 30
    for path, item in ours.items():
        for method, op in item.items():
            assert op["responses"], (path, method)
            if path in ("/warden/health", "/warden/openapi.json") or path.startswith("/warden/ui"):
                assert op["security"] == []  # open: the dashboard's files hold no data
                continue
            assert {"401", "403"} <= set(op["responses"]), (path, method)
            if "{" in path:
                assert "400" in op["responses"], (path, method)
            if "requestBody" in op:
                assert "422" in op["responses"], (path, method)
    confirm = [p["name"] for p in doc["paths"]["/v1/default/banks/{bank_id}"]["delete"]["parameters"]]
    assert "X-Warden-Confirm" in confirm
    retain = [p["name"] for p in doc["paths"]["/v1/default/banks/{bank_id}/memories"]["post"]["parameters"]]
    assert {"X-Warden-Dry-Run", "dry_run"} <= set(retain)
    give_up = doc["paths"]["/warden/v1/outbox/{operation_id}/give-up"]["post"]["parameters"]
    assert "X-Warden-Confirm" in [p["name"] for p in give_up]
    bearer = doc["components"]["securitySchemes"]["memwardenBearer"]
    assert bearer["scheme"] == "bearer"
    assert "mwk_" in bearer["bearerFormat"]


def _refs(value: Any) -> list[str]:
    if isinstance(value, dict):
        return [r for k, v in value.items() for r in ([v] if k == "$ref" else _refs(v))]
    if isinstance(value, list):
        return [r for v in value for r in _refs(v)]
    return []


def test_the_document_is_valid_openapi_3_1_in_its_structure() -> None:
    doc = _doc()
    assert doc["openapi"].startswith("3.1.")
    assert doc["info"]["title"]
    assert doc["info"]["version"]
    schemes = doc["components"]["securitySchemes"]
    for scheme in schemes.values():
        assert scheme["type"] in ("http", "apiKey")
    operation_ids: list[str] = []
    for path, item in doc["paths"].items():
        assert path.startswith("/"), path
        templated = set(re.findall(r"\{([^}]+)\}", path))
        for method, op in item.items():
            assert method in METHODS, (path, method)
            operation_ids.append(op["operationId"])
            params = op.get("parameters", [])
            assert len({(p["name"].lower(), p["in"]) for p in params}) == len(params), (path, method)
            for p in params:
                assert p["in"] in ("query", "header", "path", "cookie"), (path, method, p)
                assert "schema" in p or "content" in p, (path, method, p)
            in_path = {p["name"] for p in params if p["in"] == "path"}
            assert in_path == templated, (path, method, in_path)
            assert all(p["required"] is True for p in params if p["in"] == "path"), (path, method)
            assert op["responses"], (path, method)
            for status, response in op["responses"].items():
                assert STATUS.match(status), (path, method, status)
                assert "description" in response or "$ref" in response, (path, method, status)
            body = op.get("requestBody")
            if body is not None:
                assert body["content"], (path, method)
            for requirement in op.get("security", []):
                assert set(requirement) <= set(schemes), (path, method)
    assert len(operation_ids) == len(set(operation_ids)), "operationIds must be unique"
    for ref in _refs(doc):
        assert ref.startswith("#/components/"), ref
        node: Any = doc
        for part in ref[2:].split("/"):
            node = node[part]  # a dangling reference raises here


@pytest.mark.anyio
async def test_the_document_is_served_without_a_key(tmp_path: Path) -> None:
    settings = load_settings(
        environ={},
        overrides={"data_dir": str(tmp_path), "local": {"embedder": "hashing"}, "retention": {"enabled": False}},
    )
    app = create_app(settings)
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            made = await client.post("/warden/v1/keys", json={"name": "ops", "admin": ["*"]})
            assert made.status_code == 201, made.text
            assert (await client.get("/warden/v1/keys")).status_code == 401  # keys are required now
            served = await client.get("/warden/openapi.json")
            assert served.status_code == 200
            assert served.headers["content-type"] == "application/json"
            assert served.json()["paths"]["/warden/openapi.json"]["get"]["security"] == []


def _outside(schema: dict[str, Any]) -> list[str]:
    """Values just outside what a documented query parameter takes (none: the schema bounds nothing)."""
    item = schema.get("items", schema)
    out = []
    if "maximum" in item:
        out.append(str(item["maximum"] + 1))
    if "enum" in item:
        out.append("no-such-value")
    if item.get("type") == "boolean":
        out.append("maybe")
    if "maxLength" in item:
        out.append("x" * (item["maxLength"] + 1))
    if item.get("minLength"):
        out.append("")  # blank: refused, not read as absent
    return out


@pytest.mark.anyio
async def test_each_documented_query_bound_is_the_one_the_handler_enforces(tmp_path: Path) -> None:
    """The document's query parameters come from the models the handlers read with: for every bounded
    parameter of memwarden's own routes and the Mem0 front's, a value just past the documented bound
    is refused, naming the parameter — and a refused delete erases nothing."""
    settings = load_settings(
        environ={},
        overrides={"data_dir": str(tmp_path), "local": {"embedder": "hashing"}, "retention": {"enabled": False}},
    )
    ids = {"bank_id": "b", "key_id": "mwk_000000000000", "snapshot_id": "s"}
    app = create_app(settings)
    checked = 0
    async with app.router.lifespan_context(app):
        transport = httpx.ASGITransport(app=app)
        async with httpx.AsyncClient(transport=transport, base_url="http://127.0.0.1") as client:
            added = await client.post(
                "/mem0/memories", json={"messages": [{"role": "user", "content": "I am a vet."}], "user_id": "u"}
            )
            assert added.status_code == 200, added.text
            for path, item in _doc()["paths"].items():
                if not path.startswith(("/warden/", "/mem0/")) or path.startswith("/warden/v1/outbox"):
                    continue  # (the outbox: self-hosted has none, a 404 at once, documented so)
                for method, op in item.items():
                    for param in op.get("parameters", []):
                        for value in _outside(param["schema"]) if param["in"] == "query" else []:
                            url = re.sub(r"\{(\w+)\}", lambda m: ids[m.group(1)], path)
                            mem0_post = method == "post" and path.startswith("/mem0/")
                            body = {"filters": {"user_id": "u"}} if mem0_post else None
                            r = await client.request(method.upper(), url, params={param["name"]: value}, json=body)
                            why = (method, path, param["name"], value[:10], r.status_code, r.text)
                            assert r.status_code in (400, 422), why
                            detail = r.json().get("detail")
                            if isinstance(detail, list):  # FastAPI's shape: where exactly
                                assert detail[0]["loc"] == ["query", param["name"]], why
                            else:  # the Mem0 platform's words
                                assert param["name"] in r.text, why
                            checked += 1
            listed = await client.get("/mem0/memories", params={"user_id": "u"})
            assert len(listed.json()["results"]) == 1  # the refused deletes erased nothing
    assert checked >= 40
