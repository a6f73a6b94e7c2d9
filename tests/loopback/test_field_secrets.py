"""Secrets in every field: the rules (``policies/field_secrets.py``), then memwarden on loopback —
self-hosted and in front of the Hindsight stand-in — given a secret in each field a client can
send, and the whole data folder and the log searched for every one afterwards."""

from __future__ import annotations

import base64
import contextlib
import hashlib
import json
import secrets
import sqlite3
import string
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from memwarden.policies.field_secrets import field_secrets, locations, redact_config, retain_secrets
from memwarden.policies.normalize import content_hash
from testing.loopback import free_port
from testing.standin import running_standin
from tests.servers import spawn_memwarden, wait_memwarden


def aws_key() -> str:
    return "AKIA" + "".join(secrets.choice(string.ascii_uppercase + "234567") for _ in range(16))


# -- the rules ----------------------------------------------------------------------------------


def test_every_field_but_the_memory_text_is_scanned_and_named() -> None:
    key = aws_key()
    payload = {
        "items": [
            {"content": f"the key is {key}", "context": "from the standup"},  # the text: the pipeline's
            {
                "content": "ok",
                "context": "login pass is hunter2x9",
                "metadata": {"source": "chat", "api_key": "k3y-for-the-bot-2024", "note": key},
                "tags": ["user:alice", f"key:{key}"],
                "document_id": "doc-" + key,
                "entities": [{"text": "Alice", "type": "PERSON"}, {"text": key}],
            },
        ],
        "document_tags": ["project:x", key],
    }
    found = retain_secrets(payload)
    assert locations(found) == (
        "items[1].context, items[1].metadata.api_key, items[1].metadata.note, items[1].tags[1],"
        " items[1].document_id, items[1].entities[1].text, document_tags[1]"
    )
    detail = found[0].detail()
    assert detail["loc"] == ["body", "items", 1, "context"]
    assert detail["input"] == "[REDACTED]"


def test_ids_may_be_random_and_credential_names_need_a_real_value() -> None:
    random_id = "aZ3kQ9pL2mX8vB7nC4wE6rT1yU5iO0sDfGh"
    assert field_secrets({"document_id": random_id, "metadata": {"session_id": random_id}}) == []
    assert [f.kind for f in field_secrets({"metadata": {"note": random_id}})] == ["high_entropy"]
    for placeholder in ("", "***", "<your-key>", "${API_KEY}", "changeme", "n/a"):
        assert field_secrets({"metadata": {"password": placeholder}}) == []
    assert field_secrets({"metadata": {"max_tokens": "4096", "token_count": "12"}}) == []
    assert [f.kind for f in field_secrets({"metadata": {"db_password": "correct-horse-9"}})] == ["credential_field"]


def test_ordinary_agent_metadata_passes() -> None:
    """What agents and their tools put in metadata (found by a review: each was refused before)."""
    ordinary = {
        "pwd": "/home/alice/project",
        "next_token": "page2",
        "page_token": "CAoQAA",
        "is_secret": "false",
        "cookie": "accepted",
        "token": "128",
        "max_token": "4096",
        "credentials": "provided by ops",
        "thread": "thread_abc123XYZ789defGHI456jkl",
        "git_branch": "feature/JIRA-1234-fixLogin2FA",
        "file": "/Users/alice/src/app/tokenizer/BPETokenizer2024v3Final.py",
        "transcript_path": "/Users/alice/.claude/projects/-Users-alice-Projects-MyApp2024/8f2a9c1e-1111.jsonl",
        "s3": "s3://acme-prod-bucket/exports/2024/05/ReportQ2v3Final.csv",
        "openai": "chatcmpl-9XyzAbc123Def456Ghi789Jkl",
        "call": "call_Ab12Cd34Ef56Gh78Ij90Kl",
        "thread_ts": "1712345678.123456",
        "session_id": "aZ3kQ9pL2mX8vB7nC4wE6rT1yU5iO0sDfGh",
    }
    assert field_secrets({"metadata": ordinary, "document_id": "conversation-2024-05-01", "tags": ["user:alice"]}) == []


