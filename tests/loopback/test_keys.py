"""API keys and scopes: memwarden on loopback (in front of the Hindsight stand-in, which records the
headers it gets, and self-hosted), the official hindsight-client with its own ``api_key``, the CLI,
and ``memwarden serve`` refusing an exposed address without keys."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from hindsight_client import Hindsight
from hindsight_client_api.exceptions import ApiException

from memwarden.policies.keys import Scopes, matches, scopes_problem, split_token
from testing.loopback import free_port
from testing.standin import Standin, running_standin
from tests.conftest import database_url, ledger_db, make_settings, running_warden
from tests.loopback.test_hostile import counts
from tests.loopback.test_local_store import local_settings
from tests.servers import MAIN, engine_env, spawn_memwarden, wait_memwarden

pytestmark = pytest.mark.usefixtures("engine")

FACT = {"items": [{"content": "The staging cluster has 3 nodes with 16 GB RAM each."}]}


# -- the rules ----------------------------------------------------------------------------------


def test_scopes_grant_each_level_and_the_levels_below_it_on_the_banks_they_name() -> None:
    scopes = Scopes(read=("shared",), write=("agent-*",), admin=("team-a",))
    assert scopes.allows("read", "shared")
    assert not scopes.allows("write", "shared")
    assert scopes.allows("write", "agent-7")
    assert scopes.allows("read", "agent-7")
    assert not scopes.allows("admin", "agent-7")
    assert scopes.allows("admin", "team-a")
    assert scopes.allows("read", "team-a")
    assert not scopes.allows("read", "team-ab")
    assert not scopes.allows("read", "other")
    assert not scopes.allows("read", None)  # every bank needs the pattern '*'
    assert Scopes(read=("*",)).allows("read", None)
    assert not Scopes(read=("*",)).allows("write", None)


def test_patterns_match_whole_bank_ids_and_only_star_is_special() -> None:
    assert matches("agent-*", "agent-")
    assert matches("agent-*", "agent-x/y")
    assert not matches("agent-*", "my-agent-x")
    assert matches("a.b", "a.b")
    assert not matches("a.b", "aXb")
    assert matches("[x]", "[x]")
    assert not matches("[x]", "x")
    assert matches("*-prod", "eu-prod")
    assert not matches("*-prod", "eu-prod\n")


def test_bad_scopes_are_named() -> None:
    assert scopes_problem([], [], []) is not None
    assert "control" in (scopes_problem(["a\nb"], [], []) or "")
    assert scopes_problem(["ok", "team-*"], [], ["*"]) is None


def test_a_token_names_its_key() -> None:
    assert split_token("mwk_0123456789ab_secret-part") == ("mwk_0123456789ab", "secret-part")
    assert split_token("mwk_0123456789ab") is None
    assert split_token("sk-not-ours") is None


# -- over HTTP ----------------------------------------------------------------------------------


class Rig:
    def __init__(self, url: str, backend: Standin | None, data_dir: Path) -> None:
        self.url, self.backend, self.data_dir = url, backend, data_dir

    def make(self, by: str | None, **body: Any) -> dict[str, Any]:
        r = httpx.post(f"{self.url}/warden/v1/keys", json=body, headers=bearer(by))
        assert r.status_code == 201, r.text
        made: dict[str, Any] = r.json()
        return made

    def retain(self, bank: str, token: str | None) -> httpx.Response:
        return httpx.post(f"{self.url}/v1/default/banks/{bank}/memories", json=FACT, headers=bearer(token), timeout=60)


def bearer(token: str | None) -> dict[str, str]:
    return {"authorization": f"Bearer {token}"} if token else {}


@pytest.fixture
def rig(tmp_path: Path) -> Iterator[Rig]:
    with running_standin(tmp_path / "backend") as backend:
        # destructive = "confirm": what an admin key is excused from (the default needs no confirmation).
        guard = {"missions": {"mode": "off"}, "destructive": "confirm"}
        settings = make_settings(
            backend.url, data_dir=tmp_path / "data", api_key="backend-own-secret", config_guard=guard
        )
        with running_warden(settings) as url:
            yield Rig(url, backend, tmp_path / "data")


def test_without_keys_loopback_is_open_and_the_first_key_closes_every_route(rig: Rig) -> None:
    assert rig.retain("ops", None).status_code == 200  # no key exists: open, on loopback
    admin = rig.make(None, name="ops", admin=["*"])
    assert admin["token"].startswith(admin["id"] + "_")
    before, seen = counts(rig.data_dir), len(rig.backend.requests)  # type: ignore[union-attr]

    missing = rig.retain("ops", None)
    assert missing.status_code == 401
    assert missing.json() == {"detail": "Authentication failed: an API key is required (Authorization: Bearer <key>)"}
    assert missing.headers["www-authenticate"] == "Bearer"
    forged = rig.retain("ops", admin["id"] + "_" + "x" * 43)
    assert forged.status_code == 401
    assert forged.json()["detail"] == "Authentication failed: Invalid API key"
    for method, path in (
        ("POST", "/v1/default/banks/ops/memories/recall"),
        ("GET", "/v1/default/banks/ops/memories/list"),
        ("PATCH", "/v1/default/banks/ops/config"),
        ("DELETE", "/v1/default/banks/ops"),
        ("GET", "/v1/default/banks"),
        ("GET", "/warden/v1/audit"),
        ("GET", "/warden/v1/keys"),
        ("POST", "/warden/v1/keys"),
        ("GET", "/warden/metrics"),
        ("POST", "/mcp/ops/"),
    ):
        assert httpx.request(method, rig.url + path, json={}).status_code == 401, path
    assert counts(rig.data_dir) == before  # refused before anything was read or written
    assert len(rig.backend.requests) == seen  # type: ignore[union-attr]
    # The probes stay open.
    assert httpx.get(f"{rig.url}/health").status_code == 200
    assert httpx.get(f"{rig.url}/warden/health").status_code == 200
    # Every way of presenting it works.
    token = admin["token"]
    for headers in ({"authorization": f"Bearer {token}"}, {"authorization": token}, {"x-api-key": token}):
        assert httpx.get(f"{rig.url}/warden/v1/keys", headers=headers).status_code == 200


def test_scopes_decide_who_reads_writes_and_administers_which_bank(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])["token"]
    writer = rig.make(root, name="agent", write=["agent-*"], read=["shared"])
    reader = rig.make(root, name="reader", read=["agent-*"])["token"]
    team = rig.make(root, name="team", admin=["team-*"])["token"]

    assert rig.retain("agent-a", writer["token"]).status_code == 200
    refused = rig.retain("team-x", writer["token"])
    assert refused.status_code == 403
    assert refused.json()["detail"] == f"Key {writer['id']} (agent) may not write bank 'team-x'"
    assert rig.retain("shared", writer["token"]).status_code == 403  # read only there
    recall = {"query": "staging cluster"}
    for token in (writer["token"], reader):
        r = httpx.post(f"{rig.url}/v1/default/banks/agent-a/memories/recall", json=recall, headers=bearer(token))
        assert r.status_code == 200, r.text
    assert rig.retain("agent-a", reader).status_code == 403
    config = {"updates": {"retain_mission": "Keep facts."}}
    r = httpx.patch(f"{rig.url}/v1/default/banks/agent-a/config", json=config, headers=bearer(writer["token"]))
    assert r.status_code == 403  # config changes need admin
    r = httpx.get(f"{rig.url}/v1/default/banks/agent-a/config", headers=bearer(reader))
    assert r.status_code == 200

    assert httpx.get(f"{rig.url}/warden/v1/banks/team-x/review", headers=bearer(team)).status_code == 200
    assert httpx.get(f"{rig.url}/warden/v1/banks/agent-a/review", headers=bearer(team)).status_code == 403
    assert httpx.get(f"{rig.url}/warden/v1/audit", headers=bearer(team)).status_code == 403
    assert httpx.get(f"{rig.url}/warden/v1/audit", params={"bank": "team-x"}, headers=bearer(team)).status_code == 200
    assert httpx.get(f"{rig.url}/warden/v1/keys", headers=bearer(team)).status_code == 403  # keys: every bank
    assert httpx.get(f"{rig.url}/v1/default/banks", headers=bearer(reader)).status_code == 403


def test_the_audit_names_the_key_and_the_backend_never_sees_it(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])
    writer = rig.make(root["token"], name="agent", write=["agent-a"])
    r = rig.retain("agent-a", writer["token"])
    assert r.status_code == 200
    request_id = r.headers["x-request-id"]
    events = httpx.get(f"{rig.url}/warden/v1/audit", params={"bank": "agent-a"}, headers=bearer(root["token"]))
    mine = [e for e in events.json()["events"] if e["request_id"] == request_id]
    assert mine
    assert {e["actor"] for e in mine} == {writer["id"]}
    made = httpx.get(f"{rig.url}/warden/v1/audit", params={"action": "key_created"}, headers=bearer(root["token"]))
    actors = {e["after"]["name"]: e["actor"] for e in made.json()["events"]}
    assert actors == {"root": "anonymous", "agent": root["id"]}
    assert rig.backend is not None
    sent = [s.headers.get("authorization") for s in rig.backend.requests]
    assert sent
    assert set(sent) == {"Bearer backend-own-secret"}
    assert not any("mwk_" in json.dumps(s.headers) for s in rig.backend.requests)


def test_a_revoked_key_stops_at_once_and_no_token_is_kept_anywhere(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])
    writer = rig.make(root["token"], name="agent", write=["*"])
    assert rig.retain("ops", writer["token"]).status_code == 200
    revoked = httpx.delete(
        f"{rig.url}/warden/v1/keys/{writer['id']}", params={"reason": "laptop lost"}, headers=bearer(root["token"])
    )
    assert revoked.status_code == 200
    assert revoked.json()["revoked_at"]
    assert rig.retain("ops", writer["token"]).status_code == 401
    listed = httpx.get(f"{rig.url}/warden/v1/keys", headers=bearer(root["token"])).json()["items"]
    assert [k["id"] for k in listed] == [root["id"], writer["id"]]
    assert all("token" not in k and "secret_hash" not in k for k in listed)
    again = httpx.delete(f"{rig.url}/warden/v1/keys/{writer['id']}", headers=bearer(root["token"]))
    assert again.json()["revoked_at"] == revoked.json()["revoked_at"]
    assert httpx.delete(f"{rig.url}/warden/v1/keys/mwk_000000000000", headers=bearer(root["token"])).status_code == 404
    for token in (root["token"], writer["token"]):
        secret = token.split("_", 2)[2]
        for path in rig.data_dir.rglob("*"):
            if path.is_file():
                assert secret.encode() not in path.read_bytes(), f"a key's secret is in {path.name}"


@pytest.mark.parametrize(
    ("body", "said"),
    [
        # The body's shape, in FastAPI's form (the request model): where, and what.
        ({"admin": ["*"]}, (["body", "name"], "Field required")),
        ({"name": "x", "read": "agent-*"}, (["body", "read"], "Input should be a valid list")),
        ({"name": "x", "read": [1]}, (["body", "read", 0], "Input should be a valid string")),
        ({"name": "x", "admin": ["*"], "expires_in_days": 0}, (["body", "expires_in_days"], "greater than 0")),
        ({"name": "x", "admin": ["*"], "expires_in_days": "7"}, (["body", "expires_in_days"], "a valid number")),
        ({"name": "x", "admin": ["*"], "expires_in_days": True}, (["body", "expires_in_days"], "a valid number")),
        ({"name": "x", "admin": ["*"], "scopes": {}}, (["body", "scopes"], "Extra inputs are not permitted")),
        # What the key ring refuses, said in words.
        ({"name": " ", "admin": ["*"]}, "a key needs a name"),
        ({"name": "x"}, "at least one scope"),
        ({"name": "x", "write": ["a\u202eb"]}, "bidirectional"),
        ({"name": "x", "admin": ["*"], "expires_in_days": 10**9}, "at most"),
        ({"name": "x" * 101, "admin": ["*"]}, "at most 100 characters"),
    ],
)
def test_a_bad_key_request_is_422_and_makes_nothing(
    rig: Rig, body: dict[str, Any], said: str | tuple[list[Any], str]
) -> None:
    r = httpx.post(f"{rig.url}/warden/v1/keys", json=body)
    assert r.status_code == 422, r.text
    detail = r.json()["detail"]
    if isinstance(said, str):
        assert said in detail
    else:
        loc, msg = said
        assert [e["loc"] for e in detail] == [loc], detail
        assert msg in detail[0]["msg"]
    assert httpx.get(f"{rig.url}/warden/v1/keys").json()["total"] == 0
    assert counts(rig.data_dir) == (0, 0)


def test_an_admin_key_deletes_without_the_confirmation_header_and_a_writer_cannot(rig: Rig) -> None:
    assert rig.retain("ops", None).status_code == 200
    assert httpx.delete(f"{rig.url}/v1/default/banks/ops").status_code == 409  # no keys: confirmation needed
    root = rig.make(None, name="root", admin=["*"])
    writer = rig.make(root["token"], name="w", write=["*"])["token"]
    owner = rig.make(root["token"], name="owner", admin=["ops"])["token"]  # admin of one bank only
    assert httpx.delete(f"{rig.url}/v1/default/banks/ops", headers=bearer(writer)).status_code == 403
    assert httpx.delete(f"{rig.url}/v1/default/banks/other", headers=bearer(owner)).status_code == 403
    assert rig.backend is not None
    assert not rig.backend.seen("DELETE", r"^/v1/default/banks/")
    deleted = httpx.delete(f"{rig.url}/v1/default/banks/ops", headers=bearer(owner), timeout=60)
    assert deleted.status_code == 200, deleted.text
    assert rig.backend.seen("DELETE", r"^/v1/default/banks/ops$")


def test_an_expired_key_is_refused(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])
    short = rig.make(root["token"], name="short", write=["*"], expires_in_days=0.00001)  # under a second
    time.sleep(1.2)
    assert rig.retain("ops", short["token"]).status_code == 401


# -- the official client ------------------------------------------------------------------------


@pytest.mark.anyio
async def test_the_hindsight_client_authenticates_with_its_own_api_key(tmp_path: Path) -> None:
    with running_warden(local_settings(tmp_path / "data")) as url:
        async with httpx.AsyncClient(base_url=url) as http:
            root = (await http.post("/warden/v1/keys", json={"name": "root", "admin": ["*"]})).json()["token"]
            made = await http.post(
                "/warden/v1/keys", json={"name": "agent", "write": ["agent-a"]}, headers=bearer(root)
            )
        agent = made.json()["token"]
        client = Hindsight(base_url=url, api_key=agent)
        try:
            assert (await client.aretain("agent-a", "The release train leaves every second Tuesday.")).success
            recalled = await client.arecall("agent-a", "When does the release train leave?")
            assert any("Tuesday" in r.text for r in recalled.results)
            with pytest.raises(ApiException) as refused:
                await client.aretain("agent-b", "The other bank is not mine.")
            assert refused.value.status == 403
            with pytest.raises(ApiException) as no_delete:
                await client.adelete_bank("agent-a")
            assert no_delete.value.status == 403
        finally:
            await client.aclose()
        anonymous = Hindsight(base_url=url)
        try:
            with pytest.raises(ApiException) as unauthenticated:
                await anonymous.arecall("agent-a", "release train")
            assert unauthenticated.value.status == 401
        finally:
            await anonymous.aclose()
        admin = Hindsight(base_url=url, api_key=root)
        try:
            await admin.adelete_bank("agent-a")  # the client cannot send X-Warden-Confirm; the admin key is enough
        finally:
            await admin.aclose()
        async with httpx.AsyncClient(base_url=url) as http:
            gone = await http.get("/v1/default/banks/agent-a/memories/list", headers=bearer(root))
        assert gone.status_code == 404  # the bank is gone


# -- memwarden as a user runs it ----------------------------------------------------------------


def _run(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=120,
        env=(env if env is not None else dict(os.environ)) | engine_env(),
    )


@pytest.mark.sqlite_only("memwarden serve with no backend: the self-hosted store is SQLite's")
def test_serve_refuses_an_exposed_address_without_keys_and_says_how_it_serves(tmp_path: Path) -> None:
    data = tmp_path / "data"
    refused = _run("serve", "--host", "0.0.0.0", "--port", str(free_port()), "--data-dir", str(data), cwd=tmp_path)
    assert refused.returncode == 1
    assert "refusing to serve 0.0.0.0 without API keys" in refused.stderr
    assert "memwarden keys create --data-dir" in refused.stderr

    made = _run("keys", "create", "--data-dir", str(data), "--name", "ops", "--admin", "*", "--json", cwd=tmp_path)
    assert made.returncode == 0, made.stderr
    key = json.loads(made.stdout)
    listed = _run("keys", "list", "--data-dir", str(data), cwd=tmp_path)
    assert key["id"] in listed.stdout
    assert key["token"] not in listed.stdout
    assert "usable" in listed.stdout

    # The port taken just before the server starts: a free port chosen seconds earlier was once
    # taken meanwhile by another test's server, which answered in this one's place.
    port = free_port()
    proc = spawn_memwarden("serve", "--host", "0.0.0.0", "--port", str(port), "--data-dir", str(data), cwd=tmp_path)
    try:
        url = f"http://127.0.0.1:{port}"
        wait_memwarden(url, proc)
        assert httpx.get(f"{url}/warden/v1/keys").status_code == 401
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
        with_key = _run("keys", "list", "--url", url, cwd=tmp_path, env={**env, "MEMWARDEN_API_KEY": key["token"]})
        assert with_key.returncode == 0, with_key.stderr
        assert key["id"] in with_key.stdout
        without = _run("keys", "list", "--url", url, cwd=tmp_path, env=env)
        assert without.returncode == 1
        assert "401: Authentication failed" in without.stderr
        # Revoked in the data directory by another process: the server sees it within a second.
        revoked = _run("keys", "revoke", key["id"], "--data-dir", str(data), cwd=tmp_path)
        assert revoked.returncode == 0, revoked.stderr
        deadline = time.monotonic() + 5
        while httpx.get(f"{url}/warden/v1/keys", headers=bearer(key["token"])).status_code != 401:
            assert time.monotonic() < deadline, "the revoked key still works"
            time.sleep(0.1)
    finally:
        proc.terminate()
        _, err = proc.communicate(timeout=30)
    first = err.splitlines()[0]
    assert first == (
        f"memwarden: self-hosted; data {data.resolve()}; http://0.0.0.0:{port}; API keys required (1 usable)"
    )
    assert key["token"].split("_", 2)[2] not in err  # never logged

    open_proc = spawn_memwarden(
        "serve",
        "--host",
        "0.0.0.0",
        "--port",
        str(port),
        "--data-dir",
        str(tmp_path / "d2"),
        "--allow-unauthenticated",
        cwd=tmp_path,
    )
    try:
        wait_memwarden(f"http://127.0.0.1:{port}", open_proc)
    finally:
        open_proc.terminate()
        _, err = open_proc.communicate(timeout=30)
    assert "no API keys and NOT loopback" in err.splitlines()[0]


def test_keys_made_offline_are_audited_as_the_cli(tmp_path: Path) -> None:
    data = tmp_path / "data"
    made = _run("keys", "create", "--data-dir", str(data), "--name", "ci", "--write", "ci-*", "--json", cwd=tmp_path)
    key = json.loads(made.stdout)
    db = ledger_db(data)
    try:
        (row,) = db.execute("SELECT actor, after FROM audit_events WHERE action = 'key_created'").fetchall()
        stored = db.execute("SELECT secret_hash FROM api_keys").fetchone()[0]
    finally:
        db.close()
    assert row[0] == "cli"
    assert json.loads(row[1])["id"] == key["id"]
    assert key["token"].split("_", 2)[2] not in stored
    assert len(stored) == 64
    bad = _run("keys", "create", "--data-dir", str(data), "--name", "x", cwd=tmp_path)
    assert bad.returncode == 1
    assert "at least one scope" in bad.stderr


# -- found by a review: each reproduced first ----------------------------------------------------


def test_a_write_key_cannot_reach_config_like_routes_or_other_banks_through_the_pass_through(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])["token"]
    writer = rig.make(root, name="w", write=["mine"])["token"]
    seen = len(rig.backend.requests)  # type: ignore[union-attr]
    for method, path, params, body in (
        ("POST", "/v1/default/banks/mine/aliases", None, {"alias": "victim"}),  # would redirect another bank
        ("POST", "/v1/default/banks/mine/clone", {"target_bank_id": "victim"}, None),
        ("POST", "/v1/default/banks/mine/transfer/import", {"target_bank_id": "victim"}, {}),
        ("POST", "/v1/default/banks/mine/webhooks", None, {"url": "https://collector.example/hook"}),
        ("POST", "/v1/default/banks/mine/directives", None, {"text": "always"}),
        ("DELETE", "/v1/default/banks/mine/observations", None, None),
        ("DELETE", "/v1/default/banks/mine/mental-models/m1", None, None),
        ("POST", "/v1/default/banks/mine/import", None, {}),
    ):
        r = httpx.request(method, rig.url + path, params=params, json=body, headers=bearer(writer))
        assert r.status_code == 403, (method, path, r.text)
    assert len(rig.backend.requests) == seen  # type: ignore[union-attr]  # none reached the backend
    # What an agent writing its memory does still passes (the stand-in answers as it can).
    for method, path, body in (
        ("POST", "/v1/default/banks/mine/reflect", {"query": "what do we run?"}),
        ("POST", "/v1/default/banks/mine/mental-models", {"name": "team"}),
    ):
        r = httpx.request(method, rig.url + path, json=body, headers=bearer(writer))
        assert r.status_code not in (401, 403), (path, r.text)
    reader = rig.make(root, name="r", read=["mine"])["token"]
    r = httpx.post(f"{rig.url}/v1/default/banks/mine/reflect", json={"query": "x"}, headers=bearer(reader))
    assert r.status_code not in (401, 403)


def test_the_read_routes_need_read_on_their_bank_and_the_profile_routes_admin(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])["token"]
    reader = rig.make(root, name="r", read=["mine"])
    writer = rig.make(root, name="w", write=["mine"])["token"]
    assert rig.retain("mine", root).status_code == 200
    for path in (
        "/entities",
        "/entities/00000000-0000-4000-8000-000000000000",
        "/operations",
        "/documents/d1/chunks",
        "/documents/d1/history",
        "/profile",
    ):
        r = httpx.get(f"{rig.url}/v1/default/banks/mine{path}", headers=bearer(reader["token"]))
        assert r.status_code not in (401, 403), (path, r.text)
        r = httpx.get(f"{rig.url}/v1/default/banks/theirs{path}", headers=bearer(reader["token"]))
        assert r.json()["detail"] == f"Key {reader['id']} (r) may not read bank 'theirs'", path
    # a chunk's id does not say for sure which bank it is in: reading one needs read on every bank
    r = httpx.get(f"{rig.url}/v1/default/chunks/mine_d1_0", headers=bearer(reader["token"]))
    assert r.json()["detail"] == f"Key {reader['id']} (r) may not read every bank (the pattern '*')"
    assert httpx.get(f"{rig.url}/v1/default/chunks/mine_d1_0", headers=bearer(root)).status_code != 403
    for method, path, body in (
        ("PUT", "/profile", {"disposition": {"skepticism": 1, "literalism": 1, "empathy": 1}}),
        ("POST", "/background", {"content": "We are a support team."}),
    ):
        r = httpx.request(method, f"{rig.url}/v1/default/banks/mine{path}", json=body, headers=bearer(writer))
        assert r.status_code == 403, (path, r.text)  # config changes (retired: 410 for an admin)
        r = httpx.request(method, f"{rig.url}/v1/default/banks/mine{path}", json=body, headers=bearer(root))
        assert r.status_code == 410, (path, r.text)
    for probe in ("/health/ready", "/health/live"):  # open, as /health is
        assert httpx.get(rig.url + probe).status_code == 200, probe


def test_revoking_the_last_key_does_not_open_the_server_again(rig: Rig) -> None:
    root = rig.make(None, name="root", admin=["*"])
    assert httpx.delete(f"{rig.url}/warden/v1/keys/{root['id']}", headers=bearer(root["token"])).status_code == 200
    assert httpx.post(f"{rig.url}/warden/v1/keys", json={"name": "mine", "admin": ["*"]}).status_code == 401
    assert rig.retain("ops", None).status_code == 401


def test_the_clients_own_backend_credential_still_goes_through_beside_a_memwarden_key(tmp_path: Path) -> None:
    with running_standin(tmp_path / "backend") as backend:
        settings = make_settings(backend.url, data_dir=tmp_path / "data", forward_client_authorization=True)
        with running_warden(settings) as url:
            root = httpx.post(f"{url}/warden/v1/keys", json={"name": "root", "admin": ["*"]}).json()["token"]
            r = httpx.get(
                f"{url}/v1/default/banks/ops/memories/list",
                headers={"x-api-key": root, "authorization": "Bearer hs-tenant-key"},
            )
            assert r.status_code not in (401, 403), r.text
    assert backend.requests[-1].headers.get("authorization") == "Bearer hs-tenant-key"
    assert "x-api-key" not in backend.requests[-1].headers


def test_memwardens_own_background_work_is_not_attributed_to_the_key_that_set_it_off(tmp_path: Path) -> None:
    with running_standin(tmp_path / "backend") as backend:
        settings = make_settings(
            backend.url,
            data_dir=tmp_path / "data",
            config_guard={"settle_interval": 0.05, "missions": {"mode": "seed"}},
        )
        with running_warden(settings) as url:
            root = httpx.post(f"{url}/warden/v1/keys", json={"name": "root", "admin": ["*"]}).json()
            writer = httpx.post(
                f"{url}/warden/v1/keys", json={"name": "w", "write": ["ops"]}, headers=bearer(root["token"])
            ).json()
            assert httpx.post(
                f"{url}/v1/default/banks/ops/memories", json=FACT, headers=bearer(writer["token"])
            ).is_success
            deadline = time.monotonic() + 30
            while True:
                events = httpx.get(
                    f"{url}/warden/v1/audit", params={"bank": "ops"}, headers=bearer(root["token"])
                ).json()["events"]
                seeded = [e for e in events if e["action"] in ("config_patch", "config_verify")]
                if len(seeded) >= 2 or time.monotonic() > deadline:
                    break
                time.sleep(0.1)
    assert seeded, "the missions were not seeded"
    assert {e["actor"] for e in seeded} == {"memwarden"}
    assert {e["actor"] for e in events if e["action"] == "add"} == {writer["id"]}


@pytest.mark.anyio
async def test_a_revocation_is_not_undone_by_a_refresh_already_under_way(tmp_path: Path) -> None:
    from memwarden.db.database import Database
    from memwarden.governance.keys import KeyRing

    ledger = Database.open(tmp_path / "data", url=database_url())
    try:
        ring = KeyRing(ledger, exposed=False)
        made = await ring.create(name="w", read=[], write=["*"], admin=[])
        real_read = ledger.read
        calls = 0

        async def slow_first_read(fn: Any) -> Any:
            nonlocal calls
            calls += 1
            result = await real_read(fn)
            if calls == 1:
                await asyncio.sleep(0.3)  # read before the revocation, installed after it
            return result

        ledger.read = slow_first_read  # type: ignore[method-assign]
        refresh = asyncio.create_task(ring._refresh(0.0))
        await asyncio.sleep(0.05)
        await ring.revoke(made.key.id)
        await refresh
        assert await ring.find(made.token) is None
    finally:
        ledger.close()
