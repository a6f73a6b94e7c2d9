"""Run ASGI apps on real loopback sockets (uvicorn in a thread) and processes for tests."""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import uvicorn


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: Any, *, date_header: bool = True) -> Iterator[str]:
    """Serve ``app`` with uvicorn (uvloop + httptools, as in production); yield its base URL."""
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    config = uvicorn.Config(
        app,
        loop="uvloop",
        http="httptools",
        log_config=None,
        access_log=False,
        lifespan="on",
        date_header=date_header,
        timeout_graceful_shutdown=2,
    )
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, kwargs={"sockets": [sock]}, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("test server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def spawn_memwarden(*args: str, cwd: Path, env: dict[str, str] | None = None) -> subprocess.Popen[str]:
    """``memwarden`` as a user runs it, in its own process (the environment's MEMWARDEN_* dropped)."""
    base = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    return subprocess.Popen(
        [sys.executable, "-c", "from memwarden.proxy.cli import main; main()", *args],
        cwd=cwd,
        env={**base, **(env or {})},
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )


def wait_memwarden(url: str, proc: subprocess.Popen[str], timeout: float = 60) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise AssertionError(f"memwarden exited: {proc.stderr.read() if proc.stderr else ''}")
        try:
            if httpx.get(f"{url}/warden/health", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            time.sleep(0.1)
    raise AssertionError(f"{url} did not come up")
