"""``memwarden migrate-state`` (#37): an installation's state moved from SQLite to PostgreSQL and
back as an operator does it — memwarden stopped, the command run, memwarden started on the target —
and everything it had is there and works: the memories, the key, the queued write (delivered), the
audit chain (verified, the move recorded, new events chained on). Refused, and nothing changed,
while memwarden runs, onto a database that holds state, and when a copy fails part-way."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import psycopg
import pytest

from memwarden.db.database import Database
from testing.loopback import free_port
from testing.postgres import drop_database, fresh_database
from testing.standin import Fault, Standin, running_standin
from tests.servers import MAIN, wait_memwarden

pytestmark = pytest.mark.postgresql

ENV = {
    "MEMWARDEN_LABELS__LEARNED": "off",
    "MEMWARDEN_RETENTION__ENABLED": "false",
    "MEMWARDEN_CONFIG_GUARD__MISSIONS__MODE": "off",
    "MEMWARDEN_OUTBOX__RETRY_INITIAL": "0.2",
    "MEMWARDEN_OUTBOX__RETRY_MAX": "0.5",
    "MEMWARDEN_SERVER__ACCESS_LOG": "false",
    "MEMWARDEN_BACKEND": "hindsight",
}
FACTS = [f"Decision: the billing service {n} runs on port {7000 + n} in production." for n in range(5)]
LATE = "Decision: the ledger service runs on port 7100 in production."


class Installation:
    """One data directory, served by memwarden in front of a stand-in, on SQLite or PostgreSQL."""

    def __init__(self, root: Path, backend: Standin) -> None:
        self.root, self.backend = root, backend
        self.data = root / "data"
        self.port = free_port()
        self.proc: subprocess.Popen[str] | None = None
        self.database: str | None = None  # None: SQLite in the data directory
        self.extra: dict[str, str] = {}  # more settings for every command and start (self-hosted)

    def env(self, extra: dict[str, str] | None = None) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith("MEMWARDEN_")} | ENV
        env["MEMWARDEN_BACKENDS__HINDSIGHT__URL"] = self.backend.url
        if self.database:
            env["MEMWARDEN_DATABASE__URL"] = self.database
        return env | self.extra | (extra or {})

    def cli(self, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-c", MAIN, *args],
            capture_output=True,
            text=True,
            timeout=180,
            env=self.env(env),
            cwd=self.root,
            check=False,
        )

    def migrate(self, to: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
        return self.cli("migrate-state", "--data-dir", str(self.data), "--to", to, env=env)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> None:
        log = (self.root / "serve.log").open("a")
        self.proc = subprocess.Popen(
            [sys.executable, "-c", MAIN, "serve", "--port", str(self.port), "--data-dir", str(self.data)],
            cwd=self.root,
            env=self.env(),
            stdout=subprocess.DEVNULL,
            stderr=log,
            text=True,
        )
        log.close()
        wait_memwarden(self.url, self.proc)

    def stop(self) -> None:
        if self.proc is not None:
            self.proc.send_signal(signal.SIGTERM)
            self.proc.wait(timeout=60)
            self.proc = None

    def client(self, token: str) -> httpx.Client:
        return httpx.Client(base_url=self.url, headers={"Authorization": f"Bearer {token}"}, timeout=60)


@pytest.fixture
def installation(tmp_path: Path) -> Iterator[Installation]:
    with running_standin(tmp_path / "backend", stats_ttl=0) as backend:
        rig = Installation(tmp_path, backend)
        try:
            yield rig
        finally:
            rig.stop()


@pytest.fixture
def target(postgres_server: str) -> Iterator[str]:
    url = fresh_database(postgres_server)
    yield url
    drop_database(url)


def audit(db_url: str) -> list[tuple[int, str]]:
    with psycopg.connect(db_url) as conn:
        return [(int(r[0]), str(r[1])) for r in conn.execute("SELECT seq, action FROM audit_events ORDER BY seq")]


def chain_of(data: Path) -> tuple[int, str]:
    """The SQLite state's audit chain: its length and head."""
    with contextlib.closing(sqlite3.connect(data / "memwarden.db")) as db:
        count = db.execute("SELECT COUNT(*) FROM audit_events").fetchone()[0]
        return int(count), str(db.execute("SELECT hash FROM audit_events ORDER BY seq DESC LIMIT 1").fetchone()[0])