def test_config_is_redacted_in_place_and_the_keys_named() -> None:
    key = aws_key()
    redacted, keys = redact_config(
        {"retain_mission": f"Keep facts. Our key is {key}.", "disposition": {"skepticism": 3}, "name": "ops"}
    )
    assert keys == ["retain_mission"]
    assert redacted["retain_mission"] == "Keep facts. Our key is [REDACTED:aws_access_key]."
    assert redacted["disposition"] == {"skepticism": 3}


# -- over HTTP, everything searched afterwards ----------------------------------------------------


class Planted:
    """Secrets, one per field, each findable in bytes afterwards."""

    def __init__(self) -> None:
        self.values: dict[str, str] = {}

    def __call__(self, field: str) -> str:
        self.values[field] = aws_key()
        return self.values[field]


class Served:
    """memwarden as a user runs it (its own process, its log on stderr as JSON lines)."""

    def __init__(self, url: str, data: Path, proc: subprocess.Popen[str]) -> None:
        self.url, self.data, self.proc = url, data, proc

    def log(self) -> str:
        """Stop it; everything it logged."""
        self.proc.terminate()
        _, err = self.proc.communicate(timeout=60)
        return err


ENV = {
    "MEMWARDEN_LOCAL__EMBEDDER": "hashing",
    "MEMWARDEN_LABELS__LEARNED": "off",
    "MEMWARDEN_CONFIG_GUARD__SETTLE_INTERVAL": "0.05",
    "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
    "MEMWARDEN_RETENTION__ENABLED": "false",
    "MEMWARDEN_SERVER__LOG_FORMAT": "json",
}


@contextlib.contextmanager
def serving(tmp_path: Path, data: Path, *upstream: str) -> Iterator[Served]:
    port = free_port()
    args = ["serve", "--port", str(port), "--data-dir", str(data), *(("--upstream", upstream[0]) if upstream else ())]
    proc = spawn_memwarden(*args, cwd=tmp_path, env=ENV)
    served = Served(f"http://127.0.0.1:{port}", data, proc)
    try:
        wait_memwarden(served.url, proc)
        yield served
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate(timeout=30)


@pytest.fixture(params=["self-hosted", "in front of the stand-in"])
def server(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Served]:
    data = tmp_path / "data"
    if request.param == "self-hosted":
        with serving(tmp_path, data) as served:
            yield served
        return
    with running_standin(tmp_path / "backend") as backend, serving(tmp_path, data, backend.url) as served:
        yield served


def every_byte(folder: Path) -> bytes:
    return b"".join(p.read_bytes() for p in sorted(folder.rglob("*")) if p.is_file())


