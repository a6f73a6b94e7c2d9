"""A secret planted in every field of every write route, generated from memwarden's OpenAPI document
(issue #33): each ``POST``/``PUT``/``PATCH`` with a JSON body gets one request per string field it
takes (nested objects, lists of objects and free-form maps included), that field holding a secret
of its own and every other field a plain value. Afterwards, whatever each route answered:

* no byte of any planted secret is on disk — memwarden's data directory (database, WAL, audit log,
  checkpoints, key file) or the backend's — nor in any log line memwarden wrote;
* none reached the backend in a request (it would store it and log it);
* no refusal quotes one (a read's answer may show the sender its own query: explain), and none is
  a 5xx but a mode's 501: the server keeps serving.

Both modes: self-hosted, and in front of the Hindsight stand-in (a real HTTP server that records
every request it receives). A route added tomorrow is in the sweep: the document is the list.
Routes whose body is a file upload (``multipart/form-data``: transfer import, files/retain) are
judged elsewhere (``tests/loopback/test_transfer.py``, ``tests/loopback/test_other_writes.py``)."""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from testing.standin import Standin, running_standin
from tests.conftest import make_settings, running_warden
from tests.loopback.test_local_store import local_settings

BANK = "sweep"
# A webhook's own credentials (what it signs with, the headers it sends) go to the backend by
# design: it calls the hook with them (fronts/hindsight/writes.py).
BY_DESIGN = re.compile(r"/webhooks(?:/id1)? (?:secret|http_config\.headers\.)")
Json = Any
Where = tuple[str | int, ...]


class Rig:
    def __init__(self, url: str, root: Path, backend: Standin | None) -> None:
        self.url, self.root, self.backend = url, root, backend

    def on_disk(self, needles: list[str]) -> dict[str, list[str]]:
        """Which of ``needles`` each file under the data directories holds."""
        found: dict[str, list[str]] = {}
        for path in self.root.rglob("*"):
            if path.is_file():
                data = path.read_bytes()
                hits = [n for n in needles if n.encode() in data]
                if hits:
                    found[str(path.relative_to(self.root))] = hits
        return found


