"""What the benchmarks share: servers in their own processes (memwarden as a user runs it, the
trivial upstream) started and stopped by the benchmark, the real Hindsight, wrk, the machine's
description, Markdown tables and JSON results.

Benchmarks run from the repository's top as modules: ``python -m bench.<name>``. Loopback serving
in a thread, the Hindsight stand-in and starting the real Hindsight come from ``testing/``, which
the tests share; nothing here imports ``tests``.
"""

from __future__ import annotations

import contextlib
import json
import os
import platform
import re
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx

from testing import keys
from testing.hindsight import hindsight
from testing.loopback import free_port, wait_http

__all__ = [
    "DATA",
    "PY",
    "REPO",
    "hindsight",
    "machine",
    "markdown_table",
    "memwarden",
    "process",
    "run_wrk",
    "trivial_upstream",
    "wait_settled",
    "warden_in_front",
    "write_json",
]

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data"  # the labelled sets (candidates, retrieval) the tests use too
PY = sys.executable
MAIN = "from memwarden.proxy.cli import main; main()"


# -- servers in their own processes ---------------------------------------------------------------


@contextlib.contextmanager
def process(cmd: list[str], *, ready: str, env: dict[str, str] | None = None, timeout: float = 30) -> Iterator[None]:
    """``cmd`` in its own process (from the repository's top, output discarded) for the block, once
    ``ready`` answers; stopped by its PID at the end (SIGINT, then SIGKILL after 10 s)."""
    proc = subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}, cwd=REPO
    )

    def alive() -> None:
        if proc.poll() is not None:
            raise RuntimeError(f"{cmd[:4]} exited with {proc.returncode} before {ready} answered")

    try:
        wait_http(ready, timeout, alive=alive)
        yield
    finally:
        proc.send_signal(signal.SIGINT)
        try:
            proc.wait(10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


@contextlib.contextmanager
def memwarden(*args: str, env: dict[str, str] | None = None, timeout: float = 30) -> Iterator[str]:
    """``memwarden serve ARGS`` on a free loopback port; its base URL."""
    url = f"http://127.0.0.1:{(port := free_port())}"
    with process(
        [PY, "-c", MAIN, "serve", "--port", str(port), *args], ready=f"{url}/warden/health", env=env, timeout=timeout
    ):
        yield url


def make_key(data_dir: Path, *scopes: str) -> str:
    """An API key made in ``data_dir`` before memwarden starts on it; its token. ``scopes``: the
    command's options (default ``--admin '*'``)."""
    return keys.make_key(data_dir, name="bench", scopes=scopes or ("--admin", "*"), cwd=REPO)


@contextlib.contextmanager
def warden_in_front(
    upstream: str, transport: str = "aiohttp", mode: str = "off", *, setup: Callable[[Path], None] | None = None
) -> Iterator[tuple[str, Path]]:
    """memwarden in front of ``upstream``: by default a pure proxy (governance off: its cost is
    bench/policy_throughput.py's subject), quiet, on a throw-away data directory. Its URL and the
    data directory (to look at its ledger). ``setup`` prepares the data directory first."""
    env = {
        "MEMWARDEN_SERVER__ACCESS_LOG": "false",
        "MEMWARDEN_SERVER__LOG_LEVEL": "warning",
        "MEMWARDEN_BACKENDS__HINDSIGHT__TRANSPORT": transport,
        "MEMWARDEN_GOVERNANCE__MODE": mode,
    }
    with tempfile.TemporaryDirectory(prefix="memwarden-bench-") as data_dir:
        if setup is not None:
            setup(Path(data_dir))
        with memwarden("--upstream", upstream, "--data-dir", data_dir, env=env) as url:
            yield url, Path(data_dir)


@contextlib.contextmanager
def trivial_upstream() -> Iterator[str]:
    """``bench/trivial_upstream.py`` in its own process: Hindsight's shapes answered from memory."""
    url = f"http://127.0.0.1:{(port := free_port())}"
    with process([PY, "-m", "bench.trivial_upstream", str(port)], ready=f"{url}/version"):
        yield url


def wait_settled(http: httpx.Client, bank: str, timeout: float = 300) -> None:
    """Until the bank has no pending operations or consolidation (background work would otherwise
    load the server during the first measurements)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        stats = http.get(f"/v1/default/banks/{bank}/stats", params={"refresh": "true"}).json()
        if not stats.get("pending_operations") and not stats.get("pending_consolidation"):
            return
        time.sleep(0.5)


# -- wrk --------------------------------------------------------------------------------------------


def _ms(value: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value.strip())
    if not m:
        raise ValueError(value)
    n, unit = float(m.group(1)), m.group(2)
    return {"us": n / 1000, "ms": n, "s": n * 1000, "m": n * 60000}[unit]


def run_wrk(url: str, script: Path, connections: int, duration: float) -> tuple[float, float, float, int]:
    """wrk -t1 with a Lua request script: p50 ms, p99 ms, req/s, errors (non-2xx/3xx and socket)."""
    out = subprocess.run(
        [
            "wrk",
            "-t1",
            f"-c{connections}",
            f"-d{max(1, round(duration))}s",
            "--latency",
            "--timeout",
            "10s",
            "-s",
            str(script),
            url,
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout
    p50 = _ms(re.search(r"^\s+50%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    p99 = _ms(re.search(r"^\s+99%\s+(\S+)", out, re.M).group(1))  # type: ignore[union-attr]
    rps = float(re.search(r"Requests/sec:\s+([\d.]+)", out).group(1))  # type: ignore[union-attr]
    non2xx = re.search(r"Non-2xx or 3xx responses:\s+(\d+)", out)
    socket_errors = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", out)
    errors = int(non2xx.group(1)) if non2xx else 0
    if socket_errors:
        errors += sum(int(g) for g in socket_errors.groups())
    return p50, p99, rps, errors


# -- reporting --------------------------------------------------------------------------------------


def machine() -> str:
    """Cores, CPU model and its int8 dot-product instructions (the e5 engine's speed depends on
    them most: 983 passages/s on 2 Xeon cores with AVX-512 VNNI, 202 on 2 EPYC cores with AVX2
    alone), Python, OS."""
    cpu, flags = platform.processor() or "unknown CPU", set[str]()
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
            elif line.startswith("flags"):  # after the model name; the first CPU's is enough
                flags = set(line.split(":", 1)[1].split())
                break
    except OSError:
        pass
    if "avx512_vnni" in flags:
        cpu += " (AVX-512 VNNI)"
    elif "avx_vnni" in flags:
        cpu += " (AVX-VNNI)"
    elif "avx2" in flags:
        cpu += " (AVX2, no VNNI)"
    return f"{os.cpu_count()} cores, {cpu}, Python {platform.python_version()}, {platform.system()}"


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[object]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(cell) for cell in row) + " |" for row in rows]
    return "\n".join(lines)


def write_json(path: Path | None, payload: Any) -> None:
    """The results as JSON at ``path`` (``--json FILE``), when one is given."""
    if path is not None:
        path.write_text(json.dumps(payload, indent=2))