def test_no_planted_secret_is_stored_logged_or_audited_in_clear(server: Served) -> None:
    url, data = server.url, server.data
    plant = Planted()
    bank = f"{url}/v1/default/banks/ops"
    with httpx.Client(timeout=60) as http:
        fine = http.post(f"{bank}/memories", json={"items": [{"content": "The staging cluster has 3 nodes."}]})
        assert fine.status_code == 200, fine.text
        refused_fields = {
            "context": {"items": [{"content": "A fact about the cluster.", "context": plant("context")}]},
            "metadata": {"items": [{"content": "A fact about the cluster.", "metadata": {"k": plant("metadata")}}]},
            "metadata key": {
                "items": [{"content": "A fact about the cluster.", "metadata": {plant("metadata key"): "v"}}]
            },
            "tags": {"items": [{"content": "A fact about the cluster.", "tags": [f"key:{plant('tags')}"]}]},
            "document_id": {"items": [{"content": "A fact about the cluster.", "document_id": plant("document_id")}]},
            "entities": {
                "items": [{"content": "A fact about the cluster.", "entities": [{"text": plant("entities")}]}]
            },
            "document_tags": {
                "items": [{"content": "A fact about the cluster."}],
                "document_tags": [plant("document_tags")],
            },
        }
        for field, body in refused_fields.items():
            r = http.post(f"{bank}/memories", json=body, headers={"x-request-id": f"req-{field.replace(' ', '-')}"})
            assert r.status_code == 422, (field, r.text)
            assert r.json()["detail"][0]["type"] == "secret"
            assert plant.values[field] not in r.text
        # Ids in the path and the request id: refused (400) or replaced.
        fact = {"items": [{"content": "A fact about the cluster."}]}
        assert http.post(f"{url}/v1/default/banks/{plant('bank')}/memories", json=fact).status_code == 400
        doc = plant("path document id")
        assert http.patch(f"{bank}/documents/{doc}", json={"tags": ["a"]}).status_code == 400
        r = http.get(f"{url}/warden/health", headers={"x-request-id": plant("request id")})
        assert r.headers["x-request-id"] != plant.values["request id"]
        # The memory text: rejected, its hash keyed.
        text_secret = plant("content")
        said = f"Note for later: the deploy key is {text_secret}"
        r = http.post(f"{bank}/memories", json={"items": [{"content": said}]}, params={"warden": "verbose"})
        assert r.status_code == 200
        assert r.json()["warden"]["decisions"][0]["verdict"] == "reject"
        # Config: redacted before it is snapshotted, forwarded or audited.
        mission = plant("mission")
        r = http.patch(
            f"{bank}/config",
            json={"updates": {"retain_mission": f"Keep facts. Backup key {mission}."}},
            headers={"x-warden-confirm": "ops"},
        )
        assert r.status_code == 200, r.text
        assert r.headers["x-warden-redacted"] == "retain_mission"
        profile = plant("profile")
        r = http.put(f"{bank}", json={"name": "ops", "mission": f"Remember things. Token {profile}"})
        assert r.status_code == 200, r.text
        assert r.headers["x-warden-redacted"] == "mission"
        shown = http.get(f"{bank}/config").json()
        assert "[REDACTED:aws_access_key]" in json.dumps(shown)

    logged = server.log()
    assert '"event": "secret_in_fields"' in logged  # the log was read: it holds the refusals, masked
    stored = every_byte(data)
    for field, value in plant.values.items():
        assert value.encode() not in stored, f"the {field} secret is in the data folder"
        for encoded in (base64.b64encode(value.encode()).decode(),):
            assert encoded.encode() not in stored
        assert value not in logged, f"the {field} secret is in the log"
    db = sqlite3.connect(data / "memwarden.db")
    try:
        (after,) = db.execute("SELECT after FROM audit_events WHERE action = 'reject'").fetchone()
        stored_hash = json.loads(after)["content_hash"]
    finally:
        db.close()
    assert stored_hash != content_hash(said)  # keyed: a guess cannot be checked without the key
    assert stored_hash != hashlib.sha256(said.encode()).hexdigest()


def test_a_document_retag_with_a_secret_is_refused(server: Served) -> None:
    url, data = server.url, server.data
    key = aws_key()
    bank = f"{url}/v1/default/banks/ops"
    with httpx.Client(timeout=60) as http:
        r = http.post(
            f"{bank}/memories", json={"items": [{"content": "The VPN moved to WireGuard.", "document_id": "d1"}]}
        )
        assert r.status_code == 200
        refused = http.patch(f"{bank}/documents/d1", json={"tags": [f"key:{key}"]})
    assert refused.status_code == 422
    assert refused.json()["detail"][0]["loc"] == ["body", "tags", 0]
    assert key.encode() not in every_byte(data)


