"""Every route × every kind of key, generated from memwarden's own OpenAPI document (not a hand-made
list: a route added tomorrow is in it), in front of the Hindsight stand-in (which records every
request it receives) and self-hosted (issue #33). What must hold, whatever the route:

* **no key** (once one exists): ``401``, except the open routes (health, the OpenAPI document, the
  dashboard's page and files);
* **a key for another bank** (admin on ``team-b``): ``403`` on every route that is not open — the
  routes of ``team-a``, and the routes about every bank or none (they need ``*``); on MCP, a tool
  call's error with the status ``403``;
* **a read key** (read on ``team-a``): whatever it is let through changes nothing — the backend
  receives only reads (``GET``, or a recall/reflect/listing ``POST``), and memwarden's ledger and
  audit gain no row;
* **a write key** (write on ``team-a``): never a delete, a config or profile change, a curation, a
  directive, a transfer or an MCP call at the backend;
* **any key scoped to team-a**: the backend never hears of another bank.

The oracle is these properties and the short lists of open routes and read-only ``POST`` s, not a
copy of the route table's scopes: a route that lets a lower key do more than it should breaks one."""

from __future__ import annotations

import re
import sqlite3
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testing.standin import Standin, running_standin
from tests.conftest import make_settings, running_warden
from tests.loopback.test_local_store import local_settings

BANK, OTHER = "team-a", "team-b"
OPEN = re.compile(r"^/(?:health(?:/ready|/live)?|warden/health|warden/openapi\.json|warden/ui(?:/.*)?)$")
# Under /mem0, a path the front does not serve is its 404/405 in the dialect's words, for anyone.
UNSERVED = "/mem0/id1"
# The POSTs a read key may make reach the backend: they read (recall, reflect, a listing, a preview).
# (Hindsight's documents for each: "nothing is saved", "without … changing anything".)
READ_POSTS = re.compile(
    r"/(?:memories/recall|reflect|memories/dry-run-extract|mental-models/[^/]+/dry-run-refresh"
    r"|consolidation-strategies/preview|prompts/preview)$"
)
# The MCP server: any usable key is let in at the door, and each tool call needs its HTTP twin's
# scope (a refusal is the tool's error): its POST is asked for a tools/call of a write.
MCP = re.compile(r"^/mcp(?:/|$)")
# What a write key must never make the backend do.
ADMIN_ONLY = re.compile(
    r"/(?:config|directives(?:/[^/]+)?|transfer/import|document-transfer|clone|aliases(?:/.*)?|webhooks(?:/.*)?"
    r"|memories/(?!recall$|list$|dry-run-extract$)[^/]+)$"
)


class Rig:
    def __init__(self, url: str, data: Path, backend: Standin | None) -> None:
        self.url, self.data, self.backend = url, data, backend
        root = httpx.post(f"{url}/warden/v1/keys", json={"name": "root", "admin": ["*"]})
        assert root.status_code == 201, root.text
        self.root = root.json()["token"]
        self.keys: dict[str, str | None] = {"none": None}
        for name, scopes in (
            ("admin_other", {"admin": [OTHER]}),
            ("read", {"read": [BANK]}),
            ("write", {"write": [BANK]}),
        ):
            made = httpx.post(f"{url}/warden/v1/keys", json={"name": name, **scopes}, headers=self.auth("root"))
            assert made.status_code == 201, made.text
            self.keys[name] = made.json()["token"]
        self.keys["root"] = self.root
        fact = {"items": [{"content": "The billing service runs on three nodes in eu-west-1."}]}
        for bank in (BANK, OTHER):
            r = httpx.post(f"{url}/v1/default/banks/{bank}/memories", json=fact, headers=self.auth("root"), timeout=60)
            assert r.status_code == 200, r.text

    def auth(self, key: str) -> dict[str, str]:
        token = self.keys.get(key) if key != "root" else self.root
        return {"authorization": f"Bearer {token}"} if token else {}

    def ledger_rows(self) -> tuple[int, int]:
        db = sqlite3.connect(self.data / "memwarden.db")
        try:
            return (
                db.execute("SELECT COUNT(*) FROM memories").fetchone()[0],
                db.execute("SELECT COUNT(*) FROM audit_events WHERE action NOT LIKE 'audit_%'").fetchone()[0],
            )
        finally:
            db.close()


@pytest.fixture(params=["in front of the stand-in", "self-hosted"], scope="module")
def rig(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Rig]:
    tmp = tmp_path_factory.mktemp("matrix")
    if request.param == "self-hosted":
        with running_warden(local_settings(tmp / "data")) as url:
            yield Rig(url, tmp / "data", None)
        return
    with (
        running_standin(tmp / "backend") as backend,
        running_warden(make_settings(backend.url, data_dir=tmp / "data")) as url,
    ):
        yield Rig(url, tmp / "data", backend)


