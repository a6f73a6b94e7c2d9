"""Several memwarden instances on one PostgreSQL behave as one (#37): three processes as a user runs
them, eight writers spread over them, a guarded config PATCH on one, another killed with SIGKILL
mid-burst and started again, the backend refusing writes for 20 s — then every acknowledged item is
in the backend exactly once, each writer's items in the order it wrote them, the audit chain
verifies, and the change was not rolled back."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from testing.loopback import free_port
from testing.postgres import drop_database, fresh_database
from testing.standin import Fault, Standin, running_standin
from tests.servers import MAIN, wait_memwarden

pytestmark = pytest.mark.postgresql

WRITERS, BANKS = 8, ("alpha", "beta")
OUTAGE = 20.0
LABELS = {"entity_labels": {"topic": ["infra", "code"], "stage": ["decision", "reference"]}}


class Cluster:
    """Three memwarden processes on one PostgreSQL database, in front of one stand-in."""

    def __init__(self, root: Path, backend: Standin, database: str) -> None:
        self.root, self.backend, self.database = root, backend, database
        self.ports = [free_port() for _ in range(3)]
        self.procs: list[subprocess.Popen[str] | None] = [None, None, None]
        self.checkpoints = root / "checkpoints"  # the one folder every instance mounts
        first = root / "i0"
        first.mkdir(parents=True)
        self.key = self._cli("keys", "create", "--data-dir", str(first), "--name", "t", "--admin", "*", "--json")
        self.token = json.loads(self.key)["token"]
        for i in (1, 2):  # the same installation key everywhere: one keyed chain
            (root / f"i{i}").mkdir()
            shutil.copy(first / "installation.key", root / f"i{i}" / "installation.key")

    def env(self) -> dict[str, str]:
        return {
            "MEMWARDEN_DATABASE__URL": self.database,
            "MEMWARDEN_AUDIT__CHECKPOINT_DIR": str(self.checkpoints),
            "MEMWARDEN_LABELS__LEARNED": "off",
            "MEMWARDEN_RETENTION__ENABLED": "false",
            "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
            "MEMWARDEN_OUTBOX__RETRY_MAX": "1.0",
            "MEMWARDEN_OUTBOX__RETRY_INITIAL": "0.2",
            "MEMWARDEN_SERVER__ACCESS_LOG": "false",
        }

    def _cli(self, *args: str) -> str:
        done = subprocess.run(
            [sys.executable, "-c", MAIN, *args],
            capture_output=True,
            text=True,
            timeout=120,
            env={k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")} | self.env(),
            check=False,
        )
        assert done.returncode == 0, done.stderr
        return done.stdout

    def url(self, i: int) -> str:
        return f"http://127.0.0.1:{self.ports[i]}"

    def start(self, i: int) -> None:
        # Its log to a file (a pipe nobody reads fills and stops the process mid-burst).
        with (self.root / f"i{i}.log").open("a") as log:
            proc = subprocess.Popen(
                [sys.executable, "-c", MAIN, "serve", *self.options(i)],
                cwd=self.root,
                env={k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")} | self.env(),
                stdout=subprocess.DEVNULL,
                stderr=log,
                text=True,
            )
        self.procs[i] = proc
        wait_memwarden(self.url(i), proc)

    def options(self, i: int) -> list[str]:
        return ["--port", str(self.ports[i]), "--data-dir", str(self.root / f"i{i}"), "--upstream", self.backend.url]

    def logs(self) -> str:
        return "\n".join(f"--- i{i}\n" + (self.root / f"i{i}.log").read_text()[-3000:] for i in range(3))

    def kill(self, i: int) -> None:
        proc = self.procs[i]
        assert proc is not None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=30)
        self.procs[i] = None

    def stop(self) -> None:
        for proc in self.procs:
            if proc is not None:
                proc.terminate()
        for proc in self.procs:
            if proc is not None:
                try:
                    proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()

    def client(self, i: int) -> httpx.Client:
        return httpx.Client(base_url=self.url(i), headers={"Authorization": f"Bearer {self.token}"}, timeout=60)


@pytest.fixture
def cluster(tmp_path: Path, postgres_server: str) -> Iterator[Cluster]:
    database = fresh_database(postgres_server)
    with running_standin(tmp_path / "backend", stats_ttl=0) as backend:
        rig = Cluster(tmp_path, backend, database)
        try:
            for i in range(3):
                rig.start(i)
            yield rig
        finally:
            rig.stop()
            drop_database(database)


def text(writer: int, n: int) -> str:
    return f"Decision: service w{writer} runs release r{n:04d} on port {9000 + n} in production."


def test_three_instances_on_one_postgresql_lose_nothing_and_keep_each_writers_order(cluster: Cluster) -> None:
    acked: dict[int, list[tuple[str, str]]] = {w: [] for w in range(WRITERS)}  # writer → (bank, text) acknowledged
    stop = threading.Event()
    errors: list[str] = []

    def writer(w: int) -> None:
        clients = [cluster.client(i) for i in range(3)]
        bank, n = BANKS[w % len(BANKS)], 0
        while not stop.is_set():
            content, target = text(w, n), (w + n) % 3
            n += 1
            try:
                r = clients[target].post(f"/v1/default/banks/{bank}/memories", json={"items": [{"content": content}]})
            except httpx.TransportError:  # its instance is down: not acknowledged
                continue
            if r.status_code == 200 and json.loads(r.headers.get("x-warden-decisions", "{}")).get("store") == 1:
                acked[w].append((bank, content))
            elif r.status_code not in (503,):  # a write waiting on a guarded change past its bound: 503
                errors.append(f"{r.status_code} {r.text[:200]}")
            time.sleep(0.02)
        for c in clients:
            c.close()

    threads = [threading.Thread(target=writer, args=(w,), daemon=True) for w in range(WRITERS)]
    for t in threads:
        t.start()
    time.sleep(3)
    with cluster.client(0) as admin:  # a guarded change while the others write to the bank
        patched = admin.patch("/v1/default/banks/alpha/config", json={"updates": LABELS})
        assert patched.status_code == 200, (patched.text, cluster.logs())
    time.sleep(1)
    cluster.kill(1)  # mid-burst: its deliveries in flight are the others' to finish
    time.sleep(2)
    cluster.start(1)
    refuse = Fault("POST", r"/memories$", status=503, detail="down for maintenance")
    cluster.backend.faults.append(refuse)  # the backend takes no write for OUTAGE seconds
    time.sleep(OUTAGE)
    cluster.backend.faults.remove(refuse)
    time.sleep(2)
    stop.set()
    for t in threads:
        t.join(timeout=120)
    assert not errors, errors[:5]

    # Every instance's outbox drains: the entries queued during the outage are all delivered.
    deadline = time.monotonic() + 90
    with cluster.client(2) as c:
        while time.monotonic() < deadline:
            outbox = c.get("/warden/health").json()["outbox"]
            if outbox["queued_entries"] == 0:
                break
            time.sleep(0.5)
        assert outbox["queued_entries"] == 0, outbox
        assert outbox["dead_letters"] == 0, outbox
        health = []
        for i in range(3):
            with cluster.client(i) as each:
                health.append(each.get("/warden/health").json())
        assert len({h["instance"]["id"] for h in health}) == 3
        assert {h["instance"]["database"] for h in health} == {"postgresql"}

    total = sum(len(v) for v in acked.values())
    assert total > 200, total  # the burst wrote through the kill and the outage
    for bank in BANKS:
        with httpx.Client(base_url=cluster.backend.url, timeout=60) as direct:
            listed = direct.get(f"/v1/default/banks/{bank}/memories/list", params={"limit": 100_000})
        held = [m["text"] for m in listed.json()["items"]]
        for w in range(WRITERS):
            mine = [content for b, content in acked[w] if b == bank]
            for content in mine:  # each acknowledged item exactly once
                assert held.count(content) == 1, (content, held.count(content))
    # Each writer's acknowledged items reached the backend in the order it wrote them.
    delivered: list[str] = []
    for seen in cluster.backend.seen("POST", r"/memories$"):
        if seen.status == 200:
            delivered += [item["content"] for item in seen.body["items"] if item["content"] not in delivered]
    position = {content: i for i, content in enumerate(delivered)}
    for w in range(WRITERS):
        order = [position[content] for _, content in acked[w]]
        assert order == sorted(order), f"writer {w}'s items out of order"

    with cluster.client(0) as c:
        said = c.get("/warden/v1/audit", params={"bank": "alpha", "action": "config_rollback,config_verify"})
        actions = [e["action"] for e in said.json()["events"]]
        assert actions == ["config_verify"], actions  # verified, not rolled back
        verified = c.get("/warden/v1/audit/verify").json()
        assert verified["ok"] is True, verified["problems"][:3]
    offline = cluster._cli("audit", "verify", "--data-dir", str(cluster.root / "i2"))
    assert "hash chain verified" in offline


def options(port: int, root: Path, upstream: str) -> list[str]:
    return ["--port", str(port), "--data-dir", str(root / "data"), "--upstream", upstream]


def test_serve_workers_runs_processes_over_the_shared_state(tmp_path: Path, postgres_server: str) -> None:
    database = fresh_database(postgres_server)
    port = free_port()
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    env |= {
        "MEMWARDEN_DATABASE__URL": database,
        "MEMWARDEN_LABELS__LEARNED": "off",
        "MEMWARDEN_SERVER__ACCESS_LOG": "false",
    }
    try:
        with running_standin(tmp_path / "backend") as backend, (tmp_path / "serve.log").open("w") as log:
            proc = subprocess.Popen(
                [sys.executable, "-c", MAIN, "serve", "--workers", "3", *options(port, tmp_path, backend.url)],
                cwd=tmp_path,
                env=env,
                stdout=subprocess.DEVNULL,
                stderr=log,
            )
            url = f"http://127.0.0.1:{port}"
            try:
                wait_memwarden(url, proc)  # type: ignore[arg-type]
                answered: list[dict[str, object]] = []

                def ask() -> None:
                    for _ in range(15):
                        with httpx.Client(timeout=30) as c:  # a new connection each time: any process may take it
                            answered.append(c.get(f"{url}/warden/health").json()["instance"])

                threads = [threading.Thread(target=ask) for _ in range(8)]
                for t in threads:
                    t.start()
                for t in threads:
                    t.join()
                assert len({a["pid"] for a in answered}) >= 2, "one process answered every request"
                assert {a["database"] for a in answered} == {"postgresql"}
                # A write through one process is read through another: one state.
                with httpx.Client(base_url=url, timeout=30) as c:
                    stored = c.post("/v1/default/banks/w/memories", json={"items": [{"content": text(0, 1)}]})
                    assert stored.status_code == 200, stored.text
                    for _ in range(20):
                        with httpx.Client(base_url=url, timeout=30) as other:
                            listed = other.get("/warden/v1/banks/w/memories").json()
                            assert [m["content"] for m in listed["items"]] == [text(0, 1)]
            finally:
                proc.terminate()
                proc.wait(timeout=60)
        assert proc.returncode == 0, (tmp_path / "serve.log").read_text()[-2000:]
    finally:
        drop_database(database)


def test_serve_workers_on_sqlite_is_refused_and_says_why(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")}
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "serve", "--workers", "2", "--data-dir", str(tmp_path / "d")],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        check=False,
    )
    assert done.returncode == 2
    assert "--workers above 1 needs memwarden's state on PostgreSQL" in done.stderr
    assert not (tmp_path / "d").exists()  # nothing made
