"""MCP tool calls: the real Hindsight 1.1.0's own MCP server, memwarden's MCP server in front of that
same Hindsight, and memwarden's MCP server self-hosted — side by side in the same run.

Every call is made with the official MCP Python client (``mcp``: ``Client`` over
``streamable_http_client``, an ``httpx2.AsyncClient`` of its own per client), on the single-bank
endpoint ``/mcp/<bank>/`` of each server, one session per client, reused for all its calls:

  (a) ``Hindsight MCP (direct)``: Hindsight's own MCP server (``scripts/hindsight-up``: fake LLM and
      embeddings, ``testing/hindsight.py`` — a server already running is reused and left running);
  (b) ``memwarden → Hindsight``: ``memwarden serve --upstream <that Hindsight>`` (governance
      ``enforce``, the default; quiet): each tool call is an in-process call of its HTTP twin,
      governed, then sent to Hindsight's HTTP API — the same bank as (a);
  (c) ``memwarden self-hosted``: ``memwarden serve`` with no upstream (its own store, on a fresh
      data directory; ``--embedder``, e5 by default as a user gets it). There is no direct
      equivalent: reported as is.

1. Latency per tool call — ``get_bank``, ``list_memories``, ``recall`` and ``sync_retain`` (a write:
   a distinct text every call, so deduplication never short-circuits; memwarden's result must say
   ``store`` in its ``warden`` decisions, counted and reported). One call at a time, the targets
   interleaved call by call (in turn forwards and backwards) so that all see the same bank and the
   same machine; after a warm-up, and once Hindsight's background work on earlier writes is done.
   Median and p95 ms per tool and target, and what memwarden adds (memwarden → Hindsight minus
   direct, ms and %).
2. Tool calls per second: ``--clients`` concurrent clients (one session each) calling ``recall`` in
   a loop for ``--duration`` seconds per target — two halves, the targets in turn forwards then
   backwards, each half after a warm-up of new sessions. The clients run in this one process (one
   event loop): its CPU share is reported beside (near 100 %: the client side bounds the rate, not
   only the server).

Every server is a separate process on loopback (memwarden a real uvicorn server on a free port,
started and stopped by this script by PID); they and the clients share the machine's cores.

Usage: python bench/mcp_tools.py [--calls 40] [--rounds 1] [--clients 8] [--duration 8]
                                 [--embedder e5|hashing] [--no-self-hosted] [--json FILE]
       python bench/versus.py BASE --head-bench -- mcp_tools.py --calls 20
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import functools
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import httpx2
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # run as a file (python bench/mcp_tools.py)

from bench.harness import (
    hindsight,
    machine,
    markdown_table,
    memwarden,
    wait_settled,
    warden_in_front,
    write_json,
)

DIRECT = "Hindsight MCP (direct)"
FRONT = "memwarden → Hindsight"
SELF = "memwarden self-hosted"
TOOLS = ("get_bank", "list_memories", "recall", "sync_retain")
QUIET = {"MEMWARDEN_SERVER__ACCESS_LOG": "false", "MEMWARDEN_SERVER__LOG_LEVEL": "warning"}
SEED = [
    f"Project P{k} runs on the {lang} stack and ships every {day}; {owner} owns its release."
    for k, (lang, day, owner) in enumerate(
        (lang, day, owner)
        for lang in ("Python", "Go", "Rust", "Java", "TypeScript")
        for day, owner in (("Monday", "Alice"), ("Wednesday", "Bob"), ("Friday", "Carol"), ("Tuesday", "Dan"))
    )
]
QUERIES = [
    "which stack does project P3 use",
    "who owns the release of the Rust projects",
    "what does the user prefer for project P7",
    "when does the Go project ship",
    "Alice release day",
    "options the user prefers",
]


@dataclass
class Tally:
    """One tool's calls on one target."""

    ms: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    verdicts: dict[str, int] = field(default_factory=dict)


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2) if ordered else float("nan")


@contextlib.asynccontextmanager
async def mcp_client(url: str) -> AsyncIterator[Client]:
    """One MCP session on ``url`` (its own HTTP connection pool), its tools listed once."""
    timeout = httpx2.Timeout(30, read=120)
    async with (
        httpx2.AsyncClient(timeout=timeout, headers={"User-Agent": "memwarden-bench/mcp_tools"}) as http,
        Client(streamable_http_client(url, http_client=http)) as client,
    ):
        await client.list_tools()  # as an agent does first (a 2026-07-28 call names a listed tool)
        yield client