def held(backend: Standin, bank: str = "ops") -> list[str]:
    with httpx.Client(base_url=backend.url, timeout=30) as direct:
        listed = direct.get(f"/v1/default/banks/{bank}/memories/list", params={"limit": 1000})
    return [m["text"] for m in listed.json()["items"]]


def back_to_sqlite(rig: Installation) -> None:
    """The state on PostgreSQL moved back to SQLite, the old SQLite file kept aside first (the
    target must hold no state)."""
    backup = rig.root / "sqlite-backup"
    backup.mkdir()
    for f in rig.data.glob("memwarden.db*"):
        f.rename(backup / f.name)
    back = rig.migrate("sqlite")
    assert back.returncode == 0, back.stderr


def wait_delivered(client: httpx.Client, timeout: float = 30) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if client.get("/warden/health").json()["outbox"]["queued_entries"] == 0:
            return
        time.sleep(0.2)
    raise AssertionError("the outbox did not drain")


def test_state_moves_to_postgresql_and_back_and_everything_in_it_works(installation: Installation, target: str) -> None:
    rig = installation
    made = rig.cli("keys", "create", "--data-dir", str(rig.data), "--name", "ops", "--admin", "*", "--json")
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    rig.start()
    with rig.client(token) as c:
        for fact in FACTS[:3]:
            r = c.post("/v1/default/banks/ops/memories", json={"items": [{"content": fact}]})
            assert r.status_code == 200, r.text
        refuse = Fault("POST", r"/memories$", status=503, detail="down")
        rig.backend.faults.append(refuse)  # the next writes are acknowledged, then wait in the outbox
        for fact in (FACTS[3], LATE):
            r = c.post("/v1/default/banks/ops/memories", json={"items": [{"content": fact}]})
            assert r.status_code == 200, r.text
        assert c.get("/warden/health").json()["outbox"]["queued_entries"] == 2
    rig.stop()
    rig.backend.faults.remove(refuse)
    assert FACTS[3] not in held(rig.backend)
    # The later entry as a process killed while delivering it leaves it: sending, owned by that process.
    with contextlib.closing(sqlite3.connect(rig.data / "memwarden.db")) as db, db:
        db.execute("UPDATE outbox SET state = 'sending', owner = 'killed-1' WHERE seq = (SELECT MAX(seq) FROM outbox)")

    moved = rig.migrate(target)
    assert moved.returncode == 0, moved.stderr
    assert "audit chain: head at event" in moved.stdout
    assert "the same on both sides" in moved.stdout
    assert "outbox" in moved.stdout
    assert "memories" in moved.stdout
    on_pg = audit(target)
    assert on_pg[-1][1] == "state_migrated"

    rig.database = target
    rig.start()  # on PostgreSQL now: the same key lets in, the queued write and the one in flight delivered once
    with rig.client(token) as c:
        assert c.get("/warden/health").json()["instance"]["database"] == "postgresql"
        wait_delivered(c)
        assert held(rig.backend).count(FACTS[3]) == 1
        assert held(rig.backend).count(LATE) == 1
        r = c.post("/v1/default/banks/ops/memories", json={"items": [{"content": FACTS[4]}]})
        assert r.status_code == 200, r.text  # new rows after the copied ids (the outbox's, the chain's)
        listed = c.get("/warden/v1/banks/ops/memories", params={"limit": 100}).json()
        contents = {m["content"] for m in listed["items"]}
        assert set(FACTS) <= contents
        verified = c.get("/warden/v1/audit/verify").json()
        assert verified["ok"] is True, verified["problems"][:3]
    rig.stop()
    assert rig.cli("audit", "verify", "--data-dir", str(rig.data)).returncode == 0

    # Back to SQLite: the old file still holds the state it had, so it is refused until moved away.
    last = audit(target)
    refused = rig.migrate("sqlite")
    assert refused.returncode == 1
    assert "already holds memwarden state" in refused.stderr
    assert "memwarden.db" in refused.stderr
    assert audit(target) == last  # nothing changed on the source either
    back_to_sqlite(rig)
    assert audit(target)[-1][1] == "state_migrated"  # the source's chain says where its state went
    with psycopg.connect(target) as conn:
        reason = conn.execute("SELECT reason FROM audit_events ORDER BY seq DESC LIMIT 1").fetchone()[0]
    assert reason.startswith("memwarden's state copied to sqlite ")

    rig.database = None
    rig.start()
    with rig.client(token) as c:
        assert c.get("/warden/health").json()["instance"]["database"] == "sqlite"
        listed = c.get("/warden/v1/banks/ops/memories", params={"limit": 100}).json()
        assert set(FACTS) <= {m["content"] for m in listed["items"]}
        events = c.get("/warden/v1/audit", params={"action": "state_migrated", "limit": 10}).json()["events"]
        said = sorted(e["reason"] for e in events)
        assert any("from sqlite" in s for s in said), said
        assert any("from postgresql" in s for s in said), said
    rig.stop()
    verify = rig.cli("audit", "verify", "--data-dir", str(rig.data))
    assert verify.returncode == 0, verify.stderr


