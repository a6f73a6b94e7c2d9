"""Real loopback servers for tests and benchmarks: an ASGI app under uvicorn in a thread, a free
port, waiting for a URL to answer."""

from __future__ import annotations

import contextlib
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from typing import Any

import httpx
import uvicorn

START_TIMEOUT = 30.0  # seconds a loopback server may take to start


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve_in_thread(app: Any, *, date_header: bool = True) -> Iterator[str]:
    """Serve ``app`` with uvicorn (uvloop + httptools, as in production) on a free loopback port,
    lifespan run; yield its base URL, stop it on exit."""
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
    # A lifespan that loads a model (e5) on a loaded 2-core machine can take more than 10 s.
    deadline = time.monotonic() + START_TIMEOUT
    while not server.started:
        if time.monotonic() > deadline or not thread.is_alive():
            raise RuntimeError("the loopback server did not start")
        time.sleep(0.01)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=10)
        sock.close()


def wait_http(url: str, timeout: float = 30, *, alive: Any = None) -> None:
    """Return once ``url`` answers below 500; ``alive()``, when given, is checked between tries
    (a server process that exited raises at once instead of after ``timeout``)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if alive is not None:
            alive()
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def stop_process(proc: subprocess.Popen[Any], grace: float = 30) -> None:
    """Stop a server process as a user stops it (SIGTERM), killed past ``grace`` seconds."""
    proc.terminate()
    try:
        proc.wait(timeout=grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