class Writes:
    """Distinct write texts for the whole run (no two alike: dedup never answers for the backend)."""

    def __init__(self) -> None:
        self.i = 0

    def next(self) -> str:
        self.i += 1
        i = self.i
        return f"Note {i}: the user prefers option {i} for project P{i}."


def arguments(tool: str, i: int, writes: Writes) -> dict[str, Any]:
    if tool == "recall":
        return {"query": QUERIES[i % len(QUERIES)]}
    if tool == "list_memories":
        return {"limit": 10}
    if tool == "sync_retain":
        return {"content": writes.next()}
    return {}


async def call(client: Client, tool: str, args: dict[str, Any], tally: Tally | None) -> float:
    started = time.perf_counter()
    result = await client.call_tool(tool, args)
    elapsed = (time.perf_counter() - started) * 1000
    if tally is None:
        return elapsed
    tally.ms.append(elapsed)
    text = result.content[0].text if result.content and hasattr(result.content[0], "text") else ""
    if result.is_error:
        tally.errors.append(text[:300])
    elif tool == "sync_retain":
        answer = result.structured_content or {}
        if answer.get("status") != "completed":
            tally.errors.append(text[:300])
        for decision in (answer.get("warden") or {}).get("decisions") or []:
            verdict = str(decision.get("verdict"))
            tally.verdicts[verdict] = tally.verdicts.get(verdict, 0) + 1
    return elapsed


async def latency(
    urls: dict[str, str], calls: int, rounds: int, warmup: int, writes: Writes, settled: Callable[[], None]
) -> dict[str, dict[str, Tally]]:
    """Each tool ``calls`` times per round on every target, the targets interleaved call by call (in
    turn forwards and backwards: each target as often before another as after it). ``settled``
    waits until Hindsight's background work on the writes so far is done (before each round's reads)."""
    tallies = {tool: {name: Tally() for name in urls} for tool in TOOLS}
    async with contextlib.AsyncExitStack() as stack:
        clients = {name: await stack.enter_async_context(mcp_client(url)) for name, url in urls.items()}
        names = list(clients)
        for tool in TOOLS:  # warm-up: sessions, pools, each server's first-call caches
            for i in range(warmup):
                for name in names:
                    await call(clients[name], tool, arguments(tool, i, writes), None)
        for round_ in range(rounds):
            await asyncio.to_thread(settled)
            for tool in TOOLS:  # the write last: the reads of a round see the same bank
                for i in range(calls):
                    for name in names if (i + round_) % 2 == 0 else names[::-1]:
                        await call(clients[name], tool, arguments(tool, i, writes), tallies[tool][name])
                t = tallies[tool]
                print(
                    f"  round {round_ + 1} {tool:<14} "
                    + "  ".join(f"{n}: p50 {_pct(t[n].ms, 0.5):7.2f} ms" for n in names),
                    file=sys.stderr,
                )
    return tallies


async def throughput(url: str, clients: int, duration: float, warmup: float) -> dict[str, Any]:
    """``clients`` sessions calling recall back to back for ``duration`` s (after ``warmup`` s each):
    the calls' latencies (ms), their errors and this process's CPU share meanwhile."""
    latencies: list[float] = []
    errors: list[str] = []
    go = asyncio.Event()
    deadline = [0.0]
    ready = [0]

    async def worker(w: int) -> None:
        async with mcp_client(url) as client:
            started = time.perf_counter()
            i = w
            while time.perf_counter() - started < warmup:  # this session's warm-up
                await client.call_tool("recall", {"query": QUERIES[i % len(QUERIES)]})
                i += 1
            ready[0] += 1
            if ready[0] == clients:
                deadline[0] = time.perf_counter() + duration
                go.set()
            await go.wait()
            while True:
                t0 = time.perf_counter()
                result = await client.call_tool("recall", {"query": QUERIES[i % len(QUERIES)]})
                t1 = time.perf_counter()
                i += 1
                if t1 > deadline[0]:
                    return
                latencies.append((t1 - t0) * 1000)
                if result.is_error:
                    errors.append(str(result.content)[:300])

    cpu: list[float] = []

    async def measure() -> None:
        await go.wait()
        c0, w0 = time.process_time(), time.perf_counter()
        await asyncio.sleep(max(0.0, deadline[0] - time.perf_counter()))
        cpu.append((time.process_time() - c0) / (time.perf_counter() - w0))

    await asyncio.gather(measure(), *(worker(w) for w in range(clients)))
    return {"latencies": latencies, "errors": errors, "cpu": cpu[0]}