def test_a_move_is_refused_while_memwarden_runs_and_onto_a_database_with_state(
    installation: Installation, target: str
) -> None:
    rig = installation
    rig.start()
    refused = rig.migrate(target)
    assert refused.returncode == 1
    assert "memwarden is running on sqlite" in refused.stderr
    assert f"pid {rig.proc.pid}" in refused.stderr
    with psycopg.connect(target) as conn:  # refused before either side was touched: not even a schema
        assert conn.execute("SELECT to_regclass('audit_events')").fetchone()[0] is None
    rig.stop()

    # A password on the command line (every user of the machine can read it) is refused; in the
    # environment it is not read from the command line.
    with_password = target.replace("postgres@", "postgres:hunter2@", 1)
    said = rig.migrate(with_password)
    assert said.returncode == 2
    assert "carries a password" in said.stderr
    assert "hunter2" not in said.stderr
    assert rig.migrate("mysql://db/x").returncode == 2

    # A data directory with no state in it is not a source (a mistyped --data-dir would copy nothing).
    typo = rig.cli("migrate-state", "--data-dir", str(rig.root / "dtaa"), "--to", target)
    assert typo.returncode == 1
    assert "no memwarden database in" in typo.stderr
    assert not (rig.root / "dtaa").exists()

    # The target's URL with its password in the environment (not on the command line): moved, and
    # the password is nowhere in what is printed or in either audit chain.
    moved = rig.cli("migrate-state", "--data-dir", str(rig.data), env={"MEMWARDEN_MIGRATE_STATE_TO": with_password})
    assert moved.returncode == 0, moved.stderr
    assert "hunter2" not in moved.stdout + moved.stderr
    assert "postgres:***@" in moved.stdout
    with psycopg.connect(target) as conn:
        assert conn.execute("SELECT count(*) FROM audit_events WHERE reason LIKE '%hunter2%'").fetchone()[0] == 0
    with contextlib.closing(sqlite3.connect(rig.data / "memwarden.db")) as db:
        assert db.execute("SELECT count(*) FROM audit_events WHERE after LIKE '%hunter2%'").fetchone()[0] == 0
        assert db.execute("SELECT count(*) FROM audit_events WHERE reason LIKE '%***%'").fetchone()[0] == 1
    again = rig.migrate(target)  # the target holds state now
    assert again.returncode == 1
    assert "already holds memwarden state" in again.stderr
    assert "use an empty database" in again.stderr


def test_a_copy_that_fails_part_way_leaves_the_target_empty_and_the_source_unchanged(
    installation: Installation, target: str
) -> None:
    rig = installation
    made = rig.cli("keys", "create", "--data-dir", str(rig.data), "--name", "ops", "--admin", "*", "--json")
    token = json.loads(made.stdout)["token"]
    rig.start()
    with rig.client(token) as c:
        for fact in FACTS:
            assert c.post("/v1/default/banks/ops/memories", json={"items": [{"content": fact}]}).status_code == 200
    rig.stop()
    before = chain_of(rig.data)

    # The target refuses the last memory (a constraint of its own): the copy fails part-way.
    Database.open(rig.root / "other", url=target).close()
    with psycopg.connect(target, autocommit=True) as conn:
        conn.execute(f"ALTER TABLE memories ADD CONSTRAINT refuse_one CHECK (content <> '{FACTS[-1]}')")
    failed = rig.migrate(target)
    assert failed.returncode == 1
    assert "nothing was changed" in failed.stderr
    assert "refuse_one" in failed.stderr
    with psycopg.connect(target) as conn:
        for table in ("memories", "audit_events", "api_keys", "outbox"):
            assert conn.execute(f"SELECT COUNT(*) FROM {table}").fetchone()[0] == 0, table  # noqa: S608
    assert chain_of(rig.data) == before


