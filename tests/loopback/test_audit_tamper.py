"""An audit that survives an attacker with file access: the keyed chain, signed checkpoints outside
the database, and a start that notices — each attack done as an attacker would do it, on the files,
then ``memwarden audit verify`` (a process, as a user runs it) and ``/warden/health``."""

from __future__ import annotations

import json
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import httpx

from memwarden.db.audit import EVENT_FIELDS, GENESIS, TRIGGERS, AuditEvent, append_events, audit_key, event_hash
from memwarden.db.checkpoints import CHECKPOINT_FILE
from memwarden.db.checkpoints import every as every_checkpoint
from memwarden.db.database import Database
from memwarden.db.installation import KEY_FILE, read_installation_key
from memwarden.settings import Settings
from tests.conftest import running_warden
from tests.loopback.test_local_store import local_settings
from tests.servers import MAIN


def make_ledger(data: Path, events: int = 12) -> None:
    ledger = Database.open(data)
    try:
        for i in range(events):
            ledger.write_sync(lambda db, i=i: append_events(db, [AuditEvent("add", bank="b", reason=f"fact {i}")]))
    finally:
        ledger.close()  # a checkpoint of the head, as at every stop


def verify(data: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", MAIN, "audit", "verify", "--data-dir", str(data), *extra],
        capture_output=True,
        text=True,
        timeout=120,
    )


def tamper(
    data: Path, edit: str | None = None, *, keyed: bool, drop_after: int | None = None, keyed_from: str | None = None
) -> None:
    """What an attacker with the files does: triggers dropped, an event edited (or the tail cut),
    every hash after it recomputed — with the key read from the data folder (``keyed``) or as plain
    SHA-256 — and the triggers put back."""
    stolen = read_installation_key(data)
    assert stolen is not None
    key = audit_key(stolen) if keyed else None
    db = sqlite3.connect(data / "memwarden.db", isolation_level=None)
    db.row_factory = sqlite3.Row
    try:
        db.execute("DROP TRIGGER audit_no_update")
        db.execute("DROP TRIGGER audit_no_delete")
        if keyed_from is not None:  # the chain's start moved (to pass a forgery off as unkeyed)
            db.execute("UPDATE audit_meta SET value = ? WHERE name = 'keyed_from'", (keyed_from,))
        if edit is not None:
            db.execute("UPDATE audit_events SET reason = ? WHERE seq = 5", (edit,))
        if drop_after is not None:
            db.execute("DELETE FROM audit_events WHERE seq > ?", (drop_after,))
        prev = GENESIS
        for row in db.execute("SELECT * FROM audit_events ORDER BY seq").fetchall():
            event = {f: row[f] for f in EVENT_FIELDS}
            digest = event_hash(row["seq"], event, prev, key)
            db.execute("UPDATE audit_events SET prev_hash = ?, hash = ? WHERE seq = ?", (prev, digest, row["seq"]))
            prev = digest
        for statement in TRIGGERS.values():
            db.execute(statement)
    finally:
        db.close()