def rates(urls: dict[str, str], clients: int, duration: float) -> list[dict[str, Any]]:
    """calls/s per target: two passes of ``duration / 2`` s each, the targets in turn forwards, then
    backwards (neither always measured on a warmer or a fuller server)."""
    runs: dict[str, list[dict[str, Any]]] = {name: [] for name in urls}
    names = list(urls)
    for order in (names, names[::-1]):
        for name in order:
            runs[name].append(asyncio.run(throughput(urls[name], clients, duration / 2, warmup=1.0)))
            print(f"  calls/s {name}: {len(runs[name][-1]['latencies']) / (duration / 2):.1f}", file=sys.stderr)
    rows = []
    for name, parts in runs.items():
        latencies = [ms for part in parts for ms in part["latencies"]]
        errors = [e for part in parts for e in part["errors"]]
        rows.append(
            {
                "target": name,
                "clients": clients,
                "calls_per_s": round(len(latencies) / duration, 1),
                "p50_ms": _pct(latencies, 0.5),
                "p95_ms": _pct(latencies, 0.95),
                "errors": len(errors),
                "client_cpu": round(sum(part["cpu"] for part in parts) / len(parts), 2),
                "first_error": errors[0] if errors else "",
            }
        )
    return rows


def seed(base: str, bank: str) -> None:
    """The bank made and the same memories written (through memwarden: governed, labelled)."""
    with httpx.Client(base_url=base, timeout=300) as http:
        http.put(f"/v1/default/banks/{bank}", json={}).raise_for_status()
        items = [{"content": text} for text in SEED]
        http.post(f"/v1/default/banks/{bank}/memories", json={"items": items}).raise_for_status()


def settle(hs_url: str, bank: str) -> None:
    with httpx.Client(base_url=hs_url, timeout=60) as http:
        wait_settled(http, bank, timeout=120)


@contextlib.contextmanager
def self_hosted(enabled: bool, embedder: str) -> Iterator[str | None]:
    if not enabled:
        yield None
        return
    env = {**QUIET, "MEMWARDEN_LOCAL__EMBEDDER": embedder}
    with (
        tempfile.TemporaryDirectory(prefix="memwarden-bench-") as data_dir,
        memwarden("--data-dir", data_dir, env=env, timeout=180) as url,
    ):
        yield url


def latency_rows(tallies: dict[str, dict[str, Tally]]) -> list[dict[str, Any]]:
    rows = []
    for tool, by_target in tallies.items():
        for target, t in by_target.items():
            rows.append(
                {
                    "tool": tool,
                    "target": target,
                    "n": len(t.ms),
                    "p50_ms": _pct(t.ms, 0.5),
                    "p95_ms": _pct(t.ms, 0.95),
                    "errors": len(t.errors),
                }
            )
    return rows


def _pair(row: dict[str, Any] | None) -> str:
    return "" if row is None else f"{row['p50_ms']:.2f} / {row['p95_ms']:.2f}"


def _added(front: dict[str, Any], direct: dict[str, Any], key: str) -> str:
    diff = front[key] - direct[key]
    return f"{diff:+.2f} ({diff / direct[key] * 100:+.0f} %)" if direct[key] else f"{diff:+.2f}"


def latency_table(rows: list[dict[str, Any]], self_hosted_on: bool) -> str:
    by = {(r["tool"], r["target"]): r for r in rows}
    cells = []
    for tool in TOOLS:
        direct, front, own = by[(tool, DIRECT)], by[(tool, FRONT)], by.get((tool, SELF))
        errors = "/".join(str(r["errors"]) for r in (direct, front, own) if r is not None)
        cell = [tool, direct["n"], _pair(direct), _pair(front), _added(front, direct, "p50_ms")]
        cell += [_added(front, direct, "p95_ms")]
        cells.append([*cell, *([_pair(own)] if self_hosted_on else []), errors])
    header = ["tool", "calls", f"{DIRECT} p50 / p95 ms", f"{FRONT} p50 / p95 ms"]
    header += ["memwarden adds, p50 ms", "memwarden adds, p95 ms"]
    return markdown_table([*header, *([f"{SELF} p50 / p95 ms"] if self_hosted_on else []), "errors"], cells)