SELF_HOSTED = {"MEMWARDEN_BACKEND": "local", "MEMWARDEN_LOCAL__EMBEDDER": "hashing"}
NOTES = [
    "Decision: the billing service runs on port 7001 in production.",
    "Decision: the search cluster is rebuilt every Sunday night from the nightly snapshot.",
    "Decision: invoices older than seven years are archived to cold storage.",
    "Decision: the mobile app release train ships every second Thursday.",
    "Decision: on-call engineers get a day off after a weekend shift.",
    "Decision: the data warehouse keeps raw events for ninety days.",
]
QUESTIONS = ["which port does billing use", "when is the search cluster rebuilt", "how long are raw events kept"]


def recalled(c: httpx.Client) -> list[tuple[str, frozenset[str]]]:
    """Each question's best answer, and every memory it found (below the answer, memories that share
    no word with it, whose near-equal scores may order differently on each engine)."""
    found = []
    for question in QUESTIONS:
        r = c.post("/v1/default/banks/notes/memories/recall", json={"query": question, "max_tokens": 4096})
        assert r.status_code == 200, r.text
        texts = [m["text"] for m in r.json()["results"]]
        found.append((texts[0], frozenset(texts)))
    return found


def test_a_self_hosted_store_moves_with_the_state_and_answers_the_same(installation: Installation, target: str) -> None:
    """Self-hosted (backend = "local"), the store's banks are part of the installation's state:
    migrate-state moves them too — memories, vectors, the full-text index rebuilt by the target's
    triggers — and a recall answers the same on PostgreSQL, and back on SQLite."""
    rig = installation
    rig.extra = SELF_HOSTED
    made = rig.cli("keys", "create", "--data-dir", str(rig.data), "--name", "ops", "--admin", "*", "--json")
    assert made.returncode == 0, made.stderr
    token = json.loads(made.stdout)["token"]
    rig.start()
    with rig.client(token) as c:
        r = c.post("/v1/default/banks/notes/memories", json={"items": [{"content": n} for n in NOTES]})
        assert r.status_code == 200, r.text
        before = recalled(c)
    rig.stop()
    assert [best for best, _ in before] == [NOTES[0], NOTES[1], NOTES[5]]

    moved = rig.migrate(target)
    assert moved.returncode == 0, moved.stderr
    assert "store_units" in moved.stdout
    with psycopg.connect(target) as conn:
        units = conn.execute("SELECT COUNT(*), COUNT(embedding_v), COUNT(embedding) FROM store_units").fetchone()
        assert tuple(units) == (len(NOTES), len(NOTES), 0)  # each vector pgvector's, kept once
        assert conn.execute("SELECT COUNT(DISTINCT seq) FROM store_terms").fetchone()[0] == len(NOTES)

    rig.database = target
    rig.start()
    with rig.client(token) as c:
        assert c.get("/warden/health").json()["instance"]["database"] == "postgresql"
        assert recalled(c) == before
        late = "Decision: the staging database is reset every Monday morning."
        r = c.post("/v1/default/banks/notes/memories", json={"items": [{"content": late}]})
        assert r.status_code == 200, r.text  # a new memory after the copied ones
        r = c.post("/v1/default/banks/notes/memories/recall", json={"query": "when is staging reset"})
        assert late in [m["text"] for m in r.json()["results"]]
        on_postgresql = recalled(c)
    rig.stop()

    back_to_sqlite(rig)
    rig.database = None
    rig.start()
    with rig.client(token) as c:
        assert c.get("/warden/health").json()["instance"]["database"] == "sqlite"
        assert recalled(c) == on_postgresql
        health = c.get("/warden/health").json()
        assert health["status"] == "ok", health
    rig.stop()
    with contextlib.closing(sqlite3.connect(rig.data / "memwarden.db")) as db:
        assert db.execute("SELECT COUNT(*) FROM store_units_fts_docsize").fetchone()[0] == len(NOTES) + 1
        assert db.execute("SELECT COUNT(*) FROM store_units WHERE embedding IS NULL").fetchone()[0] == 0
