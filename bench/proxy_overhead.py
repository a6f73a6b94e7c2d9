"""Proxy overhead: the same request mix sent directly to an upstream and through memwarden.

Runs wrk (``apt-get install wrk``) at 1 and 32 concurrent connections against

  (a) a trivial in-memory upstream (``bench/trivial_upstream.py``) — memwarden's cost alone,
      with both HTTP transports memwarden can use (aiohttp, the default; plain httpx);
  (b) the real Hindsight 1.1.0 server (started with ``scripts/hindsight-up``) — what a user sees.

Every server is a separate process on loopback, started and stopped by this script by PID; wrk,
memwarden and the upstream share the machine's cores, so req/s are lower bounds. Prints a
Markdown table (median and p99 latency, req/s, added latency, throughput ratio).

Usage: python bench/proxy_overhead.py [--duration 10] [--quick] [--no-hindsight] [--json FILE]
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import platform
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

REPO = Path(__file__).resolve().parent.parent
PY = sys.executable

TRIVIAL_MIX = [
    ("POST", "/v1/default/banks/bench/memories/recall", '{"query":"what coffee does alice like","budget":"mid"}'),
    ("POST", "/v1/default/banks/bench/memories", '{"items":[{"content":"Alice likes tea","tags":["user:alice"]}]}'),
    ("GET", "/v1/default/banks/bench/memories/list?limit=10", ""),
    ("GET", "/version", ""),
]
HINDSIGHT_MIX = [
    ("POST", "/v1/default/banks/{bank}/memories/recall", '{"query":"Alice coffee","types":["world"]}'),
    ("GET", "/v1/default/banks/{bank}/memories/list?limit=10", ""),
    ("GET", "/v1/default/banks/{bank}/config", ""),
    ("GET", "/version", ""),
]


@dataclass
class Row:
    upstream: str
    path: str
    connections: int
    p50_ms: float
    p99_ms: float
    rps: float
    errors: int


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_http(url: str, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if httpx.get(url, timeout=1).status_code < 500:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.1)
    raise RuntimeError(f"{url} did not come up")


def start(cmd: list[str], env: dict[str, str] | None = None) -> subprocess.Popen[bytes]:
    return subprocess.Popen(
        cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env={**os.environ, **(env or {})}, cwd=REPO
    )


def stop(proc: subprocess.Popen[bytes]) -> None:
    proc.send_signal(signal.SIGINT)
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


def start_warden(upstream: str, transport: str = "aiohttp", mode: str = "off") -> tuple[subprocess.Popen[bytes], str]:
    """memwarden in front of ``upstream``; by default a pure proxy (governance off: its cost is
    bench/policy_throughput.py's subject), with a throw-away data directory."""
    proc, url, _ = start_warden_in(upstream, transport, mode)
    return proc, url


def start_warden_in(
    upstream: str, transport: str = "aiohttp", mode: str = "off"
) -> tuple[subprocess.Popen[bytes], str, Path]:
    """The same, also returning the throw-away data directory (to look at its ledger)."""
    port = free_port()
    env = {
        "MEMWARDEN_SERVER__ACCESS_LOG": "false",
        "MEMWARDEN_SERVER__LOG_LEVEL": "warning",
        "MEMWARDEN_BACKENDS__HINDSIGHT__TRANSPORT": transport,
        "MEMWARDEN_GOVERNANCE__MODE": mode,
    }
    data_dir = tempfile.mkdtemp(prefix="memwarden-bench-")
    atexit.register(shutil.rmtree, data_dir, ignore_errors=True)
    cmd = [
        PY,
        "-c",
        "from memwarden.proxy.cli import main; main()",
        "serve",
        "--upstream",
        upstream,
        "--port",
        str(port),
        "--data-dir",
        data_dir,
    ]
    proc = start(cmd, env)
    url = f"http://127.0.0.1:{port}"
    wait_http(f"{url}/warden/health")
    return proc, url, Path(data_dir)


def lua_script(mix: list[tuple[str, str, str]]) -> str:
    lines = ["local reqs = {}"]
    for i, (method, path, body) in enumerate(mix, start=1):
        headers = '{["Content-Type"]="application/json"}' if body else "{}"
        lines.append(f"reqs[{i}] = wrk.format({json.dumps(method)}, {json.dumps(path)}, {headers}, {json.dumps(body)})")
    lines += ["local i = 0", "request = function()", "  i = i + 1", "  return reqs[(i % #reqs) + 1]", "end"]
    return "\n".join(lines) + "\n"


def _ms(value: str) -> float:
    m = re.fullmatch(r"([\d.]+)(us|ms|s|m)", value.strip())
    if not m:
        raise ValueError(value)
    n, unit = float(m.group(1)), m.group(2)
    return {"us": n / 1000, "ms": n, "s": n * 1000, "m": n * 60000}[unit]


def run_wrk(url: str, script: Path, connections: int, duration: float) -> tuple[float, float, float, int]:
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


def measure(label: str, targets: dict[str, str], mix: list[tuple[str, str, str]], duration: float) -> list[Row]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        script = Path(tmp) / "mix.lua"
        script.write_text(lua_script(mix))
        for connections in (1, 32):
            for path, url in targets.items():
                run_wrk(url, script, connections, min(2.0, duration))  # warm-up: pools, JIT-less caches
                p50, p99, rps, errors = run_wrk(url, script, connections, duration)
                rows.append(Row(label, path, connections, p50, p99, rps, errors))
                print(
                    f"  {label:<10} {path:<22} c={connections:<3} p50 {p50:7.2f} ms  p99 {p99:7.2f} ms  "
                    f"{rps:8.0f} req/s  errors {errors}",
                    file=sys.stderr,
                )
    return rows


def table(rows: list[Row]) -> str:
    out = [
        "| upstream | path | conns | p50 ms | p99 ms | req/s | added p50 ms | added p99 ms | req/s vs direct "
        "| errors |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    direct = {(r.upstream, r.connections): r for r in rows if r.path == "direct"}
    for r in rows:
        d = direct[(r.upstream, r.connections)]
        added = "" if r.path == "direct" else f"{r.p50_ms - d.p50_ms:+.2f}"
        added99 = "" if r.path == "direct" else f"{r.p99_ms - d.p99_ms:+.2f}"
        ratio = "" if r.path == "direct" else f"{r.rps / d.rps:.2f}"
        out.append(
            f"| {r.upstream} | {r.path} | {r.connections} | {r.p50_ms:.2f} | {r.p99_ms:.2f} | {r.rps:,.0f} | "
            f"{added} | {added99} | {ratio} | {r.errors} |"
        )
    return "\n".join(out)


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--duration", type=float, default=10.0, help="seconds per measurement")
    parser.add_argument("--quick", action="store_true", help="2 s per measurement (a smoke run)")
    parser.add_argument("--no-hindsight", action="store_true", help="skip the real-Hindsight half")
    parser.add_argument("--json", type=Path, help="also write the rows as JSON here")
    args = parser.parse_args()
    duration = 2.0 if args.quick else args.duration
    if shutil.which("wrk") is None:
        print("bench/proxy_overhead.py needs wrk: apt-get install wrk", file=sys.stderr)
        return 2

    rows: list[Row] = []
    port = free_port()
    upstream = start([PY, str(REPO / "bench" / "trivial_upstream.py"), str(port)])
    procs = [upstream]
    try:
        up_url = f"http://127.0.0.1:{port}"
        wait_http(f"{up_url}/version")
        warden, warden_url = start_warden(up_url, "aiohttp")
        procs.append(warden)
        warden_httpx, warden_httpx_url = start_warden(up_url, "httpx")
        procs.append(warden_httpx)
        targets = {"direct": up_url, "memwarden (aiohttp)": warden_url, "memwarden (httpx)": warden_httpx_url}
        rows += measure("trivial", targets, TRIVIAL_MIX, duration)
    finally:
        for proc in procs:
            stop(proc)

    if not args.no_hindsight:
        hs_url = (
            subprocess.run([str(REPO / "scripts" / "hindsight-up")], capture_output=True, text=True, check=True)
            .stdout.strip()
            .splitlines()[-1]
        )
        bank = "bench-proxy"
        with httpx.Client(base_url=hs_url, timeout=60) as http:
            http.put(f"/v1/default/banks/{bank}", json={}).raise_for_status()
            items = [
                {"content": f"Alice coffee note {i}: she prefers dark roast.", "tags": ["user:alice"]}
                for i in range(20)
            ]
            http.post(f"/v1/default/banks/{bank}/memories", json={"items": items}).raise_for_status()
            # Background consolidation would otherwise load the server during the first rows only.
            deadline = time.monotonic() + 120
            while time.monotonic() < deadline:
                stats = http.get(f"/v1/default/banks/{bank}/stats", params={"refresh": "true"}).json()
                if not stats["pending_operations"] and not stats.get("pending_consolidation"):
                    break
                time.sleep(0.5)
        warden, warden_url = start_warden(hs_url, "aiohttp")
        try:
            mix = [(m, p.format(bank=bank), b) for m, p, b in HINDSIGHT_MIX]
            rows += measure("hindsight", {"direct": hs_url, "memwarden (aiohttp)": warden_url}, mix, duration)
        finally:
            stop(warden)

    print(f"\nMachine: {machine()}; wrk -t1, {duration:.0f} s per row, after a warm-up.\n")
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps({"machine": machine(), "rows": [asdict(r) for r in rows]}, indent=2))
    failed = [r for r in rows if r.errors]
    if failed:
        print(f"\n{len(failed)} rows had errors", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
