"""Crash recovery in front of a backend: memwarden killed (SIGKILL) between recording a retain's
verdicts and the backend's answer settles those rows at the next start, before serving — delivered
rows become active, the others are delivered again from the ledger, once in effect."""

from __future__ import annotations

import contextlib
import sqlite3
import subprocess
import threading
import time
from pathlib import Path

import httpx
import pytest

from testing.loopback import free_port
from testing.standin import Fault, Standin, running_standin
from tests.servers import spawn_memwarden, wait_memwarden

FACT = "The search cluster runs five nodes in the Frankfurt region."


def statuses(data_dir: Path) -> list[str]:
    db = sqlite3.connect(data_dir / "memwarden.db")
    try:
        return [r[0] for r in db.execute("SELECT status FROM memories ORDER BY created_at")]
    finally:
        db.close()


def stop(proc: subprocess.Popen[str], *, kill: bool = False) -> None:
    proc.kill() if kill else proc.terminate()
    proc.wait(timeout=30)
    if proc.stderr is not None:
        proc.stderr.close()


def start(upstream: str, data_dir: Path, port: int, cwd: Path) -> tuple[str, subprocess.Popen[str]]:
    env = {"MEMWARDEN_LABELS__LEARNED": "off", "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off"}
    proc = spawn_memwarden(
        "serve", "--upstream", upstream, "--port", str(port), "--data-dir", str(data_dir), cwd=cwd, env=env
    )
    url = f"http://127.0.0.1:{port}"
    wait_memwarden(url, proc)
    return url, proc


def kill_mid_retain(backend: Standin, data_dir: Path, port: int, cwd: Path, answer: int | None) -> None:
    """memwarden killed (SIGKILL) while the backend takes 2 s over a retain, which it then writes
    (``answer`` None) or fails with ``answer``; returns once the backend is done with it."""
    backend.faults.append(Fault("POST", r"/memories$", status=answer, delay=2.0, times=1))
    url, proc = start(backend.url, data_dir, port, cwd)
    client = threading.Thread(target=_post_quietly, args=(url,))
    client.start()
    time.sleep(0.8)
    stop(proc, kill=True)
    client.join()
    assert statuses(data_dir) == ["pending"]
    time.sleep(2.0)


@pytest.mark.parametrize(
    "answer",
    [
        None,  # the backend wrote it after memwarden died: found, not sent again
        503,  # the backend failed it: delivered again at the start
    ],
)
def test_a_retain_interrupted_by_kill_9_is_settled_at_the_next_start(tmp_path: Path, answer: int | None) -> None:
    data_dir, port = tmp_path / "data", free_port()
    with running_standin(tmp_path / "backend") as backend:
        kill_mid_retain(backend, data_dir, port, tmp_path, answer)
        url, proc = start(backend.url, data_dir, port, tmp_path)
        try:
            assert statuses(data_dir) == ["active"]  # settled before serving
            held = httpx.get(f"{backend.url}/v1/default/banks/b/memories/list", timeout=10).json()["items"]
            assert [u["text"] for u in held] == [FACT]  # once, either way
            events = httpx.get(f"{url}/warden/v1/audit", params={"bank": "b"}, timeout=10).json()["events"]
            settled = events[-1]  # the settlement is audited
            assert (settled["actor"], settled["source"]) == ("memwarden", "recovery")
            assert settled["action"] == ("deliver" if answer is None else "redeliver")
        finally:
            stop(proc)


def test_with_the_backend_down_at_start_memwarden_serves_and_the_outbox_delivers_when_it_is_back(
    tmp_path: Path,
) -> None:
    data_dir, port = tmp_path / "data", free_port()
    with running_standin(tmp_path / "backend") as backend:
        kill_mid_retain(backend, data_dir, port, tmp_path, 503)
        down = [Fault("GET", r"/documents/", status=503), Fault("POST", r"/memories$", status=503)]
        backend.faults.extend(down)  # the backend is down now
        url, proc = start(backend.url, data_dir, port, tmp_path)
        try:
            assert statuses(data_dir) == ["pending"]  # not guessed: queued for delivery
            health = httpx.get(f"{url}/warden/health", timeout=10)
            assert health.status_code == 200
            assert health.json()["outbox"]["queued_items"] == 1
            for fault in down:
                backend.faults.remove(fault)  # back
            deadline = time.monotonic() + 30
            while statuses(data_dir) != ["active"] and time.monotonic() < deadline:
                time.sleep(0.2)
            assert statuses(data_dir) == ["active"]
            held = httpx.get(f"{backend.url}/v1/default/banks/b/memories/list", timeout=10).json()["items"]
            assert [u["text"] for u in held] == [FACT]
        finally:
            stop(proc)


def _post_quietly(url: str) -> None:
    with contextlib.suppress(httpx.HTTPError):  # memwarden died: the client never had its answer
        httpx.post(f"{url}/v1/default/banks/b/memories", json={"items": [{"content": FACT}]}, timeout=10)
