"""Proxy overhead: the same request mix sent directly to an upstream and through memwarden.

Runs wrk (``apt-get install wrk``) at 1 and 32 concurrent connections against

  (a) a trivial in-memory upstream (``bench/trivial_upstream.py``) — memwarden's cost alone,
      with both HTTP transports memwarden can use (aiohttp, the default; plain httpx), and with an
      API key required (every request presents one: the key check's cost beside the open row);
  (b) the real Hindsight 1.1.0 server (started with ``scripts/hindsight-up``) — what a user sees;
      and, as its own rows (``hs list``), memory lists with a tag filter that names no label, which
      memwarden fans out to look past its topic and stage labels.

Every server is a separate process on loopback, started and stopped by this script by PID; wrk,
memwarden and the upstream share the machine's cores, so req/s are lower bounds. Prints a
Markdown table (median and p99 latency, req/s, added latency, throughput ratio).

Usage: python -m bench.proxy_overhead [--duration 10] [--quick] [--no-hindsight] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from dataclasses import asdict, dataclass
from pathlib import Path

import httpx

from bench.harness import (
    hindsight,
    machine,
    make_key,
    markdown_table,
    run_wrk,
    trivial_upstream,
    wait_settled,
    warden_in_front,
    write_json,
)

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
# A list filter that names no label: memwarden looks past its topic and stage labels with one
# backend query per topic × stage × separator (48 with the default vocabulary), 8 at a time.
LABEL_BLIND_LIST = [
    ("GET", "/v1/default/banks/{bank}/memories/list?limit=10&tags=user:alice&tags_match=any", ""),
    ("GET", "/v1/default/banks/{bank}/memories/list?limit=10&tags=user:alice&tags_match=exact", ""),
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


def lua_script(mix: list[tuple[str, str, str]], token: str | None = None) -> str:
    lines = ["local reqs = {}"]
    for i, (method, path, body) in enumerate(mix, start=1):
        fields = ([f'["Authorization"]={json.dumps("Bearer " + token)}'] if token else []) + (
            ['["Content-Type"]="application/json"'] if body else []
        )
        headers = "{" + ", ".join(fields) + "}"
        lines.append(f"reqs[{i}] = wrk.format({json.dumps(method)}, {json.dumps(path)}, {headers}, {json.dumps(body)})")
    lines += ["local i = 0", "request = function()", "  i = i + 1", "  return reqs[(i % #reqs) + 1]", "end"]
    return "\n".join(lines) + "\n"


Target = str | tuple[str, str]  # a URL, or a URL and the API key its requests present


def measure(label: str, targets: dict[str, Target], mix: list[tuple[str, str, str]], duration: float) -> list[Row]:
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        for connections in (1, 32):
            for path, target in targets.items():
                url, token = (target, None) if isinstance(target, str) else target
                script = Path(tmp) / f"mix-{len(rows)}.lua"
                script.write_text(lua_script(mix, token))
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
    direct = {(r.upstream, r.connections): r for r in rows if r.path == "direct"}
    cells = []
    for r in rows:
        d = direct[(r.upstream, r.connections)]
        added = "" if r.path == "direct" else f"{r.p50_ms - d.p50_ms:+.2f}"
        added99 = "" if r.path == "direct" else f"{r.p99_ms - d.p99_ms:+.2f}"
        ratio = "" if r.path == "direct" else f"{r.rps / d.rps:.2f}"
        numbers = [f"{r.p50_ms:.2f}", f"{r.p99_ms:.2f}", f"{r.rps:,.0f}", added, added99, ratio, r.errors]
        cells.append([r.upstream, r.path, r.connections, *numbers])
    header = ["upstream", "path", "conns", "p50 ms", "p99 ms", "req/s", "added p50 ms", "added p99 ms"]
    return markdown_table([*header, "req/s vs direct", "errors"], cells)


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
    tokens: list[str] = []
    with (
        trivial_upstream() as up_url,
        warden_in_front(up_url, "aiohttp") as (warden_url, _),
        warden_in_front(up_url, "aiohttp", setup=lambda d: tokens.append(make_key(d))) as (keyed_url, _),
        warden_in_front(up_url, "httpx") as (warden_httpx_url, _),
    ):
        targets: dict[str, Target] = {
            "direct": up_url,
            "memwarden (aiohttp)": warden_url,
            "memwarden (aiohttp, API key)": (keyed_url, tokens[0]),
            "memwarden (httpx)": warden_httpx_url,
        }
        rows += measure("trivial", targets, TRIVIAL_MIX, duration)

    if not args.no_hindsight:
        with hindsight() as hs_url:
            bank = "bench-proxy"
            with httpx.Client(base_url=hs_url, timeout=60) as http:
                http.put(f"/v1/default/banks/{bank}", json={}).raise_for_status()
                items = [
                    {"content": f"Alice coffee note {i}: she prefers dark roast.", "tags": ["user:alice"]}
                    for i in range(20)
                ]
                http.post(f"/v1/default/banks/{bank}/memories", json={"items": items}).raise_for_status()
                wait_settled(http, bank, timeout=120)
            with warden_in_front(hs_url, "aiohttp") as (warden_url, _):
                mix = [(m, p.format(bank=bank), b) for m, p, b in HINDSIGHT_MIX]
                rows += measure("hindsight", {"direct": hs_url, "memwarden (aiohttp)": warden_url}, mix, duration)
            with warden_in_front(hs_url, "aiohttp", mode="enforce") as (governed_url, _):
                mix = [(m, p.format(bank=bank), b) for m, p, b in LABEL_BLIND_LIST]
                pair = {"direct": hs_url, "memwarden (aiohttp, governed)": governed_url}
                rows += measure("hs list", pair, mix, duration)

    print(f"\nMachine: {machine()}; wrk -t1, {duration:.0f} s per row, after a warm-up.\n")
    print(table(rows))
    write_json(args.json, {"machine": machine(), "rows": [asdict(r) for r in rows]})
    failed = [r for r in rows if r.errors]
    if failed:
        print(f"\n{len(failed)} rows had errors", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