def test_an_intact_ledger_verifies_and_its_files_are_private(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    result = verify(data)
    assert result.returncode == 0, result.stderr
    assert "audit log intact: 12 events" in result.stdout
    assert (data / "checkpoints").stat().st_mode & 0o777 == 0o700
    assert (data / "checkpoints" / CHECKPOINT_FILE).stat().st_mode & 0o777 == 0o600


def test_an_edit_with_the_hashes_recomputed_as_before_is_caught(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    tamper(data, "nothing happened here", keyed=False)  # the attack of the issue: unkeyed SHA-256 recomputed
    result = verify(data)
    assert result.returncode == 1
    assert "event 1: event edited" in result.stderr  # without the key no hash is right


def test_an_edit_re_chained_with_the_key_is_caught_by_the_checkpoint(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    tamper(data, "nothing happened here", keyed=True)  # the key stolen from the data folder
    result = verify(data)
    assert result.returncode == 1
    assert "event 12: the event at the checkpoint is not the one signed" in result.stderr


def test_a_truncated_tail_is_caught_without_the_mirror(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    tamper(data, keyed=True, drop_after=9)
    mirror = data / "audit.jsonl"
    kept = [line for line in mirror.read_text().splitlines() if json.loads(line)["seq"] <= 9]
    mirror.write_text("\n".join(kept) + "\n")  # the attacker trims the mirror too
    result = verify(data)
    assert result.returncode == 1
    assert "events 10-12 and on are gone (truncated)" in result.stderr


def test_checkpoints_rewritten_too_are_caught_with_the_logs_copy(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    shipped = (data / "checkpoints" / CHECKPOINT_FILE).read_text().splitlines()[-1]  # the log's copy, elsewhere
    tamper(data, "nothing happened here", keyed=True)
    (data / "checkpoints" / CHECKPOINT_FILE).unlink()  # the attacker removes the local checkpoints
    make_ledger(data, events=0)  # a start and a stop sign the forged head
    assert verify(data).returncode == 0  # nothing local can tell any more
    result = verify(data, "--checkpoint", shipped)
    assert result.returncode == 1
    assert "the event at the checkpoint is not the one signed" in result.stderr
    forged = json.dumps({**json.loads(shipped), "hash": "0" * 64})
    result = verify(data, "--checkpoint", forged)
    assert "the checkpoint's signature is wrong" in result.stderr


def test_the_server_starts_critical_on_dropped_triggers_and_a_chain_that_disagrees(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    db = sqlite3.connect(data / "memwarden.db", isolation_level=None)
    db.execute("DROP TRIGGER audit_no_delete")
    db.close()
    with running_warden(local_settings(data)) as url:
        health = httpx.get(f"{url}/warden/health").json()
        events = httpx.get(f"{url}/warden/v1/audit", params={"action": "audit_tamper"}).json()["events"]
    assert health["status"] == "critical"
    assert health["audit"]["alarms"] == ["the append-only trigger audit_no_delete was missing (recreated)"]
    assert len(events) == 1
    assert events[0]["actor"] == "memwarden"
    db = sqlite3.connect(data / "memwarden.db")
    names = {r[0] for r in db.execute("SELECT name FROM sqlite_master WHERE type = 'trigger'")}
    db.close()
    assert set(TRIGGERS) <= names  # put back: appends are protected again

    other = tmp_path / "other"
    make_ledger(other)
    tamper(other, "nothing happened here", keyed=True)
    with running_warden(local_settings(other)) as url:
        health = httpx.get(f"{url}/warden/health").json()
    assert health["status"] == "critical"
    assert any("not the one signed" in alarm for alarm in health["audit"]["alarms"])
    with running_warden(local_settings(other)) as url:  # a checkpoint written since does not bless it
        assert httpx.get(f"{url}/warden/health").json()["status"] == "critical"


def test_a_ledger_from_before_the_keyed_chain_keeps_verifying(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data, events=5)
    # As an older memwarden left it: plain hashes, no keyed start, no checkpoints, and a key file
    # with the key alone (no record of a keyed chain).
    tamper(data, keyed=False)
    db = sqlite3.connect(data / "memwarden.db", isolation_level=None)
    db.execute("DELETE FROM audit_meta")
    db.close()
    (data / "checkpoints" / CHECKPOINT_FILE).unlink()
    key_file = data / KEY_FILE
    key_file.write_text(key_file.read_text().splitlines()[0] + "\n")
    make_ledger(data, events=3)  # opened by this memwarden: keyed from event 6 on
    result = verify(data)
    assert result.returncode == 0, result.stderr
    assert "audit log intact: 8 events" in result.stdout
    db = sqlite3.connect(data / "memwarden.db")
    assert db.execute("SELECT value FROM audit_meta WHERE name = 'keyed_from'").fetchone()[0] == "6"
    db.close()


# -- found by a review: each reproduced first ----------------------------------------------------


def test_passing_a_forgery_off_as_an_unkeyed_chain_is_caught_without_the_checkpoints(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    # "Keyed from a billion": every event plain, re-chained without the key.
    tamper(data, "forged without the key", keyed=False, keyed_from="1000000000")
    (data / "checkpoints" / CHECKPOINT_FILE).unlink()
    (data / "audit.jsonl").unlink()
    result = verify(data)
    assert result.returncode == 1
    assert "the chain's facts (audit_meta) were edited" in result.stderr
    ledger = Database.open(data)
    try:
        assert any("were edited" in alarm for alarm in ledger.alarms)
    finally:
        ledger.close()


def test_checkpoints_deleted_with_the_tail_are_caught(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    db = sqlite3.connect(data / "memwarden.db", isolation_level=None)
    db.execute("DROP TRIGGER audit_no_delete")
    db.execute("DELETE FROM audit_events WHERE seq > 6")
    db.execute(TRIGGERS["audit_no_delete"])
    db.close()
    (data / "checkpoints" / CHECKPOINT_FILE).unlink()
    mirror = data / "audit.jsonl"
    mirror.write_text("".join(mirror.read_text().splitlines(keepends=True)[:6]))
    result = verify(data)
    assert result.returncode == 1
    assert "checkpoints are missing (the ledger wrote a checkpoint at event 12" in result.stderr
    ledger = Database.open(data)
    try:
        assert any("checkpoints are missing" in alarm for alarm in ledger.alarms)
    finally:
        ledger.close()


def _audit_settings(data: Path, **audit: object) -> Settings:
    settings = local_settings(data)
    return settings.model_copy(update={"audit": settings.audit.model_copy(update=audit)})


def test_a_burst_then_quiet_is_signed_by_the_timer(tmp_path: Path) -> None:
    data = tmp_path / "data"
    with running_warden(_audit_settings(data, checkpoint_interval=0.3)) as url:
        for i in range(3):
            fact = {"items": [{"content": f"The rack in room {i} holds 4 servers."}]}
            assert httpx.post(f"{url}/v1/default/banks/ops/memories", json=fact).status_code == 200
        head = httpx.get(f"{url}/warden/v1/audit").json()["last_seq"]
        deadline = time.monotonic() + 5
        while not (found := every_checkpoint(data / "checkpoints")) or found[-1].seq < head:
            assert time.monotonic() < deadline, "no checkpoint of the head while the server was quiet"
            time.sleep(0.1)


def test_a_checkpoint_that_cannot_be_written_does_not_fail_the_write(tmp_path: Path) -> None:
    data, folder = tmp_path / "data", tmp_path / "elsewhere"
    with running_warden(_audit_settings(data, checkpoint_dir=folder, checkpoint_every=1)) as url:
        fact = {"items": [{"content": "The backup runs at 02:00 every night."}]}
        assert httpx.post(f"{url}/v1/default/banks/ops/memories", json=fact).status_code == 200
        (folder / CHECKPOINT_FILE).unlink()
        (folder / CHECKPOINT_FILE).mkdir()  # the storage is gone
        other = {"items": [{"content": "The staging database is PostgreSQL 16."}]}
        assert httpx.post(f"{url}/v1/default/banks/ops/memories", json=other).status_code == 200
        health = httpx.get(f"{url}/warden/health").json()
        assert health["status"] == "degraded"
        assert "cannot write an audit checkpoint" in health["audit"]["checkpoints"]
        listed = httpx.get(f"{url}/v1/default/banks/ops/memories/list").json()["items"]
        assert len(listed) == 2


# -- issue #33: the audit chain forged without the installation key ------------------------------


def downgrade(data: Path) -> None:
    """The attack: triggers dropped, an event edited, the chain re-hashed with plain SHA-256 (no
    key), ``DELETE FROM audit_meta`` (so the chain looks older than the keyed one), triggers back."""
    tamper(data, "nothing happened here", keyed=False)
    db = sqlite3.connect(data / "memwarden.db", isolation_level=None)
    db.execute("DELETE FROM audit_meta")
    db.close()


def test_a_chain_passed_off_as_unkeyed_by_deleting_its_facts_is_caught(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    shipped = (data / "checkpoints" / CHECKPOINT_FILE).read_text().splitlines()[-1]
    downgrade(data)
    for extra in ((), ("--checkpoint", shipped)):
        result = verify(data, *extra)
        assert result.returncode == 1, (extra, result.stdout)
        assert "audit_meta was deleted, installation.key records 1" in result.stderr
    (data / "checkpoints" / CHECKPOINT_FILE).unlink()  # the checkpoint file too
    (data / "audit.jsonl").unlink()
    result = verify(data)
    assert result.returncode == 1
    assert "event edited" in result.stderr
    for _ in range(2):  # every start says so, not just the first
        with running_warden(local_settings(data)) as url:
            health = httpx.get(f"{url}/warden/health").json()
        assert health["status"] == "critical"
        assert any("audit_meta) were deleted" in alarm for alarm in health["audit"]["alarms"])


def test_an_alarm_stays_until_an_operator_acknowledges_it(tmp_path: Path) -> None:
    """Before: the tail and the newest checkpoint line deleted — the first start raised the alarm,
    the second had forgotten it (a checkpoint written over the gap)."""
    data = tmp_path / "data"
    make_ledger(data)
    db = sqlite3.connect(data / "memwarden.db", isolation_level=None)
    db.execute("DROP TRIGGER audit_no_delete")
    db.execute("DELETE FROM audit_events WHERE seq > 9")
    db.execute(TRIGGERS["audit_no_delete"])
    db.close()
    checkpoint_file = data / "checkpoints" / CHECKPOINT_FILE
    checkpoint_file.write_text("".join(checkpoint_file.read_text().splitlines(keepends=True)[:-1]))
    for start in range(2):
        with running_warden(local_settings(data)) as url:
            health = httpx.get(f"{url}/warden/health").json()
            assert health["status"] == "critical", start
            assert any("checkpoints are missing" in alarm for alarm in health["audit"]["alarms"]), start
    with running_warden(local_settings(data)) as url:
        for refused in ({}, {"reason": "  "}, {"reason": 7}, {"reason": "x" * 2001}, {"reason": "ok", "by": "me"}):
            r = httpx.post(f"{url}/warden/v1/audit/acknowledge", json=refused)
            assert r.status_code == 422, refused
            assert r.json()["detail"][0]["loc"][0] == "body"
        assert httpx.get(f"{url}/warden/health").json()["status"] == "critical"  # a refusal changes nothing
        r = httpx.post(f"{url}/warden/v1/audit/acknowledge", json={"reason": "tail restored from the shipped log"})
        assert r.status_code == 200, r.text
        assert r.json()["acknowledged"] >= 1
        assert httpx.get(f"{url}/warden/health").json()["status"] == "ok"
        events = httpx.get(f"{url}/warden/v1/audit", params={"action": "audit_acknowledged"}).json()["events"]
        assert [e["reason"] for e in events] == ["tail restored from the shipped log"]
    with running_warden(local_settings(data)) as url:  # and it stays acknowledged
        assert httpx.get(f"{url}/warden/health").json()["status"] == "ok"
    result = verify(data)  # the forensic check still tells what happened
    assert result.returncode == 1
    assert "deleted from the end (still in audit.jsonl)" in result.stderr


def test_the_key_file_deleted_with_the_chains_facts_is_an_alarm(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    downgrade(data)
    (data / KEY_FILE).unlink()  # the record of the keyed chain goes with the key
    ledger = Database.open(data)
    try:
        assert any("installation.key was made at this start" in alarm for alarm in ledger.alarms)
    finally:
        ledger.close()
    ledger = Database.open(data)  # and the next start still says so
    try:
        assert any("installation.key was made at this start" in alarm for alarm in ledger.alarms)
    finally:
        ledger.close()
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "audit", "acknowledge", "--data-dir", str(data), "--reason", "key lost; compared"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith("acknowledged ")
    ledger = Database.open(data)
    try:
        assert ledger.alarms == []
    finally:
        ledger.close()


def test_a_moved_start_in_the_key_files_record_is_believed_over_the_database(tmp_path: Path) -> None:
    data = tmp_path / "data"
    make_ledger(data)
    assert (data / KEY_FILE).read_text().splitlines()[1] == "keyed_from 1"
    tamper(data, "nothing happened here", keyed=False, keyed_from="1000000000")
    result = verify(data)
    assert result.returncode == 1
    assert "installation.key records 1" in result.stderr