@pytest.fixture(params=["self-hosted", "in front of the stand-in"], scope="module")
def rig(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("sweep")
    if request.param == "self-hosted":
        with running_warden(local_settings(tmp / "data")) as url:
            yield Rig(url, tmp, None)
        return
    with (
        running_standin(tmp / "backend") as backend,
        running_warden(make_settings(backend.url, data_dir=tmp / "data")) as url,
    ):
        yield Rig(url, tmp, backend)


def secret_for(n: int) -> str:
    """A secret of its own for the n-th request (a GitHub token or an AWS key id, by turns): a leak
    names the route and the field."""
    digest = hashlib.sha256(str(n).encode()).hexdigest()
    if n % 2:
        return "AKIA" + re.sub(r"[^A-Z2-7]", "", digest.upper().replace("0", "Q").replace("1", "Z"))[:16].ljust(16, "X")
    return "ghp_" + digest[:36]


class Schemas:
    def __init__(self, document: Json) -> None:
        self.components = document.get("components", {}).get("schemas", {})

    def resolve(self, schema: Json, depth: int = 0) -> Json:
        """``schema`` with ``$ref`` followed and ``anyOf``/``oneOf`` narrowed to their first non-null
        choice, ``allOf`` merged."""
        if depth > 8 or not isinstance(schema, dict):
            return {}
        if "$ref" in schema:
            return self.resolve(self.components.get(schema["$ref"].rsplit("/", 1)[-1], {}), depth + 1)
        for key in ("anyOf", "oneOf"):
            if key in schema:
                choices = [c for c in schema[key] if self.resolve(c, depth + 1).get("type") != "null"]
                return self.resolve(choices[0], depth + 1) if choices else {}
        if "allOf" in schema:
            merged: Json = {"type": "object", "properties": {}, "required": []}
            for part in schema["allOf"]:
                part = self.resolve(part, depth + 1)
                merged["properties"].update(part.get("properties", {}))
                merged["required"] += part.get("required", [])
            return merged
        return schema

    def plain(self, schema: Json, depth: int = 0) -> Json:
        """A value the schema accepts, secret-free: required fields filled, strings plain words."""
        schema = self.resolve(schema)
        kind = schema.get("type")
        if "enum" in schema:
            return schema["enum"][0]
        if "default" in schema and schema["default"] is not None and kind != "object":
            return schema["default"]
        if kind == "string":
            fmt = schema.get("format")
            return "2026-01-01T00:00:00Z" if fmt in ("date-time", "date") else "plain words"
        if kind in ("integer", "number"):
            return max(1, schema.get("minimum", 1))
        if kind == "boolean":
            return False
        if kind == "array":
            return [self.plain(schema.get("items", {}), depth + 1)] if depth < 4 and schema.get("minItems") else []
        if kind == "object" or "properties" in schema:
            props = schema.get("properties", {})
            return {k: self.plain(props[k], depth + 1) for k in schema.get("required", []) if k in props}
        return "plain words"

    def string_fields(self, schema: Json, where: Where = (), depth: int = 0) -> list[tuple[Where, Json]]:
        """Every place a free string goes: (its path in the body, the schema that holds it)."""
        schema = self.resolve(schema)
        if depth > 4:
            return []
        kind = schema.get("type")
        if kind == "string":
            free = "enum" not in schema and schema.get("format") not in ("date-time", "date", "uri", "binary")
            return [(where, schema)] if free else []
        if kind == "array":
            return self.string_fields(schema.get("items", {}), (*where, 0), depth + 1)
        out: list[tuple[Where, Json]] = []
        for key, sub in schema.get("properties", {}).items():
            out += self.string_fields(sub, (*where, key), depth + 1)
        extra = schema.get("additionalProperties")
        if extra is True or (isinstance(extra, dict) and self.resolve(extra).get("type") in ("string", None)):
            out.append(((*where, "planted_key"), {"type": "string"}))
        return out


def planted_body(schemas: Schemas, schema: Json, where: Where, secret: str) -> Json:
    """The plain body with the string at ``where`` (made as needed) holding ``secret``."""
    body = schemas.plain(schema)
    if not isinstance(body, dict):
        body = {}
    node: Any = body
    current = schemas.resolve(schema)
    for step, nxt in zip(where, (*where[1:], None), strict=True):
        sub = (
            current.get("items", {})
            if isinstance(step, int)
            else current.get("properties", {}).get(step, current.get("additionalProperties") or {})
        )
        sub = schemas.resolve(sub)
        if nxt is None:
            value = f"deploy note: {secret} (for the billing job)"
            if isinstance(node, list):
                node[:] = [value]
            else:
                node[step] = value
            break
        child: Any = [] if isinstance(nxt, int) else {}
        if isinstance(node, list):
            if not node or not isinstance(node[0], type(child)):
                node[:] = [schemas.plain(sub) if isinstance(schemas.plain(sub), type(child)) else child]
            node = node[0]
        else:
            if not isinstance(node.get(step), type(child)):
                made = schemas.plain(sub)
                node[step] = made if isinstance(made, type(child)) else child
            node = node[step]
        current = sub
    return body


def requests(url: str) -> list[tuple[str, str, Json, Where]]:
    """(method, path, body, the planted field) for every string field of every JSON write route."""
    document = httpx.get(f"{url}/warden/openapi.json").json()
    schemas = Schemas(document)
    out: list[tuple[str, str, Json, Where]] = []
    for template, item in sorted(document["paths"].items()):
        path = template.replace("{bank_id}", BANK)
        path = re.sub(r"\{[^}]+\}", "id1", path)
        for method in ("post", "put", "patch"):
            operation = item.get(method)
            content = (operation or {}).get("requestBody", {}).get("content", {})
            if "application/json" not in content:
                continue
            schema = content["application/json"].get("schema", {})
            for where, _ in schemas.string_fields(schema):
                out.append((method.upper(), path, schema, where))
    return out


def test_the_sweep_covers_every_json_write_route(rig: Rig) -> None:
    sent = requests(rig.url)
    routes = {(m, p) for m, p, _, _ in sent}
    assert len(routes) >= 40  # Hindsight's write routes, memwarden's own, the Mem0 front's
    assert len(sent) >= 200
    assert {p.split("/")[1] for _, p in routes} >= {"v1", "warden", "mem0"}


def test_a_secret_in_any_field_of_any_write_route_is_written_nowhere(
    rig: Rig, capfd: pytest.CaptureFixture[str]
) -> None:
    document = httpx.get(f"{rig.url}/warden/openapi.json").json()
    schemas = Schemas(document)
    seen = len(rig.backend.requests) if rig.backend else 0
    planted: dict[str, str] = {}
    echoed, failed = [], []
    with httpx.Client(timeout=60) as client:
        # A memory to curate and a bank to configure: routes that 404 on nothing judge nothing.
        fact = {"items": [{"content": "The billing service runs on three nodes in eu-west-1."}]}
        assert client.post(f"{rig.url}/v1/default/banks/{BANK}/memories", json=fact).status_code == 200
        for n, (method, path, schema, where) in enumerate(requests(rig.url)):
            secret = secret_for(n)
            label = f"{method} {path} {'.'.join(map(str, where))}"
            planted[secret] = label
            r = client.request(method, rig.url + path, json=planted_body(schemas, schema, where, secret))
            if (
                secret in r.text and r.status_code >= 400
            ):  # a refusal never quotes it (explain shows a read's own query)
                echoed.append(label)
            if r.status_code >= 500 and r.status_code != 501:  # 501: a route the mode does not build
                failed.append((label, r.status_code, r.text[:200]))
        assert client.get(f"{rig.url}/warden/health").status_code == 200
    assert failed == []
    assert echoed == [], echoed
    leaks = {file: [planted[s] for s in hits] for file, hits in rig.on_disk(list(planted)).items()}
    assert leaks == {}
    out, err = capfd.readouterr()
    assert [label for s, label in planted.items() if s in out or s in err] == []
    if rig.backend is not None:
        reached = [
            (s.method, s.path, planted[secret])
            for s in rig.backend.requests[seen:]
            for secret in planted
            if (secret in json.dumps(s.body) or secret in s.query) and not BY_DESIGN.search(planted[secret])
        ]
        assert reached == [], "\n".join(sorted({r[2] for r in reached}))


def test_a_json_body_sent_without_a_content_type_is_scanned_too(rig: Rig) -> None:
    """The backend (FastAPI) reads a body with no Content-Type as JSON: so does the scan — an
    upload sent bare still streams through (``tests/loopback/test_passthrough_loopback.py``)."""
    seen = len(rig.backend.requests) if rig.backend else 0
    secret = secret_for(10_001)
    body = json.dumps({"name": f"runbook {secret}", "source_query": "what runs billing?"}).encode()
    r = httpx.post(f"{rig.url}/v1/default/banks/{BANK}/knowledge-base/pages", content=body, timeout=30)
    assert r.status_code == 422, r.text
    assert [d["loc"] for d in r.json()["detail"]] == [["body", "name"]]
    if rig.backend is not None:
        assert rig.backend.requests[seen:] == []
    assert rig.on_disk([secret]) == {}


def test_a_webhooks_own_signing_secret_and_headers_go_through(rig: Rig) -> None:
    """By design (the backend signs and calls the hook with them): not refused as a leak."""
    hook = {
        "url": "https://hooks.example.com/memwarden",
        "secret": "whsec_4f9a1c0e7b2d8a6f3e5c9b1d7a2f8e4c",
        "event_types": ["consolidation.completed"],
        "http_config": {"headers": {"Authorization": "Bearer ghp_0123456789abcdefghijABCDEFGHIJ012345"}},
    }
    r = httpx.post(f"{rig.url}/v1/default/banks/{BANK}/webhooks", json=hook, timeout=30)
    assert r.status_code != 422, r.text
    hook["url"] = "https://hooks.example.com/x?token=ghp_0123456789abcdefghijABCDEFGHIJ012345"
    r = httpx.post(f"{rig.url}/v1/default/banks/{BANK}/webhooks", json=hook, timeout=30)
    assert r.status_code == 422, r.text
    assert [d["loc"] for d in r.json()["detail"]] == [["body", "url"]]