def operations(url: str) -> list[tuple[str, str]]:
    """Every (method, concrete path) of memwarden's OpenAPI document: ``{bank_id}`` is team-a, any
    other parameter an id of its own."""
    document = httpx.get(f"{url}/warden/openapi.json").json()
    out = []
    for template, item in document["paths"].items():
        path = template.replace("{bank_id}", BANK)
        path = re.sub(r"\{key\}", f"banks/{BANK}/exports/op1/transfer.zip", path)
        path = re.sub(r"\{[^}]+\}", "id1", path)
        out += [(m.upper(), path) for m in item if m in ("get", "post", "put", "patch", "delete")]
    return sorted(set(out))


def send(rig: Rig, key: str, method: str, path: str) -> httpx.Response:
    body = {} if method in ("POST", "PUT", "PATCH") else None
    return httpx.request(method, rig.url + path, json=body, headers=rig.auth(key), timeout=60)


def mcp_retain(rig: Rig, key: str, path: str) -> httpx.Response:
    """A tools/call of ``retain`` on team-a, by the one bank's endpoint or the every-bank one."""
    one_bank = path != "/mcp"
    arguments = {"content": "The staging cluster has 3 nodes.", **({} if one_bank else {"bank_id": BANK})}
    call = {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "retain", "arguments": arguments}}
    headers = {**rig.auth(key), "accept": "application/json, text/event-stream", "mcp-protocol-version": "2025-06-18"}
    return httpx.post(
        f"{rig.url}/mcp/{BANK}/" if one_bank else f"{rig.url}/mcp", json=call, headers=headers, timeout=60
    )


def test_the_matrix_covers_every_route_of_the_document(rig: Rig) -> None:
    ops = operations(rig.url)
    assert len(ops) > 150  # Hindsight's routes, memwarden's own, the Mem0 front's, MCP
    assert {p.split("/")[1] for _, p in ops} >= {"v1", "warden", "mem0", "mcp", "health"}


def test_without_a_key_only_the_open_routes_answer(rig: Rig) -> None:
    wrong = []
    for method, path in operations(rig.url):
        r = send(rig, "none", method, path)
        if OPEN.match(path) or (path == UNSERVED and r.status_code in (404, 405)):
            continue
        if r.status_code != 401:
            wrong.append((method, path, r.status_code))
    assert wrong == []


def test_a_key_for_another_bank_reaches_nothing_but_the_open_routes(rig: Rig) -> None:
    seen = len(rig.backend.requests) if rig.backend else 0
    before = rig.ledger_rows()
    wrong = []
    for method, path in operations(rig.url):
        if OPEN.match(path):
            continue
        if MCP.match(path):
            if method == "POST":
                result = mcp_retain(rig, "admin_other", path).json()["result"]
                if not (result["isError"] and '"status": 403' in result["content"][0]["text"]):
                    wrong.append((method, path, result))
            continue  # its GET (a probe: {}) and DELETE (no session) change nothing: asserted below
        r = send(rig, "admin_other", method, path)
        if r.status_code != 403 and not (path == UNSERVED and r.status_code in (404, 405)):
            wrong.append((method, path, r.status_code))
    assert wrong == []
    assert rig.ledger_rows() == before
    if rig.backend is not None:
        assert rig.backend.requests[seen:] == []


def test_what_a_read_key_is_let_through_changes_nothing(rig: Rig) -> None:
    before = rig.ledger_rows()
    seen = len(rig.backend.requests) if rig.backend else 0
    for method, path in operations(rig.url):
        send(rig, "read", method, path)
    assert rig.ledger_rows() == before
    if rig.backend is not None:
        reached = rig.backend.requests[seen:]
        writes = [
            (s.method, s.path)
            for s in reached
            if s.method not in ("GET", "HEAD") and not (s.method == "POST" and READ_POSTS.search(s.path))
        ]
        assert writes == [], writes
        assert {s.path.split("/")[4] for s in reached if s.path.startswith("/v1/default/banks/")} <= {BANK}


def test_a_write_key_never_makes_the_backend_delete_reconfigure_or_curate(rig: Rig) -> None:
    seen = len(rig.backend.requests) if rig.backend else 0
    denied = []
    for method, path in operations(rig.url):
        r = send(rig, "write", method, path)
        if method != "GET" and ADMIN_ONLY.search(path) and r.status_code != 403:
            denied.append((method, path, r.status_code))
    assert denied == [], denied
    if rig.backend is not None:
        reached = rig.backend.requests[seen:]
        assert [s for s in reached if s.method == "DELETE"] == []
        harmful = [(s.method, s.path) for s in reached if s.method != "GET" and ADMIN_ONLY.search(s.path)]
        assert harmful == [], harmful
        assert {s.path.split("/")[4] for s in reached if s.path.startswith("/v1/default/banks/")} <= {BANK}
