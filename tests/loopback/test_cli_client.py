"""The command line's one HTTP client: every id reaches the server as the one path segment it is."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import parse_qs, quote, unquote

import httpx
import pytest
from click.testing import CliRunner
from starlette.types import Receive, Scope, Send

from memwarden.proxy.cli import main
from memwarden.proxy.cli.client import api_path
from testing.loopback import free_port, serve_in_thread
from tests.servers import spawn_memwarden, wait_memwarden

BANK = "team a/b?c#d %2F"  # a slash, a query mark, a fragment mark, a space, and an escape that is not one
MEMORY = "m/1?x#y z%41"


def test_each_segment_is_quoted_whole() -> None:
    assert api_path("banks", BANK, "memories", MEMORY) == (
        "/warden/v1/banks/team%20a%2Fb%3Fc%23d%20%252F/memories/m%2F1%3Fx%23y%20z%2541"
    )
    assert api_path("audit", "verify") == "/warden/v1/audit/verify"


class Recorder:
    """An ASGI app that records each request's raw path, split into its unquoted segments, and
    answers 404."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, list[str], str]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan":
            while (await receive())["type"] != "lifespan.shutdown":
                await send({"type": "lifespan.startup.complete"})
            await send({"type": "lifespan.shutdown.complete"})
            return
        segments = [unquote(s) for s in scope["raw_path"].decode("ascii").split("/")[1:]]
        self.requests.append((scope["method"], segments, scope["query_string"].decode()))
        body = json.dumps({"detail": "recorded"}).encode()
        await send({"type": "http.response.start", "status": 404, "headers": [(b"content-type", b"application/json")]})
        await send({"type": "http.response.body", "body": body})


@pytest.fixture(scope="module")
def recorder() -> Iterator[tuple[Recorder, str]]:
    app = Recorder()
    with serve_in_thread(app) as url:
        yield app, url


@pytest.mark.parametrize(
    ("args", "method", "path"),
    [
        (["config", "snapshots", BANK], "GET", ["banks", BANK, "snapshots"]),
        (["config", "rollback", BANK, MEMORY], "POST", ["banks", BANK, "snapshots", MEMORY, "rollback"]),
        (["store", "reembed", BANK], "POST", ["banks", BANK, "reembed"]),
        (["explain", BANK, "coffee"], "POST", ["banks", BANK, "explain"]),
        (["memories", "list", BANK], "GET", ["banks", BANK, "memories"]),
        (["memories", "show", BANK, MEMORY], "GET", ["banks", BANK, "memories", MEMORY]),
        (["memories", "archive", BANK, MEMORY], "POST", ["banks", BANK, "memories", MEMORY, "archive"]),
        (["memories", "restore", BANK, MEMORY], "POST", ["banks", BANK, "memories", MEMORY, "restore"]),
        (["memories", "feedback", BANK, MEMORY, "up"], "POST", ["banks", BANK, "memories", MEMORY, "feedback"]),
        (["plan", "create", BANK, "--archive", MEMORY], "POST", ["banks", BANK, "plans"]),
        (["plan", "list", BANK], "GET", ["banks", BANK, "plans"]),
        (["plan", "show", BANK, MEMORY], "GET", ["banks", BANK, "plans", MEMORY]),
        (["plan", "apply", BANK, MEMORY, "--phrase", "x"], "GET", ["banks", BANK, "plans", MEMORY]),
        (["report", "cleanup", BANK], "GET", ["banks", BANK, "reports", "cleanup"]),
        (["report", "health", BANK], "GET", ["banks", BANK, "reports", "health"]),
    ],
)
def test_ids_reach_the_server_as_one_segment(
    recorder: tuple[Recorder, str], args: list[str], method: str, path: list[str]
) -> None:
    app, url = recorder
    app.requests.clear()
    result = CliRunner().invoke(main, [*args, "--url", url + "/"])
    assert result.exit_code == 1, result.output  # the recorder answers 404 to everything
    assert "Traceback" not in result.output
    assert app.requests[0][:2] == (method, ["warden", "v1", *path])


@pytest.mark.parametrize(
    ("args", "path"),
    [
        (["audit", "tail", "--bank", BANK], ["audit"]),
        (["retention", "run", "--bank", BANK], ["retention", "run"]),
    ],
)
def test_a_bank_in_the_query_string_is_one_value(
    recorder: tuple[Recorder, str], args: list[str], path: list[str]
) -> None:
    app, url = recorder
    app.requests.clear()
    CliRunner().invoke(main, [*args, "--url", url])
    _, segments, query = app.requests[0]
    assert segments == ["warden", "v1", *path]
    assert parse_qs(query)["bank"] == [BANK]


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[str, Path]]:
    """``memwarden serve``, self-hosted, in its own process."""
    data_dir = tmp_path_factory.mktemp("data")
    port = free_port()
    env = {"MEMWARDEN_LOCAL__EMBEDDER": "hashing", "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off"}
    proc = spawn_memwarden("serve", "--data-dir", str(data_dir), "--port", str(port), cwd=data_dir, env=env)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_memwarden(url, proc)
        yield url, data_dir
    finally:
        proc.send_signal(signal.SIGINT)
        proc.wait(20)
        if proc.stderr:
            proc.stderr.close()


# The real server routes on the decoded path, so a bank there holds no slash; the rest is kept.
ODD_BANK = "team a?#%41"


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)


def test_an_odd_bank_round_trips_through_the_real_server(server: tuple[str, Path]) -> None:
    url, data_dir = server
    r = httpx.post(
        f"{url}/v1/default/banks/{quote(ODD_BANK, safe='')}/memories",
        json={"items": [{"content": "The search service listens on port 9200.", "tags": ["topic:infra"]}]},
        timeout=60,
    )
    assert r.json()["items_count"] == 1, r.text
    listing = cli("memories", "list", ODD_BANK, "--url", url)
    assert listing.returncode == 0, listing.stderr
    assert "The search service listens on port 9200." in listing.stdout
    assert listing.stdout.endswith("1 of 1\n")
    memory_id = listing.stdout.split()[0]
    shown = cli("memories", "show", ODD_BANK, memory_id, "--url", url)
    assert shown.returncode == 0, shown.stderr
    assert cli("memories", "show", ODD_BANK, memory_id, "--data-dir", str(data_dir)).stdout == shown.stdout
    health = cli("report", "health", ODD_BANK, "--url", url)
    assert health.stdout.startswith(f"bank {ODD_BANK}: ok\n"), health.stderr
    archived = cli("memories", "archive", ODD_BANK, memory_id, "--url", url)
    assert archived.returncode == 0, archived.stderr
    tail = cli("audit", "tail", "--bank", ODD_BANK, "--action", "archive", "--url", url)
    assert f"archive        {ODD_BANK} mem={memory_id[:12]}" in tail.stdout