def throughput_table(rows: list[dict[str, Any]]) -> str:
    direct = next(r for r in rows if r["target"] == DIRECT)
    cells = []
    for r in rows:
        ratio = "" if r["target"] in (DIRECT, SELF) else f"{r['calls_per_s'] / direct['calls_per_s']:.2f}"
        numbers = [f"{r['calls_per_s']:,.1f}", ratio, f"{r['p50_ms']:.2f}", f"{r['p95_ms']:.2f}"]
        cells.append([r["target"], r["clients"], *numbers, f"{r['client_cpu']:.0%}", r["errors"]])
    header = ["target", "clients", "recall calls/s", "vs direct", "p50 ms", "p95 ms", "client process CPU", "errors"]
    return markdown_table(header, cells)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--calls", type=int, default=40, help="calls per tool and target in each round")
    parser.add_argument("--rounds", type=int, default=1, help="latency rounds (all tools, every target)")
    parser.add_argument("--warmup", type=int, default=3, help="warm-up calls per tool and target")
    parser.add_argument("--clients", type=int, default=8, help="concurrent clients in the calls/s part")
    parser.add_argument("--duration", type=float, default=8.0, help="seconds per calls/s measurement")
    parser.add_argument("--embedder", default="e5", choices=["e5", "hashing"], help="the self-hosted store's")
    parser.add_argument("--no-self-hosted", action="store_true", help="skip memwarden self-hosted")
    parser.add_argument("--json", type=Path, help="also write the results as JSON here")
    args = parser.parse_args()
    on_self = not args.no_self_hosted
    bank = f"bench-mcp-{int(time.time())}"
    writes = Writes()
    started = time.perf_counter()

    with (
        hindsight() as hs_url,
        warden_in_front(hs_url, "aiohttp", mode="enforce") as (front_url, _),
        self_hosted(on_self, args.embedder) as own_url,
    ):
        print(f"  servers up ({time.perf_counter() - started:.0f} s); seeding {bank}", file=sys.stderr)
        seed(front_url, bank)
        if own_url:
            seed(own_url, bank)
        settle(hs_url, bank)
        urls = {DIRECT: f"{hs_url}/mcp/{bank}/", FRONT: f"{front_url}/mcp/{bank}/"}
        if own_url:
            urls[SELF] = f"{own_url}/mcp/{bank}/"
        settled = functools.partial(settle, hs_url, bank)
        tallies = asyncio.run(latency(urls, args.calls, args.rounds, args.warmup, writes, settled))
        settled()  # the writes' background work done before the calls/s part
        throughputs = rates(urls, args.clients, args.duration)

    rows = latency_rows(tallies)
    print(
        f"\nMachine: {machine()}; one call at a time, targets interleaved, {args.rounds} round(s) of "
        f"{args.calls} calls per tool and target after {args.warmup} warm-up calls; bank of {len(SEED)} "
        f"memories plus the writes; self-hosted embedder {args.embedder}; run {time.perf_counter() - started:.0f} s.\n"
    )
    print(latency_table(rows, on_self))
    print(
        f"\nrecall, {args.clients} concurrent clients (one session each), {args.duration:g} s per target (two passes, in turn forwards and backwards):\n"
    )
    print(throughput_table(throughputs))
    verdicts = {name: tallies["sync_retain"][name].verdicts for name in urls if name != DIRECT}
    print(f"\nsync_retain warden verdicts: {verdicts}")
    kept = all(
        set(v) == {"store"} and sum(v.values()) == len(tallies["sync_retain"][n].ms) for n, v in verdicts.items()
    )
    problems = [
        f"{tool} on {name}: {t.errors[0]}" for tool, by in tallies.items() for name, t in by.items() if t.errors
    ]
    problems += [f"recall calls/s on {r['target']}: {r['first_error']}" for r in throughputs if r["errors"]]
    if not kept:
        problems.append("a sync_retain through memwarden was not stored (verdicts above)")
    for problem in problems:
        print(f"  problem: {problem}", file=sys.stderr)
    write_json(
        args.json,
        {
            "machine": machine(),
            "latency": rows,
            "throughput": [{k: v for k, v in r.items() if k != "first_error"} for r in throughputs],
            "sync_retain_verdicts": verdicts,
        },
    )
    return 1 if problems else 0


if __name__ == "__main__":
    raise SystemExit(main())