def test_an_operators_words_and_config_keys_are_masked_too(server: Served) -> None:
    """Found by a review: reasons (feedback, archive, restore, plans, key revocation) were stored in
    clear, and a secret used as a key inside a config value was neither masked nor reported."""
    url, data = server.url, server.data
    plant = Planted()
    bank, warden = f"{url}/v1/default/banks/ops", f"{url}/warden/v1/banks/ops"
    with httpx.Client(timeout=60) as http:
        retained = http.post(
            f"{bank}/memories",
            json={"items": [{"content": "The VPN moved to WireGuard."}, {"content": "The NAS has 4 disks."}]},
            params={"warden": "verbose"},
        ).json()
        first, second = (d["memory_id"] for d in retained["warden"]["decisions"])
        said = f"{warden}/memories/{first}"
        assert http.post(f"{said}/feedback", json={"score": 1, "reason": f"key {plant('feedback')}"}).is_success
        assert http.post(f"{said}/archive", json={"reason": f"key {plant('archive')}"}).is_success
        assert http.post(f"{said}/restore", json={"reason": f"key {plant('restore')}"}).is_success
        plan = {"operations": [{"op": "archive", "memory_id": second}], "reason": f"key {plant('plan')}"}
        assert http.post(f"{warden}/plans", json=plan).is_success
        root = http.post(f"{url}/warden/v1/keys", json={"name": "root", "admin": ["*"]}).json()
        made = http.post(f"{url}/warden/v1/keys", json={"name": "temp", "write": ["ops"]}, headers=_bearer(root)).json()
        revoked = http.delete(
            f"{url}/warden/v1/keys/{made['id']}", params={"reason": f"leaked {plant('revoke')}"}, headers=_bearer(root)
        )
        assert revoked.status_code == 200
        nested = {"updates": {"retain_strategies": {f"s-{plant('config key')}": {"retain_mission": "facts"}}}}
        r = http.patch(f"{bank}/config", json=nested, headers={"x-warden-confirm": "ops", **_bearer(root)})
        assert r.status_code in (200, 400, 422), r.text  # the backend may refuse the strategy; nothing in clear
        if r.status_code == 200:
            assert r.headers["x-warden-redacted"] == "retain_strategies"
        passed = http.get(f"{bank}/memories/{plant('path segment')}", headers=_bearer(root))
        assert passed.status_code == 400
    logged = server.log()
    assert '"event": "request"' in logged
    stored = every_byte(data)
    for field, value in plant.values.items():
        assert value.encode() not in stored, f"the {field} secret is in the data folder"
        assert value not in logged, f"the {field} secret is in the log"


def _bearer(made: dict[str, Any]) -> dict[str, str]:
    return {"authorization": f"Bearer {made['token']}"}


def test_an_unreachable_backend_is_logged_without_the_secret_in_its_url(tmp_path: Path) -> None:
    key = "ghp_" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(36))
    with serving(tmp_path, tmp_path / "data", "http://127.0.0.1:9") as served:
        r = httpx.get(f"{served.url}/v1/default/banks/ops/entities", params={"api_key": key}, timeout=30)
        logged = served.log()
    assert r.status_code == 502
    assert key not in r.text
    assert '"event": "backend_unreachable"' in logged
    assert key not in logged


def test_encoded_secrets_and_keys_ending_in_a_dash_are_kept_out_of_ids_and_the_log(server: Served) -> None:
    """Issue #33: a base64 ``aws_secret_access_key=…`` as an operation, document or bank id was
    refused (400) but written to the access log verbatim; a Google API key ending in ``-`` passed as
    a document id, bank id, tag and ``X-Request-Id`` (its pattern ended in ``\\b``)."""
    url = server.url
    encoded = base64.b64encode(b"aws_secret_access_key=qH7mVb2Lk9Tz4WcN8rXp1JdF6sYe3GuA0oKiZt5M").decode()
    google = "AIzaSyD" + "".join(secrets.choice(string.ascii_letters + string.digits) for _ in range(31)) + "-"
    bank = f"{url}/v1/default/banks/ops"
    with httpx.Client(timeout=60) as http:
        for value in (encoded, encoded.rstrip("="), google):
            for method, path in (
                ("GET", f"{bank}/operations/{value}"),
                ("PATCH", f"{bank}/documents/{value}"),
                ("POST", f"{url}/v1/default/banks/{value}/memories"),
                ("GET", f"{bank}/some/{value}/thing"),  # a pass-through segment
            ):
                r = http.request(method, path, json={"tags": ["a"]} if method == "PATCH" else None)
                assert r.status_code == 400, (method, path, r.text)
                assert value not in r.text
        fact = {"content": "The staging cluster has 3 nodes."}
        r = http.post(f"{bank}/memories", json={"items": [{**fact, "tags": [f"key:{google}"]}]})
        assert r.status_code == 422, r.text
        r = http.post(f"{bank}/memories", json={"items": [{**fact, "document_id": google}]})
        assert r.status_code == 422, r.text
        r = http.get(f"{url}/warden/health", headers={"x-request-id": google})
        assert r.headers["x-request-id"] != google
    logged = server.log()
    assert '"path": "/v1/default/banks/ops/operations/[REDACTED:' in logged  # the log was read
    stored = every_byte(server.data)
    for value in (encoded, encoded.rstrip("="), google):
        assert value not in logged
        assert value.encode() not in stored
